package conformance

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/model"
)

// upTrace is an SRQ with an RC QP in RTS and, if any, wrs posted, as a
// trace of the model's own observations.
func upTrace(t *testing.T, p model.Profile, caps model.Caps, wrs ...model.WR) Trace {
	t.Helper()
	m := model.New(p, caps)
	var tr Trace
	ops := []model.Op{
		model.CreateSRQ{MaxWR: 8, MaxSGE: 1}, model.CreateQP{Type: model.RC},
		model.ModifyQP{QP: 0, State: model.Init}, model.ModifyQP{QP: 0, State: model.RTR}, model.ModifyQP{QP: 0, State: model.RTS},
	}
	if len(wrs) > 0 {
		ops = append(ops, model.Post{WRs: wrs})
	}
	for _, op := range ops {
		obs, err := m.Run(op)
		require.NoError(t, err, "%s", op)
		tr.Steps = append(tr.Steps, TraceStep{Op: op, obs: obs})
	}
	return tr
}

// TestUnifyAsksARuleToExplainTheFailuresNotTheirEvidence: two failures
// of a device that fetches one slot past the head, the first diagnosed
// RECV-COMPLETION (its evidence, a later completion's byte_len, only the
// catch-all explains), the second POST-COPY (an empty slot's completion).
// FETCH-FIFO explains the checked steps of both: the run is blamed on it
// alone, and the evidence it does not explain is cut from the trace.
func TestUnifyAsksARuleToExplainTheFailuresNotTheirEvidence(t *testing.T) {
	p := model.Documented()
	caps := model.Caps{MaxSRQWR: 1024, MaxSRQSGE: 4, Resize: true}
	sge := func(id uint64) model.WR {
		return model.WR{ID: id, NumSGE: 1, SGEs: []model.SGE{{Length: 64}}}
	}
	send := model.Arrive{QP: 0, Msg: model.Message{Opcode: model.Send, Len: 8}}

	a := upTrace(t, p, caps, sge(1), sge(2))
	a.Steps = append(a.Steps,
		TraceStep{Op: send, obs: model.Observation{BadWR: -1, Peer: model.PeerOK}},
		TraceStep{Op: model.Poll{}, obs: model.Observation{BadWR: -1, Completions: []model.Completion{{WRID: 2, QP: 0, Opcode: model.WCRecv, ByteLen: 8}}}},
		TraceStep{Op: send, obs: model.Observation{BadWR: -1, Peer: model.PeerOK}, Evidence: true},
		TraceStep{Op: model.Poll{}, obs: model.Observation{BadWR: -1, Completions: []model.Completion{{WRID: 1, QP: 0, Opcode: model.WCRecv, ByteLen: 9}}}, Evidence: true})
	a.Deviation = &model.Deviation{}
	a.Diagnosis = &model.Diagnosis{Rules: []model.RuleID{model.RuleRecvCompletion}, Also: [][]model.RuleID{{model.RuleFetchFIFO}}}

	b := upTrace(t, p, caps, sge(1))
	b.Steps = append(b.Steps,
		TraceStep{Op: send, obs: model.Observation{BadWR: -1, Peer: model.PeerError}},
		TraceStep{Op: model.Poll{}, obs: model.Observation{BadWR: -1, Completions: []model.Completion{{WRID: 0, QP: 0, Status: model.WCLocLenErr}},
			Events: []model.Event{{Type: model.EventQPLastWQEReached, QP: 0}}}})
	b.Deviation = &model.Deviation{}
	b.Diagnosis = &model.Diagnosis{Rules: []model.RuleID{model.RulePostCopy}}

	for _, tr := range []Trace{a, b} {
		_, ok, _ := model.DeparturesWithin(p, caps, nil, tr.checkedSteps(), []model.RuleID{model.RuleFetchFIFO}, nil)
		require.True(t, ok, "FETCH-FIFO explains the checked steps")
	}
	_, ok, _ := model.DeparturesWithin(p, caps, nil, a.modelSteps(), []model.RuleID{model.RuleFetchFIFO}, nil)
	require.False(t, ok, "FETCH-FIFO does not explain the first trace's evidence")

	broken := []model.RuleID{model.RuleRecvCompletion, model.RulePostCopy}
	c := foldChecker(p, caps, broken,
		Failure{Rule: model.RuleRecvCompletion, Rules: broken[:1], Trace: a},
		Failure{Rule: model.RulePostCopy, Rules: broken[1:], Trace: b})
	c.relaxed = broken
	c.unify()
	assert.Equal(t, []model.RuleID{model.RuleFetchFIFO}, c.rep.Broken)
	for _, f := range c.rep.Failures {
		assert.Equal(t, []model.RuleID{model.RuleFetchFIFO}, f.Rules)
	}
	assert.Equal(t, a.checkedLen()+1, len(c.rep.Failures[0].Trace.Steps), "the evidence is cut where FETCH-FIFO stops explaining it: before the last poll")
}
