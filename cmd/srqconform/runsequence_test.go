package main

import (
	"context"
	"io"
	"testing"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/model"
)

// TestRunSequenceShowsTheRunThatFailsAnUnknownRule: with -known, a later
// run failing a rule the file does not list replaces an earlier run that
// failed known rules only (CI showed the known run's counterexample and
// exited 1 for a rule nobody could see), and a later known-only run does
// not replace the first unknown one.
func TestRunSequenceShowsTheRunThatFailsAnUnknownRule(t *testing.T) {
	failing := func(rule model.RuleID, source string) *conformance.Report {
		return &conformance.Report{StepsRun: 10, Failures: []conformance.Failure{{Rule: rule, Rules: []model.RuleID{rule}, Source: source}}}
	}
	reports := []*conformance.Report{
		{StepsRun: 10},
		failing(model.RuleQPLastWQE, "run 2, known"),
		failing(model.RuleRecvTooLarge, "run 3, unknown"),
		failing(model.RuleQPLastWQE, "run 4, known"),
		failing(model.RuleFetchFIFO, "run 5, unknown too"),
	}
	q := runSequence{runs: len(reports), seed: 1, stderr: io.Discard,
		known: conformance.Known{model.RuleQPLastWQE: "late event"},
		next:  func(i int) (*conformance.Report, error) { return reports[i], nil }}
	if code, done := q.run(context.Background()); done {
		t.Fatalf("run() = %d, done; want the runs made", code)
	}
	if got := q.rep.Failures[0].Source; got != "run 3, unknown" {
		t.Errorf("the report kept is %q's, want run 3's (the first failing a rule -known does not list)", got)
	}
	if !q.unknownElsewhere || len(q.deviatingSeeds) != 4 {
		t.Errorf("unknownElsewhere = %v, deviating seeds %v; want true and 4 seeds", q.unknownElsewhere, q.deviatingSeeds)
	}

	// Without an unknown failure the first deviating run stays.
	q = runSequence{runs: 3, seed: 1, stderr: io.Discard,
		known: conformance.Known{model.RuleQPLastWQE: "late event", model.RuleRecvTooLarge: "x"},
		next:  func(i int) (*conformance.Report, error) { return reports[i+1], nil }}
	q.run(context.Background())
	if got := q.rep.Failures[0].Source; got != "run 2, known" || q.unknownElsewhere {
		t.Errorf("the report kept is %q's (unknownElsewhere %v), want run 2's and false", got, q.unknownElsewhere)
	}
}
