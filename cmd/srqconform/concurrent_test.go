package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrentCommand: on the emulator the histories are linearizable
// (exit 0); with a race mutant there is a violation (exit 1) with its
// visualisation, and the saved history checked again with -check gives
// the same verdict and rule.
func TestConcurrentCommand(t *testing.T) {
	code, out, errs := srq(t, "concurrent", "-seed", "3", "-runs", "2")
	assert.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "verdict: LINEARIZABLE")

	dir := t.TempDir()
	code, out, errs = srq(t, "concurrent", "-seed", "1", "-deviations", "fetch-race-twice", "-html", dir, "-history-dir", dir, "-reduce", "5s", "-format", "markdown")
	require.Equal(t, exitDeviates, code, errs)
	assert.Contains(t, out, "VIOLATION in 1 of 1 histories (rules: FETCH-ONCE)")
	assert.Contains(t, out, "reduced history")
	html, err := os.ReadFile(filepath.Join(dir, "violation-1.html"))
	require.NoError(t, err)
	assert.Contains(t, string(html), "<html")

	code, out, errs = srq(t, "concurrent", "-check", filepath.Join(dir, "history-1.json"), "-reduce", "0")
	assert.Equal(t, exitDeviates, code, errs)
	assert.Contains(t, out, "(rules: FETCH-ONCE)")

	known := filepath.Join(dir, "known.txt")
	require.NoError(t, os.WriteFile(known, []byte("FETCH-ONCE # the mutant, on purpose\n"), 0o644))
	code, _, errs = srq(t, "concurrent", "-check", filepath.Join(dir, "history-1.json"), "-reduce", "0", "-known", known)
	assert.Equal(t, exitOK, code, errs)
	assert.Contains(t, errs, "FETCH-ONCE violated, a known finding")

	// A whole report checked again is bounded by -reduce and
	// -check-timeout as given, not by fixed bounds.
	report := filepath.Join(dir, "report.json")
	code, _, errs = srq(t, "concurrent", "-seed", "1", "-deviations", "fetch-race-twice", "-reduce", "0", "-format", "json", "-o", report)
	require.Equal(t, exitDeviates, code, errs)
	code, out, errs = srq(t, "concurrent", "-check", report, "-reduce", "0")
	assert.Equal(t, exitDeviates, code, errs)
	assert.Contains(t, out, "(rules: FETCH-ONCE)")
	assert.NotContains(t, out, "reduced history", "-reduce 0 was not honoured")
	code, out, errs = srq(t, "concurrent", "-check", report, "-check-timeout", "1ns")
	assert.Equal(t, exitOK, code, errs) // undecided is not a violation
	assert.Contains(t, out, "verdict: UNKNOWN", "-check-timeout 1ns was not honoured")
}
