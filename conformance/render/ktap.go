package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/srqconform/srqconform/conformance"
)

// KTAP writes the report in KTAP version 1, the format of the kernel's
// selftests (Documentation/dev-tools/ktap.rst in the Linux tree), so that a
// kernel CI takes srqconform's results as it takes kselftest's: one test
// per rule, then one per profile finding, and one named "run" when the run
// was interrupted or stopped by a harness error. A failing rule is
// "not ok", preceded by its counterexamples as diagnostic lines; a rule
// that could not run (n/a, blocked, not reached) and an untestable finding
// are "ok ... # SKIP reason".
func KTAP(w io.Writer, rep *conformance.Report) error {
	type result struct {
		ok   bool
		name string
		skip string
		diag []string
	}
	var results []result
	for _, r := range rep.Rules {
		res := result{ok: true, name: r.Rule.ID.String()}
		switch r.Status {
		case conformance.Fail:
			res.ok = false
			res.diag = append(res.diag, r.Rule.Statement)
			for _, i := range r.Failures {
				f := rep.Failures[i]
				res.diag = append(res.diag, fmt.Sprintf("counterexample #%d: %s, %s", i+1, f.Source, f.Trace.Extent()))
				res.diag = append(res.diag, strings.Split(strings.TrimRight(f.Trace.Text(), "\n"), "\n")...)
			}
		case conformance.NotApplicable, conformance.Blocked, conformance.NotReached, conformance.Follows:
			res.skip = string(r.Status)
			if r.Reason != "" {
				res.skip += ": " + r.Reason
			}
		}
		results = append(results, res)
	}
	for _, f := range rep.Findings {
		res := result{ok: f.Untestable, name: "profile-" + f.Field}
		if f.Untestable {
			res.skip = "untestable: " + f.Detail
		} else {
			res.diag = []string{"profile finding: " + f.Detail}
		}
		results = append(results, res)
	}
	if rep.Interrupted || rep.Error != "" {
		msg := "interrupted: the run was stopped before it finished"
		if rep.Error != "" {
			msg = "harness error: " + rep.Error
		}
		results = append(results, result{name: "run", diag: []string{msg}})
	}

	var b strings.Builder
	b.WriteString("KTAP version 1\n")
	fmt.Fprintf(&b, "1..%d\n", len(results))
	b.WriteString("# srqconform report\n")
	for _, l := range header(rep) {
		b.WriteString(ktapDiag(l))
	}
	for i, res := range results {
		for _, l := range res.diag {
			b.WriteString(ktapDiag(l))
		}
		status := "ok"
		if !res.ok {
			status = "not ok"
		}
		fmt.Fprintf(&b, "%s %d %s", status, i+1, res.name)
		if res.skip != "" {
			fmt.Fprintf(&b, " # SKIP %s", ktapLine(res.skip))
		}
		b.WriteString("\n")
	}
	if t := timeTable(rep); len(t) > 0 {
		for _, l := range t {
			b.WriteString(ktapDiag(l))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ktapDiag is s as a KTAP diagnostic line, its spacing kept.
func ktapDiag(s string) string {
	return strings.TrimRight("# "+strings.ReplaceAll(s, "\n", " "), " ") + "\n"
}

// ktapLine keeps s on one line.
func ktapLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
