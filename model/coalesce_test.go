package model

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// TestCoalescedForksAcceptWhatSplitForksAccept walks the documented
// profile, which forks, with two models: one that merges the branches of a
// fork that agreed (coalesce) and one that keeps them apart. At every
// step both must accept or refuse the same observations, the canonical
// one and spoiled ones, and resolve the profile's fields alike; and the
// merging model must hold fewer candidates somewhere, or it merged
// nothing.
func TestCoalescedForksAcceptWhatSplitForksAccept(t *testing.T) {
	defer func(on bool) { coalesceForks = on }(coalesceForks)
	with := func(on bool, f func()) { coalesceForks = on; f() }
	fewer := false
	for seed := range uint64(15) {
		rng := rand.New(rand.NewPCG(seed, 7))
		spoil := rand.New(rand.NewPCG(seed, 8))
		a, b := New(Documented(), testCaps), New(Documented(), testCaps)
		ops := []Op{CreateSRQ{MaxWR: 6, MaxSGE: 2}, CreateQP{Type: RC}, CreateQP{Type: UD}, CreateQP{Type: RC}}
		var id uint64
		for i := range 200 {
			op := scriptedOp(i, ops, rng, a.View(), &id)
			var obs Observation
			var err error
			with(true, func() { obs, err = a.Expect(op) })
			if err != nil {
				t.Fatalf("seed %d step %d %s: %v", seed, i, op, err)
			}
			for k := range 3 {
				o := obs
				if k > 0 {
					o = spoiled(spoil, obs)
				}
				var ea, eb error
				with(true, func() { ea = a.Clone().Step(op, o) })
				with(false, func() { eb = b.Clone().Step(op, o) })
				if (ea == nil) != (eb == nil) {
					t.Fatalf("seed %d step %d %s, observation %+v: merging model says %v, splitting model %v", seed, i, op, o, ea, eb)
				}
			}
			with(true, func() { err = a.Step(op, obs) })
			if err != nil {
				t.Fatalf("seed %d step %d %s: merging model: %v", seed, i, op, err)
			}
			with(false, func() { err = b.Step(op, obs) })
			if err != nil {
				t.Fatalf("seed %d step %d %s: splitting model: %v", seed, i, op, err)
			}
			if ra, rb := a.Resolved(Documented()), b.Resolved(Documented()); !reflect.DeepEqual(ra, rb) {
				t.Fatalf("seed %d step %d %s: the merging model resolves %v, the splitting one %v", seed, i, op, ra, rb)
			}
			fewer = fewer || a.Candidates() < b.Candidates()
		}
	}
	if !fewer {
		t.Fatal("the merging model never held fewer candidates: no fork was merged")
	}
}

// spoiled is o with one thing changed: the errno, bad_wr, the peer's
// outcome, a completion's status or wr_id, or an event dropped.
func spoiled(rng *rand.Rand, o Observation) Observation {
	o.Completions = slices.Clone(o.Completions)
	o.Events = slices.Clone(o.Events)
	switch k := rng.IntN(5); {
	case k == 0:
		o.Errno = []int{0, EINVAL, ENOMEM, EOPNOTSUPP}[rng.IntN(4)]
	case k == 1:
		o.BadWR = rng.IntN(3) - 1
	case k == 2:
		o.Peer = PeerStatus(rng.IntN(4))
	case k == 3 && len(o.Completions) > 0:
		c := &o.Completions[rng.IntN(len(o.Completions))]
		if rng.IntN(2) == 0 {
			c.Status = WCStatus(rng.IntN(4))
		} else {
			c.WRID ^= 1
		}
	case len(o.Events) > 0:
		o.Events = o.Events[1:]
	}
	return o
}
