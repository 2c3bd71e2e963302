package main

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/srqconform/srqconform/model"
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
		{"-set", "no-such-set"},
		{"-set", "faulty2", "-run", "errno-negative-long-list"},
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

// TestHelpPrintsUsageAndExits0: -h is a question, not bad input.
func TestHelpPrintsUsageAndExits0(t *testing.T) {
	var out, errOut bytes.Buffer
	code := realMain([]string{"-h"}, &out, &errOut)
	if code != 0 || errOut.Len() != 0 || !strings.Contains(out.String(), "-seeds") || !strings.Contains(out.String(), "-set") {
		t.Errorf("realMain(-h) = %d, stdout %q, stderr %q; want 0, the flags, nothing", code, out.String(), errOut.String())
	}
}

// TestVerdictAndFigures computes the figures of made-up runs.
func TestVerdictAndFigures(t *testing.T) {
	mk := func(bug, label string, seed uint64, elapsed time.Duration, rules ...model.RuleID) Run {
		r := Run{Bug: bug, Label: label, Seed: seed, Rules: rules, Elapsed: elapsed}
		r.Verdict = verdict(r)
		return r
	}
	runs := []Run{
		mk("a", "POST-FULL", 1, 5*time.Second, model.RulePostFull),
		mk("a", "POST-FULL", 2, 6*time.Second, model.RulePostFull, model.RuleRecvCompletion),
		mk("b", "UD-GRH", 1, 5*time.Second, model.RuleRecvCompletion),
		mk("b", "UD-GRH", 2, 15*time.Second),
		mk("c", "LIMIT-FIRE", 1, 5*time.Second, model.RuleLimitOnce),
		mk("c", "LIMIT-FIRE", 2, 5*time.Second, model.RuleLimitOnce),
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
	bugs, err := selectBugs("faulty", regexp.MustCompile("^(errno-negative-long-list|resize-query-off-by-one|limit-late-after-wrap)$"))
	if err != nil || len(bugs) != 3 {
		t.Fatalf("selectBugs(faulty, three names) = %d bugs, %v; want 3", len(bugs), err)
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
	for _, b := range sets[defaultSet]() {
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
	bugs := sets[defaultSet]()
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

// TestSetSelectsTheBugs wants -list to list the default set's bugs and none
// of faulty2's, and -set faulty2 -list faulty2's and none of the default
// set's.
func TestSetSelectsTheBugs(t *testing.T) {
	list := func(args ...string) string {
		var out, errOut bytes.Buffer
		if code := realMain(append(args, "-list"), &out, &errOut); code != 0 {
			t.Fatalf("realMain(%q -list) = %d, stderr %q; want 0", args, code, errOut.String())
		}
		return out.String()
	}
	plain, second := list(), list("-set", "faulty2")
	for _, c := range []struct {
		set       string
		out, not  string
		outName   string
		otherName string
	}{
		{"faulty", plain, second, "default -list", "-set faulty2 -list"},
		{"faulty2", second, plain, "-set faulty2 -list", "default -list"},
	} {
		bugs := sets[c.set]()
		if len(bugs) == 0 {
			t.Fatalf("set %s has no bug", c.set)
		}
		for _, b := range bugs {
			row := "| " + b.Name + " | " + b.Rule + " |"
			if !strings.Contains(c.out, row) {
				t.Errorf("%s has no row for %s (%s)", c.outName, b.Name, b.Rule)
			}
			if strings.Contains(c.not, row) {
				t.Errorf("%s lists %s of set %s", c.otherName, b.Name, c.set)
			}
		}
	}
}

// TestFaulty2BugIsMeasured measures one faulty2 bug with one seed and a
// small budget and wants it caught under its label, and the report to
// name the set.
func TestFaulty2BugIsMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the conformance suite")
	}
	c, err := parse([]string{"-set", "faulty2", "-run", "^enomem-negated$", "-seeds", "1", "-budget", "1s"})
	if err != nil || len(c.bugs) != 1 {
		t.Fatalf("parse(-set faulty2 -run ^enomem-negated$) = %d bugs, %v; want 1", len(c.bugs), err)
	}
	m := measure(context.Background(), c.bugs, c, func(Run) {})
	if len(m.Runs) != 1 || m.Runs[0].Error != "" || !slices.Contains(m.Runs[0].Rules, model.RulePostReturn) {
		t.Fatalf("measure(enomem-negated) = %+v; want one run failing POST-RETURN, no error", m.Runs)
	}
	var buf bytes.Buffer
	if err := writeMarkdown(&buf, m); err != nil || !strings.Contains(buf.String(), "(drivers/faulty2)") || !strings.Contains(buf.String(), "| enomem-negated | POST-RETURN |") {
		t.Errorf("writeMarkdown: %v; want the title to name drivers/faulty2 and a row for enomem-negated:\n%s", err, buf.String())
	}
}
