package conformance_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// TestTracesReadTheSameWhenWantsAreLearnedLater: the harness asks the
// model for a step's canonical outcome only where it needs one
// (model.Predictable, executor.needsWant) and writes the Allowed texts of a
// kept trace from a replay. Every text of every step must read as it does
// when each step asks first. The traces are the failures of real-driver
// behaviour sets held to documented, barely shrunk so that they are long,
// replayed on their own set and on the emulator as it is (where they pass),
// with and without the failure's rules relaxed.
func TestTracesReadTheSameWhenWantsAreLearnedLater(t *testing.T) {
	ctx := context.Background()
	compared := 0
	for _, set := range []emu.Switch{"rxe-6.1", "siw"} {
		rep, err := conformance.Check(ctx, emu.New(set), drivers.Config{}, conformance.Options{
			Profile: model.Documented(), Seed: 5, Cases: 20, ShrinkTime: time.Nanosecond})
		if err != nil {
			t.Fatalf("Check %s: %v", set, err)
		}
		if len(rep.Failures) == 0 {
			t.Fatalf("%s held to documented failed nothing", set)
		}
		for _, f := range rep.Failures {
			ops := f.Trace.Ops()
			for _, on := range []emu.Switch{set, ""} {
				for _, relaxed := range [][]model.RuleID{nil, f.Rules} {
					texts := func(eager bool) ([]string, error) {
						defer conformance.SetEagerWants(eager)()
						tr, err := conformance.Replay(ctx, emu.New(on), drivers.Config{}, model.Documented(), relaxed, ops, conformance.Options{})
						var out []string
						for _, s := range tr.Steps {
							out = append(out, fmt.Sprintf("%d %s | allowed %s | got %s | %s %v", s.N, s.OpText, s.Allowed, s.Got, s.Rule, s.Evidence))
						}
						return out, err
					}
					lazy, lerr := texts(false)
					eager, eerr := texts(true)
					if (lerr == nil) != (eerr == nil) {
						t.Fatalf("%s on %q: replay errors differ: lazy %v, eager %v", f.Source, on, lerr, eerr)
					}
					if len(lazy) != len(eager) {
						t.Fatalf("%s on %q relaxed %v: %d steps lazily, %d eagerly", f.Source, on, relaxed, len(lazy), len(eager))
					}
					for i := range lazy {
						if lazy[i] != eager[i] {
							t.Errorf("%s on %q relaxed %v, step %d:\n lazy  %s\n eager %s", f.Source, on, relaxed, i+1, lazy[i], eager[i])
						}
					}
					compared += len(lazy)
				}
			}
		}
	}
	if compared < 100 {
		t.Fatalf("only %d steps compared: the traces are too short to test anything", compared)
	}
	t.Logf("%d steps compared", compared)
}
