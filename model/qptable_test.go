package model

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// tableRef is what a qpTable must hold: a plain slice, copied whole.
type tableRef []qp

func (r tableRef) counts() (attached, unready, repeats int) {
	for _, q := range r {
		if !q.gone {
			attached++
			if q.state != RTS {
				unready++
			}
		}
		if q.repeatOK {
			repeats++
		}
	}
	return
}

// differs says where tab differs from ref, or "".
func differs(ref tableRef, tab *qpTable) string {
	if len(ref) != tab.len() {
		return fmt.Sprintf("len %d, want %d", tab.len(), len(ref))
	}
	for i, q := range tab.all() {
		if q.state != ref[i].state || q.gone != ref[i].gone || q.repeatOK != ref[i].repeatOK || !slices.Equal(q.pending, ref[i].pending) {
			return fmt.Sprintf("qp%d %+v, want %+v", i, *q, ref[i])
		}
	}
	if a, u, r := ref.counts(); a != tab.attached || u != tab.unready || r != len(tab.repeats) {
		return fmt.Sprintf("attached, unready, repeats %d %d %d, want %d %d %d", tab.attached, tab.unready, len(tab.repeats), a, u, r)
	}
	return ""
}

// TestQPTableClonesAreIndependent writes at random to tables and their
// clones (a clone is written, never the table it was cloned from, as in
// run) and checks every one against a plain copied slice: a write to one
// never shows in another, and the counts match a count of every QP.
func TestQPTableClonesAreIndependent(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		type version struct {
			ref tableRef
			tab qpTable
		}
		vs := []version{{}}
		for step := range 150 {
			// Clone a random version and write to the clone only.
			from := vs[rng.IntN(len(vs))]
			v := version{ref: append(tableRef(nil), from.ref...), tab: from.tab.clone()}
			for k := range v.ref {
				v.ref[k].pending = append([]Message(nil), v.ref[k].pending...)
			}
			for range 1 + rng.IntN(3) {
				n := len(v.ref)
				switch op := rng.IntN(6); {
				case op == 0 || n == 0:
					q := qp{typ: RC, state: Reset}
					v.ref = append(v.ref, q)
					v.tab.add(q)
				case op == 1:
					i, s := rng.IntN(n), QPState(rng.IntN(int(SQE)+1))
					v.ref[i].state = s
					v.tab.setState(i, s)
				case op == 2:
					i := rng.IntN(n)
					v.ref[i].gone = true
					v.tab.setGone(i)
				case op == 3:
					i := rng.IntN(n)
					v.ref[i].repeatOK = true
					v.tab.setRepeat(i)
				case op == 4:
					for k := range v.ref {
						v.ref[k].repeatOK = false
					}
					v.tab.clearRepeats()
				default:
					i, msg := rng.IntN(n), Message{Len: uint32(step)}
					v.ref[i].pending = append(v.ref[i].pending, msg)
					q := v.tab.mut(i)
					q.pending = append(q.pending, msg)
				}
			}
			vs = append(vs, v)
			for k, w := range vs {
				if d := differs(w.ref, &w.tab); d != "" {
					t.Fatalf("seed %d step %d, version %d of %d: %s", seed, step, k, len(vs), d)
				}
			}
		}
	}
}

// freshView is m's View computed afresh, without the entries View kept,
// and without cloning m (a clone takes ownership of the QP leaves from m,
// so that m no longer writes them in place).
func freshView(m *Model) View {
	f := *m
	f.qpv, f.viewOK = nil, false
	return f.View()
}

// TestViewMatchesAFreshView walks models of many QPs (several leaves) under
// profiles that fork and one that does not, and checks after every step
// that View, which reuses the entries of leaves no candidate wrote, says
// what a View computed afresh says, and that a View kept from the step
// before (Views share their arrays) still says what it said.
func TestViewMatchesAFreshView(t *testing.T) {
	for _, p := range []Profile{Documented(), RXE(), MLX5()} {
		for seed := range uint64(8) {
			rng := rand.New(rand.NewPCG(seed, 3))
			m := New(p, testCaps)
			ops := []Op{CreateSRQ{MaxWR: 8, MaxSGE: 2}}
			for i := range 40 {
				ops = append(ops, CreateQP{Type: []QPType{RC, UD}[i%2]})
			}
			var id uint64
			var kept, keptCopy View
			for i := range 300 {
				op := scriptedOp(i, ops, rng, m.View(), &id)
				if _, err := m.Run(op); err != nil {
					t.Fatalf("%s seed %d step %d %s: %v", p.Name, seed, i, op, err)
				}
				got, fresh := m.View(), freshView(m)
				if !reflect.DeepEqual(got, fresh) {
					t.Fatalf("%s seed %d after step %d %s: View\n%+v\nwant the fresh\n%+v", p.Name, seed, i, op, got, fresh)
				}
				if !reflect.DeepEqual(kept, keptCopy) {
					t.Fatalf("%s seed %d after step %d %s: the View of the step before changed to\n%+v\nfrom\n%+v", p.Name, seed, i, op, kept, keptCopy)
				}
				kept, keptCopy = got, freshView(m)
			}
		}
	}
}

// TestModelClonesStayApart steps a model that is cloned every third step,
// whose clones (and Expect) go their own ways, beside a twin that is never
// cloned: the two must stay alike, and a clone never stepped must stay as
// it was. A candidate is stepped in place, and
// its slices and QP leaves are shared with the clones taken from it, so
// a write that reached a sharer would show as a difference.
func TestModelClonesStayApart(t *testing.T) {
	for _, p := range []Profile{Documented(), RXE(), MLX5()} {
		for seed := range uint64(10) {
			rng := rand.New(rand.NewPCG(seed, 5))
			side := rand.New(rand.NewPCG(seed, 6))
			a, twin := New(p, testCaps), New(p, testCaps)
			ops := []Op{CreateSRQ{MaxWR: 8, MaxSGE: 2}}
			for i := range 12 {
				ops = append(ops, CreateQP{Type: []QPType{RC, UD}[i%2]})
			}
			var id, sideID uint64
			var clones []*Model
			type kept struct {
				m  *Model
				fp uint64
			}
			var frozen []kept // clones never stepped, with their fingerprints
			for i := range 200 {
				op := Op(nil)
				if i < len(ops) {
					op = ops[i]
				} else {
					op = nextOp(rng, twin.View(), &id)
					if _, err := a.Expect(nextOp(side, a.View(), &sideID)); err != nil {
						t.Fatalf("%s seed %d step %d: Expect: %v", p.Name, seed, i, err)
					}
					if i%3 == 0 {
						c := a.Clone()
						clones = append(clones, c)
						frozen = append(frozen, kept{a.Clone(), c.Fingerprint()})
					}
				}
				oa, errA := a.Run(op)
				ot, errT := twin.Run(op)
				if errA != nil || errT != nil || !reflect.DeepEqual(oa, ot) {
					t.Fatalf("%s seed %d step %d %s: the cloned model gave %+v (%v), its twin %+v (%v)", p.Name, seed, i, op, oa, errA, ot, errT)
				}
				for _, c := range clones[max(0, len(clones)-4):] {
					if _, err := c.Run(nextOp(side, c.View(), &sideID)); err != nil {
						t.Fatalf("%s seed %d step %d: a clone: %v", p.Name, seed, i, err)
					}
				}
				for k, f := range frozen {
					f.m.fp = 0 // computed again, not remembered
					if f.m.Fingerprint() != f.fp {
						t.Fatalf("%s seed %d after step %d %s: clone %d, never stepped, changed", p.Name, seed, i, op, k)
					}
				}
				if fa, ft := a.Fingerprint(), twin.Fingerprint(); fa != ft || !reflect.DeepEqual(a.View(), twin.View()) {
					t.Fatalf("%s seed %d after step %d %s: the cloned model's state differs from its twin's:\n%+v\n%+v", p.Name, seed, i, op, a.View(), twin.View())
				}
			}
		}
	}
}
