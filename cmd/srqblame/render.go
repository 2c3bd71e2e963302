package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/srqconform/srqconform/model"
)

// command is the command line a measurement ran with.
func command(c config) string {
	return strings.TrimSpace("srqblame " + strings.Join(c.args, " "))
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// pct is n of d as a percentage with one decimal, "n/a" for d == 0.
func pct(n, d int) string {
	if d == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%% (%d/%d)", 100*float64(n)/float64(d), n, d)
}

// writeJSON writes m as indented JSON.
func writeJSON(w io.Writer, m Measurement) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(m)
}

// writeMarkdown writes the figures, the table per bug and the bugs whose
// blame was wrong, grouped by verdict.
func writeMarkdown(w io.Writer, m Measurement) error {
	var b strings.Builder
	f := m.Figures
	bound := "budget " + m.Budget.String() + " of random cases per run"
	if m.Cases > 0 {
		bound = strconv.Itoa(m.Cases) + " random cases per run"
	}
	fmt.Fprintf(&b, "# Blame on the held-out bugs (%s)\n\n", setSource(m.Set))
	fmt.Fprintf(&b, "Command: `%s`; profile documented; seeds %v; %s; %d runs in %s.\n\n", m.Command, m.Seeds, bound, f.Runs, m.Elapsed.Round(time.Second))
	fmt.Fprintf(&b, "## Figures\n\n")
	fmt.Fprintf(&b, "| figure | value |\n| --- | --- |\n")
	fmt.Fprintf(&b, "| kinds caught in every seed | %s |\n", pct(f.CaughtEverySeed, f.Kinds))
	fmt.Fprintf(&b, "| runs caught (any failing rule) | %s |\n", pct(f.Caught, f.Runs))
	fmt.Fprintf(&b, "| caught runs blamed on exactly one rule | %s |\n", pct(f.OneRule, f.Caught))
	fmt.Fprintf(&b, "| caught runs blamed on exactly the label | %s |\n", pct(f.Exact, f.Caught))
	fmt.Fprintf(&b, "| runs with more than one failing rule | %s of all runs; %s of caught runs |\n", pct(f.MoreThanOne, f.Runs), pct(f.MoreThanOne, f.Caught))
	fmt.Fprintf(&b, "| runs blaming RECV-COMPLETION for another label | %d |\n", f.CatchAllOther)
	longest := fmt.Sprintf("%.1fs (%s)", f.Longest.Seconds(), f.LongestRun)
	if f.LongestRatio > 0 {
		longest = fmt.Sprintf("%.2f x the budget: %s", f.LongestRatio, longest)
	}
	fmt.Fprintf(&b, "| longest run | %s |\n", longest)
	if m.Errors > 0 {
		fmt.Fprintf(&b, "| runs ended by a harness error | %d |\n", m.Errors)
	}
	fmt.Fprintf(&b, "\nVerdicts: exact (one failing rule, the label); cascade (the label and others); catch-all (RECV-COMPLETION, not the label); other (other rules only); unexplained (no failing rule, but a blocked rule or a counterexample no rule explains); missed (nothing). \"N discarded\": the run's Report.Unpredictable (cases the model could not predict, deviations that vanished on replay); a stage named after the elapsed time is one other than the random cases that took over 2 s (Report.Stages).\n\n")

	fmt.Fprintf(&b, "## Per bug\n\n| bug | label | caught seeds |")
	for _, s := range m.Seeds {
		fmt.Fprintf(&b, " seed %d: rules blamed (verdict, elapsed) |", s)
	}
	fmt.Fprintf(&b, "\n| --- | --- | --- |%s\n", strings.Repeat(" --- |", len(m.Seeds)))
	byBug := map[string][]Run{}
	for _, r := range m.Runs {
		byBug[r.Bug] = append(byBug[r.Bug], r)
	}
	for _, bug := range m.Bugs {
		runs := byBug[bug.Name]
		var caught []string
		for _, r := range runs {
			if len(r.Rules) > 0 {
				caught = append(caught, itoa(r.Seed))
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s |", bug.Name, bug.Rule, orDash(strings.Join(caught, ",")))
		for _, r := range runs {
			note := ""
			if r.Unpredictable > 0 {
				note = fmt.Sprintf(", %d discarded", r.Unpredictable)
			}
			if p, ok := slowStage(r); ok {
				note += fmt.Sprintf(", %s %.1fs", p.Name, p.Total.Seconds())
			}
			fmt.Fprintf(&b, " %s (%s, %.1fs%s) |", orDash(strings.Join(model.RuleNames(r.Rules), " ")), r.Verdict, r.Elapsed.Seconds(), note)
		}
		fmt.Fprintf(&b, "\n")
	}

	fmt.Fprintf(&b, "\n## Bugs whose blame was not exact, by what went wrong\n\n")
	wrong := wrongBlame(m.Runs)
	for _, v := range []string{Cascade, CatchAll, Other, Unexplained, Missed, Error} {
		if len(wrong[v]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "- %s (%d):\n", v, len(wrong[v]))
		for _, name := range wrong[v] {
			fmt.Fprintf(&b, "  - %s\n", describe(name, v, byBug[name]))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// describe is one line for a bug under verdict v: its label and the rules
// blamed in the runs with that verdict.
func describe(name, v string, runs []Run) string {
	var label string
	var blamed []string
	for _, r := range runs {
		label = r.Label
		if r.Verdict == v {
			blamed = append(blamed, fmt.Sprintf("seed %d: %s", r.Seed, orDash(strings.Join(append(append([]string(nil), model.RuleNames(r.Rules)...), r.Error), " "))))
		}
	}
	return fmt.Sprintf("%s: label %s; blamed %s", name, label, strings.Join(blamed, "; "))
}

func orDash(s string) string {
	if s = strings.TrimSpace(s); s == "" {
		return "-"
	}
	return s
}

// writeList writes the bugs as a markdown table: name, label, description.
func writeList(w io.Writer, bugs []bug) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## The bugs\n\n| bug | label | what the driver does, and why the label's statement says it is wrong |\n| --- | --- | --- |\n")
	for _, bug := range bugs {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", bug.Name, bug.Rule, strings.ReplaceAll(bug.Description, "|", "\\|"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
