package conformance

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/srqconform/srqconform/model"
)

// Known is a known-findings file: the rules a device is known to break,
// each with why. A run whose failing rules are all known passes (the
// report still says DEVIATES and shows them); one that breaks any other
// rule fails as before. CI uses it to hold a device to everything but the
// kernel bugs already found, and to hear when one is fixed.
type Known map[model.RuleID]string // rule -> why

// ReadKnown reads a known-findings file (srqconform -known): one rule ID
// per line, optionally followed by the reason after "#"; blank lines and
// lines starting with "#" are skipped. An empty path gives nil. An
// unknown rule ID or a line without a reason is an error naming its line.
func ReadKnown(path string) (Known, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-known: %w", err)
	}
	defer f.Close()
	return ParseKnown(f, path)
}

// ParseKnown reads a known-findings file from r; name says where it came
// from in errors.
func ParseKnown(r io.Reader, name string) (Known, error) {
	k := Known{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, why, _ := strings.Cut(line, "#")
		id, why = strings.TrimSpace(id), strings.TrimSpace(why)
		rule, err := model.ParseRuleID(id)
		if err != nil {
			return nil, fmt.Errorf("-known %s line %d: %q is not a rule ID (see srqconform rules); want \"RULE-ID # why\"", name, n, id)
		}
		if why == "" {
			return nil, fmt.Errorf("-known %s line %d: rule %s has no reason; want \"RULE-ID # why\"", name, n, id)
		}
		k[rule] = why
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("-known %s: %w", name, err)
	}
	return k, nil
}

// Unknown returns the failing rules of rep that k does not list (every
// rule of each failure's diagnosis, not only the one it is filed under),
// in the order the report gives them, and says on w which known findings failed
// and which did not.
func (k Known) Unknown(rep *Report, w io.Writer) []model.RuleID {
	var failing, unknown []model.RuleID
	for _, f := range rep.Failures {
		// Every rule of the diagnosis counts: a trace blamed on two rules
		// broke both, and the second may be one the file does not list.
		for _, r := range append([]model.RuleID{f.Rule}, f.Rules...) {
			if r != 0 && !slices.Contains(failing, r) {
				failing = append(failing, r)
			}
		}
	}
	for _, r := range failing {
		if why, ok := k[r]; ok {
			fmt.Fprintf(w, "srqconform: %s failed, a known finding (%s)\n", r, why)
			continue
		}
		unknown = append(unknown, r)
	}
	for _, r := range slices.Sorted(maps.Keys(k)) {
		if !slices.Contains(failing, r) {
			fmt.Fprintf(w, "srqconform: known finding %s did not fail in this run (fixed, or not reached)\n", r)
		}
	}
	return unknown
}

// Passes reports whether rep passes when the findings of k are allowed:
// it is conformant, or every departure is a failing rule k lists.
func (k Known) Passes(rep *Report, w io.Writer) bool {
	if rep.Conformant() {
		return true
	}
	return rep.FailingOnly() && len(k.Unknown(rep, w)) == 0
}
