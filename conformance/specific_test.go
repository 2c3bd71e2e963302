package conformance

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/model"
)

// TestAMinimizedCounterexampleBlamedOnTheCatchAllMovesToASpecificRule: a
// counterexample the run blamed on RECV-COMPLETION (chosen on its trace
// before shrinking), whose minimized trace FETCH-ONCE explains with fewer
// departures (a WR fetched twice, as a resize that copies from one slot
// too early does, and the WR it stood in for completes later), is blamed
// on FETCH-ONCE, and the run's broken rules follow. It stays where it is
// when FETCH-ONCE was refuted, when it is not on the catch-all, or when
// the trace alone cannot tell the two apart (the later steps cut).
func TestAMinimizedCounterexampleBlamedOnTheCatchAllMovesToASpecificRule(t *testing.T) {
	p := model.Documented()
	caps := model.Caps{MaxSRQWR: 1024, MaxSRQSGE: 4, Resize: true}
	send := model.Arrive{QP: 0, Msg: model.Message{Opcode: model.Send, Len: 1}}
	ops := []model.Op{
		model.CreateSRQ{MaxWR: 2, MaxSGE: 1}, model.CreateQP{Type: model.RC},
		model.ModifyQP{QP: 0, State: model.Init}, model.ModifyQP{QP: 0, State: model.RTR},
		model.Post{WRs: []model.WR{{ID: 1, NumSGE: 1, SGEs: []model.SGE{{Length: 64}}}}}, send,
		model.Post{WRs: []model.WR{{ID: 3, NumSGE: 1, SGEs: []model.SGE{{Length: 64}}}}},
		model.Resize{MaxWR: 2}, send, model.Poll{},
		// What follows shows WR 3 still queued: FETCH-ONCE's account.
		model.Post{WRs: []model.WR{{ID: 5, NumSGE: 1, SGEs: []model.SGE{{Length: 64}}}}}, send, model.Poll{},
	}
	m := model.New(p, caps)
	var tr Trace
	for i, op := range ops {
		obs, err := m.Run(op)
		require.NoError(t, err, "%s", op)
		switch i {
		case 9:
			// WR 1 completed again, in WR 3's place.
			require.Len(t, obs.Completions, 2)
			obs.Completions[1].WRID = 1
		case 12:
			require.Len(t, obs.Completions, 1)
			obs.Completions[0].WRID = 3
		}
		tr.Steps = append(tr.Steps, TraceStep{Op: op, obs: obs})
	}
	tr.Deviation = &model.Deviation{}
	d := model.Diagnose(p, caps, nil, tr.modelSteps())
	require.Contains(t, d.Explains(), []model.RuleID{model.RuleFetchOnce}, "%+v", d)
	require.Contains(t, d.Explains(), []model.RuleID{model.RuleRecvCompletion}, "%+v", d)

	blamedOnCatchAll := func() (*checker, *Failure) {
		onCatchAll := d
		onCatchAll.Rules, onCatchAll.Also = []model.RuleID{model.RuleRecvCompletion}, [][]model.RuleID{{model.RuleFetchOnce}}
		f := Failure{Rule: model.RuleRecvCompletion, Rules: onCatchAll.Rules, Trace: tr}
		f.Trace.Diagnosis = &onCatchAll
		c := foldChecker(p, caps, []model.RuleID{model.RuleRecvCompletion}, f)
		c.replay = func([]model.Op, model.RuleID, string, []model.RuleID) ReplayFile { return ReplayFile{} }
		return c, &c.rep.Failures[0]
	}

	c, f := blamedOnCatchAll()
	require.True(t, c.preferSpecific(f))
	assert.Equal(t, []model.RuleID{model.RuleFetchOnce}, f.Rules)
	assert.Equal(t, []model.RuleID{model.RuleFetchOnce}, f.Trace.Diagnosis.Rules)
	assert.Contains(t, f.Trace.Diagnosis.Also, []model.RuleID{model.RuleRecvCompletion})
	assert.Equal(t, []model.RuleID{model.RuleFetchOnce}, c.rep.Broken)

	c, f = blamedOnCatchAll()
	f.Trace.Steps = f.Trace.Steps[:10]
	assert.False(t, c.preferSpecific(f), "as many departures either way")
	assert.Equal(t, []model.RuleID{model.RuleRecvCompletion}, f.Rules)

	c, f = blamedOnCatchAll()
	f.Trace.Diagnosis.Refuted = [][]model.RuleID{{model.RuleFetchOnce}}
	assert.False(t, c.preferSpecific(f), "FETCH-ONCE refuted")
	assert.Equal(t, []model.RuleID{model.RuleRecvCompletion}, f.Rules)

	c, f = blamedOnCatchAll()
	f.Trace.Diagnosis.Rules, f.Trace.Diagnosis.Also = []model.RuleID{model.RuleFetchOnce}, [][]model.RuleID{{model.RuleRecvCompletion}}
	f.Rules = f.Trace.Diagnosis.Rules
	assert.False(t, c.preferSpecific(f), "already on the specific rule")
	assert.Equal(t, []model.RuleID{model.RuleFetchOnce}, f.Rules)
}
