package conformance

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// Options configure a conformance run. The zero value runs every scenario
// and 100 random cases of up to 40 steps under the documented profile.
type Options struct {
	Profile model.Profile // zero value: model.Documented()
	Seed    uint64        // random-case seed; 0 picks one (reported)
	Cases   int           // random cases; 0 means 100, negative none
	Steps   int           // most steps per random case; 0 means 40
	// Scenarios selects scenarios by rule ID; empty runs all.
	Rules []string
	// Wait bounds how long a poll waits for expected completions and
	// events; Settle is how long it then looks for unexpected ones.
	// Zero: 2 s and 0 (a synchronous driver such as the emulator).
	Wait, Settle time.Duration
	// ShrinkTime bounds the shrinking of a failing random case (0: 30 s).
	ShrinkTime time.Duration
	// Progress, when set, is told of every finished unit of work.
	Progress func(done, total int, what string)
}

func (o *Options) defaults() {
	if o.Profile.Name == "" {
		o.Profile = model.Documented()
	}
	if o.Cases == 0 {
		o.Cases = 100
	}
	if o.Steps <= 0 {
		o.Steps = 40
	}
	if o.Wait == 0 {
		o.Wait = 2 * time.Second
	}
	if o.ShrinkTime == 0 {
		o.ShrinkTime = 30 * time.Second
	}
	if o.Seed == 0 {
		o.Seed = rand.Uint64() >> 1
	}
}

// Status is a rule's result.
type Status string

// Rule statuses.
const (
	Pass          Status = "pass"
	Fail          Status = "fail"
	NotApplicable Status = "n/a"
	Blocked       Status = "blocked" // its scenarios stopped on another rule's failure
)

// RuleResult is one row of the report.
type RuleResult struct {
	Rule      model.Rule `json:"rule"`
	Status    Status     `json:"status"`
	Reason    string     `json:"reason,omitempty"`
	Scenarios int        `json:"scenarios"`
	Failures  []int      `json:"failures,omitempty"` // indexes into Report.Failures
}

// Failure is a counterexample: a minimal trace that replays.
type Failure struct {
	Rule   string `json:"rule"`
	Source string `json:"source"` // "scenario: NAME" or "random case (seed N)"
	// AlsoIn lists the other runs that failed on the same rule; the report
	// keeps the shortest counterexample per rule.
	AlsoIn []string   `json:"also_in,omitempty"`
	Trace  Trace      `json:"trace"`
	Replay ReplayFile `json:"replay"`
}

// Finding is a profile declaration the device did not bear out.
type Finding struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
	// Untestable findings could not be probed safely or with this driver;
	// they are listed but do not make a device non-conformant.
	Untestable bool `json:"untestable,omitempty"`
}

// Report is the outcome of a conformance run.
type Report struct {
	Driver   string       `json:"driver"`
	Device   drivers.Info `json:"device"`
	Profile  string       `json:"profile"`
	Seed     uint64       `json:"seed"`
	Cases    int          `json:"cases"`
	Steps    int          `json:"max_steps"`
	Rules    []RuleResult `json:"rules"`
	Failures []Failure    `json:"failures"`
	Findings []Finding    `json:"findings"`
	// Resolved lists, for each choice the profile left open, the values the
	// device's behaviour allowed.
	Resolved map[string][]string `json:"resolved,omitempty"`
	// StepsRun counts operations run on the driver; Elapsed is wall time.
	StepsRun int           `json:"steps_run"`
	Elapsed  time.Duration `json:"elapsed_ns"`
}

// Conformant reports whether the device showed no deviation and bore out
// every declared deviation of its profile.
func (r *Report) Conformant() bool {
	for _, f := range r.Findings {
		if !f.Untestable {
			return false
		}
	}
	return len(r.Failures) == 0
}

// Check runs the conformance suite against the device drv opens with cfg
// and returns the report. The error is for a run that could not be made
// (the device would not open); deviations are in the report.
func Check(ctx context.Context, drv drivers.Driver, cfg drivers.Config, opts Options) (rep *Report, err error) {
	opts.defaults()
	dev, err := drv.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open %s device %q: %w", drv.Name(), cfg.Device, err)
	}
	defer func() {
		if cerr := dev.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s device: %w", drv.Name(), cerr)
		}
	}()
	start := time.Now()
	x := newExecutor(dev, opts)
	rep = &Report{Driver: drv.Name(), Device: x.info, Profile: opts.Profile.Name, Seed: opts.Seed,
		Cases: max(opts.Cases, 0), Steps: opts.Steps}
	replayFor := func(ops []model.Op, rule, source string) ReplayFile {
		rf, _ := NewReplay(drv.Name(), cfg, opts.Profile.Name, rule, source, ops)
		return rf
	}

	// Scenarios.
	selected := selectScenarios(opts.Rules)
	total := len(selected) + max(opts.Cases, 0)
	ran := map[string]int{}
	skipped := map[string]string{}
	blocked := map[string]string{}
	var passing []Trace
	resolved := map[string]map[string]bool{}
	for i, sc := range selected {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		var m *model.Model
		tr, skip := run(ctx, opts.Profile, x, func(s *session) { m = s.model; sc.Run(s) })
		rep.StepsRun += len(tr.Steps)
		switch {
		case skip != "":
			skipped[sc.Rule] = skip
		case tr.Deviation != nil:
			rep.Failures = append(rep.Failures, Failure{Rule: tr.Deviation.Rule, Source: "scenario: " + sc.Name, Trace: tr,
				Replay: replayFor(tr.Ops(), tr.Deviation.Rule, "scenario: "+sc.Name)})
			if tr.Deviation.Rule != sc.Rule {
				blocked[sc.Rule] = tr.Deviation.Rule
			}
		case tr.Err != "":
			return rep, fmt.Errorf("scenario %q (%s): %s", sc.Name, sc.Rule, tr.Err)
		default:
			ran[sc.Rule]++
			passing = append(passing, tr)
			// One device made every run: its choice is in every run's set.
			for f, vals := range m.Resolved(opts.Profile) {
				if resolved[f] == nil {
					resolved[f] = map[string]bool{}
					for _, v := range vals {
						resolved[f][v] = true
					}
					continue
				}
				for v := range resolved[f] {
					if !slices.Contains(vals, v) {
						delete(resolved[f], v)
					}
				}
			}
		}
		progress(opts, i+1, total, "scenario "+sc.Rule)
	}

	// Random cases.
	if opts.Cases > 0 {
		f, steps, err := randomCases(ctx, x, opts, len(selected), total)
		rep.StepsRun += steps
		if err != nil {
			return rep, err
		}
		if f != nil {
			f.Replay = replayFor(f.Trace.Ops(), f.Rule, f.Source)
			rep.Failures = append(rep.Failures, *f)
		}
	}

	rep.Failures = shortestPerRule(rep.Failures)
	rep.Rules = ruleTable(rep.Failures, ran, skipped, blocked)
	rep.Findings = declaredNotShown(opts.Profile, x.info, passing)
	if len(resolved) > 0 {
		rep.Resolved = map[string][]string{}
		for f, set := range resolved {
			for v := range set {
				rep.Resolved[f] = append(rep.Resolved[f], v)
			}
			slices.Sort(rep.Resolved[f])
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// shortestPerRule keeps one counterexample per rule, the shortest, in the
// order the rules first failed.
func shortestPerRule(fs []Failure) []Failure {
	var out []Failure
	at := map[string]int{}
	for _, f := range fs {
		i, ok := at[f.Rule]
		if !ok {
			at[f.Rule] = len(out)
			out = append(out, f)
			continue
		}
		keep, other := out[i], f
		if len(f.Trace.Steps) < len(keep.Trace.Steps) {
			keep, other = f, keep
			keep.AlsoIn = other.AlsoIn
			other.AlsoIn = nil
		}
		keep.AlsoIn = append(keep.AlsoIn, other.Source)
		out[i] = keep
	}
	return out
}

func progress(o Options, done, total int, what string) {
	if o.Progress != nil {
		o.Progress(done, total, what)
	}
}

func selectScenarios(rules []string) []Scenario {
	if len(rules) == 0 {
		return Scenarios()
	}
	var out []Scenario
	for _, sc := range scenarios {
		if slices.Contains(rules, sc.Rule) {
			out = append(out, sc)
		}
	}
	return out
}

func ruleTable(fails []Failure, ran map[string]int, skipped, blocked map[string]string) []RuleResult {
	var out []RuleResult
	for _, r := range model.Rules() {
		rr := RuleResult{Rule: r, Scenarios: ran[r.ID]}
		for i, f := range fails {
			if f.Rule == r.ID {
				rr.Failures = append(rr.Failures, i)
			}
		}
		switch {
		case len(rr.Failures) > 0:
			rr.Status = Fail
		case rr.Scenarios > 0:
			rr.Status = Pass
		case blocked[r.ID] != "":
			rr.Status, rr.Reason = Blocked, "its scenario stopped on "+blocked[r.ID]
		case skipped[r.ID] != "":
			rr.Status, rr.Reason = NotApplicable, skipped[r.ID]
		default:
			rr.Status, rr.Reason = NotApplicable, "no scenario selected"
		}
		out = append(out, rr)
	}
	return out
}

// declaredNotShown checks every field where the profile departs from the
// documented semantics: the device shows the departure when some passing
// trace is refused by the profile with that one field set back to the
// documented value.
func declaredNotShown(p model.Profile, info drivers.Info, passing []Trace) []Finding {
	caps := capsOf(info)
	var out []Finding
	doc := model.Documented()
	for _, field := range p.Departures() {
		q, err := p.With(field, doc)
		if err != nil {
			continue
		}
		shown := false
		for _, tr := range passing {
			if replayOnModel(q, caps, tr) != nil {
				shown = true
				break
			}
		}
		if why := untestable(field, p, info); !shown && why != "" {
			out = append(out, Finding{Field: field, Untestable: true, Detail: fmt.Sprintf("profile %s declares %s = %s, but %s", p.Name, field, p.Field(field), why)})
			continue
		}
		if !shown {
			out = append(out, Finding{Field: field, Detail: fmt.Sprintf("profile %s declares %s = %s (documented: %s), but no run told it apart from the documented behaviour",
				p.Name, field, p.Field(field), doc.Field(field))})
		}
	}
	return out
}

// untestable says why a declared departure cannot be shown on this device,
// or "" when it can.
func untestable(field string, p model.Profile, info drivers.Info) string {
	q := p.Query.Get()
	switch {
	case field == "NegativeSGE" && p.NegativeSGE.Get() == model.Accepted:
		return "the suite never posts a negative num_sge where the provider does not check it: it would copy a huge length"
	case field == "LimitAfterFire" && (q == model.QueryENOSYS || q == model.QueryEOPNOTSUPP):
		return "ibv_query_srq is unsupported, so srq_limit cannot be read"
	case field == "Resize" && !info.SRQResize:
		return "the device does not advertise IBV_DEVICE_SRQ_RESIZE either, so the two cannot be told apart"
	case field == "FlushInProgress" && !info.PartialDelivery:
		return "the driver cannot hold a message half-delivered, so no WR is ever in progress"
	case field == "LastWQERepeat":
		return "a repeated event is allowed, never required: how many packets reach a QP in ERR depends on the peer's retries"
	}
	return ""
}

// replayOnModel steps a model with a trace's recorded observations.
func replayOnModel(p model.Profile, caps model.Caps, tr Trace) error {
	m := model.New(p, caps)
	for _, s := range tr.Steps {
		if err := m.Step(s.Op, s.obs); err != nil {
			return err
		}
	}
	return nil
}

// rapidMu serialises rapid runs: rapid's settings are process-wide flags.
var rapidMu sync.Mutex

// randomCases runs rapid-driven random cases; on a failure it returns the
// shrunk counterexample.
func randomCases(ctx context.Context, x *executor, opts Options, done, total int) (*Failure, int, error) {
	rapidMu.Lock()
	defer rapidMu.Unlock()
	if err := setRapid(opts); err != nil {
		return nil, 0, err
	}
	var (
		last     Trace
		failed   bool
		harnessE string
		steps    int
		cases    int
	)
	tb := &progTB{}
	var firstFail time.Time
	rapid.Check(tb, func(t *rapid.T) {
		if ctx.Err() != nil {
			t.Skip("cancelled")
		}
		// rapid checks its shrink deadline only between passes; past ours,
		// every candidate passes and the best failing trace so far stands.
		if failed && time.Since(firstFail) > opts.ShrinkTime {
			return
		}
		tr, _ := run(ctx, opts.Profile, x, func(s *session) { genCase(t, s, opts.Steps) })
		steps += len(tr.Steps)
		cases++
		if cases <= opts.Cases {
			progress(opts, done+cases, total, "random case")
		}
		if tr.Failed() {
			if !failed {
				firstFail = time.Now()
			}
			last, failed = tr, true
			if tr.Deviation == nil {
				harnessE = tr.Err
			}
			t.Fatalf("%s", tr.Steps[len(tr.Steps)-1].OpText)
		}
	})
	if !failed {
		return nil, steps, ctx.Err()
	}
	if last.Deviation == nil {
		return nil, steps, fmt.Errorf("random case (seed %d): %s", opts.Seed, harnessE)
	}
	return &Failure{Rule: last.Deviation.Rule, Source: fmt.Sprintf("random case (seed %d)", opts.Seed), Trace: last}, steps, nil
}

// setRapid points rapid's process-wide settings at this run.
func setRapid(o Options) error {
	if !flag.Parsed() {
		testing.Init()
		if err := flag.CommandLine.Parse(nil); err != nil {
			return fmt.Errorf("prepare rapid flags: %w", err)
		}
	}
	for k, v := range map[string]string{
		"rapid.checks":     strconv.Itoa(o.Cases),
		"rapid.seed":       strconv.FormatUint(o.Seed, 10),
		"rapid.nofailfile": "true",
		"rapid.shrinktime": o.ShrinkTime.String(),
	} {
		if err := flag.Set(k, v); err != nil {
			return fmt.Errorf("set %s=%s: %w", k, v, err)
		}
	}
	return nil
}

// progTB lets rapid run outside go test; the run's outcome is read from the
// traces, not from what rapid prints.
type progTB struct {
	mu     sync.Mutex
	failed bool
}

func (*progTB) Helper()                 {}
func (*progTB) Name() string            { return "srqconform" }
func (*progTB) Logf(string, ...any)     {}
func (*progTB) Log(...any)              {}
func (*progTB) Skipf(string, ...any)    {}
func (*progTB) Skip(...any)             {}
func (*progTB) SkipNow()                {}
func (t *progTB) Errorf(string, ...any) { t.Fail() }
func (t *progTB) Error(...any)          { t.Fail() }
func (t *progTB) Fatalf(string, ...any) { t.Fail() }
func (t *progTB) Fatal(...any)          { t.Fail() }
func (*progTB) FailNow()                {}
func (t *progTB) Fail()                 { t.mu.Lock(); t.failed = true; t.mu.Unlock() }
func (t *progTB) Failed() bool          { t.mu.Lock(); defer t.mu.Unlock(); return t.failed }
