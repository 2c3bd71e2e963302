//go:build linux && cgo && rdma

package cgo

import (
	"fmt"
	"time"

	"github.com/srqconform/srqconform/drivers"
)

// PostFromC times n single-WR posts made by a C loop on the device's
// context (srqc_bench_post), for comparison with posts through the Go
// driver. It returns the time spent posting.
func PostFromC(dev drivers.Device, n int) (time.Duration, error) {
	d, ok := dev.(*device)
	if !ok {
		return 0, fmt.Errorf("PostFromC: %T is not a cgo device", dev)
	}
	pd := _C_ibv_alloc_pd(d.ctx)
	if pd == nil {
		return 0, fmt.Errorf("ibv_alloc_pd returned NULL, want a PD")
	}
	defer _C_ibv_dealloc_pd(pd)
	ns := _C_srqc_bench_post(pd, _C_uint64_t(n))
	if ns < 0 {
		return 0, fmt.Errorf("srqc_bench_post: errno %d, want 0", -ns)
	}
	return time.Duration(ns), nil
}
