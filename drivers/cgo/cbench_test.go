//go:build linux && cgo && rdma

package cgo

import (
	"testing"
	"time"
)

// BenchmarkPostFromC is BenchmarkPost's loop written in C on the same
// device, in batches of 20000 posts: the cost of the verbs call itself,
// against which the Go driver's per-post overhead (building the WR in C
// memory, scribbling it, mapping bad_wr) is read. Compare its C-ns/post
// with BenchmarkPost's ns/op.
func BenchmarkPostFromC(b *testing.B) {
	d := open(b)
	const batch = 20000
	var total time.Duration
	n := 0
	for b.Loop() {
		el, err := PostFromC(d, batch)
		if err != nil {
			b.Fatal(err)
		}
		total += el
		n += batch
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(n), "C-ns/post")
}
