package emu_test

import (
	"sync"
	"testing"

	"github.com/srqconform/srqconform/drivers"
)

// TestConcurrent posts and receives from several goroutines; run it with
// -race. Every wr_id must complete exactly once.
func TestConcurrent(t *testing.T) {
	r := newRig(t, drivers.SRQAttr{MaxWR: 64, MaxSGE: 1}, 1)
	const workers, each = 4, 200
	var qps []drivers.QP
	for range workers {
		qps = append(qps, r.qp(drivers.RC, drivers.RTS))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[uint64]int{}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				wr := drivers.RecvWR{ID: uint64(w*each + i + 1), NumSGE: 1, SGEs: []drivers.SGE{{Length: 16}}}
				for {
					if e, _ := r.srq.Post([]drivers.RecvWR{wr}); e == 0 {
						break
					}
					r.srq.PollCQ(1)
				}
				if _, err := qps[w].Deliver(ctx, drivers.Message{Opcode: drivers.Send, Len: 8}); err != nil {
					t.Errorf("Deliver() = %v, want nil", err)
					return
				}
				cs, _ := r.srq.PollCQ(0)
				r.srq.Query()
				r.srq.PollEvents()
				mu.Lock()
				for _, c := range cs {
					seen[c.WRID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for {
		p, _ := qps[0].Deliver(ctx, drivers.Message{Opcode: drivers.Send})
		for _, c := range r.poll() {
			seen[c.WRID]++
		}
		if p != 0 {
			break
		}
	}
	if len(seen) != workers*each {
		t.Errorf("distinct wr_ids completed = %d, want %d", len(seen), workers*each)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("wr_id %d completed %d times, want once", id, n)
		}
	}
}
