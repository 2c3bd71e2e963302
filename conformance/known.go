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
//
// A failure whose trace the known findings alone explain as well as the
// rules it is blamed on (Diagnosis.Also: the trace cannot tell them apart)
// counts as those known findings, and w says so: such a trace is no
// evidence that anything else broke. Real rxe's late LAST_WQE_REACHED
// (QP-LAST-WQE, known) after a too-large message ties with RECV-TOO-LARGE,
// which ranks first.
func (k Known) Unknown(rep *Report, w io.Writer) []model.RuleID {
	var failing, unknown []model.RuleID
	for i, f := range rep.Failures {
		blamed := append([]model.RuleID{f.Rule}, f.Rules...)
		if set := k.alternative(f); set != nil && !k.all(blamed) {
			fmt.Fprintf(w, "srqconform: %s failed in counterexample #%d, whose trace the known %s explains as well (it cannot tell them apart): counted as known\n",
				strings.Join(model.RuleNames(f.Rules), " and "), i+1, strings.Join(model.RuleNames(set), " and "))
			blamed = set
		}
		// Every rule of the diagnosis counts: a trace blamed on two rules
		// broke both, and the second may be one the file does not list.
		for _, r := range blamed {
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

// alternative returns a set of rules that explains f's trace as well as
// its diagnosis and that k lists whole, or nil.
func (k Known) alternative(f Failure) []model.RuleID {
	if f.Trace.Diagnosis == nil {
		return nil
	}
	for _, set := range f.Trace.Diagnosis.Explains() {
		if len(set) > 0 && k.all(set) {
			return set
		}
	}
	return nil
}

// all reports whether k lists every rule of set (the zero RuleID aside).
func (k Known) all(set []model.RuleID) bool {
	for _, r := range set {
		if _, ok := k[r]; !ok && r != 0 {
			return false
		}
	}
	return true
}

// Passes reports whether rep passes when the findings of k are allowed:
// it is conformant, or every departure is a failing rule k lists.
func (k Known) Passes(rep *Report, w io.Writer) bool {
	if rep.Conformant() {
		return true
	}
	return rep.FailingOnly() && len(k.Unknown(rep, w)) == 0
}
