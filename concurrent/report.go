package concurrent

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/srqconform/srqconform/model"
)

// Report is what a concurrent run found: one entry per history.
type Report struct {
	Device  string       `json:"device,omitempty"`
	Kernel  string       `json:"kernel,omitempty"`
	Profile string       `json:"profile"`
	Runs    []HistoryRun `json:"runs"`
	// Error is set when the device or harness failed: the report holds
	// the histories recorded until then.
	Error string `json:"error,omitempty"`
	// Interrupted says a signal stopped the run: the report holds the
	// histories recorded and checked until then.
	Interrupted bool `json:"interrupted,omitempty"`
}

// HistoryRun is one history and its check.
type HistoryRun struct {
	Seed uint64 `json:"seed"`
	Ops  int    `json:"ops"`
	// Kinds counts the operations by kind; Overlap is the most
	// operations in flight at once.
	Kinds   map[Kind]int  `json:"kinds,omitempty"`
	Overlap int           `json:"overlap,omitempty"`
	Wall    time.Duration `json:"wall_ns"`
	Result  *Result       `json:"result"`
	// History is kept for a violation (to check again, reduce or draw
	// elsewhere), and for every run recorded but not checked (Result nil).
	History *History `json:"history,omitempty"`
}

// OpsPerSecond is how many operations the run recorded per second.
func (r HistoryRun) OpsPerSecond() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Wall.Seconds()
}

// Violations counts the runs with no linearization.
func (r *Report) Violations() int {
	n := 0
	for _, run := range r.Runs {
		if run.Result != nil && run.Result.Violation() {
			n++
		}
	}
	return n
}

// Candidates lists the rules a violation may be blamed on: its rule when
// the blame was decided, else that best guess and the rules also named.
func (r *Result) Candidates() []model.RuleID {
	if !r.BlameUndecided {
		return []model.RuleID{r.Rule}
	}
	return append([]model.RuleID{r.Rule}, r.Also...)
}

// FailingRules lists the rules the violations were blamed on, once each.
func (r *Report) FailingRules() []model.RuleID {
	var out []model.RuleID
	for _, run := range r.Runs {
		if run.Result != nil && run.Result.Violation() && !slices.Contains(out, run.Result.Rule) {
			out = append(out, run.Result.Rule)
		}
	}
	return out
}

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(r)
}

// WriteText writes r for people; markdown makes it a Markdown document.
func (r *Report) WriteText(w io.Writer, markdown bool) error {
	t := textReport{markdown: markdown}
	if markdown {
		t.b.WriteString("# srqconform concurrent report\n\n")
	} else {
		t.b.WriteString("srqconform concurrent report\n")
	}
	fmt.Fprintf(&t.b, "device %s, kernel %s, profile %s\n", orDash(r.Device), orDash(r.Kernel), r.Profile)
	fmt.Fprintf(&t.b, "verdict: %s\n", r.verdict())
	t.heading("Histories")
	t.histories(r.Runs)
	for _, run := range r.Runs {
		if res := run.Result; res != nil && res.Violation() {
			t.violation(run)
		}
	}
	_, err := io.WriteString(w, t.b.String())
	return err
}

// verdict is the report's one-line verdict.
func (r *Report) verdict() string {
	verdict := "LINEARIZABLE: every history has an order the model accepts"
	if len(r.Runs) == 0 {
		verdict = "NO HISTORIES: none was recorded"
	}
	if n := r.Violations(); n > 0 {
		verdict = fmt.Sprintf("VIOLATION in %d of %d histories (rules: %s)", n, len(r.Runs), strings.Join(model.RuleNames(r.FailingRules()), ", "))
	} else if r.unknown() > 0 {
		verdict = fmt.Sprintf("UNKNOWN: %d of %d histories were not decided within the check's bounds (-check-timeout, -check-memory)", r.unknown(), len(r.Runs))
	}
	unchecked := 0
	for _, run := range r.Runs {
		if run.Result == nil {
			unchecked++
		}
	}
	if unchecked > 0 {
		verdict += fmt.Sprintf("; %d of %d histories recorded but not checked", unchecked, len(r.Runs))
	}
	if r.Error != "" {
		verdict += "; the run stopped: " + r.Error
	}
	if r.Interrupted {
		verdict = "INTERRUPTED, " + verdict + " (so far)"
	}
	return verdict
}

// textReport builds the text or Markdown report.
type textReport struct {
	b        strings.Builder
	markdown bool
}

// heading writes a section heading.
func (t *textReport) heading(s string) {
	if t.markdown {
		fmt.Fprintf(&t.b, "\n## %s\n\n", s)
	} else {
		fmt.Fprintf(&t.b, "\n%s\n", strings.ToUpper(s))
	}
}

// histories writes a line (or table row) per history.
func (t *textReport) histories(runs []HistoryRun) {
	if t.markdown {
		t.b.WriteString("| seed | operations | by kind | most at once | recorded in | ops/s | checked in | verdict | rule |\n|--:|--:|---|--:|--:|--:|--:|---|---|\n")
	}
	for _, run := range runs {
		res := run.Result
		verdict, rule, check := "-", "", "-"
		if res != nil {
			verdict, rule, check = res.Verdict, res.Rule.String(), res.Time.Round(time.Millisecond).String()
			if res.Bound != "" {
				verdict += " (out of " + res.Bound + ")"
			}
		}
		if t.markdown {
			fmt.Fprintf(&t.b, "| %d | %d | %s | %d | %v | %.0f | %s | %s | %s |\n", run.Seed, run.Ops, kinds(run.Kinds), run.Overlap, run.Wall.Round(time.Millisecond), run.OpsPerSecond(), check, verdict, rule)
		} else {
			fmt.Fprintf(&t.b, "  seed %d: %d operations in %v (%.0f/s; %s; up to %d at once), checked in %s: %s %s\n", run.Seed, run.Ops, run.Wall.Round(time.Millisecond), run.OpsPerSecond(), kinds(run.Kinds), run.Overlap, check, verdict, rule)
		}
	}
}

// violation writes the section of a violating history: what shows the
// violation, then the reduced history (or the longest linearization).
func (t *textReport) violation(run HistoryRun) {
	b, res := &t.b, run.Result
	t.heading(fmt.Sprintf("Violation, seed %d: %s", run.Seed, res.Rule))
	ind := "  "
	if t.markdown {
		ind = ""
	}
	switch {
	case res.Decisive:
		fmt.Fprintf(b, "%swith %s waived the whole history linearizes\n", ind, res.Rule)
	case len(res.Evidence) > 0:
		fmt.Fprintf(b, "%sshown on its face: %s\n", ind, strings.Join(model.RuleNames(res.Evidence), ", "))
	}
	if res.BlameUndecided {
		fmt.Fprintf(b, "%sblame undecided: a bound (time or memory) cut its searches at every scale (x%d at most); %s is the best guess\n", ind, blameScales[len(blameScales)-1], res.Rule)
	}
	if len(res.Also) > 0 {
		fmt.Fprintf(b, "%salso explained by: %s\n", ind, strings.Join(model.RuleNames(res.Also), ", "))
	}
	fmt.Fprintf(b, "%snoticed: %s\n", ind, res.Complaint)
	if res.Failing != nil {
		fmt.Fprintf(b, "%sno order places next: %s\n", ind, res.Failing)
	}
	if res.HTML != "" {
		fmt.Fprintf(b, "%svisualisation: %s\n", ind, res.HTML)
	}
	ops := res.Reduced
	what := fmt.Sprintf("reduced history (%d of %d operations, still without a linearization)", len(res.Reduced), run.Ops)
	if len(ops) == 0 {
		ops, what = res.Prefix, "the longest linearization found"
	}
	fmt.Fprintf(b, "\n%s%s; client, call .. return, operation:\n", ind, what)
	if t.markdown {
		b.WriteString("\n```\n")
	}
	if len(ops) > maxShown {
		start, end := shownWindow(ops, res.Failing)
		fmt.Fprintf(b, "%s  (%d operations before these and %d after them left out)\n", ind, start, len(ops)-end)
		ops = ops[start:end]
	}
	for _, o := range ops {
		ret := o.Return.String()
		if o.Return == Forever {
			ret = "never"
		}
		client := fmt.Sprint(o.Client)
		if run.History != nil && o.Client < len(run.History.Clients) {
			client = run.History.Clients[o.Client]
		}
		fmt.Fprintf(b, "%s  [%s] %v .. %s  %s\n", ind, client, o.Call, ret, o)
	}
	if t.markdown {
		b.WriteString("```\n")
	}
}

// shownWindow is the slice ops[start:end] a report lists of a long
// history: the last maxShown operations up to where it failed.
func shownWindow(ops []Operation, failing *Operation) (start, end int) {
	end = len(ops)
	if failing != nil {
		for i, o := range ops {
			if o.Call > failing.Return {
				end = i
				break
			}
		}
	}
	return max(0, end-maxShown), end
}

// maxShown bounds the operations a report lists for one violation.
const maxShown = 60

func (r *Report) unknown() int {
	n := 0
	for _, run := range r.Runs {
		if run.Result != nil && run.Result.Verdict == Unknown {
			n++
		}
	}
	return n
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// kinds is "287 message, 118 post, ..." in a fixed order.
func kinds(k map[Kind]int) string {
	var parts []string
	for _, kind := range []Kind{KindMessage, KindPost, KindModify, KindArm, KindEvents} {
		if k[kind] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", k[kind], kind))
		}
	}
	return strings.Join(parts, ", ")
}

// NewHistoryRun summarises h and its check.
func NewHistoryRun(h *History, res *Result) HistoryRun {
	run := HistoryRun{Seed: h.Seed, Ops: len(h.Ops), Wall: h.Wall, Result: res, Kinds: map[Kind]int{}}
	type edge struct {
		at    time.Duration
		delta int
	}
	var edges []edge
	for _, o := range h.Ops {
		run.Kinds[o.Input.Kind]++
		edges = append(edges, edge{o.Call, 1}, edge{o.Return, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if a.at != b.at {
			return cmpDur(a.at, b.at)
		}
		return b.delta - a.delta
	})
	n := 0
	for _, e := range edges {
		n += e.delta
		run.Overlap = max(run.Overlap, n)
	}
	return run
}
