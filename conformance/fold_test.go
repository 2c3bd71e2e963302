package conformance

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/model"
)

// foldChecker is a checker with only what fold and the rule table read.
func foldChecker(p model.Profile, caps model.Caps, broken []model.RuleID, fs ...Failure) *checker {
	return &checker{ctx: context.Background(), opts: Options{Profile: p}, caps: caps, work: model.NewMeter(model.Effort{Pairs: 1 << 30, Total: 1 << 31}),
		x: &executor{timing: newTiming()}, rep: &Report{Broken: broken, Failures: fs},
		coverage: map[model.RuleID]int{}, ran: map[model.RuleID]int{}, skipped: map[model.RuleID]string{}, blocked: map[model.RuleID]string{}}
}

// rnrTrace is an RC message meeting an empty SRQ that the device failed
// (RECV-RNR says RNR), then a poll whose completion comes from no WR the
// SRQ held, as a device that fetched from its empty ring does; when
// after is false the RNR step is left out, and the trace needs no
// departure from RECV-RNR before the poll.
func rnrTrace(t *testing.T, p model.Profile, caps model.Caps, after bool) Trace {
	t.Helper()
	tr := upTrace(t, p, caps)
	if after {
		tr.Steps = append(tr.Steps, TraceStep{Op: model.Arrive{QP: 0, Msg: model.Message{Opcode: model.Send, Len: 8}}, obs: model.Observation{BadWR: -1, Peer: model.PeerError}})
	}
	tr.Steps = append(tr.Steps, TraceStep{Op: model.Poll{}, obs: model.Observation{BadWR: -1,
		Completions: []model.Completion{{WRID: 0, QP: 0, Status: model.WCLocLenErr}}}})
	tr.Deviation = &model.Deviation{}
	return tr
}

// TestAFailureOnWhatADepartureLeftFollowsFromIt: a failure whose steps
// before the failing one need an earlier rule's departure is that rule's
// (one root cause is one rule), and the rule whose check noticed it is
// reported as following from it, not as broken; a failure that needs no
// such departure stays a root cause of its own.
func TestAFailureOnWhatADepartureLeftFollowsFromIt(t *testing.T) {
	p := model.Documented()
	caps := model.Caps{MaxSRQWR: 1024, MaxSRQSGE: 4, Resize: true}
	root := Failure{Rule: model.RuleRecvRNR, Rules: []model.RuleID{model.RuleRecvRNR}, Trace: rnrTrace(t, p, caps, true)}
	after := Failure{Rule: model.RuleRecvCompletion, Trace: rnrTrace(t, p, caps, true), Replay: ReplayFile{Relaxed: []model.RuleID{model.RuleRecvRNR}}}

	c := foldChecker(p, caps, []model.RuleID{model.RuleRecvRNR}, root, after)
	c.fold()
	assert.Equal(t, model.RuleRecvRNR, c.rep.Failures[1].Follows)
	assert.Equal(t, []model.RuleID{model.RuleRecvRNR}, c.rep.Broken)
	for _, rr := range c.ruleTable() {
		switch rr.Rule.ID {
		case model.RuleRecvCompletion:
			assert.Equal(t, Follows, rr.Status, rr.Reason)
		case model.RuleRecvRNR:
			assert.Equal(t, Fail, rr.Status)
			assert.Equal(t, []int{0, 1}, rr.Failures)
		}
	}

	alone := Failure{Rule: model.RuleRecvCompletion, Trace: rnrTrace(t, p, caps, false), Replay: ReplayFile{Relaxed: []model.RuleID{model.RuleRecvRNR}}}
	c = foldChecker(p, caps, []model.RuleID{model.RuleRecvRNR}, root, alone)
	c.fold()
	assert.Zero(t, c.rep.Failures[1].Follows, "the poll needs no departure from RECV-RNR before it")
}

// TestAnExplainedFailureFollowsOnlyFromAMinimalTrace: a failure a rule
// explains is folded into an earlier rule only when its trace is known
// 1-minimal; otherwise the earlier departure may be a step shrinking had
// no time to remove, and the rule stays broken on its own.
func TestAnExplainedFailureFollowsOnlyFromAMinimalTrace(t *testing.T) {
	p := model.Documented()
	caps := model.Caps{MaxSRQWR: 1024, MaxSRQSGE: 4, Resize: true}
	root := Failure{Rule: model.RuleRecvRNR, Rules: []model.RuleID{model.RuleRecvRNR}, Trace: rnrTrace(t, p, caps, true)}
	later := Failure{Rule: model.RuleRecvCompletion, Rules: []model.RuleID{model.RuleRecvCompletion}, Trace: rnrTrace(t, p, caps, true),
		Replay: ReplayFile{Relaxed: []model.RuleID{model.RuleRecvRNR}}}
	broken := []model.RuleID{model.RuleRecvRNR, model.RuleRecvCompletion}

	c := foldChecker(p, caps, broken, root, later)
	c.fold()
	assert.Zero(t, c.rep.Failures[1].Follows)
	assert.Equal(t, broken, c.rep.Broken)

	later.minimal = true
	c = foldChecker(p, caps, broken, root, later)
	c.fold()
	assert.Equal(t, model.RuleRecvRNR, c.rep.Failures[1].Follows)
	assert.Equal(t, []model.RuleID{model.RuleRecvRNR}, c.rep.Broken)
}

// TestAFailureWhoseOwnRuleExplainsTheStepsBeforeDoesNotFollow is emulated
// siw held to documented: a 0-length SGE holds 0 bytes, so a 64-byte
// message fails. The first trace that showed it was blamed on
// RECV-BAD-KEY (a tie on that trace); the next, on SGE-LEN0, departs at
// the message, before its failing poll. RECV-BAD-KEY explains that step
// too, but so does SGE-LEN0 itself: the failure is SGE-LEN0's own, not
// what followed from RECV-BAD-KEY.
func TestAFailureWhoseOwnRuleExplainsTheStepsBeforeDoesNotFollow(t *testing.T) {
	p := model.Documented()
	caps := model.Caps{MaxSRQWR: 1024, MaxSRQSGE: 4, Resize: true}
	m := model.New(p, caps)
	var tr Trace
	for _, op := range []model.Op{
		model.CreateSRQ{MaxWR: 8, MaxSGE: 1}, model.CreateQP{Type: model.RC},
		model.ModifyQP{QP: 0, State: model.Init}, model.ModifyQP{QP: 0, State: model.RTR},
		model.Post{WRs: []model.WR{{ID: 1, NumSGE: 1, SGEs: []model.SGE{{Length: 0}}}}},
	} {
		obs, err := m.Run(op)
		require.NoError(t, err, "%s", op)
		tr.Steps = append(tr.Steps, TraceStep{Op: op, obs: obs})
	}
	tr.Steps = append(tr.Steps,
		TraceStep{Op: model.Arrive{QP: 0, Msg: model.Message{Opcode: model.Send, Len: 64}}, obs: model.Observation{BadWR: -1, Peer: model.PeerError}},
		TraceStep{Op: model.Poll{}, obs: model.Observation{BadWR: -1, Completions: []model.Completion{{WRID: 1, QP: 0, Status: model.WCLocLenErr}},
			Events: []model.Event{{Type: model.EventQPLastWQEReached, QP: 0}}}})
	tr.Deviation = &model.Deviation{}
	root := Failure{Rule: model.RuleRecvBadKey, Rules: []model.RuleID{model.RuleRecvBadKey}, Trace: tr}
	own := Failure{Rule: model.RuleSGELen0, Rules: []model.RuleID{model.RuleSGELen0}, Trace: tr,
		Replay: ReplayFile{Relaxed: []model.RuleID{model.RuleRecvBadKey}}, minimal: true}
	broken := []model.RuleID{model.RuleRecvBadKey, model.RuleSGELen0}
	c := foldChecker(p, caps, broken, root, own)
	c.fold()
	assert.Zero(t, c.rep.Failures[1].Follows)
	assert.Equal(t, broken, c.rep.Broken)
}
