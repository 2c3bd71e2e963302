package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/srqconform/srqconform/concurrent"
	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrentCommand: on the emulator the histories are linearizable
// (exit 0); with a race mutant there is a violation (exit 1) with its
// visualisation, and the saved history checked again with -check gives
// the same verdict and rule.
func TestConcurrentCommand(t *testing.T) {
	code, out, errs, _ := srqDecided(t, "concurrent", "-seed", "3", "-runs", "2")
	assert.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "verdict: LINEARIZABLE")

	dir := t.TempDir()
	// The files are named by the seed that decided, which srqDecided
	// may have moved on from 1.
	code, out, errs, seed := srqDecided(t, "concurrent", "-seed", "1", "-deviations", "fetch-race-twice", "-html", dir, "-history-dir", dir, "-reduce", "5s", "-format", "markdown")
	require.Equal(t, exitDeviates, code, errs)
	assert.Contains(t, out, "VIOLATION in 1 of 1 histories (rules: FETCH-ONCE)")
	assert.Contains(t, out, "reduced history")
	html, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("violation-%d.html", seed)))
	require.NoError(t, err)
	assert.Contains(t, string(html), "<html")
	history := filepath.Join(dir, fmt.Sprintf("history-%d.json", seed))

	code, out, errs = srq(t, "concurrent", "-check", history, "-reduce", "0")
	assert.Equal(t, exitDeviates, code, errs)
	assert.Contains(t, out, "(rules: FETCH-ONCE)")

	known := filepath.Join(dir, "known.txt")
	require.NoError(t, os.WriteFile(known, []byte("FETCH-ONCE # the mutant, on purpose\n"), 0o644))
	code, _, errs = srq(t, "concurrent", "-check", history, "-reduce", "0", "-known", known)
	assert.Equal(t, exitOK, code, errs)
	assert.Contains(t, errs, "FETCH-ONCE violated, a known finding")

	// A whole report checked again is bounded by -reduce and
	// -check-timeout as given, not by fixed bounds.
	report := filepath.Join(dir, "report.json")
	code, _, errs, _ = srqDecided(t, "concurrent", "-seed", "1", "-deviations", "fetch-race-twice", "-reduce", "0", "-format", "json", "-o", report)
	require.Equal(t, exitDeviates, code, errs)
	code, out, errs = srq(t, "concurrent", "-check", report, "-reduce", "0")
	assert.Equal(t, exitDeviates, code, errs)
	assert.Contains(t, out, "(rules: FETCH-ONCE)")
	assert.NotContains(t, out, "reduced history", "-reduce 0 was not honoured")
	code, out, errs = srq(t, "concurrent", "-check", report, "-check-timeout", "1ns")
	assert.Equal(t, exitOK, code, errs) // undecided is not a violation
	assert.Contains(t, out, "verdict: UNKNOWN", "-check-timeout 1ns was not honoured")
}

// srqDecided runs srqconform concurrent with the "-seed" in args, and
// again with the next seeds (up to three in all) while porcupine leaves a
// history undecided within -check-timeout ("unknown" on stderr). Which
// interleavings a live history holds depends on the machine's load, and
// under the race detector on a busy host one can take porcupine's search
// past its bound (CI saw a 602-operation history still unknown at 2 min).
// An undecided history is no verdict either way, so the test asks again.
// It returns the exit code, stdout, stderr and the seed of the last run:
// files named by the seed (history-SEED.json, violation-SEED.html) are
// that seed's.
func srqDecided(t *testing.T, args ...string) (code int, out, errs string, lastSeed int) {
	t.Helper()
	args = slices.Clone(args)
	at := slices.Index(args, "-seed") + 1
	if at == 0 || at >= len(args) {
		t.Fatalf("srqDecided(%q): no -seed to vary", args)
	}
	seed, err := strconv.Atoi(args[at])
	if err != nil {
		t.Fatalf("srqDecided(%q): -seed %q: %v", args, args[at], err)
	}
	for try := range 3 {
		lastSeed = seed + try
		args[at] = strconv.Itoa(lastSeed)
		code, out, errs = srq(t, args...)
		if !undecided(errs) {
			break
		}
		t.Logf("seed %d: a history porcupine did not decide in time; trying the next seed: %s", lastSeed, errs)
	}
	return code, out, errs, lastSeed
}

// undecided reports whether srqconform concurrent's stderr says a history
// was left undecided (porcupine's bound ran out): no verdict either way.
func undecided(stderr string) bool { return strings.Contains(stderr, ", unknown in ") }

// TestConcurrentStatusCountsAnUndecidedBlameByEveryRuleItNames: a
// violation blamed on a rule -known does not list fails, unless the blame
// was undecided (cut by its bounds at every scale) and a rule it also
// names is known: a timer is never evidence of a new departure.
func TestConcurrentStatusCountsAnUndecidedBlameByEveryRuleItNames(t *testing.T) {
	known := conformance.Known{model.RuleQPLastWQE: "rxe's known finding"}
	for _, tc := range []struct {
		name      string
		undecided bool
		also      []model.RuleID
		want      int
	}{
		{"decided on an unknown rule", false, []model.RuleID{model.RuleQPLastWQE}, exitDeviates},
		{"undecided, a known rule also named", true, []model.RuleID{model.RuleQPLastWQE}, exitOK},
		{"undecided, no known rule named", true, nil, exitDeviates},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &concurrent.Report{Runs: []concurrent.HistoryRun{{Seed: 7, Result: &concurrent.Result{
				Verdict: concurrent.Violation, Rule: model.RuleLimitFire, Also: tc.also, BlameUndecided: tc.undecided}}}}
			var stderr strings.Builder
			got := concurrentStatus(rep, "text", filepath.Join(t.TempDir(), "r.txt"), known, io.Discard, &stderr)
			if got != tc.want {
				t.Fatalf("concurrentStatus = %d, want %d; stderr:\n%s", got, tc.want, stderr.String())
			}
		})
	}
}
