package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// maxTrace bounds the length of every counterexample the suite reports for
// a mutant: the report keeps the shortest per rule, scenarios are short, and
// rapid shrinks random cases (set-up of up to three QPs takes 13 steps).
const maxTrace = 40

func check(t *testing.T, drv drivers.Driver, p model.Profile, cases int) *conformance.Report {
	t.Helper()
	rep, err := conformance.Check(context.Background(), drv, drivers.Config{}, conformance.Options{
		Profile: p, Cases: cases, Steps: 40, Seed: 20261122, ShrinkTime: 20 * time.Second})
	require.NoError(t, err)
	return rep
}

func TestEmulatorConformsToTheDocumentedProfile(t *testing.T) {
	rep := check(t, emu.New(), model.Documented(), 200)
	for _, f := range rep.Failures {
		t.Errorf("%s (%s):\n%s", f.Rule, f.Source, f.Trace.Text())
	}
	assert.True(t, rep.Conformant())
	for _, r := range rep.Rules {
		assert.Contains(t, []conformance.Status{conformance.Pass}, r.Status, "rule %s: %s", r.Rule.ID, r.Reason)
	}
}

func TestEveryMutantIsCaught(t *testing.T) {
	var mutants []emu.DeviationInfo
	for _, d := range emu.Catalogue() {
		if d.Kind == "mutant" {
			mutants = append(mutants, d)
		}
	}
	require.NotEmpty(t, mutants)
	for _, m := range mutants {
		t.Run(string(m.Name), func(t *testing.T) {
			start := time.Now()
			rep := check(t, emu.New(m.Name), model.Documented(), 300)
			require.False(t, rep.Conformant(), "mutant %s (%s) was not caught", m.Name, m.Description)
			require.NotEmpty(t, rep.Failures)
			rules := map[string]bool{}
			for _, f := range rep.Failures {
				assert.LessOrEqual(t, len(f.Trace.Steps), maxTrace, "%s: trace of %d steps:\n%s", f.Source, len(f.Trace.Steps), f.Trace.Text())
				rules[f.Rule] = true
			}
			t.Logf("caught %s (breaks %s) in %v; failing rules %v; shortest trace %d steps",
				m.Name, m.Rule, time.Since(start).Round(time.Millisecond), keys(rules), shortest(rep))
			assert.True(t, rules[m.Rule] || rules[alsoBreaks[m.Name]], "mutant %s breaks %s, but the report blames %v", m.Name, m.Rule, keys(rules))
		})
	}
}

func TestRealDriverBehavioursPassTheirProfileAndFailTheDocumented(t *testing.T) {
	for name := range emu.Sets() {
		t.Run(name, func(t *testing.T) {
			p, err := model.ProfileByName(name)
			require.NoError(t, err)
			rep := check(t, emu.New(emu.Deviation(name)), p, 200)
			for _, f := range rep.Failures {
				t.Errorf("%s (%s):\n%s", f.Rule, f.Source, f.Trace.Text())
			}
			for _, f := range rep.Findings {
				if !f.Untestable {
					t.Errorf("finding: %s", f.Detail)
				}
			}
			assert.True(t, rep.Conformant(), "emulated %s under profile %s", name, name)
			assert.False(t, check(t, emu.New(emu.Deviation(name)), model.Documented(), 50).Conformant(),
				"emulated %s passes the documented profile", name)
		})
	}
}

// alsoBreaks names, for mutants that break two rules at once, the second
// rule a report may blame instead.
var alsoBreaks = map[emu.Deviation]string{
	// A WR that RDMA Write with Immediate does not consume breaks both the
	// opcode table and the write-with-immediate completion rule.
	"write-imm-no-consume": "RECV-WRITE-IMM",
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func shortest(r *conformance.Report) int {
	n := 1 << 30
	for _, f := range r.Failures {
		n = min(n, len(f.Trace.Steps))
	}
	return n
}
