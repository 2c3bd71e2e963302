package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/srqconform/srqconform/mutants/outcome"
)

// figures are a sweep's measures. Runs are the seed runs of mutants that
// are not equivalent and did not crash; a caught run fails some rule.
type figures struct {
	Generated     int `json:"generated"`               // every mutant the generator made
	TypeErrors    int `json:"not_compiling_typecheck"` // of those, refused by the type checker
	Swept         int `json:"swept"`                   // chosen (all, or the sample) and run
	BuildErrors   int `json:"not_compiling_build"`     // of those, refused by go build
	Equivalent    int `json:"equivalent"`
	NotEquivalent int `json:"not_equivalent"`
	Crashed       int `json:"crashed"` // panicked or hung (counted not equivalent, not caught)
	CaughtEvery   int `json:"caught_every_seed"`
	// FailedEvery counts those whose every seed failed a rule or ended in
	// the driver's own failure, a hang included (mutation testing's
	// "killed"); DriverFailed those no rule caught but the driver's
	// failure did.
	FailedEvery  int `json:"failed_every_seed"`
	DriverFailed int `json:"driver_failed"`
	Escaped      int `json:"escaped"` // no seed caught it, a script tells it apart
	// Allowed counts those no seed caught whose difference shows in a
	// case the suite passed: the profile allows it (counted not
	// equivalent; a row of the figures leaves them out).
	Allowed     int `json:"allowed"`
	Runs        int `json:"runs"`
	ErrorRuns   int `json:"error_runs"` // not caught, ended in a harness error
	CaughtRuns  int `json:"caught_runs"`
	ExactlyOne  int `json:"caught_runs_one_rule"`
	EqualsLabel int `json:"caught_runs_blame_in_label"`
	MoreThanOne int `json:"caught_runs_more_rules"`
	// MoreEachOne counts the runs of MoreThanOne whose every
	// counterexample is blamed on one rule: one change that breaks
	// several promises, each shown by its own counterexample, not a
	// cascade inside one counterexample.
	MoreEachOne int `json:"caught_runs_more_rules_each_counterexample_one"`
	// Counterexamples are the caught runs' diagnosed failures;
	// CexOneRule those blamed on exactly one rule, CexNoRule those no
	// rule nor pair explained (recorded under the rule that noticed
	// them), CexInLabel those whose rules are all in the label.
	Counterexamples int `json:"counterexamples"`
	CexOneRule      int `json:"counterexamples_one_rule"`
	CexNoRule       int `json:"counterexamples_unexplained"`
	CexInLabel      int `json:"counterexamples_in_label"`
	// Longest is the longest run's elapsed time over its budget.
	Longest   float64 `json:"longest_over_budget"`
	LongestID string  `json:"longest_mutant,omitempty"`
}

// subset says whether every element of a is in b.
func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// measure computes the figures of a sweep.
func measure(generated, typeErrors int, rs []result) figures {
	f := figures{Generated: generated, TypeErrors: typeErrors, Swept: len(rs)}
	for _, r := range rs {
		switch r.Status {
		case statusNotCompiling:
			f.BuildErrors++
			continue
		case statusEquivalent:
			f.Equivalent++
			continue
		case statusPanic, statusHang:
			f.Crashed++
		case statusEscaped:
			f.Escaped++
		case statusAllowed:
			f.Allowed++
		case statusDriverFailed:
			f.DriverFailed++
		}
		f.NotEquivalent++
		if r.Status == statusCaught && r.Caught == len(r.Runs) {
			f.CaughtEvery++
		}
		if len(r.Runs) > 0 && !slices.ContainsFunc(r.Runs, func(run outcome.SeedRun) bool { return !run.Failed() }) {
			f.FailedEvery++ // a crash ends a mutant's runs: it stands for every seed
		}
		for _, run := range r.Runs {
			if run.Crash != "" {
				continue
			}
			f.Runs++
			if over := float64(run.Elapsed) / float64(run.Budget); over > f.Longest {
				f.Longest, f.LongestID = over, r.ID
			}
			if !run.Caught() {
				if run.Error != "" {
					f.ErrorRuns++
				}
				continue
			}
			f.CaughtRuns++
			switch {
			case len(run.Failing) == 1:
				f.ExactlyOne++
			default:
				f.MoreThanOne++
				if len(run.Diagnoses) > 0 && !slices.ContainsFunc(run.Diagnoses, func(d []string) bool { return len(d) != 1 }) {
					f.MoreEachOne++
				}
			}
			for _, d := range run.Diagnoses {
				f.Counterexamples++
				switch len(d) {
				case 0:
					f.CexNoRule++
				case 1:
					f.CexOneRule++
				}
				if len(d) > 0 && subset(d, r.Label) {
					f.CexInLabel++
				}
			}
			if subset(run.Failing, r.Label) {
				f.EqualsLabel++
			}
		}
	}
	return f
}

func pct(n, of int) string {
	if of == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}

// rows returns the figures as the report's table rows.
func (f figures) rows() [][2]string {
	return [][2]string{
		{"mutants generated", fmt.Sprint(f.Generated)},
		{"not compiling (type check), discarded", fmt.Sprint(f.TypeErrors)},
		{"swept (all compiling, or the sample)", fmt.Sprint(f.Swept)},
		{"not compiling (go build), discarded", fmt.Sprint(f.BuildErrors)},
		{"equivalent (no seed, no script tells them apart), excluded", fmt.Sprint(f.Equivalent)},
		{"not equivalent", fmt.Sprint(f.NotEquivalent)},
		{"caught in every seed (of not equivalent)", fmt.Sprintf("%d (%s)", f.CaughtEvery, pct(f.CaughtEvery, f.NotEquivalent))},
		{"escaped: no seed caught, a script tells apart, none of the suite's cases does", fmt.Sprint(f.Escaped)},
		{"allowed by the profile: no seed caught, a case the suite passed tells apart (the model accepts the mutant's answer)", fmt.Sprint(f.Allowed)},
		{"caught in every seed, of not equivalent and not allowed by the profile", fmt.Sprintf("%d (%s)", f.CaughtEvery, pct(f.CaughtEvery, f.NotEquivalent-f.Allowed))},
		{"panicked or hung (not caught)", fmt.Sprint(f.Crashed)},
		{"driver failed: no rule failed, some seed ended in the driver's error or hang (not caught; a panic in a call, or an error of the driver's own state, drivers.ErrCallFailed, is its rule's failure, model.CallRule)", fmt.Sprint(f.DriverFailed)},
		{"failed in every seed, a rule's failure or the driver's own (mutation testing's killed)", fmt.Sprintf("%d (%s)", f.FailedEvery, pct(f.FailedEvery, f.NotEquivalent))},
		{"caught runs / runs", fmt.Sprintf("%d / %d", f.CaughtRuns, f.Runs)},
		{"runs not caught that ended in a harness error", fmt.Sprint(f.ErrorRuns)},
		{"caught runs blamed on exactly one rule", fmt.Sprintf("%d (%s)", f.ExactlyOne, pct(f.ExactlyOne, f.CaughtRuns))},
		{"caught runs whose blame is within the label", fmt.Sprintf("%d (%s)", f.EqualsLabel, pct(f.EqualsLabel, f.CaughtRuns))},
		{"caught runs with more than one failing rule", fmt.Sprintf("%d (%s)", f.MoreThanOne, pct(f.MoreThanOne, f.CaughtRuns))},
		{"of those, every counterexample on one rule (one change, several promises)", fmt.Sprintf("%d (%s)", f.MoreEachOne, pct(f.MoreEachOne, f.MoreThanOne))},
		{"counterexamples of caught runs", fmt.Sprint(f.Counterexamples)},
		{"counterexamples blamed on exactly one rule", fmt.Sprintf("%d (%s)", f.CexOneRule, pct(f.CexOneRule, f.Counterexamples))},
		{"counterexamples no rule nor pair explains", fmt.Sprintf("%d (%s)", f.CexNoRule, pct(f.CexNoRule, f.Counterexamples))},
		{"counterexamples blamed within the label", fmt.Sprintf("%d (%s)", f.CexInLabel, pct(f.CexInLabel, f.Counterexamples))},
		{"longest run over its budget (must not exceed 4x)", fmt.Sprintf("%.2fx (%s)", f.Longest, f.LongestID)},
	}
}

// sweepReport is what srqmutants writes.
type sweepReport struct {
	Command     string        `json:"command"`
	Config      config        `json:"config"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	Interrupted bool          `json:"interrupted,omitempty"`
	Figures     figures       `json:"figures"`
	Mutants     []result      `json:"mutants"`
}

// cell makes s safe in a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func code(s string) string {
	if s == "" {
		return "(removed)"
	}
	return "`" + cell(s) + "`"
}

// blame lists a mutant's failing rules per seed ("1: POST-FULL; 2: -").
func blame(r result) string {
	var parts []string
	for _, run := range r.Runs {
		b := "-"
		switch {
		case run.Crash != "":
			b = run.Crash
		case run.Caught():
			b = strings.Join(run.Failing, ",")
		case run.Error != "":
			b = "error: " + run.Error
		}
		parts = append(parts, fmt.Sprintf("%d: %s", run.Seed, b))
	}
	return strings.Join(parts, "; ")
}

// writeMarkdown writes the report as Markdown.
func writeMarkdown(w io.Writer, rep sweepReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Generated emulator mutants\n\n`%s`: seeds %v, budget %v per seed, %d witness scripts of %d steps; %v.\n",
		rep.Command, rep.Config.Seeds, rep.Config.Budget, rep.Config.Scripts, rep.Config.Steps, rep.Elapsed.Round(time.Second))
	if rep.Interrupted {
		b.WriteString("\n**Interrupted**: the figures cover the mutants finished before the interrupt.\n")
	}
	b.WriteString("\nA run is caught when it fails some rule; its blame is the set of failing rules. \"Within the label\" means every failing rule is one the mutated code's annotation names.\n\n| figure | value |\n|---|---|\n")
	for _, row := range rep.Figures.rows() {
		fmt.Fprintf(&b, "| %s | %s |\n", row[0], row[1])
	}
	section := func(title string, keep func(result) bool, last func(result) string) {
		var rows []string
		for _, r := range rep.Mutants {
			if keep(r) {
				rows = append(rows, fmt.Sprintf("| %s | %s:%d | %s | %s → %s | %s | %s | %s |", r.ID, r.File, r.Line, r.Operator,
					code(r.Before), code(r.After), strings.Join(r.Label, ", "), statusText(r, len(rep.Config.Seeds)), cell(last(r))))
			}
		}
		fmt.Fprintf(&b, "\n## %s (%d)\n\n", title, len(rows))
		if len(rows) == 0 {
			return
		}
		b.WriteString("| id | where | operator | change | label | status | failing rules per seed, or witness |\n|---|---|---|---|---|---|---|\n")
		b.WriteString(strings.Join(rows, "\n") + "\n")
	}
	notEq := func(r result) bool { return r.Status != statusEquivalent && r.Status != statusNotCompiling }
	section("Not equivalent", notEq, func(r result) string {
		if r.Witness != "" {
			return blame(r) + "; witness: " + r.Witness
		}
		return blame(r)
	})
	section("Equivalent, excluded from the figures", func(r result) bool { return r.Status == statusEquivalent }, blame)
	section("Not compiling under go build", func(r result) bool { return r.Status == statusNotCompiling },
		func(r result) string { return r.BuildError })
	_, err := io.WriteString(w, b.String())
	return err
}
