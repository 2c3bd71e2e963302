package concurrent

import (
	"slices"
	"testing"
	"time"

	"github.com/srqconform/srqconform/model"
)

// TestCompletionsWithoutImmediateGoToTheirMessage: on iWARP a completion
// carries no immediate data. A message the receiver never took (its Send
// left, so its sender saw success) must not be handed the next message's
// completion: the completion goes to the earliest unclaimed message whose
// length and pattern it carries, and only when none fits to the earliest.
func TestCompletionsWithoutImmediateGoToTheirMessage(t *testing.T) {
	msg := func(no, n uint32, call time.Duration) Operation {
		return Operation{Input: Input{Kind: KindMessage, QP: 0, Msg: model.Message{Opcode: model.Send, Len: n, Imm: no}},
			Output: Output{BadWR: -1, Peer: model.PeerOK}, Call: call, Return: call + time.Millisecond}
	}
	done := func(wr uint64, n uint32, pattern byte, at time.Duration) seenCompletion {
		return seenCompletion{c: model.Completion{WRID: wr, Status: model.WCSuccess, ByteLen: n, QP: 0}, at: at, pattern: pattern, hasPattern: n > 0}
	}
	for _, tc := range []struct {
		name string
		seen []seenCompletion
		want []int // completions per message 1, 2, 3
	}{
		{"in order", []seenCompletion{done(10, 5, 1, 10*time.Millisecond), done(11, 9, 2, 11*time.Millisecond), done(12, 9, 3, 12*time.Millisecond)}, []int{1, 1, 1}},
		// Message 1 never arrived: its length passes it over.
		{"first lost, other length", []seenCompletion{done(10, 9, 2, 10*time.Millisecond), done(11, 9, 3, 11*time.Millisecond)}, []int{0, 1, 1}},
		// Messages 2 and 3 have one length: the pattern tells them apart.
		{"second lost, same length", []seenCompletion{done(10, 5, 1, 10*time.Millisecond), done(11, 9, 3, 11*time.Millisecond)}, []int{1, 0, 1}},
		// No message has length 7: the earliest takes it, for the model to judge.
		{"nothing fits", []seenCompletion{done(10, 7, 9, 10*time.Millisecond)}, []int{1, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{qpTypes: []model.QPType{model.RC}}
			c := r.client("sender")
			r.add(c, msg(1, 5, 1*time.Millisecond))
			r.add(c, msg(2, 9, 2*time.Millisecond))
			r.add(c, msg(3, 9, 3*time.Millisecond))
			r.seen = tc.seen
			ops := r.assemble()
			for i, o := range ops {
				if got := len(o.Output.Completions); got != tc.want[i] {
					t.Errorf("message %d holds %d completions %v, want %d", o.Input.Msg.Imm, got, o.Output.Completions, tc.want[i])
				}
			}
		})
	}
}

// TestEventRulesFollowTheComplaint: the rules a decisive blame tries
// first are those of the event types the model's complaint differs in.
func TestEventRulesFollowTheComplaint(t *testing.T) {
	limit, last := model.EventSRQLimitReached.String(), model.EventQPLastWQEReached.String()
	for _, tc := range []struct {
		d    *model.Deviation
		want []model.RuleID
	}{
		{&model.Deviation{What: "events", Got: "[" + limit + " " + limit + "]", Want: "[" + limit + "]"}, []model.RuleID{model.RuleLimitOnce, model.RuleLimitFire}},
		{&model.Deviation{What: "events", Got: "[]", Want: "[" + limit + " " + last + "(qp1)]"}, []model.RuleID{model.RuleLimitFire, model.RuleQPLastWQE}},
		{&model.Deviation{What: "completions", Got: "[]", Want: "[" + last + "]"}, nil},
		{nil, nil},
	} {
		if got := eventRules(tc.d); !slices.Equal(got, tc.want) {
			t.Errorf("eventRules(%+v) = %v, want %v", tc.d, got, tc.want)
		}
	}
}
