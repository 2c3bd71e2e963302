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
