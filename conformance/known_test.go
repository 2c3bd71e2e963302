package conformance

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/srqconform/srqconform/model"
)

// TestKnownCountsEveryRuleOfADiagnosis: a failure filed under a known rule
// whose diagnosis names a second rule breaks that rule too; when the file
// does not list it, the run does not pass.
func TestKnownCountsEveryRuleOfADiagnosis(t *testing.T) {
	k, err := ParseKnown(strings.NewReader("RECV-BAD-KEY # known\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{Failures: []Failure{{Rule: model.RuleRecvBadKey, Rules: []model.RuleID{model.RuleRecvBadKey, model.RuleQPLastWQE}}}}
	if got := k.Unknown(rep, io.Discard); !slices.Equal(got, []model.RuleID{model.RuleQPLastWQE}) {
		t.Errorf("Known{RECV-BAD-KEY}.Unknown(a failure blamed on RECV-BAD-KEY and QP-LAST-WQE) = %v; want [QP-LAST-WQE]", got)
	}
	k[model.RuleQPLastWQE] = "known too"
	var said strings.Builder
	if got := k.Unknown(rep, &said); len(got) != 0 {
		t.Errorf("with both known, Unknown = %v; want none", got)
	}
	if strings.Contains(said.String(), "QP-LAST-WQE did not fail") {
		t.Errorf("a known rule that is the second of a diagnosis is said not to have failed:\n%s", said.String())
	}
}

// TestAKnownRuleThatExplainsATraceAsWellCountsAsKnown: real rxe on 6.12,
// whose LAST_WQE_REACHED comes late (QP-LAST-WQE, known), gave a trace
// that RECV-TOO-LARGE, QP-LAST-WQE and RECV-NUMSGE0 explain equally well;
// it is blamed on RECV-TOO-LARGE, which ranks first. With QP-LAST-WQE
// known the failure counts as QP-LAST-WQE and says so; with no known rule
// among the alternatives, it stays unknown.
func TestAKnownRuleThatExplainsATraceAsWellCountsAsKnown(t *testing.T) {
	k, err := ParseKnown(strings.NewReader("QP-LAST-WQE # late events\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	diag := &model.Diagnosis{Rules: []model.RuleID{model.RuleRecvTooLarge}, Also: [][]model.RuleID{{model.RuleRecvNumSGE0}, {model.RuleQPLastWQE}}}
	rep := &Report{Failures: []Failure{{Rule: model.RuleRecvTooLarge, Rules: []model.RuleID{model.RuleRecvTooLarge}, Trace: Trace{Diagnosis: diag}}}}
	var said strings.Builder
	if got := k.Unknown(rep, &said); len(got) != 0 {
		t.Errorf("Known{QP-LAST-WQE}.Unknown(a trace QP-LAST-WQE explains as well) = %v; want none", got)
	}
	for _, want := range []string{"RECV-TOO-LARGE failed in counterexample #1", "the known QP-LAST-WQE explains as well", "QP-LAST-WQE failed, a known finding"} {
		if !strings.Contains(said.String(), want) {
			t.Errorf("Unknown said:\n%s\nwant a line with %q", said.String(), want)
		}
	}
	diag.Also = [][]model.RuleID{{model.RuleRecvNumSGE0}}
	if got := k.Unknown(rep, io.Discard); !slices.Equal(got, []model.RuleID{model.RuleRecvTooLarge}) {
		t.Errorf("with no known alternative, Unknown = %v; want [RECV-TOO-LARGE]", got)
	}
}
