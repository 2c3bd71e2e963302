package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/model"
	"github.com/srqconform/srqconform/mutants"
	"github.com/srqconform/srqconform/mutants/outcome"
)

func TestBadFlagsSayOneLineAndExit2(t *testing.T) {
	for _, args := range [][]string{
		{"-nope"}, {"-seeds", "1,x"}, {"-seeds", "0"}, {"-budget", "0s"}, {"-parallel", "0"},
		{"-sample", "-1"}, {"-format", "html"}, {"-scripts", "0"}, {"extra"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, &stdout, &stderr)
		assert.Equal(t, 2, code, "srqmutants %v", args)
		assert.Empty(t, stdout.String(), "srqmutants %v", args)
		assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "srqmutants %v: %q", args, stderr.String())
		assert.True(t, strings.HasPrefix(stderr.String(), "srqmutants: "), "srqmutants %v: %q", args, stderr.String())
	}
}

// TestHelpPrintsUsageAndExits0: -h is a question, not bad input.
func TestHelpPrintsUsageAndExits0(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"-help"}} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, &stdout, &stderr)
		assert.Equal(t, 0, code, "srqmutants %v", args)
		assert.Empty(t, stderr.String(), "srqmutants %v", args)
		for _, flag := range []string{"-seeds", "-sample", "-mutants", "-budget"} {
			assert.Contains(t, stdout.String(), flag, "srqmutants %v", args)
		}
	}
}

func run1(seed uint64, failing ...string) outcome.SeedRun {
	return outcome.SeedRun{Seed: seed, Budget: time.Second, Elapsed: time.Second + time.Duration(len(failing))*time.Second, Failing: failing}
}

func TestMeasureCountsByStatusAndBlame(t *testing.T) {
	label := []string{"POST-FULL", "SLOT-FREE"}
	rs := []result{
		{Mutant: mutants.Mutant{ID: "a", Label: label}, Status: statusCaught, Caught: 2,
			Runs: []outcome.SeedRun{diagnosed(run1(1, "POST-FULL"), []string{"POST-FULL"}),
				diagnosed(run1(2, "POST-FULL", "SLOT-FREE"), []string{"POST-FULL"}, []string{"SLOT-FREE"})}},
		{Mutant: mutants.Mutant{ID: "h", Label: label}, Status: statusCaught, Caught: 1,
			Runs: []outcome.SeedRun{diagnosed(run1(1, "POST-FULL", "FETCH-FIFO"), []string{"POST-FULL", "FETCH-FIFO"}, []string{})}},
		{Mutant: mutants.Mutant{ID: "b", Label: label}, Status: statusCaught, Caught: 1,
			Runs: []outcome.SeedRun{run1(1, "FETCH-FIFO"), run1(2)}},
		{Mutant: mutants.Mutant{ID: "c", Label: label}, Status: statusEquivalent, Runs: []outcome.SeedRun{run1(1), run1(2)}},
		{Mutant: mutants.Mutant{ID: "d", Label: label}, Status: statusEscaped, Runs: []outcome.SeedRun{run1(1), run1(2)}, Witness: "script 1"},
		{Mutant: mutants.Mutant{ID: "e", Label: label}, Status: statusHang, Runs: []outcome.SeedRun{{Seed: 1, Crash: statusHang}}},
		{Mutant: mutants.Mutant{ID: "f", Label: label}, Status: statusNotCompiling},
		{Mutant: mutants.Mutant{ID: "g", Label: label}, Status: statusDriverFailed,
			Runs: []outcome.SeedRun{{Seed: 1, Budget: time.Second, Error: "the driver panicked"}, {Seed: 2, Budget: time.Second, Error: "emu: x"}}},
		{Mutant: mutants.Mutant{ID: "i", Label: label}, Status: statusAllowed, Runs: []outcome.SeedRun{run1(1), run1(2)}, Witness: "seed 1, scenario: x, step 2"},
	}
	f := measure(10, 3, rs)
	assert.Equal(t, figures{Generated: 10, TypeErrors: 3, Swept: 9, BuildErrors: 1, Equivalent: 1, NotEquivalent: 7, Crashed: 1,
		CaughtEvery: 2, FailedEvery: 4, DriverFailed: 1, Escaped: 1, Allowed: 1, Runs: 11, ErrorRuns: 2, CaughtRuns: 4, ExactlyOne: 2, EqualsLabel: 2, MoreThanOne: 2, MoreEachOne: 1,
		Counterexamples: 5, CexOneRule: 3, CexNoRule: 1, CexInLabel: 3,
		Longest: 3, LongestID: "a"}, f)
}

// diagnosed gives run the diagnoses ds, one per counterexample.
func diagnosed(run outcome.SeedRun, ds ...[]string) outcome.SeedRun {
	run.Diagnoses = ds
	return run
}

func TestChooseSpreadsASampleOverLabels(t *testing.T) {
	var ms []mutants.Mutant
	for i := range 30 {
		ms = append(ms, mutants.Mutant{ID: fmt.Sprint("m", i), Label: []string{[]string{"A", "B", "C"}[i%3]}})
	}
	ms[4].NotCompiling = "x"
	got := choose(ms, 6, nil)
	require.Len(t, got, 6)
	per := map[string]int{}
	for _, m := range got {
		per[m.Label[0]]++
		assert.Empty(t, m.NotCompiling)
	}
	assert.Equal(t, map[string]int{"A": 2, "B": 2, "C": 2}, per)
	assert.Equal(t, got, choose(ms, 6, nil), "the sample is deterministic")
	assert.Len(t, choose(ms, 0, nil), 29)
	assert.Equal(t, []mutants.Mutant{ms[7]}, choose(ms, 0, []string{"m7", "m4"}))
}

// TestSampleEndToEnd runs six mutants through the real runner (one seed,
// 2 s): every result is well formed, and at least one is caught.
func TestSampleEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs six mutants (about a minute)")
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-sample", "6", "-seeds", "1", "-budget", "2s", "-parallel", "2",
		"-scripts", "300", "-format", "json"}, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s", stderr.String())
	var rep sweepReport
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep))
	require.Len(t, rep.Mutants, 6)
	caught := 0
	for _, r := range rep.Mutants {
		require.NoError(t, mutants.CheckLabel(r.Label), "%s", r.ID)
		switch r.Status {
		case statusCaught:
			caught++
			require.Len(t, r.Runs, 1, "%s", r.ID)
			assert.Equal(t, 1, r.Caught, "%s", r.ID)
			for _, id := range r.Runs[0].Failing {
				_, ok := model.RuleByID(id)
				assert.True(t, ok, "%s: failing rule %q is no rule", r.ID, id)
			}
			assert.Positive(t, r.Runs[0].Elapsed, "%s", r.ID)
		case statusEscaped:
			assert.Contains(t, r.Witness, "script ", "%s", r.ID)
		case statusAllowed:
			assert.Contains(t, r.Witness, "the model accepts the mutant's answer", "%s", r.ID)
		case statusEquivalent:
			assert.Empty(t, r.Witness, "%s", r.ID)
		case statusPanic, statusHang, statusNotCompiling, statusDriverFailed:
		default:
			t.Errorf("%s: status %q", r.ID, r.Status)
		}
	}
	assert.Positive(t, caught, "none of the six mutants was caught")
	assert.Equal(t, 6, rep.Figures.Swept)
	assert.Greater(t, rep.Figures.Generated, 400)
	// The longest run against its budget is a figure the sweep prints, not
	// a verdict of this test: a busy machine stretches any run.
	t.Logf("longest run: %.2f x its budget", rep.Figures.Longest)
}

// TestADifferenceTheProfileAllowsIsNoEscape: a mutant that completes an
// oversize RC message with IBV_WC_LOC_QP_OP_ERR where the emulator says
// IBV_WC_LOC_LEN_ERR passes the suite, and documented allows any error
// status there (RECV-TOO-LARGE): the sweep finds the difference in a case
// the suite passed and reports the mutant as allowed by the profile, with
// the step, not as an escape.
func TestADifferenceTheProfileAllowsIsNoEscape(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a mutant (about a minute)")
	}
	set, err := mutants.Generate(filepath.Join("..", "..", "drivers", "emu"))
	require.NoError(t, err)
	id := ""
	for _, m := range set.Mutants {
		if m.Operator == mutants.OpOffByOne && strings.Contains(m.Before, "OversizeRCStatus") && strings.HasSuffix(m.After, "+ 1)") {
			id = m.ID
		}
	}
	require.NotEmpty(t, id, "no off-by-one mutant of the oversize RC status")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-mutants", id, "-seeds", "1", "-budget", "2s", "-scripts", "300", "-format", "json"}, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s", stderr.String())
	var rep sweepReport
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep))
	require.Len(t, rep.Mutants, 1)
	r := rep.Mutants[0]
	assert.Equal(t, statusAllowed, r.Status, "%s: witness %q", r.ID, r.Witness)
	assert.Contains(t, r.Witness, "LOC_QP_OP_ERR", "%s", r.ID)
	assert.Contains(t, r.Witness, "LOC_LEN_ERR", "%s", r.ID)
	assert.Equal(t, 1, rep.Figures.Allowed)
}
