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
