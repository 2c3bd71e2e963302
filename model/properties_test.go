package model

import (
	"reflect"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

func params() *gopter.TestParameters {
	p := gopter.DefaultTestParameters()
	p.MinSuccessfulTests = 300
	return p
}

// genWR draws a WR with 0..4 SGEs (max_sge is 2, so some are invalid) of
// lengths 0..64, sometimes negative num_sge.
func genWR(id uint64) gopter.Gen {
	return gen.SliceOfN(4, gen.UInt32Range(0, 64)).FlatMap(func(v any) gopter.Gen {
		lens := v.([]uint32)
		return gen.IntRange(-1, 4).Map(func(n int) WR {
			if n < 0 {
				return WR{ID: id, NumSGE: -1}
			}
			return wr(id, lens[:n]...)
		})
	}, reflect.TypeFor[WR]())
}

func genList() gopter.Gen {
	return gen.IntRange(0, 9).FlatMap(func(v any) gopter.Gen {
		n := v.(int)
		gens := make([]gopter.Gen, n)
		for i := range gens {
			gens[i] = genWR(uint64(i + 1))
		}
		return gopter.CombineGens(gens...).Map(func(vs []any) []WR {
			out := make([]WR, len(vs))
			for i, x := range vs {
				out[i] = x.(WR)
			}
			return out
		})
	}, reflect.TypeFor[[]WR]())
}

var namedProfiles = []Profile{Documented(), RXE(), RXE61(), MLX5(), SIW()}

func TestPropertiesOfPosting(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("a list posts like its WRs one by one up to the first failure", prop.ForAll(
		func(pi int, pre int, ws []WR) bool {
			p := namedProfiles[pi]
			if p.NegativeSGE.Get() == Accepted {
				for i := range ws {
					if ws[i].NumSGE < 0 {
						ws[i] = WR{ID: ws[i].ID}
					}
				}
			}
			build := func() *Model {
				m := fixture(t, p)
				for i := range pre {
					mustRun(t, m, post(wr(uint64(100+i), 8)))
				}
				return m
			}
			a, b := build(), build()
			got, err := a.Run(post(ws...))
			if err != nil {
				return false
			}
			bad := -1
			var errno int
			for i, w := range ws {
				o, err := b.Run(post(w))
				if err != nil {
					return false
				}
				if o.Errno != 0 {
					bad, errno = i, o.Errno
					break
				}
			}
			return got.BadWR == bad && got.Errno == errno && a.View().Outstanding == b.View().Outstanding &&
				a.CheckInvariants() == nil
		},
		gen.IntRange(0, len(namedProfiles)-1), gen.IntRange(0, 7), genList(),
	))
	props.TestingRun(t)
}

func TestPropertyLengthZero(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("an SGE of length 0 holds 2^31 bytes (documented) or 0 (rxe)", prop.ForAll(
		func(lens []uint32, msg uint32, rxe bool) bool {
			if len(lens) > 2 {
				lens = lens[:2]
			}
			p, zero := Documented(), uint64(TwoGiB)
			if rxe {
				p, zero = RXE(), 0
			}
			var room uint64
			for _, l := range lens {
				if l == 0 {
					room += zero
				} else {
					room += uint64(l)
				}
			}
			m := fixture(t, p)
			mustRun(t, m, post(wr(1, lens...)))
			mustRun(t, m, send(0, msg))
			c := mustRun(t, m, Poll{}).Completions
			return len(c) == 1 && (c[0].Status == WCSuccess) == (uint64(msg) <= room)
		},
		gen.SliceOfN(2, gen.OneGenOf(gen.Const(uint32(0)), gen.UInt32Range(1, 300))), gen.UInt32Range(0, 700), gen.Bool(),
	))
	props.TestingRun(t)
}

func TestPropertyLimitFiresOncePerArming(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("the limit fires exactly once per arming, when the count drops below it", prop.ForAll(
		func(n, limit, consume int) bool {
			m := New(RXE(), testCaps)
			mustRun(t, m, CreateSRQ{MaxWR: 16, MaxSGE: 1})
			mustRun(t, m, CreateQP{Type: UD})
			for _, s := range []QPState{Init, RTR, RTS} {
				mustRun(t, m, ModifyQP{QP: 0, State: s})
			}
			for i := range n {
				mustRun(t, m, post(wr(uint64(i), 64)))
			}
			mustRun(t, m, Arm{Limit: uint32(limit)})
			events := 0
			fetches := min(consume, n)
			for range consume {
				mustRun(t, m, send(0, 1))
				events += limitEvents(mustRun(t, m, Poll{}))
				if m.CheckInvariants() != nil {
					return false
				}
			}
			want := 0
			if fetches > 0 && n-fetches < limit {
				want = 1
			}
			return events == want && (want == 0 || mustRun(t, m, Query{}).Attr.SRQLimit == 0)
		},
		gen.IntRange(0, 15), gen.IntRange(1, 15), gen.IntRange(0, 20),
	))
	props.TestingRun(t)
}

func TestPropertyFIFO(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("completions come in posting order across QPs", prop.ForAll(
		func(script []int) bool {
			m := New(RXE(), testCaps)
			mustRun(t, m, CreateSRQ{MaxWR: 64, MaxSGE: 1})
			mustRun(t, m, CreateQP{Type: RC})
			mustRun(t, m, CreateQP{Type: UD})
			for qpn := range 2 {
				for _, s := range []QPState{Init, RTR, RTS} {
					mustRun(t, m, ModifyQP{QP: qpn, State: s})
				}
			}
			next, want := uint64(1), uint64(1)
			for _, step := range script {
				switch step {
				case 0, 1:
					mustRun(t, m, post(wr(next, 128)))
					next++
				default:
					mustRun(t, m, send(step-2, 8))
				}
			}
			for _, c := range mustRun(t, m, Poll{}).Completions {
				if c.WRID != want {
					return false
				}
				want++
			}
			return m.CheckInvariants() == nil
		},
		gen.SliceOf(gen.IntRange(0, 3)),
	))
	props.TestingRun(t)
}
