package conformance

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/srqconform/srqconform/model"
)

// The peer coverage table (reports/peer-coverage.md) cites scenarios as
// `RULE: scenario name` and rule checks as `RULE`. These tests keep it
// honest where that is cheap: every citation names a scenario or rule that
// exists, every status is one of the table's words, the counts in its
// header are the counts of its rows, and its anchors table lists every
// scenario Anchor with exactly the scenarios that carry it. Whether a row's
// status is deserved stays a reader's judgement.

const peerTablePath = "../reports/peer-coverage.md"

// pendingRules are rules being added on another branch. A row may cite
// them only when its status says "pending"; once one exists the row must be
// checked and its status flipped. None is pending now (DESTROY-BUSY,
// CREATE-MAX, QP-SRQ-CAPS and CREATE-EX landed and their rows were
// flipped).
var pendingRules = map[string]bool{}

// peerStatuses are the status words, in the order of the counts table's
// columns. A status cell starts with one of them.
var peerStatuses = []string{"covered", "partly", "pending", "not covered", "out of scope"}

var (
	backticked = regexp.MustCompile("`([^`]*)`")
	citation   = regexp.MustCompile(`^([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)(?:: (.+))?$`)
)

// peerRow is one row of a peer table.
type peerRow struct {
	line                        int
	suite                       string
	test, checks, cover, status string
	category                    string
}

// peerTable is what the checks read of the document.
type peerTable struct {
	rows    []peerRow
	counts  map[string][]int // suite -> total, then one count per status
	anchors []anchorRow
}

// anchorRow is one row of the scenario anchors table.
type anchorRow struct {
	line              int
	anchor, scenarios string
}

func cells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	cs := strings.Split(line, "|")
	for i := range cs {
		cs[i] = strings.TrimSpace(cs[i])
	}
	return cs
}

// parsePeerTable reads the counts table (header "| Suite |") and every peer
// table (header "| Peer test |"); a peer table's suite is the "## " heading
// above it.
func parsePeerTable(text string) (peerTable, []error) {
	var (
		t       = peerTable{counts: map[string][]int{}}
		errs    []error
		heading string
		mode    string // "", "counts", "peer"
	)
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		n := i + 1
		switch {
		case strings.HasPrefix(l, "## "):
			heading, mode = strings.TrimPrefix(l, "## "), ""
			continue
		case !strings.HasPrefix(l, "|"):
			mode = ""
			continue
		case strings.HasPrefix(l, "|---"):
			continue
		case strings.HasPrefix(l, "| Suite |"):
			mode = "counts"
			continue
		case strings.HasPrefix(l, "| Peer test |"):
			mode = "peer"
			continue
		case strings.HasPrefix(l, "| Scenario anchor |"):
			mode = "anchor"
			continue
		}
		cs := cells(l)
		switch mode {
		case "counts":
			if len(cs) != 2+len(peerStatuses) {
				errs = append(errs, fmt.Errorf("line %d: counts row has %d cells, want %d", n, len(cs), 2+len(peerStatuses)))
				continue
			}
			var nums []int
			for _, c := range cs[1:] {
				v, err := strconv.Atoi(c)
				if err != nil {
					errs = append(errs, fmt.Errorf("line %d: count %q is not a number", n, c))
				}
				nums = append(nums, v)
			}
			t.counts[cs[0]] = nums
		case "peer":
			if len(cs) != 4 {
				errs = append(errs, fmt.Errorf("line %d: peer row has %d cells, want 4 (a '|' inside a cell?)", n, len(cs)))
				continue
			}
			r := peerRow{line: n, suite: heading, test: cs[0], checks: cs[1], cover: cs[2], status: cs[3]}
			for _, s := range peerStatuses {
				if strings.HasPrefix(r.status, s) {
					r.category = s
				}
			}
			if r.category == "" {
				errs = append(errs, fmt.Errorf("line %d: status %q starts with none of %q", n, r.status, peerStatuses))
			}
			t.rows = append(t.rows, r)
		case "anchor":
			if len(cs) != 4 {
				errs = append(errs, fmt.Errorf("line %d: anchor row has %d cells, want 4", n, len(cs)))
				continue
			}
			t.anchors = append(t.anchors, anchorRow{line: n, anchor: cs[0], scenarios: cs[1]})
		}
	}
	return t, errs
}

// checkPeerTable returns every way the document disagrees with the
// scenarios and rules of this tree, or with itself.
func checkPeerTable(text string, scenarios []Scenario, ruleExists func(string) bool) []error {
	t, errs := parsePeerTable(text)
	if len(t.rows) == 0 {
		errs = append(errs, fmt.Errorf("no peer table rows found"))
	}
	type key struct{ rule, name string }
	known := map[key]bool{}
	for _, s := range scenarios {
		known[key{s.Rule.String(), s.Name}] = true
	}
	tests := map[string]int{}
	for _, r := range t.rows {
		if prev, ok := tests[r.suite+"\x00"+r.test]; ok {
			errs = append(errs, fmt.Errorf("line %d: %s is listed twice (line %d)", r.line, r.test, prev))
		}
		tests[r.suite+"\x00"+r.test] = r.line
		pending := strings.Contains(r.status, "pending")
		cited := false
		for _, cell := range []string{r.cover, r.status} {
			for _, m := range backticked.FindAllStringSubmatch(cell, -1) {
				c := citation.FindStringSubmatch(m[1])
				if c == nil {
					errs = append(errs, fmt.Errorf("line %d: `%s` is neither `RULE` nor `RULE: scenario name`", r.line, m[1]))
					continue
				}
				rule, name := c[1], c[2]
				cited = true
				switch {
				case pendingRules[rule] && ruleExists(rule):
					errs = append(errs, fmt.Errorf("line %d: %s has landed: check the row of %s against it and drop \"pending\"", r.line, rule, r.test))
				case pendingRules[rule] && !pending:
					errs = append(errs, fmt.Errorf("line %d: cites %s, which is not in this tree, without saying pending", r.line, rule))
				case pendingRules[rule]:
					// accepted until the rule lands
				case !ruleExists(rule):
					errs = append(errs, fmt.Errorf("line %d: rule %s does not exist", r.line, rule))
				case name != "" && !known[key{rule, name}]:
					errs = append(errs, fmt.Errorf("line %d: no scenario %q of rule %s", r.line, name, rule))
				}
			}
		}
		switch r.category {
		case "covered", "partly", "pending":
			if !cited {
				errs = append(errs, fmt.Errorf("line %d: %s is %s but cites no scenario or rule", r.line, r.test, r.category))
			}
		}
		if r.category == "pending" && !pending {
			errs = append(errs, fmt.Errorf("line %d: category pending without the word", r.line))
		}
	}
	// The anchors table against the scenarios' Anchor fields: each anchor
	// once, with exactly the scenarios that carry it.
	byAnchor := map[string]map[key]bool{}
	for _, s := range scenarios {
		if s.Anchor == "" {
			continue
		}
		if byAnchor[s.Anchor] == nil {
			byAnchor[s.Anchor] = map[key]bool{}
		}
		byAnchor[s.Anchor][key{s.Rule.String(), s.Name}] = true
	}
	seen := map[string]bool{}
	for _, a := range t.anchors {
		want, ok := byAnchor[a.anchor]
		switch {
		case seen[a.anchor]:
			errs = append(errs, fmt.Errorf("line %d: anchor %q is listed twice", a.line, a.anchor))
			continue
		case !ok:
			errs = append(errs, fmt.Errorf("line %d: no scenario has the anchor %q", a.line, a.anchor))
			continue
		}
		seen[a.anchor] = true
		got := map[key]bool{}
		for _, m := range backticked.FindAllStringSubmatch(a.scenarios, -1) {
			c := citation.FindStringSubmatch(m[1])
			if c == nil || c[2] == "" {
				errs = append(errs, fmt.Errorf("line %d: `%s` is not `RULE: scenario name`", a.line, m[1]))
				continue
			}
			k := key{c[1], c[2]}
			got[k] = true
			if !want[k] {
				errs = append(errs, fmt.Errorf("line %d: scenario %q of %s does not carry the anchor %q", a.line, k.name, k.rule, a.anchor))
			}
		}
		for k := range want {
			if !got[k] {
				errs = append(errs, fmt.Errorf("line %d: anchor %q leaves out the scenario %q of %s", a.line, a.anchor, k.name, k.rule))
			}
		}
	}
	for anchor := range byAnchor {
		if !seen[anchor] {
			errs = append(errs, fmt.Errorf("the scenario anchor %q is not in the anchors table", anchor))
		}
	}
	// The counts table against the rows.
	got := map[string][]int{}
	for _, r := range t.rows {
		c := got[r.suite]
		if c == nil {
			c = make([]int, 1+len(peerStatuses))
			got[r.suite] = c
		}
		c[0]++
		for i, s := range peerStatuses {
			if r.category == s {
				c[1+i]++
			}
		}
	}
	for suite, c := range got {
		want, ok := t.counts[suite]
		if !ok {
			errs = append(errs, fmt.Errorf("the counts table has no row for %q", suite))
			continue
		}
		if fmt.Sprint(want) != fmt.Sprint(c) {
			errs = append(errs, fmt.Errorf("counts of %q: the header says %v (total, %s), the rows give %v", suite, want, strings.Join(peerStatuses, ", "), c))
		}
	}
	for suite := range t.counts {
		if got[suite] == nil {
			errs = append(errs, fmt.Errorf("the counts table names %q, which has no table", suite))
		}
	}
	return errs
}

func ruleExists(id string) bool {
	_, ok := model.RuleByID(id)
	return ok
}

func TestPeerTable(t *testing.T) {
	b, err := os.ReadFile(peerTablePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range checkPeerTable(string(b), Scenarios(), ruleExists) {
		t.Errorf("%s: %v", peerTablePath, e)
	}
}

// TestPeerTableCatches shows the check failing on a table that cites what
// does not exist, or miscounts.
func TestPeerTableCatches(t *testing.T) {
	b, err := os.ReadFile(peerTablePath)
	if err != nil {
		t.Fatal(err)
	}
	good := string(b)
	if errs := checkPeerTable(good, Scenarios(), ruleExists); len(errs) != 0 {
		t.Skipf("the table itself fails (TestPeerTable says how): %v", errs[0])
	}
	row := "| srq_test.cc SrqTest.MaxSge | A WR with max_sge SGEs posts. | `POST-SGE: num_sge at and above max_sge` | covered |"
	if !strings.Contains(good, row) {
		t.Fatalf("the MaxSge row changed; update this test")
	}
	bad := map[string]string{
		"no such scenario":         strings.Replace(good, row, strings.Replace(row, "num_sge at and above max_sge", "num_sge far above max_sge", 1), 1),
		"scenario of another rule": strings.Replace(good, row, strings.Replace(row, "POST-SGE:", "POST-FULL:", 1), 1),
		"no such rule":             strings.Replace(good, row, strings.Replace(row, "`POST-SGE: num_sge at and above max_sge`", "`POST-SGES`", 1), 1),
		"not a citation":           strings.Replace(good, row, strings.Replace(row, "`POST-SGE: num_sge at and above max_sge`", "`ibv_post_srq_recv`", 1), 1),
		"unknown status":           strings.Replace(good, row, strings.Replace(row, "| covered |", "| mostly |", 1), 1),
		"miscounted":               strings.Replace(good, row, strings.Replace(row, "| covered |", "| not covered: no |", 1), 1),
		"covered citing nothing":   strings.Replace(good, row, strings.Replace(row, "`POST-SGE: num_sge at and above max_sge`", "the POST-SGE scenario", 1), 1),
	}
	for what, text := range bad {
		if errs := checkPeerTable(text, Scenarios(), ruleExists); len(errs) == 0 {
			t.Errorf("%s: the check passed", what)
		}
	}
	// A scenario gains an anchor the table does not know.
	withAnchor := append([]Scenario(nil), Scenarios()...)
	withAnchor[len(withAnchor)-1].Anchor = "RUT SomeNewTest"
	if errs := checkPeerTable(good, withAnchor, ruleExists); len(errs) == 0 {
		t.Errorf("new anchor: the check passed")
	}
	arow := "| RUT SrqLimit | `LIMIT-FIRE: not at the limit, only below it` |"
	if !strings.Contains(good, arow) {
		t.Fatalf("the SrqLimit anchor row changed; update this test")
	}
	if errs := checkPeerTable(strings.Replace(good, arow, "| RUT SrqLimit | `LIMIT-FIRE: armed above the current count` |", 1), Scenarios(), ruleExists); len(errs) == 0 {
		t.Errorf("anchor with the wrong scenario: the check passed")
	}
}
