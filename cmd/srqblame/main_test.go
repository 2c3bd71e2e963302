package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/srqconform/srqconform/drivers/faulty"
)

// TestBadFlagsExitTwoWithOneLine wants every bad command line to print one
// line on standard error, nothing on standard output, and exit 2.
func TestBadFlagsExitTwoWithOneLine(t *testing.T) {
	for _, args := range [][]string{
		{"-seeds", "1,x"},
		{"-seeds", "0"},
		{"-budget", "0s"},
		{"-budget", "soon"},
		{"-cases", "-3"},
		{"-parallel", "0"},
		{"-format", "xml"},
		{"-run", "("},
		{"-run", "no-such-bug-anywhere"},
		{"-nosuchflag"},
		{"extra"},
	} {
		var out, errOut bytes.Buffer
		code := realMain(args, &out, &errOut)
		lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
		if code != 2 || out.Len() != 0 || len(lines) != 1 || !strings.HasPrefix(lines[0], "srqblame: ") {
			t.Errorf("realMain(%q) = %d, stdout %q, stderr %q; want 2, nothing, one line starting srqblame:", args, code, out.String(), errOut.String())
		}
	}
}

// TestVerdictAndFigures computes the figures of made-up runs.
func TestVerdictAndFigures(t *testing.T) {
	mk := func(bug, label string, seed uint64, elapsed time.Duration, rules ...string) Run {
		r := Run{Bug: bug, Label: label, Seed: seed, Rules: rules, Elapsed: elapsed}
		r.Verdict = verdict(r)
		return r
	}
	runs := []Run{
		mk("a", "POST-FULL", 1, 5*time.Second, "POST-FULL"),
		mk("a", "POST-FULL", 2, 6*time.Second, "POST-FULL", "RECV-COMPLETION"),
		mk("b", "UD-GRH", 1, 5*time.Second, "RECV-COMPLETION"),
		mk("b", "UD-GRH", 2, 15*time.Second),
		mk("c", "LIMIT-FIRE", 1, 5*time.Second, "LIMIT-ONCE"),
		mk("c", "LIMIT-FIRE", 2, 5*time.Second, "LIMIT-ONCE"),
	}
	wantVerdicts := []string{Exact, Cascade, CatchAll, Missed, Other, Other}
	for i, r := range runs {
		if r.Verdict != wantVerdicts[i] {
			t.Errorf("verdict(%s seed %d, rules %v) = %s, want %s", r.Bug, r.Seed, r.Rules, r.Verdict, wantVerdicts[i])
		}
	}
	f := figures(runs, 5*time.Second)
	want := Figures{Kinds: 3, CaughtEverySeed: 2, Runs: 6, Caught: 5, OneRule: 4, Exact: 1, MoreThanOne: 1, CatchAllOther: 2,
		Longest: 15 * time.Second, LongestRun: "b seed 2", LongestRatio: 3}
	if f != want {
		t.Errorf("figures = %+v\nwant %+v", f, want)
	}
	wrong := wrongBlame(runs)
	if got := strings.Join(wrong[Other], ","); got != "c" {
		t.Errorf("wrongBlame()[other] = %q, want c", got)
	}
	if got := strings.Join(wrong[Missed], ","); got != "b" {
		t.Errorf("wrongBlame()[missed] = %q, want b", got)
	}
}

// TestThreeBugsAreCaughtEndToEnd measures three bugs with one seed and a
// small budget and wants each caught (some rule failing) with its elapsed
// time recorded, and the JSON report to say so.
func TestThreeBugsAreCaughtEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the conformance suite three times")
	}
	names := []string{"errno-negative-long-list", "resize-query-off-by-one", "limit-late-after-wrap"}
	var bugs []faulty.Bug
	for _, n := range names {
		b, err := faulty.ByName(n)
		if err != nil {
			t.Fatal(err)
		}
		bugs = append(bugs, b)
	}
	c := config{seeds: []uint64{1}, budget: time.Second, parallel: 1, format: "json"}
	m := measure(context.Background(), bugs, c, func(Run) {})
	if len(m.Runs) != 3 {
		t.Fatalf("measure ran %d runs, want 3", len(m.Runs))
	}
	for _, r := range m.Runs {
		if len(r.Rules) == 0 || r.Error != "" {
			t.Errorf("bug %s seed 1: rules %v, error %q; want it caught", r.Bug, r.Rules, r.Error)
		}
		if r.Elapsed <= 0 || len(r.Stages) == 0 {
			t.Errorf("bug %s seed 1: elapsed %v, stages %v; want them recorded", r.Bug, r.Elapsed, r.Stages)
		}
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, m); err != nil {
		t.Fatal(err)
	}
	var back Measurement
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back.Figures.Caught != 3 {
		t.Errorf("JSON report: error %v, figures.caught %d; want 3", err, back.Figures.Caught)
	}
}

// TestListNamesEveryBug wants -list to print one row per bug with its label.
func TestListNamesEveryBug(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := realMain([]string{"-list"}, &out, &errOut); code != 0 {
		t.Fatalf("realMain(-list) = %d, stderr %q; want 0", code, errOut.String())
	}
	for _, b := range faulty.All() {
		if !strings.Contains(out.String(), "| "+b.Name+" | "+b.Rule+" |") {
			t.Errorf("-list output has no row for %s (%s)", b.Name, b.Rule)
		}
	}
}

// TestInterruptedMeasurementReturns interrupts a measurement before it
// starts and wants it back well before its runs could have finished, with
// fewer runs than asked for and none of them counted as caught or missed
// without having run.
func TestInterruptedMeasurementReturns(t *testing.T) {
	if testing.Short() {
		t.Skip("may start conformance runs")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	bugs := faulty.All()
	c := config{seeds: []uint64{1, 2, 3}, budget: 5 * time.Second, parallel: 2}
	start := time.Now()
	m := measure(ctx, bugs, c, func(Run) {})
	if d := time.Since(start); d > time.Minute {
		t.Errorf("interrupted measure took %v, want it back within a minute", d)
	}
	if len(m.Runs) >= len(bugs)*3 {
		t.Errorf("interrupted measure reports %d runs, want fewer than %d", len(m.Runs), len(bugs)*3)
	}
	for _, r := range m.Runs {
		if r.Verdict != Error && r.Steps == 0 {
			t.Errorf("run %s seed %d: verdict %s with no step run; want error", r.Bug, r.Seed, r.Verdict)
		}
	}
}
