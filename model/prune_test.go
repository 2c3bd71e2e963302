package model

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// perturb returns obs changed the way a buggy device might have answered:
// a success for a failure and back, a completion dropped, shortened, failed
// or naming another WR, an event added or lost, the peer told something
// else, a query answering other attributes.
func perturb(rng *rand.Rand, obs Observation) Observation {
	o := obs
	o.Completions = slices.Clone(obs.Completions)
	o.Events = slices.Clone(obs.Events)
	switch rng.IntN(6) {
	case 0:
		if o.Errno == 0 {
			o.Errno, o.BadWR = []int{EINVAL, ENOMEM}[rng.IntN(2)], 0
		} else {
			o.Errno, o.BadWR = 0, -1
		}
	case 1:
		if n := len(o.Completions); n > 0 {
			i := rng.IntN(n)
			switch rng.IntN(4) {
			case 0:
				o.Completions = slices.Delete(o.Completions, i, i+1)
			case 1:
				o.Completions[i].ByteLen++
			case 2:
				o.Completions[i].Status = WCLocLenErr
			default:
				o.Completions[i].WRID += 1000
			}
			break
		}
		fallthrough
	case 2:
		if len(o.Events) > 0 {
			o.Events = o.Events[1:]
		} else {
			o.Events = append(o.Events, Event{Type: EventSRQLimitReached, QP: -1})
		}
	case 3:
		o.Peer = []PeerStatus{PeerOK, PeerRNR, PeerError}[rng.IntN(3)]
	case 4:
		o.Attr.MaxWR++
	default:
		o.Attr.SRQLimit += 1 + uint32(rng.IntN(3))
	}
	return o
}

// TestPruningUnconsultedRulesChangesNoDiagnosis: a diagnosis that skips
// the rules the failing replay never consulted names the same rules, the
// same alternatives and the same departure step as one that replays every
// rule, on random walks with one step's observation perturbed.
func TestPruningUnconsultedRulesChangesNoDiagnosis(t *testing.T) {
	seeds := 100
	if testing.Short() {
		seeds = 30
	}
	defer func() { pruneUnconsulted = true }()
	compared := 0
	var prunedTime, fullTime time.Duration
	for _, p := range []Profile{Documented(), RXE()} {
		for seed := uint64(1); seed <= uint64(seeds); seed++ {
			m := walk(t, p, seed, 30)
			rng := rand.New(rand.NewPCG(seed, 7))
			var steps []Step
			k := 0
			for range 20 { // a perturbation the model notices
				steps = m.history.steps()
				k = 4 + rng.IntN(len(steps)-4)
				steps = steps[:k+1]
				steps[k].Obs = perturb(rng, steps[k].Obs)
				if _, err, _ := replayPastBy(p, testCaps, nil, steps, 0, nil); err != nil {
					break
				}
			}
			pruneUnconsulted = true
			t0 := time.Now()
			pruned := Diagnose(p, testCaps, nil, steps)
			t1 := time.Now()
			pruneUnconsulted = false
			full := Diagnose(p, testCaps, nil, steps)
			prunedTime, fullTime = prunedTime+t1.Sub(t0), fullTime+time.Since(t1)
			if pruned.NoticedBy == 0 {
				continue // the perturbation agreed with the model
			}
			compared++
			if !slices.Equal(pruned.Rules, full.Rules) || pruned.Unexplained != full.Unexplained || pruned.DepartedAt != full.DepartedAt ||
				!slices.EqualFunc(pruned.Also, full.Also, slices.Equal) {
				t.Errorf("%s seed %d, step %d %s perturbed: pruned diagnosis %+v, full %+v", p.Name, seed, k+1, steps[k].Op, pruned, full)
			}
		}
	}
	if compared < seeds {
		t.Errorf("only %d perturbed walks deviated; want at least %d to compare", compared, seeds)
	}
	t.Logf("%d deviating traces compared; diagnosis took %v pruned, %v replaying every rule", compared, prunedTime, fullTime)
}
