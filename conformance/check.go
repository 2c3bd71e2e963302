package conformance

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// Options configure a conformance run. The zero value runs every scenario,
// then random cases of up to 40 steps for DefaultBudget (5 s), under the
// documented profile: as deep as srqconform run's default on the emulator.
type Options struct {
	Profile model.Profile // zero value: model.Documented()
	Seed    uint64        // random-case seed; 0 picks one (reported)
	// Cases is how many random cases run: 0 with no Duration means
	// DefaultBudget's worth; negative none (scenarios only, unless
	// Duration is set).
	Cases int
	Steps int // most steps per random case; 0 means 40
	// Scenarios selects scenarios by rule ID; empty runs all.
	Rules []string
	// Wait bounds how long a poll waits for expected completions and
	// events; Settle is how long it then looks for unexpected ones.
	// Zero: 2 s and 0 (a synchronous driver such as the emulator).
	Wait, Settle time.Duration
	// Recheck is how much longer a poll whose wait ran out looks again
	// when the model finds the shortfall a departure, so that a late
	// completion or event does not decide the verdict. 0: 10 times Wait;
	// negative: no second look.
	Recheck time.Duration
	// OpTimeout bounds every driver call on a device that is not
	// synchronous: one that overruns it stops the run with a harness
	// error (Report.Error) instead of hanging it. 0: DefaultOpTimeout;
	// negative: unbounded.
	OpTimeout time.Duration
	// ShrinkTime bounds the shrinking of a failing random case (0: 30 s);
	// all the shrinking of a run shares a budget of three times as long, or
	// of Duration when that is set (each shrink still gets a tenth of that).
	ShrinkTime time.Duration
	// Duration, when set, is a time budget for the random cases: they run
	// until it is spent (Cases then bounds them only if it is set too).
	Duration time.Duration
	deadline time.Time // when Duration runs out
	// FailFast stops the run at its first failure, diagnosed: the report
	// holds it and what ran before it.
	FailFast bool
	// Progress, when set, is told of every finished unit of work.
	Progress func(done, total int, what string)
}

func (o *Options) defaults() {
	if o.Profile.Name == "" {
		o.Profile = model.Documented()
	}
	if o.Cases == 0 && o.Duration == 0 {
		o.Duration = DefaultBudget
	}
	if o.Steps <= 0 {
		o.Steps = 40
	}
	if o.Wait == 0 {
		o.Wait = 2 * time.Second
	}
	if o.OpTimeout == 0 {
		o.OpTimeout = DefaultOpTimeout
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
	Pass          Status = "pass"        // its checks ran and agreed
	Fail          Status = "fail"        // the diagnosis names it broken
	NotApplicable Status = "n/a"         // the device cannot show it (Reason says why)
	Blocked       Status = "blocked"     // its scenario failed in a way no rule explains
	NotReached    Status = "not reached" // no check of it ran in this run
)

// RuleResult is one row of the report.
type RuleResult struct {
	Rule      model.Rule `json:"rule"`
	Status    Status     `json:"status"`
	Reason    string     `json:"reason,omitempty"`
	Scenarios int        `json:"scenarios"`
	// Checks counts the steps in which the rule's check ran and agreed.
	Checks   int   `json:"checks"`
	Failures []int `json:"failures,omitempty"` // indexes into Report.Failures
}

// Failure is a counterexample: a minimal trace that replays, and the rules
// its diagnosis names broken.
type Failure struct {
	Rule string `json:"rule"` // the first rule of Rules
	// Rules is the diagnosis: the rules whose relaxation explains the trace
	// (see model.Diagnose). Empty when no rule explains it.
	Rules  []string `json:"rules,omitempty"`
	Source string   `json:"source"` // "scenario: NAME" or "random case (seed N)"
	// AlsoIn lists the other runs that failed on the same rules; the
	// report keeps the shortest counterexample per diagnosis.
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
	Driver  string       `json:"driver"`
	Device  drivers.Info `json:"device"`
	Profile string       `json:"profile"`
	Seed    uint64       `json:"seed"`
	Cases   int          `json:"cases"`
	// Duration is the time budget the random cases ran under, if any.
	Duration time.Duration `json:"duration_ns,omitempty"`
	Steps    int           `json:"max_steps"`
	Rules    []RuleResult  `json:"rules"`
	Failures []Failure     `json:"failures"`
	Findings []Finding     `json:"findings"`
	// Resolved lists, for each choice the profile left open, the values the
	// device's behaviour allowed.
	Resolved map[string][]string `json:"resolved,omitempty"`
	// Features counts the state-space features (FeatureNames) the steps
	// that agreed reached; a feature never reached is absent.
	Features map[string]int `json:"features"`
	// Broken lists the rules diagnosed broken, in the order found; the run
	// adopted the device's behaviour for each and went on testing the rest.
	Broken []string `json:"broken,omitempty"`
	// StepsRun counts operations run on the driver; CasesRun the random
	// cases run (shrinking not counted); Elapsed is wall time.
	StepsRun int           `json:"steps_run"`
	CasesRun int           `json:"cases_run"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	// Phases is where the time went, by kind of work on the driver and
	// the model (PhaseNames), and Stages by stage of the run (StageNames):
	// each with its total and how often it was entered. Phases do not
	// overlap and add up to no more than Elapsed; stages add up to it.
	Phases []Phase `json:"phases,omitempty"`
	Stages []Phase `json:"stages,omitempty"`
	// Unpredictable counts random cases the model could not predict (a
	// fault of the generator, not the device), and deviations that vanish
	// when the trace is replayed keeping every model candidate (the run's
	// model keeps the most parsimonious ones only); they are discarded.
	Unpredictable int `json:"unpredictable,omitempty"`
	// Inconclusive counts the steps whose observation was silence where
	// the model needs the device's answer (a peer that heard nothing back
	// even after the driver's longer re-check, model.Inconclusive): each
	// ended its scenario or case there, and none is a failure.
	// InconclusiveAt says where, for the first maxInconclusiveAt of them.
	Inconclusive   int      `json:"inconclusive"`
	InconclusiveAt []string `json:"inconclusive_at,omitempty"`
	// Interrupted is set when the run was stopped (SIGINT, SIGTERM) before
	// it finished: the report holds what ran until then.
	Interrupted bool `json:"interrupted,omitempty"`
	// Error is set when the harness or the device failed and the run
	// stopped early: the report holds what ran until then.
	Error string `json:"error,omitempty"`
}

// Conformant reports whether the device showed no deviation and bore out
// every declared deviation of its profile.
func (r *Report) Conformant() bool {
	return r.FailingOnly() && len(r.Failures) == 0
}

// FailingOnly reports whether the report's departures, if any, are all
// failing rules: no profile finding other than an untestable one.
func (r *Report) FailingOnly() bool {
	for _, f := range r.Findings {
		if !f.Untestable {
			return false
		}
	}
	return true
}

// checker holds the state of one run: what is diagnosed broken so far, and
// what ran.
type checker struct {
	ctx     context.Context
	opts    Options
	x       *executor
	rep     *Report
	caps    model.Caps
	replay  func(ops []model.Op, rule, source string, relaxed []string) ReplayFile
	relaxed []string // rules diagnosed broken: adopted from the device
	// shrinkLeft is what is left of the run's shrink budget, shared by
	// every failure: the random-case budget when one is set (Duration),
	// else three times ShrinkTime. Each shrink takes at most ShrinkTime of
	// it, and at least a tenth of the whole (shrinkFor): a run with many
	// failures shrinks the later ones less, and stays within a bound
	// proportional to its budget.
	shrinkLeft, shrinkFloor time.Duration
	// refineUntil is when the optional refinements of a diagnosis
	// (disambiguate's second look, unify) stop being tried: three times
	// the random-case budget after the start, or three times ShrinkTime
	// without one. Past it a run still diagnoses every failure.
	refineUntil time.Time
	coverage    map[string]int    // rule -> steps whose check of it agreed
	ran         map[string]int    // rule -> scenarios that passed
	skipped     map[string]string // rule -> why its scenario could not run
	blocked     map[string]string // rule -> why its scenario stopped unexplained
	passing     []Trace
	resolved    map[string]map[string]bool
}

// Check runs the conformance suite against the device drv opens with cfg
// and returns the report.
//
// Once a rule is diagnosed broken the run adopts the device's behaviour for
// it (the model relaxes it) and goes on testing every other rule, so one
// root cause shows as one failing rule.
//
// The error is for a run that could not be made or finished: the device
// would not open (the report is then nil), the harness failed (Report.Error
// is set), or ctx was cancelled (Report.Interrupted is set). In the last two
// cases the report holds everything that ran until then.
func Check(ctx context.Context, drv drivers.Driver, cfg drivers.Config, opts Options) (rep *Report, err error) {
	opts.defaults()
	var dev drivers.Device
	var oerr error // not err: a hung Open's goroutine may set it later
	if !boundedOpen(opts, func() { dev, oerr = drv.Open(ctx, cfg) }) {
		return nil, fmt.Errorf("open %s device %q: it did not return within %v: the device or its kernel driver hangs", drv.Name(), cfg.Device, opts.OpTimeout)
	}
	if oerr != nil {
		return nil, fmt.Errorf("open %s device %q: %w", drv.Name(), cfg.Device, oerr)
	}
	var x *executor
	defer func() {
		if x != nil && x.hung != "" {
			return // the hung call may hold the device: leave it to the process's exit
		}
		var closeErr, cerr error
		if x != nil && !x.bounded("closing the device", func() { closeErr = dev.Close() }) {
			cerr = harness("the driver did not return from %s", x.hung)
		} else {
			cerr = closeErr
		}
		if cerr != nil && err == nil {
			err = fmt.Errorf("close %s device: %w", drv.Name(), cerr)
			rep.Error = err.Error()
		}
	}()
	start := time.Now()
	x = newExecutor(dev, opts)
	x.timing = newTiming()
	rep = &Report{Driver: drv.Name(), Device: x.info, Profile: opts.Profile.Name, Seed: opts.Seed,
		Cases: max(opts.Cases, 0), Steps: opts.Steps, Duration: opts.Duration}
	c := &checker{ctx: ctx, opts: opts, x: x, rep: rep, caps: capsOf(x.info),
		coverage: map[string]int{}, ran: map[string]int{}, skipped: map[string]string{}, blocked: map[string]string{},
		resolved: map[string]map[string]bool{}}
	c.shrinkLeft = 3 * opts.ShrinkTime // a count of cases: three failures' shrinks
	if opts.Duration > 0 {
		c.shrinkLeft = min(opts.ShrinkTime, max(opts.Duration, time.Second))
	}
	c.shrinkFloor = c.shrinkLeft / 10
	c.refineUntil = start.Add(3 * c.shrinkLeft)
	c.replay = func(ops []model.Op, rule, source string, relaxed []string) ReplayFile {
		rf, _ := NewReplay(drv.Name(), cfg, opts.Profile, rule, source, ops)
		rf.Relaxed = relaxed
		return rf
	}
	err = checkLimits(x.info)
	if err == nil {
		err = c.scenarios()
	}
	if err == nil && ctx.Err() == nil && !c.stopped() {
		err = c.randomCases()
	}
	if x.hung != "" && err == nil && ctx.Err() == nil {
		// A hang met while shrinking or diagnosing, where a step that
		// cannot run is not itself a failure.
		err = harness("the driver did not return from %s: the run stopped there", x.hung)
	}
	c.finish()
	x.timing.leave("")
	rep.Phases, rep.Stages = x.timing.report()
	rep.Elapsed = time.Since(start)
	switch {
	case ctx.Err() != nil:
		rep.Interrupted = true
		return rep, fmt.Errorf("run interrupted: %w", ctx.Err())
	case err != nil:
		rep.Error = err.Error()
		return rep, err
	}
	return rep, nil
}

// boundedOpen runs open within opts.OpTimeout (when positive) and reports
// whether it returned: whether the device is synchronous is known only
// once it is open.
func boundedOpen(opts Options, open func()) bool {
	if opts.OpTimeout <= 0 {
		open()
		return true
	}
	return within(opts.OpTimeout, open)
}

// DefaultBudget is the time budget Check, Test and srqconform run (on the
// emulator) give the random cases when neither a case count nor a duration
// is given:
// seconds, in which the state-directed generator reaches every rule's check
// and every state-space feature (BenchmarkCoverage) and catches every
// emulator mutant (TestMutantsAreCaughtWithinTheDefaultBudget).
const DefaultBudget = 5 * time.Second

// stopped says the run should stop: FailFast and a failure found.
func (c *checker) stopped() bool { return c.opts.FailFast && len(c.rep.Failures) > 0 }

// failing is a failing trace waiting for its diagnosis.
type failing struct {
	tr     Trace
	source string
	sc     *Scenario
	diag   model.Diagnosis
	// artefact says the deviation vanished when replayed keeping every
	// model candidate: it was the beam's, not the device's.
	artefact bool
}

// scenarios runs the selected scenarios. Those that fail are diagnosed, the
// rules found broken are relaxed, and the failed scenarios run again, until
// they pass or fail in a way no new rule explains.
func (c *checker) scenarios() error {
	pending := selectScenarios(c.opts.Rules)
	total := len(pending) + max(c.opts.Cases, 0)
	done := 0
	for round := 0; len(pending) > 0; round++ {
		var fails []*failing
		for _, sc := range pending {
			if c.ctx.Err() != nil {
				return nil
			}
			var m *model.Model
			c.x.timing.enter(StageScenarios)
			tr, skip, reached, feats := runCounting(c.ctx, c.opts.Profile, c.relaxed, c.x, func(s *session) { m = s.model; sc.Run(s) })
			c.rep.StepsRun += len(tr.Steps)
			c.cover(reached)
			c.feature(feats)
			switch {
			case skip != "":
				c.skipped[sc.Rule] = skip
			case tr.Interrupted || c.ctx.Err() != nil:
				return nil
			case tr.Inconclusive != nil:
				c.inconclusive("scenario: "+sc.Name, tr)
			case tr.Deviation != nil:
				fails = append(fails, &failing{tr: tr, source: "scenario: " + sc.Name, sc: &sc})
			case tr.Err != "":
				return fmt.Errorf("scenario %q (%s): %s", sc.Name, sc.Rule, tr.Err)
			default:
				c.ran[sc.Rule]++
				c.passing = append(c.passing, tr)
				c.resolve(m)
			}
			if round == 0 {
				done++
				progress(c.opts, done, total, "scenario "+sc.Rule)
			}
		}
		pending = nil
		if len(fails) == 0 {
			break
		}
		explained := c.settle(fails)
		if c.stopped() {
			return nil
		}
		for _, f := range fails {
			if f.artefact {
				continue
			}
			if len(f.diag.Rules) == 0 {
				c.blocked[f.sc.Rule] = fmt.Sprintf("its scenario failed at step %d in a way no rule explains (noticed by %s)", f.diag.VisibleAt, f.diag.NoticedBy)
				continue
			}
			if explained {
				pending = append(pending, *f.sc)
			}
		}
	}
	return nil
}

// randomCases runs the random cases; each failure is shrunk, diagnosed and
// relaxed, and the cases go on with what is left of the budget.
func (c *checker) randomCases() error {
	remaining := c.opts.Cases
	done := len(selectScenarios(c.opts.Rules))
	total := done + max(c.opts.Cases, 0)
	opts := c.opts
	if c.opts.Duration > 0 {
		opts.deadline = time.Now().Add(c.opts.Duration)
		if c.opts.Cases <= 0 {
			remaining = math.MaxInt
		}
	}
	for round := uint64(0); remaining > 0 && c.ctx.Err() == nil; round++ {
		if !opts.deadline.IsZero() && time.Now().After(opts.deadline) {
			break
		}
		batch := remaining
		if !opts.deadline.IsZero() {
			batch = min(remaining, 200) // batches, so that the budget decides
		}
		opts.ShrinkTime = c.shrinkFor()
		res, err := randomRun(c.ctx, c.x, opts, c.opts.Seed+round, batch, c.relaxed, done+c.rep.CasesRun, total)
		c.shrinkLeft -= res.shrunk
		c.rep.StepsRun += res.steps
		c.rep.CasesRun += res.cases
		for _, tr := range res.inconclusive {
			c.inconclusive(fmt.Sprintf("random case (seed %d)", c.opts.Seed+round), tr)
		}
		c.rep.Unpredictable += res.unpredictable
		c.cover(res.coverage)
		c.feature(res.features)
		remaining -= max(res.cases, 1)
		if err != nil {
			return err
		}
		if res.fail == nil {
			if opts.deadline.IsZero() {
				break
			}
			continue // the budget is time: another batch, another seed
		}
		source := fmt.Sprintf("random case (seed %d)", c.opts.Seed+round)
		if !c.settle([]*failing{{tr: c.disambiguate(*res.fail), source: source}}) || c.stopped() {
			break // nothing new explains it: more cases would find it again
		}
	}
	return nil
}

// settle diagnoses failing traces and chooses the rules to blame, one rule
// set at a time: the set that explains the most traces (then the one the
// traces' own diagnoses prefer most, then the more specific) is relaxed,
// the traces it explains are recorded under it, and the rest are diagnosed
// again with it relaxed, so that a trace that needed it together with
// another rule now names only the other. It reports whether it relaxed a
// rule it had not before.
func (c *checker) settle(fs []*failing) bool {
	defer c.x.timing.leave(c.x.timing.enter(StageDiagnosis))
	key := func(set []string) string { return strings.Join(set, "+") }
	var pending []*failing
	added := false
	for _, f := range fs {
		f.diag = f.tr.diagnose(c.opts.Profile, c.caps, c.relaxed)
		if f.tr.Deviation != nil && len(f.diag.Rules) == 0 && !f.diag.Unexplained {
			// Replayed keeping every candidate, the trace is consistent:
			// the run's model had dropped the candidate that explains it
			// (its beam). Not the device's fault: discard it.
			c.rep.Unpredictable++
			f.artefact = true
			added = true // nothing was learnt, but the cases may go on
			continue
		}
		pending = append(pending, f)
	}
	var last []string
	for len(pending) > 0 {
		var still []*failing
		for _, f := range pending {
			f.diag = f.tr.diagnose(c.opts.Profile, c.caps, c.relaxed)
			if len(f.diag.Rules) == 0 && !f.diag.Unexplained && last != nil {
				// Consistent now: the set relaxed last explains it, with
				// those relaxed before.
				f.diag = chooseDiagnosis(f.diag, last, c.opts.Profile, c.caps, slices.Clone(c.relaxed[:len(c.relaxed)-len(last)]), f.tr)
				c.record(*f, last)
				continue
			}
			still = append(still, f)
		}
		pending = still
		count, pref := map[string]int{}, map[string]int{}
		sets := map[string][]string{}
		for _, f := range pending {
			for i, set := range f.diag.Explains() {
				count[key(set)]++
				pref[key(set)] += i
				sets[key(set)] = set
			}
		}
		if len(count) == 0 {
			break
		}
		best := ""
		better := func(k string) bool {
			switch {
			case count[k] != count[best]:
				return count[k] > count[best]
			case pref[k] != pref[best]:
				return pref[k] < pref[best]
			case setRank(sets[k]) != setRank(sets[best]):
				return setRank(sets[k]) < setRank(sets[best])
			}
			return k < best
		}
		for k := range count {
			if best == "" || better(k) {
				best = k
			}
		}
		set := sets[best]
		still = nil
		for _, f := range pending {
			if !slices.ContainsFunc(f.diag.Explains(), func(s []string) bool { return key(s) == best }) {
				still = append(still, f)
				continue
			}
			f.diag = chooseDiagnosis(f.diag, set, c.opts.Profile, c.caps, c.relaxed, f.tr)
			c.record(*f, set)
		}
		pending = still
		for _, r := range set {
			if !slices.Contains(c.relaxed, r) {
				c.relaxed = append(c.relaxed, r)
				c.rep.Broken = append(c.rep.Broken, r)
				added = true
			}
		}
		last = set
	}
	for _, f := range pending {
		f.diag.Unexplained = true
		c.record(*f, nil)
	}
	return added
}

// setRank orders rule sets by the tie-break order of their rules.
func setRank(set []string) int {
	r := 0
	for _, id := range set {
		r = r*1000 + model.Rank(id)
	}
	return r
}

// chooseDiagnosis makes set the trace's diagnosis, keeping the others as
// alternatives, and finds where the trace departs under it.
func chooseDiagnosis(d model.Diagnosis, set []string, p model.Profile, caps model.Caps, relaxed []string, tr Trace) model.Diagnosis {
	if slices.Equal(d.Rules, set) {
		return d
	}
	var also [][]string
	for _, s := range d.Explains() {
		if !slices.Equal(s, set) {
			also = append(also, s)
		}
	}
	d.Rules, d.Also = set, also
	if k, ok := model.DepartureStep(p, caps, relaxed, tr.modelSteps(), set); ok {
		d.DepartedAt = k
		if d.VisibleAt > 0 {
			d.DepartedAt = min(k, d.VisibleAt) // no later than noticed
		}
	}
	return d
}

// record adds a failing trace to the report under the rules of set (or
// under the rule that noticed it, when nothing explains it).
func (c *checker) record(f failing, set []string) {
	d := f.diag
	f.tr.Diagnosis = &d
	rule := d.NoticedBy
	if len(set) > 0 {
		rule = set[0]
	}
	c.rep.Failures = append(c.rep.Failures, Failure{Rule: rule, Rules: set, Source: f.source, Trace: f.tr,
		Replay: c.replay(f.tr.Ops(), rule, f.source, slices.Clone(c.relaxed))})
}

func (c *checker) feature(counts map[string]int) {
	if c.rep.Features == nil {
		c.rep.Features = map[string]int{}
	}
	for f, n := range counts {
		c.rep.Features[f] += n
	}
}

func (c *checker) cover(reached map[string]int) {
	for r, n := range reached {
		c.coverage[r] += n
	}
}

// resolve narrows the open choices by what one passing scenario allowed:
// one device made every run, so its choice is in every run's set. Fields
// owned by rules diagnosed broken are left out.
func (c *checker) resolve(m *model.Model) {
	for f, vals := range m.Resolved(c.opts.Profile) {
		if slices.Contains(c.relaxed, model.FieldOwner[f]) {
			continue
		}
		if c.resolved[f] == nil {
			c.resolved[f] = map[string]bool{}
			for _, v := range vals {
				c.resolved[f][v] = true
			}
			continue
		}
		for v := range c.resolved[f] {
			if !slices.Contains(vals, v) {
				delete(c.resolved[f], v)
			}
		}
	}
}

// unify blames the whole run on one rule when one rule alone explains
// every failing trace of it, with nothing else relaxed: one root cause is
// one rule, and what followed from adopting the device's behaviour for one
// rule (another rule's check failing on the state the departure left) is
// not a second failure. It also takes the blame from a generic rule
// (model.Generic) when a specific one explains the same traces. Among
// several such rules the specific ones come first, then the fewest
// departures, then model.Rank.
func (c *checker) unify() {
	broken := c.rep.Broken
	if len(broken) == 0 || len(c.rep.Failures) == 0 || time.Now().After(c.refineUntil) {
		return
	}
	if len(broken) == 1 && !slices.Contains(model.Generic, broken[0]) {
		return
	}
	type fit struct {
		rule       string
		departures int
	}
	// The candidates: the rules blamed, and every rule that alone
	// explained one of the traces as it was diagnosed.
	candidates := slices.Clone(broken)
	for _, f := range c.rep.Failures {
		if f.Trace.Diagnosis == nil {
			continue
		}
		for _, set := range f.Trace.Diagnosis.Explains() {
			if len(set) == 1 && !slices.Contains(candidates, set[0]) {
				candidates = append(candidates, set[0])
			}
		}
	}
	var fits []fit
	for _, r := range candidates {
		total, ok := 0, true
		for _, f := range c.rep.Failures {
			n, consistent := model.Departures(c.opts.Profile, c.caps, nil, f.Trace.modelSteps(), []string{r})
			if !consistent || n == 0 {
				ok = false
				break
			}
			total += n
		}
		if ok {
			fits = append(fits, fit{r, total})
		}
	}
	if len(fits) == 0 {
		return
	}
	generic := func(id string) int {
		if slices.Contains(model.Generic, id) {
			return 1
		}
		return 0
	}
	best := slices.MinFunc(fits, func(a, b fit) int {
		if d := generic(a.rule) - generic(b.rule); d != 0 {
			return d
		}
		if a.departures != b.departures {
			return a.departures - b.departures
		}
		return model.Rank(a.rule) - model.Rank(b.rule)
	})
	if len(broken) == 1 && (broken[0] == best.rule || generic(best.rule) == 1) {
		return
	}
	set := []string{best.rule}
	for i := range c.rep.Failures {
		f := &c.rep.Failures[i]
		d := chooseDiagnosis(f.Trace.diagnose(c.opts.Profile, c.caps, nil), set, c.opts.Profile, c.caps, nil, f.Trace)
		f.Rules, f.Rule, f.Trace.Diagnosis = set, best.rule, &d
		f.Replay.Rule, f.Replay.Relaxed = best.rule, nil
	}
	c.rep.Broken = set
	c.relaxed = slices.DeleteFunc(c.relaxed, func(r string) bool { return slices.Contains(broken, r) })
	c.relaxed = append(c.relaxed, best.rule)
}

// prune drops a rule diagnosed broken whose every failure the other rules
// diagnosed broken explain as well: traces that end at their first
// deviation can leave two single rules equally able to explain one, and
// the rest of the run shows which of them the device breaks. The least
// specific rules are tried first.
func (c *checker) prune() {
	broken := slices.Clone(c.rep.Broken)
	slices.SortStableFunc(broken, func(a, b string) int { return setRank([]string{b}) - setRank([]string{a}) })
	for _, r := range broken {
		others := slices.DeleteFunc(slices.Clone(c.rep.Broken), func(x string) bool { return x == r })
		if len(others) == 0 {
			return
		}
		type redo struct {
			i    int
			diag model.Diagnosis
		}
		var redos []redo
		ok := true
		for i, f := range c.rep.Failures {
			if !slices.Contains(f.Rules, r) {
				continue
			}
			base := slices.DeleteFunc(slices.Clone(f.Replay.Relaxed), func(x string) bool { return x == r })
			d := model.DiagnoseAmong(c.opts.Profile, c.caps, base, f.Trace.modelSteps(), others)
			if len(d.Rules) == 0 {
				ok = false
				break
			}
			redos = append(redos, redo{i, d})
		}
		if !ok {
			continue
		}
		for _, x := range redos {
			f := &c.rep.Failures[x.i]
			d := x.diag
			f.Rules, f.Rule, f.Trace.Diagnosis = d.Rules, d.Rules[0], &d
			f.Replay.Rule = d.Rules[0]
		}
		c.rep.Broken = others
	}
}

// disambiguate looks harder at a failing trace that more than one rule
// explains equally well: it runs the trace again on the device with a poll
// after every step, so that each departure shows where it happens (an event
// that did not come, a completion that did), and returns that trace if it
// still deviates and fewer rules explain it. Shrinking keeps traces short,
// and a short trace often leaves open which promise broke.
func (c *checker) disambiguate(tr Trace) Trace {
	defer c.x.timing.leave(c.x.timing.enter(StageDiagnosis))
	if time.Now().After(c.refineUntil) {
		return tr
	}
	d := tr.diagnose(c.opts.Profile, c.caps, c.relaxed)
	if len(d.Rules) == 0 || len(d.Also) == 0 || c.ctx.Err() != nil {
		return tr
	}
	ops := tr.Ops()
	var looked []model.Op
	for i, op := range ops {
		looked = append(looked, op)
		if _, isPoll := op.(model.Poll); !isPoll && i < len(ops)-1 {
			looked = append(looked, model.Poll{})
		}
	}
	t, _, _ := run(c.ctx, c.opts.Profile, c.relaxed, c.x, func(s *session) {
		for _, op := range looked {
			s.do(op)
		}
	})
	c.rep.StepsRun += len(t.Steps)
	if t.Deviation == nil {
		return tr
	}
	if d2 := t.diagnose(c.opts.Profile, c.caps, c.relaxed); len(d2.Rules) > 0 && len(d2.Also) < len(d.Also) {
		return t
	}
	return tr
}

// shrinkFor is how long the next shrink may take: ShrinkTime, or what is
// left of the run's shrink budget, but never under a tenth of the budget.
func (c *checker) shrinkFor() time.Duration {
	return max(min(c.opts.ShrinkTime, c.shrinkLeft), c.shrinkFloor)
}

// minimize removes steps from a counterexample, one at a time, for as long
// as the trace still fails the same way: it deviates with the rules the run
// had relaxed when it failed, and is consistent with the diagnosed rules
// relaxed as well. The result is 1-minimal: no single step can go. Every
// attempt runs on the device; the attempts stop at the shrink budget.
func (c *checker) minimize(f *Failure) {
	if len(f.Rules) == 0 {
		return
	}
	base := f.Replay.Relaxed
	with := append(slices.Clone(base), f.Rules...)
	began := time.Now()
	deadline := began.Add(c.shrinkFor())
	defer func() { c.shrinkLeft -= time.Since(began) }()
	try := func(ops []model.Op) (Trace, bool) {
		c.x.timing.enter(StageShrink)
		tr, _, _ := run(c.ctx, c.opts.Profile, base, c.x, func(s *session) {
			for _, op := range ops {
				s.do(op)
			}
		})
		c.rep.StepsRun += len(tr.Steps)
		ok := tr.Deviation != nil && replayOnModel(c.opts.Profile, c.caps, with, tr) == nil
		return tr, ok
	}
	ops := f.Trace.Ops()
	tr := f.Trace
	for changed := true; changed; {
		changed = false
		for i := len(ops) - 1; i >= 1 && i < len(ops); i-- {
			if time.Now().After(deadline) || c.ctx.Err() != nil {
				break
			}
			cand := append(slices.Clone(ops[:i]), ops[i+1:]...)
			if t, ok := try(cand); ok {
				tr, ops, changed = t, t.Ops(), true
			}
		}
	}
	if len(tr.Ops()) == len(f.Trace.Ops()) {
		return // nothing could go (evidence steps do not count)
	}
	d := chooseDiagnosis(tr.diagnose(c.opts.Profile, c.caps, base), f.Rules, c.opts.Profile, c.caps, base, tr)
	tr.Diagnosis = &d
	f.Trace = tr
	f.Replay = c.replay(tr.Ops(), f.Rule, f.Source, base)
}

// finish builds the rule table, the findings and the open choices.
func (c *checker) finish() {
	rep := c.rep
	c.x.timing.enter(StageDiagnosis)
	if c.ctx.Err() == nil {
		c.unify()
		c.prune()
	}
	rep.Failures = shortestPerRule(rep.Failures)
	if c.ctx.Err() == nil {
		for i := range rep.Failures {
			c.minimize(&rep.Failures[i])
		}
	}
	c.x.timing.enter(StageReport)
	rep.Rules = c.ruleTable()
	if c.ctx.Err() == nil {
		rep.Findings = declaredNotShown(c.opts.Profile, c.x.info, c.passing, c.relaxed)
	}
	if len(c.resolved) > 0 {
		rep.Resolved = map[string][]string{}
		for f, set := range c.resolved {
			if slices.Contains(c.relaxed, model.FieldOwner[f]) {
				continue
			}
			for v := range set {
				rep.Resolved[f] = append(rep.Resolved[f], v)
			}
			slices.Sort(rep.Resolved[f])
		}
	}
}

// shortestPerRule keeps one counterexample per diagnosis, the shortest, in
// the order they were found. A trace in which a call killed its process
// (made in a child process: drivers.Info.PostRecvUnsafe,
// NegativeSGEUnsafe) is kept apart from the rule's other traces: a crash
// is a finding of its own, with its own replay file.
func shortestPerRule(fs []Failure) []Failure {
	var out []Failure
	at := map[string]int{}
	for _, f := range fs {
		k := strings.Join(f.Rules, "+")
		if k == "" {
			k = "unexplained:" + f.Rule
		}
		if sig := killedIn(f.Trace); sig != "" {
			k += " killed by " + sig
		}
		i, ok := at[k]
		if !ok {
			at[k] = len(out)
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

// killedIn names the signal that killed the process making a call of the
// trace (not counting evidence steps), or "".
func killedIn(t Trace) string {
	for _, s := range t.Steps {
		if !s.Evidence && s.obs.Killed != "" {
			return s.obs.Killed
		}
	}
	return ""
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

func (c *checker) ruleTable() []RuleResult {
	var out []RuleResult
	for _, r := range model.Rules() {
		rr := RuleResult{Rule: r, Scenarios: c.ran[r.ID], Checks: c.coverage[r.ID]}
		for i, f := range c.rep.Failures {
			if slices.Contains(f.Rules, r.ID) || (len(f.Rules) == 0 && f.Rule == r.ID) {
				rr.Failures = append(rr.Failures, i)
			}
		}
		switch {
		case len(rr.Failures) > 0:
			rr.Status = Fail
		case r.ID == "QP-TRANSITIONS" && c.x.info.CMStates:
			// The driver, not ibv_modify_qp, makes the transitions up to
			// RTS (the connection manager does): agreeing checks prove
			// nothing about the verb.
			rr.Status, rr.Reason = NotApplicable, "QPs of this device reach RTS only through the connection manager (iWARP, rdma_cm); the driver records RESET->INIT and RTR->RTS, so only ERR and RESET are ibv_modify_qp's"
		case rr.Checks > 0:
			rr.Status = Pass
		case slices.Contains(model.ConcurrentOnly, r.ID):
			rr.Status, rr.Reason = NotApplicable, "only concurrent calls can break it; srqconform concurrent checks it"
		case c.skipped[r.ID] != "":
			rr.Status, rr.Reason = NotApplicable, c.skipped[r.ID]
		case c.blocked[r.ID] != "":
			rr.Status, rr.Reason = Blocked, c.blocked[r.ID]
		case len(c.opts.Rules) > 0 && !slices.Contains(c.opts.Rules, r.ID):
			rr.Status, rr.Reason = NotReached, "not selected, and no random case reached its check"
		case c.ctx.Err() != nil:
			rr.Status, rr.Reason = NotReached, "the run was interrupted before its check ran"
		default:
			rr.Status, rr.Reason = NotReached, "no check of it ran in this run"
		}
		out = append(out, rr)
	}
	return out
}

// declaredNotShown checks every field where the profile departs from the
// documented semantics: the device shows the departure when some passing
// trace is refused by the profile with that one field set back to the
// documented value. Fields owned by rules diagnosed broken are left out:
// the device already departs there in some other way.
func declaredNotShown(p model.Profile, info drivers.Info, passing []Trace, relaxed []string) []Finding {
	caps := capsOf(info)
	var out []Finding
	doc := model.Documented()
	for _, field := range p.Departures() {
		if slices.Contains(relaxed, model.FieldOwner[field]) {
			continue
		}
		q, err := p.With(field, doc)
		if err != nil {
			continue
		}
		shown := false
		for _, tr := range passing {
			if replayOnModel(q, caps, relaxed, tr) != nil {
				shown = true
				break
			}
		}
		if why := Untestable(field, p, info); !shown && why != "" {
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

// Untestable says why a declared departure cannot be shown on this device,
// or "" when it can.
func Untestable(field string, p model.Profile, info drivers.Info) string {
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
	case field == "QPRecvCaps" && info.CMStates:
		return "QPs of this device are made by the connection manager when they connect, with no receive caps the suite chooses, so QP-SRQ-CAPS cannot run"
	case field == "LastWQERepeat":
		return "a repeated event is allowed, never required: how many packets reach a QP in ERR depends on the peer's retries"
	}
	return ""
}

// replayOnModel steps a model, with rules relaxed, through a trace's
// recorded observations.
func replayOnModel(p model.Profile, caps model.Caps, relaxed []string, tr Trace) error {
	m, err := model.NewRelaxed(p, caps, relaxed)
	if err != nil {
		return err
	}
	for _, s := range tr.Steps {
		if err := m.Step(s.Op, s.obs); err != nil {
			return err
		}
	}
	return nil
}

// rapidMu serialises rapid runs: rapid's settings are process-wide flags.
var rapidMu sync.Mutex

// maxInconclusiveAt bounds Report.InconclusiveAt.
const maxInconclusiveAt = 20

// inconclusive counts an inconclusive trace from source and says where
// it stopped.
func (c *checker) inconclusive(source string, tr Trace) {
	c.rep.Inconclusive++
	if len(c.rep.InconclusiveAt) >= maxInconclusiveAt || len(tr.Steps) == 0 {
		return
	}
	last := tr.Steps[len(tr.Steps)-1]
	c.rep.InconclusiveAt = append(c.rep.InconclusiveAt, fmt.Sprintf("%s, step %d %s: %s", source, last.N, last.OpText, tr.Inconclusive))
}

// randomResult is what one rapid run of random cases gave.
type randomResult struct {
	fail *Trace // the shrunk failing trace, or nil
	// inconclusive holds the cases that ended inconclusive (not while
	// shrinking).
	inconclusive  []Trace
	cases, steps  int
	unpredictable int
	coverage      map[string]int
	features      map[string]int
	shrunk        time.Duration // how long shrinking the failure took
}

// randomRun runs up to cases rapid-driven random cases with seed, the rules
// in relaxed adopted from the device; on a failure it returns the shrunk
// counterexample. A cancelled context ends the run at once, without
// shrinking: a case cut short is not a failure.
func randomRun(ctx context.Context, x *executor, opts Options, seed uint64, cases int, relaxed []string, done, total int) (randomResult, error) {
	rapidMu.Lock()
	defer rapidMu.Unlock()
	res := randomResult{coverage: map[string]int{}, features: map[string]int{}}
	o := opts
	o.Seed, o.Cases = seed, cases
	if err := setRapid(o); err != nil {
		return res, err
	}
	var (
		last     Trace
		failed   bool
		harnessE string
	)
	tb := &progTB{}
	var firstFail time.Time
	prop := func(t *rapid.T) {
		if !failed && !opts.deadline.IsZero() && time.Now().After(opts.deadline) {
			return // the time budget is spent: no new case
		}
		if ctx.Err() != nil {
			runtime.Goexit() // see below
		}
		// rapid checks its shrink deadline only between passes; past ours,
		// every candidate passes and the best failing trace so far stands.
		if failed && time.Since(firstFail) > opts.ShrinkTime {
			return
		}
		if failed {
			x.timing.enter(StageShrink)
		} else {
			x.timing.enter(StageRandom)
		}
		tr, _, reached, feats := runCounting(ctx, opts.Profile, relaxed, x, func(s *session) { genCase(t, s, opts.Steps) })
		res.steps += len(tr.Steps)
		if ctx.Err() != nil {
			runtime.Goexit() // cut short by the interrupt: not a failure
		}
		if !failed {
			res.cases++
			for r, n := range reached {
				res.coverage[r] += n
			}
			for f, n := range feats {
				res.features[f] += n
			}
			progress(opts, done+res.cases, total, "random case")
		}
		if tr.Inconclusive != nil {
			if !failed {
				res.inconclusive = append(res.inconclusive, tr)
			}
			return // neither a pass nor a failure: shrinking treats it as passing
		}
		if tr.unpredictable && tr.Deviation == nil {
			if !failed {
				res.unpredictable++
			}
			return // the generator's fault: discard the case
		}
		if tr.Failed() {
			if failed && last.Deviation != nil && tr.Deviation == nil {
				return // shrinking a deviation: a candidate the harness cannot run is not one
			}
			if !failed {
				firstFail = time.Now()
			}
			last, failed = tr, true
			if tr.Deviation == nil {
				harnessE = tr.Err
			}
			t.Fatalf("%s", tr.Steps[len(tr.Steps)-1].OpText)
		}
	}
	// rapid runs in a goroutine of its own so that an interrupt ends it at
	// once, shrinking included: the property calls runtime.Goexit. rapid
	// cannot be told to stop, and would try candidates until its shrink
	// time ran out. A failure found before the interrupt is kept, shrunk
	// as far as it got.
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		rapid.Check(tb, prop)
	}()
	<-ended
	if !failed {
		return res, nil
	}
	res.shrunk = time.Since(firstFail)
	if last.Deviation == nil {
		if ctx.Err() != nil {
			return res, nil
		}
		return res, fmt.Errorf("random case (seed %d): %s", seed, harnessE)
	}
	res.fail = &last
	return res, nil
}

// setRapid points rapid's process-wide settings at this run.
func setRapid(o Options) error {
	if !flag.Parsed() {
		testing.Init()
		if err := flag.CommandLine.Parse(nil); err != nil {
			return fmt.Errorf("prepare rapid flags: %w", err)
		}
	}
	checks := o.Cases
	if testing.Short() {
		// rapid runs a fifth of its checks in a go test -short; a run's
		// number of cases is its caller's, not the test flags'.
		checks *= 5
	}
	for k, v := range map[string]string{
		"rapid.checks":     strconv.Itoa(checks),
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
