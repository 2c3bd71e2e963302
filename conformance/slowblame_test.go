package conformance_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// TestBlameIsTheSameOnASlowDevice: the same seed and cases give the same
// blame, rule for rule, on the emulator as it is and on the emulator with
// every delivery taking far longer than the run's shrink budget allows
// for. Blame is bounded by work, not time: a run whose time has gone
// still gets the second look and the one-rule-per-run refinement, and
// its diagnoses the same allowance. With diagnosis and its refinements
// stopped at a time a few budgets after the start, as they were, the slow
// runs of rxe 6.1 and siw held to documented explained none of their
// failures, where the fast ones blamed QP-LAST-WQE and three other rules
// (and CI saw real rxe under load blame RECV-TOO-LARGE, which ties with
// QP-LAST-WQE until the second look).
func TestBlameIsTheSameOnASlowDevice(t *testing.T) {
	for _, set := range []emu.Switch{"rxe-6.1", "siw"} {
		t.Run(string(set), func(t *testing.T) {
			t.Parallel()
			opts := conformance.Options{Profile: model.Documented(), Seed: 3, Cases: 10, ShrinkTime: 100 * time.Millisecond}
			blame := func(d drivers.Driver) []string {
				rep, err := conformance.Check(context.Background(), d, drivers.Config{}, opts)
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				var out []string
				for _, f := range rep.Failures {
					out = append(out, f.Source+": "+joinRules(f.Rules))
				}
				out = append(out, "broken: "+joinRules(rep.Broken))
				slices.Sort(out)
				return out
			}
			fast := blame(emu.New(set))
			slow := blame(&slowPeerDriver{Driver: emu.New(set), pause: 10 * time.Millisecond})
			if len(fast) < 2 {
				t.Fatalf("%s held to documented failed nothing: %v", set, fast)
			}
			if !slices.Equal(fast, slow) {
				t.Errorf("blame on a slow device differs:\n fast %q\n slow %q", fast, slow)
			}
		})
	}
}

func joinRules(rs []model.RuleID) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += "+"
		}
		s += r.String()
	}
	return s
}
