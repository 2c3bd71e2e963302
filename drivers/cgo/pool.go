//go:build linux && cgo && rdma

package cgo

/*
#include "srqc.h"
*/
import "C"

import (
	"errors"
	"fmt"
)

// regions is a PD with the memory regions an SRQ's case uses: the keys'
// regions, the RDMA target and the peers' buffer. Registering them is
// most of what creating an SRQ costs on a software device (rxe pins and
// maps every page: two 16 MiB regions took about 0.7 s a case under
// QEMU TCG, reports/rxe-trixie-phases.md), and nothing the suite checks
// depends on them being new: posts poison the ranges they hand out, and
// every byte checked is one a message wrote. So a device keeps the set of
// its last closed SRQ and the next SRQ takes it (device.takeRegions).
type regions struct {
	pd     *C.struct_ibv_pd
	keys   []*region
	target *region
	peer   *region
}

// regionAccess is the access of the keys' regions and the RDMA target.
const regionAccess = C.int(C.IBV_ACCESS_LOCAL_WRITE | C.IBV_ACCESS_REMOTE_WRITE | C.IBV_ACCESS_REMOTE_READ | C.IBV_ACCESS_REMOTE_ATOMIC)

// takeRegions returns a PD with at least keys key regions, every one
// registered (a region a case deregistered is registered again, so it has
// a new key) and its allocator emptied: the idle set when the device has
// one, else a new one. The caller holds d.mu and owns what it gets.
func (d *device) takeRegions(keys int) (*regions, error) {
	rs := d.idle
	d.idle = nil
	if rs == nil {
		rs = &regions{}
		pd, err := C.ibv_alloc_pd(d.ctx)
		if pd == nil {
			return nil, nullErr("ibv_alloc_pd", err)
		}
		rs.pd = pd
	}
	err := rs.fill(keys)
	if err != nil {
		return nil, errors.Join(err, rs.release())
	}
	return rs, nil
}

// fill registers what is missing and empties every allocator.
func (rs *regions) fill(keys int) error {
	for k := len(rs.keys); k < keys; k++ {
		r, err := register(rs.pd, regionSize, regionAccess, fmt.Sprintf("key %d", k))
		if err != nil {
			return err
		}
		rs.keys = append(rs.keys, r)
	}
	var err error
	if rs.target == nil {
		if rs.target, err = register(rs.pd, targetSize, regionAccess, "RDMA target"); err != nil {
			return err
		}
	}
	if rs.peer == nil {
		if rs.peer, err = register(rs.pd, peerBufSize, C.IBV_ACCESS_LOCAL_WRITE, "peer buffer"); err != nil {
			return err
		}
	}
	for _, r := range append([]*region{rs.target, rs.peer}, rs.keys...) {
		if err := r.reregister(rs.pd); err != nil {
			return err
		}
		r.alloc = ring{size: r.size}
	}
	return nil
}

// reregister registers a deregistered region's memory again.
func (r *region) reregister(pd *C.struct_ibv_pd) error {
	if r.mr != nil {
		return nil
	}
	mr, err := C.ibv_reg_mr(pd, r.buf, C.size_t(r.size), r.access)
	if mr == nil {
		return nullErr(fmt.Sprintf("ibv_reg_mr(%s again, %d bytes, access %#x)", r.what, r.size, int(r.access)), err)
	}
	r.mr, r.lkey, r.rkey = mr, uint32(mr.lkey), uint32(mr.rkey)
	return nil
}

// release deregisters and frees every region, then deallocates the PD,
// going on after a failure.
func (rs *regions) release() error {
	if rs == nil {
		return nil
	}
	errs := []error{rs.peer.release(), rs.target.release()}
	for i := len(rs.keys) - 1; i >= 0; i-- {
		errs = append(errs, rs.keys[i].release())
	}
	rs.keys, rs.peer, rs.target = nil, nil, nil
	if rs.pd != nil {
		if r := C.ibv_dealloc_pd(rs.pd); r != 0 {
			errs = append(errs, verbErr("ibv_dealloc_pd", int(r)))
		}
		rs.pd = nil
	}
	return errors.Join(errs...)
}

// putRegions keeps rs for the next SRQ when the device is open and keeps
// none yet, and releases it otherwise. The caller holds d.mu.
func (d *device) putRegions(rs *regions) error {
	if rs == nil {
		return nil
	}
	if d.closed || d.idle != nil {
		return rs.release()
	}
	d.idle = rs
	return nil
}
