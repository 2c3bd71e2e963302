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

// TestARunPastItsTimeToDiagnoseReportsInconclusive: a run with a time
// budget stops diagnosing three and a half budgets after its start. With a
// budget so small that the time has passed at its first failure, the
// failure is still reported (the run is not conformant) but its diagnosis
// is cut: inconclusive, not blamed by the clock. Without a time budget the
// same failure is blamed on the rule the mutant breaks.
func TestARunPastItsTimeToDiagnoseReportsInconclusive(t *testing.T) {
	run := func(d time.Duration) *conformance.Report {
		rep, err := conformance.Check(context.Background(), emu.New("badwr-off-by-one"), drivers.Config{}, conformance.Options{
			Profile: model.Documented(), Seed: 1, Cases: -1, Duration: d, Rules: []model.RuleID{model.RulePostBadWR}})
		require.NoError(t, err)
		require.NotEmpty(t, rep.Failures, "the scenarios catch the mutant")
		return rep
	}
	full := run(0)
	require.False(t, full.Failures[0].Trace.Diagnosis.Cut)
	assert.Equal(t, []model.RuleID{model.RulePostBadWR}, full.Failures[0].Rules)

	late := run(time.Nanosecond)
	assert.False(t, late.Conformant(), "a cut diagnosis loses the failure")
	for _, f := range late.Failures {
		require.NotNil(t, f.Trace.Diagnosis)
		assert.True(t, f.Trace.Diagnosis.Cut, "a diagnosis begun past the stop time is cut: %+v", f.Trace.Diagnosis)
		assert.Empty(t, f.Rules, "the clock blamed a rule: %+v", f.Rules)
	}
}
