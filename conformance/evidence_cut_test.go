package conformance

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/model"
)

// TestEvidenceNoOneRuleExplainsIsCut: a failing trace whose checked steps
// one rule explains, followed by evidence that only a second rule can
// explain, is blamed on the one rule, and the trace keeps the evidence up
// to where that rule stops explaining it. Without the cut the trace needs
// two rules, and the run would count a second failure that is only what
// followed from the first.
func TestEvidenceNoOneRuleExplainsIsCut(t *testing.T) {
	p := model.Documented()
	caps := model.Caps{MaxSRQWR: 1024, MaxSRQSGE: 4, Resize: true}
	m := model.New(p, caps)
	ops := []model.Op{
		model.CreateSRQ{MaxWR: 8, MaxSGE: 1}, model.CreateQP{Type: model.RC},
		model.ModifyQP{QP: 0, State: model.Init}, model.ModifyQP{QP: 0, State: model.RTR}, model.ModifyQP{QP: 0, State: model.RTS},
		model.Post{WRs: []model.WR{{ID: 1, NumSGE: 1, SGEs: []model.SGE{{Length: 64}}}}},
	}
	var tr Trace
	for _, op := range ops {
		obs, err := m.Run(op)
		require.NoError(t, err, "%s", op)
		tr.Steps = append(tr.Steps, TraceStep{Op: op, obs: obs})
	}
	// The device refuses a post of a valid WR to a queue with room:
	// POST-FULL (or another post rule) explains it alone.
	post := model.Post{WRs: []model.WR{{ID: 2, NumSGE: 1, SGEs: []model.SGE{{Length: 64}}}}}
	tr.Steps = append(tr.Steps, TraceStep{Op: post, obs: model.Observation{Errno: model.ENOMEM, BadWR: 0}})
	// Evidence: a query that reports another max_wr and the armed limit
	// of an SRQ never armed, which no rule of posting explains.
	tr.Steps = append(tr.Steps, TraceStep{Op: model.Query{}, Evidence: true,
		obs: model.Observation{BadWR: -1, Attr: model.SRQAttr{MaxWR: 3, MaxSGE: 1, SRQLimit: 7}}})
	tr.Deviation = &model.Deviation{}

	c := &checker{opts: Options{Profile: p}, caps: caps, work: model.NewMeter(model.Effort{Pairs: 1 << 30, Total: 1 << 31}),
		x: &executor{timing: newTiming()}, rep: &Report{},
		replay: func([]model.Op, model.RuleID, string, []model.RuleID) ReplayFile { return ReplayFile{} }}
	whole := c.diagnose(tr)
	require.NotEqual(t, 1, len(whole.Rules), "the whole trace needs more than one rule: %+v", whole)
	f := &failing{tr: tr}
	c.settle([]*failing{f})
	require.Len(t, f.diag.Rules, 1, "diagnosis %+v", f.diag)
	assert.NotContains(t, []model.RuleID{model.RuleQueryAttr, model.RuleQueryLimit}, f.diag.Rules[0])
	assert.Len(t, f.tr.Steps, len(ops)+1, "the evidence no one rule explains is cut")
	require.Len(t, c.rep.Failures, 1)
	assert.Equal(t, f.diag.Rules, c.rep.Failures[0].Rules)
}
