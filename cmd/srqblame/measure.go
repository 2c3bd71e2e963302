package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// Verdicts of one run, from the rules it failed and the bug's label.
const (
	Exact    = "exact"     // one failing rule, the label
	Cascade  = "cascade"   // the label and other rules
	CatchAll = "catch-all" // RECV-COMPLETION, not the label
	Other    = "other"     // other rules only, not RECV-COMPLETION
	Missed   = "missed"    // no failing rule, nothing unexplained
	// Unexplained: no failing rule, but a rule blocked or a counterexample
	// that no rule explains.
	Unexplained = "unexplained"
	Error       = "error" // the run could not finish
)

// interruptGrace is how long an interrupted measurement waits for the
// runs in flight before it reports them unfinished.
const interruptGrace = 10 * time.Second

// catchAll is the generic rule that takes blame for specific ones.
const catchAll = model.RuleRecvCompletion

// Run is one bug under one seed.
type Run struct {
	Bug   string         `json:"bug"`
	Label string         `json:"label"`
	Seed  uint64         `json:"seed"`
	Rules []model.RuleID `json:"rules"` // failing rules, in catalogue order
	// Blocked are the rules whose scenario failed in a way no rule
	// explains; Unexplained counts counterexamples with no rule.
	Blocked     []model.RuleID `json:"blocked,omitempty"`
	Unexplained int            `json:"unexplained,omitempty"`
	// Unpredictable is the report's count of random cases the model could
	// not predict and deviations that vanished on replay (discarded).
	Unpredictable int `json:"unpredictable,omitempty"`
	// Stages is where the run\'s time went (Report.Stages).
	Stages  []conformance.Phase `json:"stages,omitempty"`
	Verdict string              `json:"verdict"`
	Elapsed time.Duration       `json:"elapsed_ns"`
	Steps   int                 `json:"steps"`
	Cases   int                 `json:"cases"`
	Error   string              `json:"error,omitempty"`
}

// Figures are the measurement's summary.
type Figures struct {
	Kinds           int `json:"kinds"`
	CaughtEverySeed int `json:"caught_every_seed"`
	Runs            int `json:"runs"`
	Caught          int `json:"caught"`
	OneRule         int `json:"caught_one_rule"`
	Exact           int `json:"caught_exact"`
	MoreThanOne     int `json:"more_than_one_rule"`
	CatchAllOther   int `json:"recv_completion_for_another_label"`
	// Longest is the longest run; LongestRatio is it over the budget (0
	// when the runs had a number of cases instead).
	Longest      time.Duration `json:"longest_ns"`
	LongestRun   string        `json:"longest_run"`
	LongestRatio float64       `json:"longest_over_budget,omitempty"`
}

// Measurement is every run and the figures.
type Measurement struct {
	Command string        `json:"command"`
	Set     string        `json:"set"`
	Seeds   []uint64      `json:"seeds"`
	Budget  time.Duration `json:"budget_ns,omitempty"`
	Cases   int           `json:"cases,omitempty"`
	Bugs    []bug         `json:"-"`
	Runs    []Run         `json:"runs"`
	Figures Figures       `json:"figures"`
	Errors  int           `json:"errors"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// options are the conformance options of one run.
func options(c config, seed uint64) conformance.Options {
	o := conformance.Options{Profile: model.Documented(), Seed: seed, Cases: -1, Duration: c.budget}
	if c.cases > 0 {
		o.Cases, o.Duration = c.cases, 0
	}
	return o
}

// measure runs every bug under every seed, c.parallel at a time, telling
// done of each finished run.
func measure(ctx context.Context, bugs []bug, c config, done func(Run)) Measurement {
	start := time.Now()
	type job struct {
		b     bug
		seed  uint64
		i     int
		start time.Time
	}
	runs := make([]Run, len(bugs)*len(c.seeds))
	running := map[int]job{}
	jobs := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range c.parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				mu.Lock()
				j.start = time.Now()
				running[j.i] = j
				mu.Unlock()
				r := runOne(ctx, j.b, j.seed, options(c, j.seed))
				mu.Lock()
				delete(running, j.i)
				runs[j.i] = r
				done(r)
				mu.Unlock()
			}
		}()
	}
feed:
	for i, b := range bugs {
		for k, s := range c.seeds {
			if ctx.Err() != nil {
				break feed // select picks at random when both are ready
			}
			select {
			case jobs <- job{b: b, seed: s, i: i*len(c.seeds) + k}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-ctx.Done():
		// A run that does not heed the interrupt is reported as such
		// after a grace period, so that the others are not lost.
		select {
		case <-finished:
		case <-time.After(interruptGrace):
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, j := range running {
		runs[i] = Run{Bug: j.b.Name, Label: j.b.Rule, Seed: j.seed, Verdict: Error, Elapsed: time.Since(j.start),
			Error: fmt.Sprintf("interrupted: conformance.Check still running %v after the interrupt", interruptGrace)}
	}
	set := c.set
	if set == "" {
		set = defaultSet
	}
	m := Measurement{Command: command(c), Set: set, Seeds: c.seeds, Bugs: bugs, Elapsed: time.Since(start)}
	if c.cases > 0 {
		m.Cases = c.cases
	} else {
		m.Budget = c.budget
	}
	for _, r := range runs {
		if r.Bug != "" {
			m.Runs = append(m.Runs, r)
		}
		if r.Verdict == Error {
			m.Errors++
		}
	}
	m.Figures = figures(m.Runs, m.Budget)
	return m
}

// runOne runs conformance.Check on bug b with o.
func runOne(ctx context.Context, b bug, seed uint64, o conformance.Options) Run {
	r := Run{Bug: b.Name, Label: b.Rule, Seed: seed}
	start := time.Now()
	rep, err := conformance.Check(ctx, b.driver(), drivers.Config{}, o)
	r.Elapsed = time.Since(start)
	if rep != nil {
		for _, rr := range rep.Rules {
			switch rr.Status {
			case conformance.Fail:
				r.Rules = append(r.Rules, rr.Rule.ID)
			case conformance.Blocked:
				r.Blocked = append(r.Blocked, rr.Rule.ID)
			}
		}
		for _, f := range rep.Failures {
			if len(f.Rules) == 0 && f.Follows == 0 {
				r.Unexplained++
			}
		}
		if rep.Error != "" && err == nil {
			r.Error = rep.Error
		}
		r.Steps, r.Cases, r.Unpredictable, r.Stages = rep.StepsRun, rep.CasesRun, rep.Unpredictable, rep.Stages
	}
	if err != nil {
		r.Error = err.Error()
	}
	r.Verdict = verdict(r)
	return r
}

// verdict classifies a run's blame against its label.
func verdict(r Run) string {
	switch {
	case r.Error != "":
		return Error
	case len(r.Rules) == 0 && (len(r.Blocked) > 0 || r.Unexplained > 0):
		return Unexplained
	case len(r.Rules) == 0:
		return Missed
	case len(r.Rules) == 1 && r.Rules[0].String() == r.Label:
		return Exact
	case slices.Contains(model.RuleNames(r.Rules), r.Label):
		return Cascade
	case slices.Contains(r.Rules, catchAll):
		return CatchAll
	}
	return Other
}

// figures sums the runs up; budget is the runs' time budget, 0 for runs
// bounded by a number of cases.
func figures(runs []Run, budget time.Duration) Figures {
	var f Figures
	perBug := map[string][]Run{}
	var order []string
	for _, r := range runs {
		if _, ok := perBug[r.Bug]; !ok {
			order = append(order, r.Bug)
		}
		perBug[r.Bug] = append(perBug[r.Bug], r)
		f.Runs++
		if r.Elapsed > f.Longest {
			f.Longest = r.Elapsed
			f.LongestRun = r.Bug + " seed " + itoa(r.Seed)
		}
		if len(r.Rules) == 0 {
			continue
		}
		f.Caught++
		if len(r.Rules) == 1 {
			f.OneRule++
		} else {
			f.MoreThanOne++
		}
		if r.Verdict == Exact {
			f.Exact++
		}
		if r.Label != catchAll.String() && slices.Contains(r.Rules, catchAll) {
			f.CatchAllOther++
		}
	}
	f.Kinds = len(order)
	for _, b := range order {
		every := true
		for _, r := range perBug[b] {
			every = every && len(r.Rules) > 0
		}
		if every {
			f.CaughtEverySeed++
		}
	}
	if budget > 0 {
		f.LongestRatio = float64(f.Longest) / float64(budget)
	}
	return f
}

// wrongBlame groups the bugs by what went wrong in their caught runs:
// verdict -> bug names, each bug under every verdict it had other than
// exact, sorted.
func wrongBlame(runs []Run) map[string][]string {
	seen := map[string]map[string]bool{}
	for _, r := range runs {
		if r.Verdict == Exact {
			continue
		}
		if seen[r.Verdict] == nil {
			seen[r.Verdict] = map[string]bool{}
		}
		seen[r.Verdict][r.Bug] = true
	}
	out := map[string][]string{}
	for v, bugs := range seen {
		for b := range bugs {
			out[v] = append(out[v], b)
		}
		sort.Strings(out[v])
	}
	return out
}

// slowStage is the stage other than the random cases that took the run
// longest, when it took more than 2 s: where a run past its budget went.
func slowStage(r Run) (conformance.Phase, bool) {
	var slow conformance.Phase
	for _, p := range r.Stages {
		if p.Name != conformance.StageRandom && p.Total > slow.Total {
			slow = p
		}
	}
	return slow, slow.Total > 2*time.Second
}
