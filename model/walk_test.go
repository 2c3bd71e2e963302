package model

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// nextOp draws an operation valid in the model's current state.
func nextOp(rng *rand.Rand, v View, id *uint64) Op {
	qp := rng.IntN(len(v.QPTypes))
	switch k := rng.IntN(20); {
	case k < 6:
		n := 1 + rng.IntN(4)
		ws := make([]WR, n)
		for i := range ws {
			*id++
			lens := make([]uint32, rng.IntN(int(v.MaxSGE)+2))
			for j := range lens {
				lens[j] = []uint32{0, 1, 40, 64, 1 << 30}[rng.IntN(5)]
			}
			ws[i] = wr(*id, lens...)
			if rng.IntN(8) == 0 && len(lens) > 0 {
				ws[i].SGEs[0].Key = 1
			}
		}
		return post(ws...)
	case k < 11:
		if v.Filling[qp] {
			return ArriveRest{QP: qp}
		}
		op := Opcodes[rng.IntN(len(Opcodes))]
		if !op.ValidOn(v.QPTypes[qp]) {
			op = Send
		}
		return Arrive{QP: qp, Msg: Message{Opcode: op, Len: []uint32{0, 1, 24, 64, 104, 4096}[rng.IntN(6)], Imm: rng.Uint32()},
			FirstPacketOnly: op == Send && v.QPTypes[qp] == RC && v.QPStates[qp].Fetches() && rng.IntN(6) == 0}
	case k < 13:
		return Poll{Max: rng.IntN(3)}
	case k < 14:
		return Query{}
	case k < 15:
		return Arm{Limit: uint32(rng.IntN(int(v.Capacity) + 2))}
	case k < 16:
		if v.Filling[qp] {
			return ModifyQP{QP: qp, State: Err}
		}
		return ModifyQP{QP: qp, State: QPStates[rng.IntN(len(QPStates))]}
	case k < 17:
		return Resize{MaxWR: uint32(rng.IntN(int(v.Capacity)*2 + 2))}
	case k < 18:
		if v.QPStates[qp] == RTS && rng.IntN(2) == 0 {
			return InjectSQE{QP: qp}
		}
		return Invalidate{Key: 1}
	case k < 19 && rng.IntN(10) == 0:
		return InjectSRQError{}
	}
	return PostRecv{QP: qp, WR: wr(0, 8)}
}

// scriptedOp is ops[i] while the script lasts, then an operation drawn
// for the state v.
func scriptedOp(i int, ops []Op, rng *rand.Rand, v View, id *uint64) Op {
	if i < len(ops) {
		return ops[i]
	}
	return nextOp(rng, v, id)
}

func walk(t testing.TB, p Profile, seed uint64, steps int) *Model {
	rng := rand.New(rand.NewPCG(seed, 0))
	m := New(p, testCaps)
	if _, err := m.Run(CreateSRQ{MaxWR: 1 + uint32(rng.IntN(16)), MaxSGE: 1 + uint32(rng.IntN(3))}); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []QPType{RC, UD, RC} {
		if _, err := m.Run(CreateQP{Type: typ}); err != nil {
			t.Fatal(err)
		}
	}
	var id uint64
	for range steps {
		op := nextOp(rng, m.View(), &id)
		if _, err := m.Run(op); err != nil {
			t.Fatalf("seed %d: %s: %v", seed, op, err)
		}
		if err := m.CheckInvariants(); err != nil {
			t.Fatalf("seed %d after %s: %v", seed, op, err)
		}
	}
	return m
}

func TestRandomWalksKeepTheInvariants(t *testing.T) {
	for _, p := range namedProfiles {
		if p.NegativeSGE.Get() == Accepted {
			continue // walks draw no negative num_sge, but keep the set honest
		}
		for seed := range uint64(40) {
			walk(t, p, seed, 300)
		}
	}
	for seed := range uint64(20) {
		walk(t, MLX5(), seed, 300)
		walk(t, SIW(), seed, 300)
	}
}

// TestCanonicalOutcomesReplay checks that the canonical observation of every
// step is accepted by a second model fed with it: Run and Step agree.
func TestCanonicalOutcomesReplay(t *testing.T) {
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 1))
		a, b := New(Documented(), testCaps), New(Documented(), testCaps)
		var id uint64
		ops := []Op{CreateSRQ{MaxWR: 6, MaxSGE: 2}, CreateQP{Type: RC}, CreateQP{Type: UD}}
		for i := 0; i < 400; i++ {
			op := scriptedOp(i, ops, rng, a.View(), &id)
			obs, err := a.Run(op)
			require.NoError(t, err)
			require.NoError(t, b.Step(op, obs), "seed %d step %d %s", seed, i, op)
		}
	}
}

// BenchmarkModelSteps measures model steps per second on random walks; the
// documented profile forks candidates, rxe is fully decided.
func BenchmarkModelSteps(b *testing.B) {
	for _, p := range []Profile{Documented(), RXE()} {
		b.Run(p.Name, func(b *testing.B) {
			steps := 0
			for i := 0; b.Loop(); i++ {
				walk(b, p, uint64(i), 200)
				steps += 200
			}
			b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}
