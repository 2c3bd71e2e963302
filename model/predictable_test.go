package model

import (
	"math/rand/v2"
	"testing"
)

// spoilOp makes op one the model may not predict, now and then: a QP or key
// out of range, a num_sge that does not count its SGEs, the rest of a
// message to a QP filling nothing, SQE injected outside RTS, or the SRQ
// destroyed under what follows.
func spoilOp(rng *rand.Rand, op Op, qps int) Op {
	switch rng.IntN(12) {
	case 0:
		return ModifyQP{QP: qps + rng.IntN(2), State: Err}
	case 1:
		return Arrive{QP: -1 + rng.IntN(2)*(qps+1), Msg: Message{Opcode: Send, Len: 8}}
	case 2:
		return Invalidate{Key: []int{-1, 2, 99}[rng.IntN(3)]}
	case 3:
		return Post{WRs: []WR{{ID: 1, NumSGE: []int{-1, 2}[rng.IntN(2)], SGEs: []SGE{{Length: 8}}}}}
	case 4:
		return ArriveRest{QP: rng.IntN(qps)}
	case 5:
		return InjectSQE{QP: rng.IntN(qps)}
	case 6:
		return Arrive{QP: rng.IntN(qps), Msg: Message{Opcode: Write, Len: 8}}
	case 7:
		return PostRecv{QP: qps, WR: wr(0, 8)}
	case 8:
		if rng.IntN(30) == 0 {
			return DestroySRQ{}
		}
	}
	return op
}

// TestPredictableOpsAreExpected checks Model.Predictable against Expect on
// random walks with spoiled operations mixed in: where Predictable says
// yes, Expect must succeed. Both answers must occur, and Expect must fail
// somewhere, or the walk tests nothing.
func TestPredictableOpsAreExpected(t *testing.T) {
	var yes, no, failed int
	for _, p := range []Profile{Documented(), RXE(), SIW()} {
		for seed := range uint64(30) {
			rng := rand.New(rand.NewPCG(seed, 7))
			m := New(p, testCaps)
			first := []Op{Post{WRs: []WR{wr(1, 8)}}, CreateSRQ{MaxWR: 1 + uint32(rng.IntN(8)), MaxSGE: 2}, CreateQP{Type: RC}, CreateQP{Type: UD}, CreateQP{Type: RC}}
			var id uint64
			for i := range 300 {
				var op Op
				if i < len(first) {
					op = first[i]
				} else {
					op = spoilOp(rng, nextOp(rng, m.View(), &id), 3)
				}
				pred := m.Predictable(op)
				_, err := m.Expect(op)
				switch {
				case pred && err != nil:
					t.Fatalf("%s seed %d step %d: Predictable(%s) is true, but Expect failed: %v", p.Name, seed, i, op, err)
				case pred:
					yes++
				default:
					no++
				}
				if err != nil {
					failed++
					continue
				}
				if _, err := m.Run(op); err != nil {
					t.Fatalf("%s seed %d step %d: Run(%s) after Expect succeeded: %v", p.Name, seed, i, op, err)
				}
				if m.View().Destroyed {
					break // only polls are left to try
				}
			}
		}
	}
	t.Logf("predictable %d, not %d, Expect failed %d", yes, no, failed)
	if yes == 0 || no == 0 || failed == 0 {
		t.Fatalf("the walks did not exercise both answers: predictable %d, not %d, Expect failed %d", yes, no, failed)
	}
}
