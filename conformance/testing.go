package conformance

import (
	"context"
	"testing"

	"github.com/srqconform/srqconform/drivers"
)

// Test runs the suite from a go test, in one line:
//
//	func TestMyDriver(t *testing.T) {
//		conformance.Test(t, mydriver.New(), drivers.Config{}, conformance.Options{Profile: model.RXE()})
//	}
//
// Every failing rule is reported with its minimal trace; declared profile
// deviations the device did not show are reported too. With neither
// opts.Cases nor opts.Duration set, the random cases run for DefaultBudget,
// as srqconform run's do on the emulator (under go test -short: 20 cases).
func Test(t *testing.T, drv drivers.Driver, cfg drivers.Config, opts Options) *Report {
	t.Helper()
	if testing.Short() && opts.Cases == 0 && opts.Duration == 0 {
		opts.Cases = 20
	}
	rep, err := Check(context.Background(), drv, cfg, opts)
	if err != nil {
		t.Fatalf("conformance.Check(%s): %v", drv.Name(), err)
	}
	for _, f := range rep.Failures {
		if f.Follows != 0 {
			t.Errorf("rule %s failed (%s); the %s check failed on what followed:\n%s", f.Follows, f.Source, f.Rule, f.Trace.Text())
			continue
		}
		t.Errorf("rule %s failed (%s):\n%s", f.Rule, f.Source, f.Trace.Text())
	}
	for _, f := range rep.Findings {
		t.Errorf("profile finding %s: %s", f.Field, f.Detail)
	}
	return rep
}
