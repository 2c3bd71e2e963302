package concurrent

import (
	"slices"
	"testing"
	"time"

	"github.com/srqconform/srqconform/model"
)

// withBlameBounds sets the blame's bounds and scales for one test.
func withBlameBounds(t *testing.T, bound time.Duration, scales ...time.Duration) {
	t.Helper()
	old := []time.Duration{decisiveTimeout, decisiveLong, decisiveBudget, blameBudget}
	oldScales := blameScales
	t.Cleanup(func() {
		decisiveTimeout, decisiveLong, decisiveBudget, blameBudget = old[0], old[1], old[2], old[3]
		blameScales = oldScales
	})
	decisiveTimeout, decisiveLong, decisiveBudget, blameBudget = bound, bound, bound, bound
	blameScales = scales
}

// lastWQEHistory is a history real rxe recorded on 6.12 (seed 19 of
// reports/concurrent/rxe-trixie.json): a QP went to ERR and no
// LAST_WQE_REACHED came, so with QP-LAST-WQE waived it linearizes.
func lastWQEHistory(t *testing.T) *History {
	t.Helper()
	h, err := ReadHistory("testdata/rxe-trixie-last-wqe-19.json")
	if err != nil {
		t.Fatalf("ReadHistory: %v", err)
	}
	return h
}

// TestBlameCutShortIsTriedAgainLarger: bounds far too small for any
// search cut the first try; the blame is made again at a larger scale and
// finds the rule decisively, not whatever the cut ranking guessed.
func TestBlameCutShortIsTriedAgainLarger(t *testing.T) {
	withBlameBounds(t, time.Microsecond, 1, 100_000_000) // then 100 s each
	res, err := Check(lastWQEHistory(t), CheckOptions{Timeout: DefaultCheckTimeout, ReduceBudget: -1})
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if !res.Violation() || res.Rule != model.RuleQPLastWQE || !res.Decisive || res.BlameUndecided {
		t.Fatalf("Check = %s, rule %s, decisive %v, undecided %v; want a violation of QP-LAST-WQE, decisive, decided", res.Verdict, res.Rule, res.Decisive, res.BlameUndecided)
	}
}

// TestBlameCutAtEveryScaleIsUndecided: when every scale's bounds cut the
// blame, the result says so instead of passing a guess off as the rule.
func TestBlameCutAtEveryScaleIsUndecided(t *testing.T) {
	withBlameBounds(t, time.Microsecond, 1, 2)
	res, err := Check(lastWQEHistory(t), CheckOptions{Timeout: DefaultCheckTimeout, ReduceBudget: -1})
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if !res.Violation() || !res.BlameUndecided || res.Decisive {
		t.Fatalf("Check = %s, rule %s, decisive %v, undecided %v; want a violation whose blame is undecided", res.Verdict, res.Rule, res.Decisive, res.BlameUndecided)
	}
	if c := res.Candidates(); len(c) == 0 || c[0] != res.Rule {
		t.Fatalf("Candidates() = %v; want the best guess %s first", c, res.Rule)
	}
	// The rule of the event the complaint lacks, whose search a bound
	// cut short, was never refuted: it stays a candidate.
	if c := res.Candidates(); !slices.Contains(c, model.RuleQPLastWQE) {
		t.Fatalf("Candidates() = %v (complaint %s); want QP-LAST-WQE among them", c, res.Complaint)
	}
}

// TestAFavouredRuleABoundCutIsUnrefuted: a favoured rule whose decisive
// search a bound cut, or which the deadline left untried, is recorded as
// neither fitted nor refuted; one that fitted or was tried to the end is
// not.
func TestAFavouredRuleABoundCutIsUnrefuted(t *testing.T) {
	h := lastWQEHistory(t)
	c, err := newChecker(h)
	if err != nil {
		t.Fatalf("newChecker: %v", err)
	}
	rules := []model.RuleID{model.RuleQPLastWQE, model.RuleLimitFire}
	if got := c.decisive(h.Ops, rules, 2, time.Now().Add(-time.Second)); got != 0 || !slices.Equal(c.unrefuted, rules) {
		t.Fatalf("decisive past its deadline = %s, unrefuted %v; want none, both unrefuted", got, c.unrefuted)
	}
	c.unrefuted = nil
	if got := c.decisive(h.Ops, rules, 2, time.Now().Add(time.Minute)); got != model.RuleQPLastWQE || len(c.unrefuted) != 0 {
		t.Fatalf("decisive with time = %s, unrefuted %v; want QP-LAST-WQE, none unrefuted", got, c.unrefuted)
	}
}
