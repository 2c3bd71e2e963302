package conformance

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// replayOps is a trace of about n operations the documented emulator
// passes: an SRQ, then rounds of a new UD QP, a post, a message on that QP
// and a poll, so that the QPs grow with the trace.
func replayOps(n int) []model.Op {
	ops := []model.Op{model.CreateSRQ{MaxWR: 4, MaxSGE: 1}}
	for qp := 0; len(ops) < n; qp++ {
		ops = append(ops, model.CreateQP{Type: model.UD},
			model.Post{WRs: []model.WR{{ID: uint64(qp + 1), NumSGE: 1, SGEs: []model.SGE{{Length: 64}}}}},
			model.Arrive{QP: qp, Msg: model.Message{Opcode: model.Send, Len: 3}}, model.Poll{})
	}
	return ops
}

// BenchmarkReplay replays traces of growing length and QP count: the time
// per replayed operation should stay flat from 1,000 operations to 20,000
// (issue 20, bug 7: it grew with the trace while every step copied every
// QP; 10,000 operations took 15.7 s and 20,000 took 63 s). Compare the
// ns/replayed-op of the sizes.
func BenchmarkReplay(b *testing.B) {
	for _, n := range []int{1000, 2000, 5000, 10000, 20000} {
		ops := replayOps(n)
		b.Run(fmt.Sprintf("ops=%d", n), func(b *testing.B) {
			for b.Loop() {
				tr, err := Replay(context.Background(), emu.New(), drivers.Config{}, model.Documented(), nil, ops, Options{})
				if err != nil || tr.Deviation != nil || tr.Err != "" {
					b.Fatalf("Replay of %d operations: err %v, deviation %v, trace error %q; want a passing trace", len(ops), err, tr.Deviation, tr.Err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ops)), "ns/replayed-op")
		})
	}
}

// TestReplayAllocatesInProportionToItsLength is bug 7 of issue 20 held by
// a count, not a clock: the bytes a replay allocates grow in proportion to
// its length. When every step copied every QP, four times the operations
// (and QPs) cost about sixteen times the bytes; a ratio under 8 allows
// for fixed costs and noise in the allocator's accounting.
func TestReplayAllocatesInProportionToItsLength(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 6,000 operations")
	}
	bytes := func(n int) uint64 {
		ops := replayOps(n)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tr, err := Replay(context.Background(), emu.New(), drivers.Config{}, model.Documented(), nil, ops, Options{})
		runtime.ReadMemStats(&after)
		if err != nil || tr.Deviation != nil || tr.Err != "" {
			t.Fatalf("Replay of %d operations: err %v, deviation %v, trace error %q; want a passing trace", len(ops), err, tr.Deviation, tr.Err)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := bytes(1200), bytes(4800)
	ratio := float64(large) / float64(small)
	t.Logf("replay of 1,200 operations allocated %d bytes, of 4,800 %d: ratio %.2f", small, large, ratio)
	if ratio > 8 {
		t.Errorf("replaying 4 times the operations allocated %.1f times the bytes (%d against %d); want about 4: the replay grows faster than its length", ratio, large, small)
	}
}
