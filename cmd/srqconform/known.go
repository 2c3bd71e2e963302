package main

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/model"
)

// knownFindings is a -known file: the rules a device is known to break,
// each with why. A run whose failing rules are all known exits 0 (the
// report still says DEVIATES and shows them); one that breaks any other
// rule exits 1 as before. CI uses it to hold a device to everything but
// the kernel bugs already found, and to hear when one is fixed.
type knownFindings map[string]string // rule -> why

// readKnown reads a -known file: one rule ID per line, optionally
// followed by the reason after "#"; blank lines and lines starting with
// "#" are skipped. An unknown rule ID or a line without a reason is an
// error naming its line.
func readKnown(path string) (knownFindings, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-known: %w", err)
	}
	defer f.Close()
	k := knownFindings{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, why, _ := strings.Cut(line, "#")
		id, why = strings.TrimSpace(id), strings.TrimSpace(why)
		if _, ok := model.RuleByID(id); !ok {
			return nil, fmt.Errorf("-known %s line %d: %q is not a rule ID (see srqconform rules); want \"RULE-ID # why\"", path, n, id)
		}
		if why == "" {
			return nil, fmt.Errorf("-known %s line %d: rule %s has no reason; want \"RULE-ID # why\"", path, n, id)
		}
		k[id] = why
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("-known %s: %w", path, err)
	}
	return k, nil
}

// unknownFailures returns the failing rules of rep that k does not list,
// and says on w which known findings failed and which did not.
func (k knownFindings) unknownFailures(rep *conformance.Report, w io.Writer) []string {
	var failing, unknown []string
	for _, f := range rep.Failures {
		if !slices.Contains(failing, f.Rule) {
			failing = append(failing, f.Rule)
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
