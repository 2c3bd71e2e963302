package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
)

// verdict is an independent reviewer's reading of one mutant: the rules
// whose statements its observable behaviour breaks, and the one a driver
// author should be told of (Primary, or the rules tied for it).
type verdict struct {
	ID         string   `json:"id"`
	Observable bool     `json:"observable"`
	Broken     []string `json:"broken"`
	Primary    string   `json:"primary"`
	PrimaryTie []string `json:"primary_tie"`
	Why        string   `json:"why"`
}

// primaries are the rules the reviewer named primary: Primary and any tied.
func (v verdict) primaries() []string {
	out := []string{v.Primary}
	for _, r := range v.PrimaryTie {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// reviewFigures compares a sweep's blame with a reviewer's verdicts, over
// the caught runs of the mutants both name.
type reviewFigures struct {
	Mutants, Runs         int
	LabelMeetsPrimary     int // mutants whose label shares a rule with the reviewer's primary
	OneRule               int // caught runs on one rule
	OneRuleLabel          int // ... that rule in the label
	OneRulePrimary        int // ... that rule the reviewer's primary (or tied)
	OneRuleBroken         int // ... that rule among those the reviewer found broken
	AllBroken             int // caught runs whose every failing rule the reviewer found broken
	ReviewerSeveralBroken int // mutants the reviewer found to break more than one rule
	ReviewerTie           int // mutants with rules tied for primary
}

// review reads a sweep report (srqmutants -format json) and a reviewer's
// verdicts (a JSON list of verdict) and computes reviewFigures.
func review(reportPath, verdictsPath string) (reviewFigures, error) {
	var rep sweepReport
	var vs []verdict
	if err := readJSON(reportPath, &rep); err != nil {
		return reviewFigures{}, err
	}
	if err := readJSON(verdictsPath, &vs); err != nil {
		return reviewFigures{}, err
	}
	byID := map[string]result{}
	for _, m := range rep.Mutants {
		byID[m.ID] = m
	}
	var f reviewFigures
	for _, v := range vs {
		m, ok := byID[v.ID]
		if !ok {
			return reviewFigures{}, fmt.Errorf("verdict for mutant %q: the report %s has no such mutant", v.ID, reportPath)
		}
		f.Mutants++
		prim := v.primaries()
		if len(v.Broken) > 1 {
			f.ReviewerSeveralBroken++
		}
		if len(prim) > 1 {
			f.ReviewerTie++
		}
		if slices.ContainsFunc(m.Label, func(r string) bool { return slices.Contains(prim, r) }) {
			f.LabelMeetsPrimary++
		}
		for _, r := range m.Runs {
			if len(r.Failing) == 0 {
				continue
			}
			f.Runs++
			if !slices.ContainsFunc(r.Failing, func(x string) bool { return !slices.Contains(v.Broken, x) }) {
				f.AllBroken++
			}
			if len(r.Failing) != 1 {
				continue
			}
			rule := r.Failing[0]
			f.OneRule++
			if slices.Contains(m.Label, rule) {
				f.OneRuleLabel++
			}
			if slices.Contains(prim, rule) {
				f.OneRulePrimary++
			}
			if slices.Contains(v.Broken, rule) {
				f.OneRuleBroken++
			}
		}
	}
	return f, nil
}

// readJSON decodes the JSON file at path into v.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("reading %s: %w, want JSON", path, err)
	}
	return nil
}

// writeReview prints f as text.
func writeReview(w io.Writer, f reviewFigures) {
	pct := func(n, d int) string {
		if d == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
	}
	fmt.Fprintf(w, "mutants reviewed: %d; caught runs: %d\n", f.Mutants, f.Runs)
	fmt.Fprintf(w, "reviewer: %d mutants break more than one rule, %d with rules tied for primary\n", f.ReviewerSeveralBroken, f.ReviewerTie)
	fmt.Fprintf(w, "label shares a rule with the reviewer's primary: %d of %d mutants (%s)\n", f.LabelMeetsPrimary, f.Mutants, pct(f.LabelMeetsPrimary, f.Mutants))
	fmt.Fprintf(w, "caught runs on one rule: %d (%s)\n", f.OneRule, pct(f.OneRule, f.Runs))
	fmt.Fprintf(w, "  on the label: %d (%s)\n", f.OneRuleLabel, pct(f.OneRuleLabel, f.Runs))
	fmt.Fprintf(w, "  on the reviewer's primary: %d (%s)\n", f.OneRulePrimary, pct(f.OneRulePrimary, f.Runs))
	fmt.Fprintf(w, "  on a rule the reviewer found broken: %d (%s of one-rule runs)\n", f.OneRuleBroken, pct(f.OneRuleBroken, f.OneRule))
	fmt.Fprintf(w, "caught runs whose every failing rule the reviewer found broken: %d (%s)\n", f.AllBroken, pct(f.AllBroken, f.Runs))
}
