package conformance_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// TestARuleStaysFailingWhenItsShortestCounterexampleIsBlamedElsewhere:
// emulated siw completes a WR through an invalid key with GENERAL_ERR and
// treats a zero-length SGE as empty. Among the scenarios, the run on a
// zero-length SGE is first blamed on RECV-BAD-KEY too, and as the
// shortest it stood for the bad-key scenarios; minimized, its blame moves
// to SGE-LEN0. RECV-BAD-KEY must still fail, on a scenario of its own.
// badKeyScenario matches the sources of RECV-BAD-KEY's scenarios.
const badKeyScenario = `^scenario: (a WR through a deregistered MR|an invalid key in an SGE the message does not reach)$`

func TestARuleStaysFailingWhenItsShortestCounterexampleIsBlamedElsewhere(t *testing.T) {
	rep, err := conformance.Check(context.Background(), emu.New(emu.Switch("siw")), drivers.Config{},
		conformance.Options{Profile: model.Documented(), Seed: 1, Cases: -1})
	require.NoError(t, err)
	bad := -1
	for i, f := range rep.Failures {
		if len(f.Rules) == 1 && f.Rules[0] == model.RuleRecvBadKey {
			bad = i
		}
		if f.Rule == model.RuleSGELen0 {
			for _, o := range f.AlsoIn {
				assert.NotRegexp(t, badKeyScenario, o, "a bad-key run listed under SGE-LEN0's counterexample")
			}
		}
	}
	require.GreaterOrEqual(t, bad, 0, "no counterexample on RECV-BAD-KEY; failing %v", model.RuleNames(failing(rep)))
	assert.Regexp(t, badKeyScenario, rep.Failures[bad].Source)
	assert.Contains(t, failing(rep), model.RuleSGELen0)
}
