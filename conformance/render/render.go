package render

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/model"
)

// Formats lists the output formats by name.
var Formats = []string{"text", "markdown", "json", "junit", "ktap", "html"}

// Write renders rep in the named format.
func Write(w io.Writer, format string, rep *conformance.Report) error {
	switch format {
	case "text":
		return Text(w, rep)
	case "markdown", "md":
		return Markdown(w, rep)
	case "json":
		return JSON(w, rep)
	case "junit":
		return JUnit(w, rep)
	case "ktap":
		return KTAP(w, rep)
	case "html":
		return HTML(w, rep)
	}
	return fmt.Errorf("unknown format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// verdict is the report's one-word verdict; a run that was interrupted or
// stopped by a harness error says so first, and the verdict is "so far".
func verdict(rep *conformance.Report) string {
	v := "CONFORMANT"
	if !rep.Conformant() {
		v = "DEVIATES"
	}
	switch {
	case rep.Interrupted:
		return "INTERRUPTED, " + v + " so far"
	case rep.Error != "":
		return "HARNESS ERROR, " + v + " so far"
	}
	return v
}

func header(rep *conformance.Report) []string {
	d := rep.Device
	lines := []string{
		fmt.Sprintf("device %s (provider %s, driver %s)", d.Name, d.Provider, rep.Driver),
	}
	if d.Kernel != "" || d.RDMACore != "" {
		lines = append(lines, fmt.Sprintf("kernel %s, rdma-core %s", orDash(d.Kernel), orDash(d.RDMACore)))
	}
	if d.Patches != "" {
		lines = append(lines, "driver rebuilt with patches: "+d.Patches)
	}
	lines = append(lines,
		fmt.Sprintf("profile %s; seed %d; %s of up to %d steps; %d steps run in %v",
			rep.Profile, rep.Seed, casesText(rep), rep.Steps, rep.StepsRun, rep.Elapsed.Round(1e6)),
		fmt.Sprintf("verdict: %s (%d failing rules, %d counterexamples, %d profile findings)",
			verdict(rep), countStatus(rep, conformance.Fail), len(rep.Failures), len(rep.Findings)))
	if rep.Inconclusive > 0 {
		lines = append(lines, inconclusiveLine(rep))
	}
	if rep.Interrupted {
		lines = append(lines, fmt.Sprintf("interrupted: the run was stopped before it finished (%d of %d random cases ran); the report holds what ran", rep.CasesRun, rep.Cases))
	}
	if rep.Error != "" {
		lines = append(lines, "harness error: "+rep.Error)
	}
	return lines
}

// inconclusiveLine says how many steps were inconclusive and where the
// first was.
func inconclusiveLine(rep *conformance.Report) string {
	l := fmt.Sprintf("inconclusive: %d steps (silence where the model needs the device's answer, even after the driver's longer re-check: not failures)", rep.Inconclusive)
	if len(rep.InconclusiveAt) > 0 {
		l += "; first: " + rep.InconclusiveAt[0]
	}
	return l
}

// casesText says how many random cases were asked for and, under a time
// budget, how many ran.
func casesText(rep *conformance.Report) string {
	if rep.Duration > 0 {
		return fmt.Sprintf("random cases for %v (%d run)", rep.Duration, rep.CasesRun)
	}
	return fmt.Sprintf("%d random cases", rep.Cases)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func countStatus(rep *conformance.Report, s conformance.Status) int {
	n := 0
	for _, r := range rep.Rules {
		if r.Status == s {
			n++
		}
	}
	return n
}

// Text writes a plain-text report.
func Text(w io.Writer, rep *conformance.Report) error {
	var b strings.Builder
	b.WriteString("srqconform report\n")
	for _, l := range header(rep) {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("\nRULES (status, rule, steps whose check of it ran and agreed, statement)\n")
	for _, r := range rep.Rules {
		fmt.Fprintf(&b, "  %-11s %-20s %6d  %s", r.Status, r.Rule.ID, r.Checks, r.Rule.Statement)
		if r.Reason != "" {
			fmt.Fprintf(&b, " [%s]", r.Reason)
		}
		if len(r.Failures) > 0 {
			fmt.Fprintf(&b, " (counterexample %s)", refs(r.Failures))
		}
		b.WriteString("\n")
	}
	writeFeatures(&b, rep, "  ")
	writeFindings(&b, rep, "  ")
	if len(rep.InconclusiveAt) > 0 {
		b.WriteString("\nINCONCLUSIVE STEPS (not failures)\n")
		for _, at := range rep.InconclusiveAt {
			b.WriteString("  " + at + "\n")
		}
	}
	for i, f := range rep.Failures {
		fmt.Fprintf(&b, "\nCOUNTEREXAMPLE #%d: rule %s, %s, %s\n", i+1, ruleName(f.Rule), f.Source, f.Trace.Extent())
		if n := conformance.FollowsNote(f); n != "" {
			fmt.Fprintf(&b, "  %s\n", n)
		}
		if len(f.AlsoIn) > 0 {
			fmt.Fprintf(&b, "  the same rule also failed in %d other runs:\n", len(f.AlsoIn))
			for _, l := range otherRuns(f.AlsoIn) {
				b.WriteString("    " + l + "\n")
			}
		}
		if r, ok := ruleOf(rep, f.Rule); ok {
			fmt.Fprintf(&b, "  %s\n  source: %s\n", r.Rule.Statement, r.Rule.Source)
		}
		b.WriteString(f.Trace.Text())
	}
	if t := timeTable(rep); len(t) > 0 {
		b.WriteString("\n" + t[0] + "\n")
		for _, l := range t[1:] {
			b.WriteString("  " + l + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// timeTable is the report's footer: where the elapsed time went, by phase
// and by stage, as a title and aligned lines; nil when the report has no
// timing.
func timeTable(rep *conformance.Report) []string {
	if len(rep.Phases) == 0 && len(rep.Stages) == 0 {
		return nil
	}
	lines := []string{fmt.Sprintf("TIME (%v elapsed, %d steps, %s)", rep.Elapsed.Round(1e6), rep.StepsRun, stepsPerSecond(rep))}
	row := func(name string, calls string, total time.Duration, per string) string {
		return fmt.Sprintf("%-12s %8s %12s %6s %11s", name, calls, dur(total), share(total, rep.Elapsed), per)
	}
	lines = append(lines, fmt.Sprintf("%-12s %8s %12s %6s %11s", "phase", "calls", "total", "share", "per call"))
	var sum time.Duration
	for _, p := range rep.Phases {
		lines = append(lines, row(p.Name, fmt.Sprint(p.Calls), p.Total, perCall(p)))
		sum += p.Total
	}
	if len(rep.Phases) > 0 {
		lines = append(lines, row("(harness)", "", max(rep.Elapsed-sum, 0), "")+"  generation, diagnosis, bookkeeping")
	}
	lines = append(lines, fmt.Sprintf("%-12s %8s %12s %6s %11s", "stage", "entered", "total", "share", "per entry"))
	for _, p := range rep.Stages {
		lines = append(lines, row(p.Name, fmt.Sprint(p.Calls), p.Total, perCall(p)))
	}
	return lines
}

func stepsPerSecond(rep *conformance.Report) string {
	if rep.Elapsed <= 0 {
		return "- steps/s"
	}
	return fmt.Sprintf("%.1f steps/s", float64(rep.StepsRun)/rep.Elapsed.Seconds())
}

func share(d, of time.Duration) string {
	if of <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(d)/float64(of))
}

func perCall(p conformance.Phase) string {
	if p.Calls == 0 {
		return "-"
	}
	return dur(p.Total / time.Duration(p.Calls))
}

// dur rounds d to three or four significant digits.
func dur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	case d >= time.Microsecond:
		return d.Round(10).String()
	}
	return d.String()
}

func refs(ix []int) string {
	parts := make([]string, len(ix))
	for i, x := range ix {
		parts[i] = fmt.Sprintf("#%d", x+1)
	}
	return strings.Join(parts, ", ")
}

func ruleOf(rep *conformance.Report, id model.RuleID) (conformance.RuleResult, bool) {
	for _, r := range rep.Rules {
		if r.Rule.ID == id {
			return r, true
		}
	}
	return conformance.RuleResult{}, false
}

// writeFeatures lists the state-space features the run reached, and says
// which it never reached.
func writeFeatures(b *strings.Builder, rep *conformance.Report, indent string) {
	b.WriteString("\nCOVERAGE (state-space features the agreeing steps reached)\n")
	if rep.Features == nil {
		b.WriteString(indent + "not recorded: the report comes from a version without it\n")
		return
	}
	for _, f := range conformance.FeatureNames {
		if n := rep.Features[f]; n > 0 {
			fmt.Fprintf(b, "%s%6d  %s\n", indent, n, f)
		} else {
			fmt.Fprintf(b, "%s%6s  %s\n", indent, "never", f)
		}
	}
}

func writeFindings(b *strings.Builder, rep *conformance.Report, indent string) {
	if len(rep.Findings) > 0 {
		b.WriteString("\nPROFILE FINDINGS\n")
		for _, f := range rep.Findings {
			kind := "not shown"
			if f.Untestable {
				kind = "untestable"
			}
			fmt.Fprintf(b, "%s%s (%s): %s\n", indent, f.Field, kind, f.Detail)
		}
	}
	if len(rep.Resolved) > 0 {
		b.WriteString("\nOPEN CHOICES, AS THE DEVICE RESOLVED THEM\n")
		for _, l := range resolvedLines(rep) {
			b.WriteString(indent + l + "\n")
		}
	}
}

// resolvedLines says, one field a line in name order, which values of
// each open choice the device's behaviour allowed.
func resolvedLines(rep *conformance.Report) []string {
	names := make([]string, 0, len(rep.Resolved))
	for k := range rep.Resolved {
		names = append(names, k)
	}
	sort.Strings(names)
	lines := make([]string, len(names))
	for i, k := range names {
		lines[i] = k + ": " + strings.Join(rep.Resolved[k], " | ")
	}
	return lines
}

// Markdown writes a Markdown report: a table per rule, then counterexamples.
func Markdown(w io.Writer, rep *conformance.Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# srqconform report: %s on %s\n\n", verdict(rep), rep.Device.Name)
	for _, l := range header(rep) {
		b.WriteString("- " + l + "\n")
	}
	b.WriteString("\n## Rules\n\n| Rule | Status | Checks | Statement | Notes |\n|---|---|---|---|---|\n")
	for _, r := range rep.Rules {
		note := r.Reason
		if len(r.Failures) > 0 {
			note = "counterexample " + refs(r.Failures)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s |\n", r.Rule.ID, r.Status, r.Checks, cell(r.Rule.Statement), cell(note))
	}
	b.WriteString("\n## Coverage\n\nState-space features the agreeing steps reached.\n\n")
	if rep.Features == nil {
		b.WriteString("Not recorded: the report comes from a version without it.\n")
	} else {
		b.WriteString("| Feature | Steps |\n|---|---|\n")
		for _, f := range conformance.FeatureNames {
			n := "never"
			if rep.Features[f] > 0 {
				n = fmt.Sprint(rep.Features[f])
			}
			fmt.Fprintf(&b, "| %s | %s |\n", cell(f), n)
		}
	}
	if len(rep.InconclusiveAt) > 0 {
		b.WriteString("\n## Inconclusive steps\n\nSilence where the model needs the device's answer: counted, not failures.\n\n")
		for _, at := range rep.InconclusiveAt {
			b.WriteString("- " + cell(at) + "\n")
		}
	}
	var fb strings.Builder
	writeFindings(&fb, rep, "- ")
	b.WriteString(strings.NewReplacer("\nPROFILE FINDINGS\n", "\n## Profile findings\n\n",
		"\nOPEN CHOICES, AS THE DEVICE RESOLVED THEM\n", "\n## Open choices, as the device resolved them\n\n").Replace(fb.String()))
	if len(rep.Failures) > 0 {
		b.WriteString("\n## Counterexamples\n")
	}
	for i, f := range rep.Failures {
		fmt.Fprintf(&b, "\n### #%d: %s (%s, %s)\n\n", i+1, ruleName(f.Rule), f.Source, f.Trace.Extent())
		if n := conformance.FollowsNote(f); n != "" {
			b.WriteString(strings.ToUpper(n[:1]) + n[1:] + ".\n\n")
		}
		if len(f.AlsoIn) > 0 {
			fmt.Fprintf(&b, "The same rule also failed in %d other runs:\n\n", len(f.AlsoIn))
			for _, l := range otherRuns(f.AlsoIn) {
				b.WriteString("- " + l + "\n")
			}
			b.WriteString("\n")
		}
		if r, ok := ruleOf(rep, f.Rule); ok {
			fmt.Fprintf(&b, "%s Source: %s.\n\n", r.Rule.Statement, r.Rule.Source)
		}
		if d := f.Trace.Diagnosis; d != nil {
			if len(d.Rules) > 0 {
				fmt.Fprintf(&b, "Diagnosis: %s broken; the device departed at step %d, and the %s check saw it at step %d.", strings.Join(model.RuleNames(d.Rules), " and "), d.DepartedAt, d.NoticedBy, d.VisibleAt)
				if alt := conformance.Alternatives(*d); alt != "" {
					b.WriteString(" " + strings.ToUpper(alt[:1]) + alt[1:] + ".")
				}
				b.WriteString("\n\n")
			} else if d.Unexplained {
				fmt.Fprintf(&b, "Diagnosis: no rule, nor pair of rules, explains this trace; the %s check saw it at step %d.\n\n", d.NoticedBy, d.VisibleAt)
			}
			if d.Cut {
				fmt.Fprintf(&b, "Diagnosis %s.\n\n", conformance.CutNote)
			}
		}
		b.WriteString("| # | Operation | Model allows | Driver did | Noticed by |\n|---|---|---|---|---|\n")
		for _, s := range f.Trace.Steps {
			allowed, n := "", fmt.Sprint(s.N)
			if s.Rule != 0 {
				allowed = s.Allowed
			}
			switch {
			case s.Evidence:
				n += " (evidence, not checked)"
			case f.Trace.Diagnosis != nil && f.Trace.Diagnosis.DepartedAt == s.N && s.Rule == 0:
				n += " (departed)"
			}
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", n, s.OpText, cell(allowed), cell(s.Got), s.Rule)
		}
	}
	b.WriteString(TimeMarkdown(rep))
	_, err := io.WriteString(w, b.String())
	return err
}

// TimeMarkdown is the Markdown footer of a report: where the elapsed time
// went, by phase and by stage; "" when the report has no timing.
func TimeMarkdown(rep *conformance.Report) string {
	if len(rep.Phases) == 0 && len(rep.Stages) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Time\n\n%v elapsed, %d steps, %s.\n\n", rep.Elapsed.Round(1e6), rep.StepsRun, stepsPerSecond(rep))
	table := func(head, calls, per string, ps []conformance.Phase, rest bool) {
		fmt.Fprintf(&b, "| %s | %s | Total | Share | %s |\n|---|--:|--:|--:|--:|\n", head, calls, per)
		var sum time.Duration
		for _, p := range ps {
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |\n", p.Name, p.Calls, dur(p.Total), share(p.Total, rep.Elapsed), perCall(p))
			sum += p.Total
		}
		if rest {
			d := max(rep.Elapsed-sum, 0)
			fmt.Fprintf(&b, "| (harness: generation, diagnosis, bookkeeping) | | %s | %s | |\n", dur(d), share(d, rep.Elapsed))
		}
		b.WriteString("\n")
	}
	if len(rep.Phases) > 0 {
		table("Phase", "Calls", "Per call", rep.Phases, true)
	}
	if len(rep.Stages) > 0 {
		table("Stage", "Entries", "Per entry", rep.Stages, false)
	}
	return b.String()
}

func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// JSON writes the report as indented JSON.
func JSON(w io.Writer, rep *conformance.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		*conformance.Report
		Conformant bool `json:"conformant"`
	}{rep, rep.Conformant()})
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string  `xml:"name,attr"`
	Tests    int     `xml:"tests,attr"`
	Failures int     `xml:"failures,attr"`
	Skipped  int     `xml:"skipped,attr"`
	Time     float64 `xml:"time,attr"`
	// Properties and SystemOut carry where the time went (phases, stages).
	Properties *junitProperties `xml:"properties,omitempty"`
	Cases      []junitCase      `xml:"testcase"`
	SystemOut  string           `xml:"system-out,omitempty"`
}

type junitProperties struct {
	Props []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// JUnit writes one test case per rule and per profile finding.
func JUnit(w io.Writer, rep *conformance.Report) error {
	s := junitSuite{Name: fmt.Sprintf("srqconform.%s.%s", rep.Device.Name, rep.Profile), Time: rep.Elapsed.Seconds()}
	for _, r := range rep.Rules {
		c := junitCase{Name: r.Rule.ID.String(), Classname: "srqconform.rules"}
		switch r.Status {
		case conformance.Fail:
			var text strings.Builder
			for _, i := range r.Failures {
				f := rep.Failures[i]
				fmt.Fprintf(&text, "%s\n%s\n", f.Source, f.Trace.Text())
			}
			c.Failure = &junitFailure{Message: r.Rule.Statement, Text: text.String()}
			s.Failures++
		case conformance.NotApplicable, conformance.Blocked, conformance.Follows:
			c.Skipped = &junitSkipped{Message: r.Reason}
			s.Skipped++
		}
		s.Cases = append(s.Cases, c)
	}
	for _, f := range rep.Findings {
		c := junitCase{Name: "profile." + f.Field, Classname: "srqconform.profile"}
		if f.Untestable {
			c.Skipped = &junitSkipped{Message: f.Detail}
			s.Skipped++
		} else {
			c.Failure = &junitFailure{Message: f.Detail}
			s.Failures++
		}
		s.Cases = append(s.Cases, c)
	}
	if rep.Inconclusive > 0 {
		// Counted, never a failure: a skipped case that says how many.
		s.Cases = append(s.Cases, junitCase{Name: "inconclusive", Classname: "srqconform.run",
			Skipped: &junitSkipped{Message: inconclusiveLine(rep) + "\n" + strings.Join(rep.InconclusiveAt, "\n")}})
		s.Skipped++
	}
	if rep.Interrupted || rep.Error != "" {
		msg := "interrupted: the run was stopped before it finished"
		if rep.Error != "" {
			msg = "harness error: " + rep.Error
		}
		s.Cases = append(s.Cases, junitCase{Name: "run", Classname: "srqconform.run", Failure: &junitFailure{Message: msg}})
		s.Failures++
	}
	s.Tests = len(s.Cases)
	if t := timeTable(rep); len(t) > 0 {
		s.SystemOut = strings.Join(t, "\n") + "\n"
		s.Properties = &junitProperties{Props: []junitProperty{{Name: "steps_run", Value: fmt.Sprint(rep.StepsRun)},
			{Name: "elapsed_ns", Value: fmt.Sprint(int64(rep.Elapsed))}}}
		for _, k := range []struct {
			kind string
			ps   []conformance.Phase
		}{{"phase", rep.Phases}, {"stage", rep.Stages}} {
			kind := k.kind
			for _, p := range k.ps {
				s.Properties.Props = append(s.Properties.Props,
					junitProperty{Name: kind + "." + p.Name + ".total_ns", Value: fmt.Sprint(int64(p.Total))},
					junitProperty{Name: kind + "." + p.Name + ".calls", Value: fmt.Sprint(p.Calls)})
			}
		}
	}
	out := junitSuites{Name: "srqconform", Tests: s.Tests, Failures: s.Failures, Skipped: s.Skipped, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// shownRuns bounds the other runs a counterexample lists; the JSON report
// has them all.
const shownRuns = 5

// otherRuns lists the other runs that failed on a counterexample's rule,
// one a line, the first shownRuns of them.
func otherRuns(runs []string) []string {
	if len(runs) <= shownRuns {
		return runs
	}
	return append(slices.Clip(runs[:shownRuns]), fmt.Sprintf("and %d more (the JSON report lists them all)", len(runs)-shownRuns))
}

// ruleName is a failure's rule, or "none" for a trace no check's rule
// names (the model could not replay it to its end).
func ruleName(r model.RuleID) string {
	if r == 0 {
		return "none"
	}
	return r.String()
}
