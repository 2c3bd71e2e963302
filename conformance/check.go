package conformance

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

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
	Rules []model.RuleID
	// Wait bounds how long a poll waits for expected completions and
	// events; Settle is how long it then looks for unexpected ones.
	// Zero: 2 s and 0 (a synchronous driver such as the emulator).
	Wait, Settle time.Duration
	// Recheck is how much longer a poll whose wait ran out looks again
	// when the model finds the shortfall a departure, so that a late
	// completion or event does not decide the verdict. 0: 10 times Wait;
	// negative: no second look.
	Recheck time.Duration
	// OpTimeout bounds every driver call: one that overruns it stops the
	// run with a harness error (Report.Error) instead of hanging it. On a
	// synchronous device (the emulator) the bound is shorter: Duration
	// (ShrinkTime without it), at least 5 s. 0:
	// DefaultOpTimeout; negative: unbounded.
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
	// Passed, when set, is given every case that passed (scenarios and
	// random cases, not the candidates shrinking makes): where it came
	// from, its operations, and what the device answered at each step
	// (Trace.Observed). cmd/srqmutants replays them on another device to
	// find a difference the model accepts.
	Passed func(source string, ops []model.Op, observed []string)
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

// checker holds the state of one run: what is diagnosed broken so far, and
// what ran.
type checker struct {
	ctx     context.Context
	opts    Options
	x       *executor
	rep     *Report
	caps    model.Caps
	replay  func(ops []model.Op, rule model.RuleID, source string, relaxed []model.RuleID) ReplayFile
	relaxed []model.RuleID // rules diagnosed broken: adopted from the device
	// shrinkLeft is what is left of the run's shrink budget, shared by
	// every failure: the random-case budget when one is set (Duration),
	// else three times ShrinkTime. Each shrink takes at most ShrinkTime of
	// it, and at least a tenth of the whole (shrinkFor): a run with many
	// failures shrinks the later ones less, and stays within a bound
	// proportional to its budget.
	shrinkLeft, shrinkFloor time.Duration
	// work bounds the run's diagnoses and refinements together in work
	// (model.Meter), so that a busy machine reaches the blame a quiet
	// one does: one budget's worth (shrinkLeft at diagnosisRate) before
	// the pair searches, wide replays and the optional refinements stop,
	// half a budget more before the single-rule replays stop
	// (model.Diagnosis.Cut). A run with a time budget also stops them at
	// pairsStop and diagnosisStop of it (work.StopAt), a backstop only a
	// machine or a trace slower than diagnosisRate meets: what it cuts is
	// reported inconclusive, never blamed by the clock.
	work *model.Meter
	// pairsAt is when a run with a time budget stops its pair searches
	// (pairsStop of it, from its start), and end when it must be done
	// (runEnd): no shrink goes past it, and the last refinements of blame
	// (prune) may run until it. Zero without Duration.
	pairsAt, end time.Time
	// diagnosed memoizes diagnoses by diagnosisKey: the same trace
	// diagnosed again with the same rules relaxed costs nothing more.
	diagnosed map[string]model.Diagnosis
	coverage  map[model.RuleID]int    // rule -> steps whose check of it agreed
	ran       map[model.RuleID]int    // rule -> scenarios that passed
	skipped   map[model.RuleID]string // rule -> why its scenario could not run
	blocked   map[model.RuleID]string // rule -> why its scenario stopped unexplained
	passing   []Trace
	resolved  map[string]map[string]bool
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
		if x != nil {
			defer x.guard.release()
		}
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
		coverage: map[model.RuleID]int{}, ran: map[model.RuleID]int{}, skipped: map[model.RuleID]string{}, blocked: map[model.RuleID]string{},
		resolved: map[string]map[string]bool{}}
	c.shrinkLeft = 3 * opts.ShrinkTime // a count of cases: three failures' shrinks
	if opts.Duration > 0 {
		c.shrinkLeft = min(opts.ShrinkTime, max(opts.Duration, time.Second))
	}
	c.shrinkFloor = c.shrinkLeft / 10
	c.work = model.NewMeter(effortFor(c.shrinkLeft))
	if opts.Duration > 0 {
		c.pairsAt, c.end = start.Add(pairsStop(opts.Duration)), start.Add(runEnd(opts.Duration))
		c.work.StopAt(c.pairsAt, start.Add(diagnosisStop(opts.Duration)))
	}
	c.replay = func(ops []model.Op, rule model.RuleID, source string, relaxed []model.RuleID) ReplayFile {
		rf, _ := NewReplay(drv.Name(), cfg, opts.Profile, rule, source, ops)
		rf.Relaxed = relaxed
		return rf
	}
	if !x.guarded(func() {
		err = checkLimits(x.info)
		if err == nil {
			err = c.scenarios()
		}
		if err == nil && ctx.Err() == nil && !c.stopped() {
			err = c.randomCases()
		}
	}) {
		// A synchronous driver's call that did not return: the report
		// is what the run had when that call began.
		err = harness("the driver did not return from %s: it hangs; the run stops here and leaves the device's resources to the process's exit", x.hung)
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
			tr.fillTexts()
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
				if c.opts.Passed != nil {
					c.opts.Passed("scenario: "+sc.Name, tr.Ops(), tr.Observed())
				}
				c.passing = append(c.passing, tr)
				c.resolve(m)
			}
			if round == 0 {
				done++
				progress(c.opts, done, total, "scenario "+sc.Rule.String())
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

func (c *checker) feature(counts map[string]int) {
	if c.rep.Features == nil {
		c.rep.Features = map[string]int{}
	}
	for f, n := range counts {
		c.rep.Features[f] += n
	}
}

func (c *checker) cover(reached map[model.RuleID]int) {
	for r, n := range reached {
		c.coverage[r] += n
	}
}

// finish builds the rule table, the findings and the open choices.
func (c *checker) finish() {
	rep := c.rep
	c.x.timing.enter(StageDiagnosis)
	if !c.end.IsZero() {
		// prune's replays are of single rules among those found, short
		// beside a diagnosis: they may use the time up to the run's end,
		// which the shrinks after them share.
		c.work.StopAt(c.pairsAt, c.end)
	}
	if c.ctx.Err() == nil {
		c.unify()
		c.prune()
	}
	var standIns [][]Failure
	rep.Failures, standIns = shortestPerRule(rep.Failures)
	if c.ctx.Err() == nil {
		c.minimizeAll(standIns)
		c.fold()
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

func selectScenarios(rules []model.RuleID) []Scenario {
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
		follows := 0
		for i, f := range c.rep.Failures {
			if failureOf(f, r.ID) || f.Follows == r.ID {
				rr.Failures = append(rr.Failures, i)
				if f.Follows != 0 && f.Follows != r.ID {
					follows++
				}
			}
		}
		switch {
		case len(rr.Failures) > 0 && follows == len(rr.Failures):
			f := c.rep.Failures[rr.Failures[0]]
			rr.Status = Follows
			rr.Reason = fmt.Sprintf("its check failed only after a departure from %s, on what that departure left (counterexample #%d): not a root cause of its own", f.Follows, rr.Failures[0]+1)
		case len(rr.Failures) > 0:
			rr.Status = Fail
		case r.ID == model.RuleQPTransitions && c.x.info.CMStates:
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
func declaredNotShown(p model.Profile, info drivers.Info, passing []Trace, relaxed []model.RuleID) []Finding {
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
			if replayOnModel(q, caps, relaxed, tr, nil) != nil {
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
