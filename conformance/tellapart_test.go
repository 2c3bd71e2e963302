package conformance

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/model"
)

// TestARunWithoutAStepRefutesARuleThatFitsAsWell: a refused destroy, a
// refused resize and a query reading the limit disarmed fit a failed
// modify that touched the limit (MODIFY-ONLY-MASKED, the more specific)
// as well as a refused destroy that did (DESTROY-BUSY). The device, run
// without the destroy, kept the limit through the same resize from the
// same state: MODIFY-ONLY-MASKED's departure did not come again, so the
// counterexample is blamed on a set not refuted, and says which it
// refuted. The run's list of broken rules follows.
func TestARunWithoutAStepRefutesARuleThatFitsAsWell(t *testing.T) {
	p := model.Documented()
	caps := model.Caps{MaxSRQWR: 1024, MaxSRQSGE: 4, Resize: true}
	ops := []model.Op{
		model.CreateSRQ{MaxWR: 4, MaxSGE: 1}, model.CreateQP{Type: model.RC},
		model.Post{WRs: []model.WR{{ID: 1, NumSGE: 1, SGEs: []model.SGE{{Length: 64}}}}},
		model.Arm{Limit: 1}, model.DestroySRQ{}, model.Resize{MaxWR: 0}, model.Query{},
	}
	// run returns ops on the model as a device that, given disarm, reads
	// the limit disarmed at the last query.
	run := func(ops []model.Op, disarm bool) Trace {
		m := model.New(p, caps)
		var tr Trace
		for i, op := range ops {
			obs, err := m.Run(op)
			require.NoError(t, err, "%s", op)
			if disarm && i == len(ops)-1 {
				obs.Attr.SRQLimit = 0
			}
			tr.Steps = append(tr.Steps, TraceStep{Op: op, obs: obs})
		}
		return tr
	}
	tr := run(ops, true)
	tr.Deviation = &model.Deviation{}
	c := foldChecker(p, caps, nil)
	c.replay = func([]model.Op, model.RuleID, string, []model.RuleID) ReplayFile { return ReplayFile{} }
	d := c.diagnose(tr)
	require.Len(t, d.Rules, 1, "%+v", d)
	require.Contains(t, d.Explains(), []model.RuleID{model.RuleModifyOnlyMasked}, "%+v", d)
	require.Contains(t, d.Explains(), []model.RuleID{model.RuleDestroyBusy}, "%+v", d)
	d = chooseDiagnosis(d, []model.RuleID{model.RuleModifyOnlyMasked}, p, caps, nil, tr, nil)
	tr.Diagnosis = &d
	c.rep.Failures = []Failure{{Rule: model.RuleModifyOnlyMasked, Rules: []model.RuleID{model.RuleModifyOnlyMasked}, Trace: tr}}
	c.rep.Broken = c.rep.Failures[0].Rules
	f := &c.rep.Failures[0]

	withoutDestroy := append(append([]model.Op{}, ops[:4]...), ops[5:]...)
	moved := c.tellApart(f, map[int]Trace{4: run(withoutDestroy, false)})
	require.True(t, moved)
	assert.NotEqual(t, []model.RuleID{model.RuleModifyOnlyMasked}, f.Rules)
	assert.Contains(t, f.Trace.Diagnosis.Refuted, []model.RuleID{model.RuleModifyOnlyMasked})
	assert.NotContains(t, f.Trace.Diagnosis.Also, f.Rules)
	assert.Equal(t, f.Rules, c.rep.Broken)
	assert.Contains(t, Alternatives(*f.Trace.Diagnosis), "which the device refuted")

	// One root cause, one rule: where another counterexample of the run
	// is blamed on a set not refuted, that set comes first.
	others := slices.DeleteFunc(slices.Clone(d.Also), func(s []model.RuleID) bool {
		return slices.Equal(s, f.Rules) ||
			slices.ContainsFunc(f.Trace.Diagnosis.Refuted, func(r []model.RuleID) bool { return slices.Equal(r, s) })
	})
	require.NotEmpty(t, others, "another set is left: %+v", f.Trace.Diagnosis)
	other := others[len(others)-1]
	c.rep.Failures = []Failure{{Rule: model.RuleModifyOnlyMasked, Rules: []model.RuleID{model.RuleModifyOnlyMasked}, Trace: tr},
		{Rule: other[0], Rules: other}}
	c.rep.Failures[0].Trace.Diagnosis = &d
	c.rep.Broken = []model.RuleID{model.RuleModifyOnlyMasked, other[0]}
	f = &c.rep.Failures[0]
	require.True(t, c.tellApart(f, map[int]Trace{4: run(withoutDestroy, false)}))
	assert.Equal(t, other, f.Rules, "the set another counterexample is blamed on")

	// A run without a step after the departure tells nothing.
	f.Rules, f.Trace.Diagnosis = []model.RuleID{model.RuleModifyOnlyMasked}, &d
	assert.False(t, c.tellApart(f, map[int]Trace{6: run(ops[:6], false)}))
}
