package faulty

import (
	"context"
	"testing"
	"time"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// TestBareWrapperConforms holds the wrapper with no bug in it to the
// documented profile: any failing rule would be the wrapper's own doing,
// and would be blamed on every bug.
func TestBareWrapperConforms(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the conformance suite")
	}
	clean := Bug{Name: "none", hooks: func() *hooks { return &hooks{} }}
	for _, seed := range []uint64{1, 2, 3} {
		rep, err := conformance.Check(context.Background(), clean.Driver(), drivers.Config{},
			conformance.Options{Profile: model.Documented(), Seed: seed, Cases: -1, Duration: 3 * time.Second})
		if err != nil {
			t.Fatalf("Check(seed %d) on the bare wrapper: %v", seed, err)
		}
		for _, r := range rep.Rules {
			if r.Status == conformance.Fail || r.Status == conformance.Blocked {
				t.Errorf("Check(seed %d) on the bare wrapper: rule %s is %s, want it to pass (%s)", seed, r.Rule.ID, r.Status, r.Reason)
			}
		}
	}
}

// TestARefusedCreateIsADeparture: a device that refuses an SRQ within its
// limits (drivers.Refused) fails CREATE-ATTR; the run is no harness error.
func TestARefusedCreateIsADeparture(t *testing.T) {
	b, err := ByName("create-refuses-odd-depth")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := conformance.Check(context.Background(), b.Driver(), drivers.Config{},
		conformance.Options{Profile: model.Documented(), Seed: 1, Cases: 20})
	if err != nil {
		t.Fatalf("Check on %s: %v", b.Name, err)
	}
	if rep.Error != "" {
		t.Fatalf("Check on %s stopped: %s; want the refusal held to the model", b.Name, rep.Error)
	}
	var failing []string
	for _, r := range rep.Rules {
		if r.Status == conformance.Fail {
			failing = append(failing, r.Rule.ID.String())
		}
	}
	if len(failing) != 1 || failing[0] != "CREATE-ATTR" {
		t.Errorf("Check on %s fails %v, want [CREATE-ATTR]", b.Name, failing)
	}
}
