package conformance

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/srqconform/srqconform/model"
)

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

// settle diagnoses failing traces and chooses the rules to blame, one rule
// set at a time: the set that explains the most traces (then the one the
// traces' own diagnoses prefer most, then the more specific) is relaxed,
// the traces it explains are recorded under it, and the rest are diagnosed
// again with it relaxed, so that a trace that needed it together with
// another rule now names only the other. It reports whether it relaxed a
// rule it had not before.
func (c *checker) settle(fs []*failing) bool {
	defer c.x.timing.leave(c.x.timing.enter(StageDiagnosis))
	key := func(set []model.RuleID) string { return strings.Join(model.RuleNames(set), "+") }
	var pending []*failing
	added := false
	for _, f := range fs {
		f.diag = c.diagnose(f.tr)
		if len(f.diag.Rules) != 1 && !f.diag.Cut {
			if tr, d, ok := c.lessEvidence(f.tr); ok {
				f.tr, f.diag = tr, d
			}
		}
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
	var last []model.RuleID
	for len(pending) > 0 {
		var still []*failing
		for _, f := range pending {
			f.diag = c.diagnose(f.tr)
			if len(f.diag.Rules) == 0 && !f.diag.Unexplained && last != nil {
				// Consistent now: the set relaxed last explains it, with
				// those relaxed before.
				f.diag = chooseDiagnosis(f.diag, last, c.opts.Profile, c.caps, slices.Clone(c.relaxed[:len(c.relaxed)-len(last)]), f.tr, c.work.Clock())
				c.record(*f, last)
				continue
			}
			still = append(still, f)
		}
		pending = still
		count, pref := map[string]int{}, map[string]int{}
		sets := map[string][]model.RuleID{}
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
			if !slices.ContainsFunc(f.diag.Explains(), func(s []model.RuleID) bool { return key(s) == best }) {
				still = append(still, f)
				continue
			}
			f.diag = chooseDiagnosis(f.diag, set, c.opts.Profile, c.caps, c.relaxed, f.tr, c.work.Clock())
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

// diagnose diagnoses a failing trace with the rules relaxed so far,
// charging the run's work (checker.work): diagnosis stays within a bound
// proportional to the budget, with or without Options.Duration, and the
// bound is work, not time, so a slow machine reaches the same blame.
func (c *checker) diagnose(tr Trace) model.Diagnosis {
	return c.diagnoseAmong(tr, c.relaxed, nil)
}

// diagnoseAmong diagnoses tr with relaxed relaxed, trying the rules of
// among (all when nil), charging the run's work.
func (c *checker) diagnoseAmong(tr Trace, relaxed, among []model.RuleID) model.Diagnosis {
	if tr.Deviation == nil {
		return model.Diagnosis{}
	}
	steps := tr.modelSteps()
	key := diagnosisKey(steps, relaxed, among)
	if d, ok := c.diagnosed[key]; ok {
		return cloneDiagnosis(d)
	}
	d := model.DiagnoseWithin(c.opts.Profile, c.caps, relaxed, steps, among, c.work)
	if c.diagnosed == nil || len(c.diagnosed) >= maxDiagnosed {
		c.diagnosed = map[string]model.Diagnosis{}
	}
	c.diagnosed[key] = cloneDiagnosis(d)
	return d
}

// lessEvidence diagnoses a failing trace that no single rule explains
// whole, with fewer of the evidence steps that follow its failing step:
// the most of them that one rule explains with the checked steps. The
// checked steps are the failure; the evidence steps only choose among
// its explanations. A device that departed from one rule goes on from a
// state the model does not hold, and what it shows next is not a second
// failure (one root cause is one rule). It returns the trace cut there,
// and its diagnosis, or false when no rule explains even the checked
// steps alone, or there are no evidence steps.
func (c *checker) lessEvidence(tr Trace) (Trace, model.Diagnosis, bool) {
	for k := len(tr.Steps) - 1; k >= tr.checkedLen(); k-- {
		if !c.work.PairsLeft() {
			break
		}
		cut := tr
		cut.Steps = tr.Steps[:k:k]
		steps := cut.modelSteps()
		key := "one|" + diagnosisKey(steps, c.relaxed, nil)
		d, ok := c.diagnosed[key]
		if !ok {
			d = model.DiagnoseOneWithin(c.opts.Profile, c.caps, c.relaxed, steps, nil, c.work)
			if c.diagnosed == nil || len(c.diagnosed) >= maxDiagnosed {
				c.diagnosed = map[string]model.Diagnosis{}
			}
			c.diagnosed[key] = cloneDiagnosis(d)
		}
		if len(d.Rules) == 1 && !d.Cut {
			return cut, cloneDiagnosis(d), true
		}
	}
	return tr, model.Diagnosis{}, false
}

// maxDiagnosed bounds checker.diagnosed: past it the memo starts afresh.
const maxDiagnosed = 64

// diagnosisKey is what a diagnosis depends on besides the run's profile
// and capabilities: the trace's steps, the rules relaxed and the rules
// tried. The same failing trace is often diagnosed twice in a row (by
// disambiguate, then by settle), and on a long trace with rules relaxed
// one diagnosis can take most of a budget.
func diagnosisKey(steps []model.Step, relaxed, among []model.RuleID) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v|%v|%v", model.RuleNames(relaxed), among == nil, model.RuleNames(among))
	for _, s := range steps {
		fmt.Fprintf(&b, "|%v=%+v", s.Op, s.Obs)
	}
	return b.String()
}

// cloneDiagnosis copies d's slices, so that a memoized diagnosis is not
// changed through the copy a caller gets.
func cloneDiagnosis(d model.Diagnosis) model.Diagnosis {
	d.Rules = slices.Clone(d.Rules)
	d.Also = slices.Clone(d.Also)
	for i := range d.Also {
		d.Also[i] = slices.Clone(d.Also[i])
	}
	return d
}

// diagnosisRate is the model's work per second in a diagnosis (candidate
// steps, model.Effort) on the 2-core machine the project is measured on,
// about a quarter of a million; a slower machine takes longer over the
// same work, and reaches the same blame.
const diagnosisRate = 250_000

// effortFor is the work a run whose shrink budget is budget may spend on
// its diagnoses and refinements together: one budget at diagnosisRate
// before the pair searches, wide replays and refinements stop, half a
// budget more before the single-rule replays stop. With the random cases'
// budget and the shrinking's, a run stays within about four budgets, as
// it did when the bound was a time. The largest single diagnosis measured
// on the held-out bugs and the generated mutants took a quarter of a
// million steps (reports/blame-unseen.md); the default budget's allowance
// is 1.25 million.
func effortFor(budget time.Duration) model.Effort {
	per := int64(budget.Seconds() * diagnosisRate)
	return model.Effort{Pairs: per, Total: per + per/2}
}

// pairsStop is how long after its start a run with a time budget stops
// its pair searches, wide replays and refinements whatever work is left
// (model.Meter.StopAt), and diagnosisStop when it stops the single-rule
// replays too: three and a quarter budgets, and three and a half. The
// random cases take one budget, their shrinking about another, and the
// diagnoses, at diagnosisRate, one and a half at most; a run that
// reaches these is on a machine, or a trace, slower than that, and would
// otherwise outrun runEnd. A replay under way at a stop ends there, and
// so do the replays around the diagnoses (the shrink's model check, the
// departure steps and states that place and tell apart blame: Meter.Clock),
// so that no single long replay of a relaxed model carries a run past
// runEnd on a loaded machine.
func pairsStop(budget time.Duration) time.Duration { return 13 * budget / 4 }

// diagnosisStop: see pairsStop.
func diagnosisStop(budget time.Duration) time.Duration { return 7 * budget / 2 }

// runEnd is how long after its start a run with a time budget ends its
// last shrink: three and three quarter budgets, so that with the report
// it stays within four.
func runEnd(budget time.Duration) time.Duration { return 15 * budget / 4 }

// setRank orders rule sets by the tie-break order of their rules.
func setRank(set []model.RuleID) int {
	r := 0
	for _, id := range set {
		r = r*1000 + model.Rank(id)
	}
	return r
}

// chooseDiagnosis makes set the trace's diagnosis, keeping the others as
// alternatives, and finds where the trace departs under it.
func chooseDiagnosis(d model.Diagnosis, set []model.RuleID, p model.Profile, caps model.Caps, relaxed []model.RuleID, tr Trace, w *model.Meter) model.Diagnosis {
	if slices.Equal(d.Rules, set) {
		return d
	}
	var also [][]model.RuleID
	for _, s := range d.Explains() {
		if !slices.Equal(s, set) {
			also = append(also, s)
		}
	}
	d.Rules, d.Also = set, also
	if k, ok := model.DepartureStep(p, caps, relaxed, tr.modelSteps(), set, w); ok {
		d.DepartedAt = k
		if d.VisibleAt > 0 {
			d.DepartedAt = min(k, d.VisibleAt) // no later than noticed
		}
	}
	return d
}

// record adds a failing trace to the report under the rules of set (or
// under the rule that noticed it, when nothing explains it).
func (c *checker) record(f failing, set []model.RuleID) {
	d := f.diag
	f.tr.Diagnosis = &d
	rule := d.NoticedBy
	if len(set) > 0 {
		rule = set[0]
	}
	c.rep.Failures = append(c.rep.Failures, Failure{Rule: rule, Rules: set, Source: f.source, Trace: f.tr,
		Replay: c.replay(f.tr.Ops(), rule, f.source, slices.Clone(c.relaxed))})
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
// (model.Generic) when a specific one explains the same traces. A trace's
// checked steps are its failure; the evidence steps after them only choose
// among the rules that explain every failure. Among several such rules the
// specific ones come first, then those that explain the most evidence,
// then the fewest departures, then model.Rank. A trace whose evidence the
// rule chosen does not explain is cut where it stops explaining it.
func (c *checker) unify() {
	broken := c.rep.Broken
	if len(broken) == 0 || len(c.rep.Failures) == 0 || !c.work.PairsLeft() {
		return
	}
	if len(broken) == 1 && !slices.Contains(model.Generic, broken[0]) {
		return
	}
	var fits []unifyFit
	for _, r := range c.unifyCandidates() {
		fit, ok, cut := c.fitsEveryFailure(r)
		if cut {
			return // no work left to tell: the blame stays as diagnosed
		}
		if ok {
			fits = append(fits, fit)
		}
	}
	if len(fits) == 0 {
		return
	}
	best := slices.MinFunc(fits, func(a, b unifyFit) int {
		if d := generic(a.rule) - generic(b.rule); d != 0 {
			return d
		}
		if a.unevidenced != b.unevidenced {
			return a.unevidenced - b.unevidenced
		}
		if a.departures != b.departures {
			return a.departures - b.departures
		}
		return model.Rank(a.rule) - model.Rank(b.rule)
	})
	if len(broken) == 1 && (broken[0] == best.rule || generic(best.rule) == 1) {
		return
	}
	set := []model.RuleID{best.rule}
	for i := range c.rep.Failures {
		f := &c.rep.Failures[i]
		f.Trace = c.explainedEvidence(f.Trace, set)
		d := chooseDiagnosis(c.diagnoseAmong(f.Trace, nil, nil), set, c.opts.Profile, c.caps, nil, f.Trace, c.work.Clock())
		f.Rules, f.Rule, f.Trace.Diagnosis = set, best.rule, &d
		f.Replay.Rule, f.Replay.Relaxed = best.rule, nil // the ops are the same: only evidence was cut
	}
	c.rep.Broken = set
	c.relaxed = slices.DeleteFunc(c.relaxed, func(r model.RuleID) bool { return slices.Contains(broken, r) })
	c.relaxed = append(c.relaxed, best.rule)
}

// unifyFit is a rule that alone explains every failure of a run: the
// departures it needs, and the failures whose evidence steps it does not
// explain.
type unifyFit struct {
	rule        model.RuleID
	departures  int
	unevidenced int
}

// generic is 1 for a generic rule (model.Generic), else 0.
func generic(id model.RuleID) int {
	if slices.Contains(model.Generic, id) {
		return 1
	}
	return 0
}

// unifyCandidates lists the rules unify tries: the rules blamed, and every
// rule that alone explained one of the traces as it was diagnosed.
func (c *checker) unifyCandidates() []model.RuleID {
	candidates := slices.Clone(c.rep.Broken)
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
	return candidates
}

// fitsEveryFailure reports whether r alone, with nothing else relaxed,
// explains the checked steps of every failure of the run, and how well
// (unifyFit); cut says the run's work allowance ran out on the way.
func (c *checker) fitsEveryFailure(r model.RuleID) (fit unifyFit, ok, cut bool) {
	fit.rule = r
	for _, f := range c.rep.Failures {
		n, consistent, cut := model.DeparturesWithin(c.opts.Profile, c.caps, nil, f.Trace.checkedSteps(), []model.RuleID{r}, c.work)
		if cut {
			return fit, false, true
		}
		if !consistent || n == 0 {
			return fit, false, false
		}
		fit.departures += n
		if f.Trace.checkedLen() == len(f.Trace.Steps) {
			continue
		}
		_, all, cut := model.DeparturesWithin(c.opts.Profile, c.caps, nil, f.Trace.modelSteps(), []model.RuleID{r}, c.work)
		if cut {
			return fit, false, true
		}
		if !all {
			fit.unevidenced++
		}
	}
	return fit, true, false
}

// explainedEvidence cuts tr's evidence steps where set, relaxed with
// nothing else, stops explaining them: evidence only chooses among
// explanations, and what is left of it supports the one chosen.
func (c *checker) explainedEvidence(tr Trace, set []model.RuleID) Trace {
	k, cut := model.ExplainedWithin(c.opts.Profile, c.caps, nil, tr.modelSteps(), set, c.work)
	if cut {
		return tr // no work left to tell: the evidence stays
	}
	k = max(k, tr.checkedLen())
	tr.Steps = tr.Steps[:k:k]
	return tr
}

// fold marks each failure whose trace needs the departure of a rule the
// run had diagnosed broken before it (Failure.Follows, followsFrom), and
// drops from Report.Broken a rule whose every failure follows from
// another. One root cause is one rule: a device that departed from a rule
// goes on from a state the model does not hold, and a later check that
// fails there shows what followed, not a second broken promise. A failure
// that needs no earlier departure stays a root cause of its own.
func (c *checker) fold() {
	if len(c.rep.Broken) == 0 || len(c.rep.Failures) < 2 {
		return
	}
	for i := range c.rep.Failures {
		r, ok := c.followsFrom(c.rep.Failures[i])
		if !ok {
			break // no work left to tell: the rest stay as diagnosed
		}
		c.rep.Failures[i].Follows = r
	}
	for i := range c.rep.Failures {
		if f := &c.rep.Failures[i]; f.Follows != 0 {
			f.Follows = c.rootOf(f.Follows)
		}
	}
	c.rep.Broken = slices.DeleteFunc(c.rep.Broken, func(r model.RuleID) bool {
		n, folded := 0, 0
		for _, f := range c.rep.Failures {
			if failureOf(f, r) {
				n++
				if f.Follows != 0 && f.Follows != r {
					folded++
				}
			}
		}
		return n > 0 && folded == n
	})
}

// followsFrom returns the first rule of those relaxed when f failed,
// diagnosed broken and not f's own, without which the steps before f's
// failing step are not explained, even with f's own rules relaxed: the
// check that failed ran on what that rule's departure left. It returns 0
// when there is none, and false when the run's work allowance is spent. A
// failure a rule explains follows from another's departure only where
// that departure cannot be shrunk away: on a trace from which no step can
// go (Failure.minimal), every step it needs is needed for the failure. One
// that no rule explains was never the run's to blame on a rule of its own.
func (c *checker) followsFrom(f Failure) (model.RuleID, bool) {
	steps := f.Trace.checkedSteps()
	if f.Trace.Deviation == nil || len(steps) < 2 || len(f.Rules) > 0 && !f.minimal {
		return 0, true
	}
	before := steps[:len(steps)-1] // the failing step is the last checked
	for _, r := range f.Replay.Relaxed {
		if slices.Contains(f.Rules, r) || !slices.Contains(c.rep.Broken, r) {
			continue
		}
		if !c.work.PairsLeft() {
			return 0, false
		}
		// f's own rules stay relaxed: a departure of theirs in the steps
		// before (a hidden one, shown before the check that noticed it) is
		// f's, not what followed from r.
		without := slices.DeleteFunc(slices.Clone(f.Replay.Relaxed), func(x model.RuleID) bool { return x == r })
		_, consistent, cut := model.DeparturesWithin(c.opts.Profile, c.caps, append(without, f.Rules...), before, nil, c.work)
		switch {
		case cut:
			return 0, false
		case !consistent:
			return r, true
		}
	}
	return 0, true
}

// rootOf follows r through the rules whose every failure follows from
// another, to the rule at the root.
func (c *checker) rootOf(r model.RuleID) model.RuleID {
	for range len(c.rep.Failures) {
		next := model.RuleID(0)
		for _, f := range c.rep.Failures {
			if !failureOf(f, r) {
				continue
			}
			if f.Follows == 0 {
				return r
			}
			next = f.Follows
		}
		if next == 0 {
			return r
		}
		r = next
	}
	return r
}

// failureOf says whether f is a failure of rule r: its diagnosis names
// r, or no rule explains it and r's check noticed it.
func failureOf(f Failure, r model.RuleID) bool {
	return slices.Contains(f.Rules, r) || len(f.Rules) == 0 && f.Rule == r
}

// prune drops a rule diagnosed broken whose every failure the other rules
// diagnosed broken explain as well: traces that end at their first
// deviation can leave two single rules equally able to explain one, and
// the rest of the run shows which of them the device breaks. The least
// specific rules are tried first.
func (c *checker) prune() {
	broken := slices.Clone(c.rep.Broken)
	slices.SortStableFunc(broken, func(a, b model.RuleID) int {
		return setRank([]model.RuleID{b}) - setRank([]model.RuleID{a})
	})
	for _, r := range broken {
		others := slices.DeleteFunc(slices.Clone(c.rep.Broken), func(x model.RuleID) bool { return x == r })
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
			base := slices.DeleteFunc(slices.Clone(f.Replay.Relaxed), func(x model.RuleID) bool { return x == r })
			d := c.diagnoseAmong(f.Trace, base, others)
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
	if !c.work.PairsLeft() {
		return tr
	}
	d := c.diagnoseAmong(tr, c.relaxed, nil)
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
	if d2 := c.diagnoseAmong(t, c.relaxed, nil); len(d2.Rules) > 0 && len(d2.Also) < len(d.Also) {
		return t
	}
	return tr
}

// shrinkFor is how long the next shrink may take: ShrinkTime, or what is
// left of the run's shrink budget, but never under a tenth of the budget.
func (c *checker) shrinkFor() time.Duration {
	d := max(min(c.opts.ShrinkTime, c.shrinkLeft), c.shrinkFloor)
	if !c.end.IsZero() {
		d = max(0, min(d, time.Until(c.end)))
	}
	return d
}

// minimize removes steps from a counterexample, one at a time, for as long
// as the trace still fails the same way: it deviates with the rules the run
// had relaxed when it failed, and is consistent with the diagnosed rules
// relaxed as well. The result is 1-minimal: no single step can go. Every
// attempt runs on the device; the attempts stop at the shrink budget.
func (c *checker) minimize(f *Failure) {
	defer func() {
		c.vary(f)
		c.preferSpecific(f)
	}()
	without := c.minimizeOnce(f)
	// Each move of the blame may let steps go that only the rules first
	// blamed needed, and the shorter trace tell apart more: a few rounds.
	for range 3 {
		if without == nil || !c.tellApart(f, without) {
			return
		}
		without = c.minimizeOnce(f)
	}
}

// minimizeOnce is minimize's shrinking. When it ends 1-minimal it returns,
// for each step (by index in the trace's operations) whose removal left a
// trace the device passed, that trace as the device ran it.
func (c *checker) minimizeOnce(f *Failure) map[int]Trace {
	if len(f.Rules) == 0 {
		return nil
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
		ok := tr.Deviation != nil && replayOnModel(c.opts.Profile, c.caps, with, tr, c.work.Clock()) == nil
		return tr, ok
	}
	ops := f.Trace.Ops()
	tr := f.Trace
	stopped := false
	var passed map[int]Trace // this pass's removals the device passed
	for changed := true; changed && !stopped; {
		changed, passed = false, map[int]Trace{}
		for i := len(ops) - 1; i >= 1 && i < len(ops); i-- {
			if time.Now().After(deadline) || c.ctx.Err() != nil {
				stopped = true
				break
			}
			cand := append(slices.Clone(ops[:i]), ops[i+1:]...)
			t, ok := try(cand)
			switch {
			case ok:
				tr, ops, changed = t, t.Ops(), true // another pass follows, with its own passed
			case t.Deviation == nil && t.Err == "":
				passed[i] = t
			}
		}
	}
	// A pass that dropped no step, with every step tried: no step can go.
	f.minimal = !stopped
	if stopped {
		passed = nil
	}
	if len(tr.Ops()) == len(f.Trace.Ops()) {
		return passed // nothing could go (evidence steps do not count)
	}
	d := chooseDiagnosis(c.diagnoseAmong(tr, base, nil), f.Rules, c.opts.Profile, c.caps, base, tr, c.work.Clock())
	if was := f.Trace.Diagnosis; was != nil && len(was.Refuted) > 0 {
		// What the device refuted stays refuted on the shorter trace.
		d.Refuted = was.Refuted
		d.Also = slices.DeleteFunc(d.Also, func(s []model.RuleID) bool {
			return slices.ContainsFunc(was.Refuted, func(r []model.RuleID) bool { return slices.Equal(r, s) })
		})
	}
	tr.Diagnosis = &d
	f.Trace = tr
	f.Replay = c.replay(tr.Ops(), f.Rule, f.Source, base)
	return passed
}

// tellApart re-blames a 1-minimal counterexample that other rule sets
// explain as well as its own (Diagnosis.Also), by the traces the device
// passed with one step of it left out (without, by the step's index). A
// set is refuted by such a run that left out a step before the set's
// departure and still reached the state the counterexample had there
// (the step changed nothing the model holds), where the same operations
// followed: a deterministic device breaking that rule would have
// departed again the same way, and the run passed, or did what the
// departure left does not fit (model.DepartureRecurs). It reports
// whether the blame moved to the first set not refuted; it stays where
// it is when its own set is not refuted, or every set is.
func (c *checker) tellApart(f *Failure, without map[int]Trace) bool {
	d := f.Trace.Diagnosis
	if d == nil || len(d.Also) == 0 || len(without) == 0 || !c.work.PairsLeft() {
		return false
	}
	var passed []passer
	for i, t := range without {
		passed = append(passed, passer{tr: t, at: i, shift: -1})
	}
	refuted := func(set []model.RuleID) bool { return c.refutes(f, set, passed) }
	if !refuted(d.Rules) {
		return false
	}
	out := [][]model.RuleID{d.Rules}
	for _, set := range d.Also {
		if refuted(set) {
			out = append(out, set)
		}
	}
	var left [][]model.RuleID // not refuted, in the diagnosis's order
	for _, set := range d.Also {
		if !slices.ContainsFunc(out, func(s []model.RuleID) bool { return slices.Equal(s, set) }) {
			left = append(left, set)
		}
	}
	if len(left) == 0 {
		return false
	}
	// One root cause, one rule: a set another counterexample of the run
	// is blamed on comes first.
	slices.SortStableFunc(left, func(a, b []model.RuleID) int { return c.blamedElsewhere(f, b) - c.blamedElsewhere(f, a) })
	c.moveBlame(f, left[0], left[1:], out)
	return true
}

// moveBlame blames f, a minimized counterexample, on set instead, with
// also as the sets that still explain it alike and refuted added to those
// the device refuted, and moves the run's list of broken rules with it.
func (c *checker) moveBlame(f *Failure, set []model.RuleID, also, refuted [][]model.RuleID) {
	d := f.Trace.Diagnosis
	base := f.Replay.Relaxed
	old := f.Rules
	nd := chooseDiagnosis(*d, set, c.opts.Profile, c.caps, base, f.Trace, c.work.Clock())
	nd.Also = also
	nd.Refuted = append(slices.Clone(d.Refuted), refuted...)
	f.Trace.Diagnosis = &nd
	f.Rules, f.Rule = nd.Rules, nd.Rules[0]
	f.Replay = c.replay(f.Trace.Ops(), f.Rule, f.Source, base)
	c.reblame(old, set)
}

// passer is a run the device passed that is a counterexample's trace but
// for its step at (0-based): left out (shift -1), changed (0), or a step
// put in there (1).
type passer struct {
	tr        Trace
	at, shift int
}

// refutes says whether a run in passed refutes set as what broke in f's
// counterexample: one that differs from it before the step where set
// departs (k) and still reaches the state the counterexample had there,
// where the same operations followed: a deterministic device breaking
// set's rules would have departed again the same way, and the run passed,
// or did what the departure left does not fit (model.DepartureRecurs). A
// run that differs at or after the departure tells nothing: a relaxation
// may decide there what shows only later (a limit that fires again, an
// arm that takes late), so the same departure need not leave the same
// trace.
func (c *checker) refutes(f *Failure, set []model.RuleID, passed []passer) bool {
	base := f.Replay.Relaxed
	steps := f.Trace.modelSteps()
	clock := c.work.Clock()
	k, ok := model.DepartureStep(c.opts.Profile, c.caps, base, steps, set, clock)
	if !ok || k > len(f.Trace.Ops()) {
		return false
	}
	var before []uint64
	for _, p := range passed {
		if p.at+1 >= k {
			continue
		}
		other := p.tr.modelSteps()
		if before == nil {
			if before, ok = model.StateBefore(c.opts.Profile, c.caps, base, steps, k, clock); !ok {
				return false
			}
		}
		if s, ok := model.StateBefore(c.opts.Profile, c.caps, base, other, k+p.shift, clock); !ok || !slices.Equal(s, before) {
			continue // another state there: the departure need not come again
		}
		if !model.DepartureRecurs(c.opts.Profile, c.caps, base, steps, k, other, k+p.shift, set, clock) {
			return true
		}
	}
	return false
}

// preferSpecific moves the blame of f, a minimized counterexample blamed
// on a catch-all rule (model.Generic), to the first set of as many rules
// with fewer catch-alls that explains its trace, evidence included, with
// fewer departures (its diagnosis's alternatives, none refuted): the
// catch-all was chosen on the trace before shrinking, which may have
// needed it for what shrinking took away, and on the trace reported the
// specific rule is the simpler account. Where the two need as many
// departures the trace before shrinking, which told them apart, decides.
// It reports whether the blame moved.
func (c *checker) preferSpecific(f *Failure) bool {
	d := f.Trace.Diagnosis
	if d == nil || len(d.Rules) == 0 || catchAlls(d.Rules) == 0 || c.ctx.Err() != nil {
		return false
	}
	base := f.Replay.Relaxed
	steps, clock := f.Trace.modelSteps(), c.work.Clock()
	now, ok, cut := model.DeparturesWithin(c.opts.Profile, c.caps, base, steps, d.Rules, clock)
	if cut {
		return false // out of effort: nothing to compare with
	}
	if !ok {
		now = math.MaxInt // the catch-all does not explain the evidence
	}
	i := slices.IndexFunc(d.Also, func(set []model.RuleID) bool {
		if len(set) != len(d.Rules) || catchAlls(set) >= catchAlls(d.Rules) ||
			slices.ContainsFunc(d.Refuted, func(r []model.RuleID) bool { return slices.Equal(r, set) }) {
			return false
		}
		n, ok, cut := model.DeparturesWithin(c.opts.Profile, c.caps, base, steps, set, clock)
		return ok && !cut && n < now
	})
	if i < 0 {
		return false
	}
	c.moveBlame(f, d.Also[i], append(append([][]model.RuleID{d.Rules}, d.Also[:i]...), d.Also[i+1:]...), nil)
	return true
}

// catchAlls counts the catch-all rules of set (generic).
func catchAlls(set []model.RuleID) (n int) {
	for _, r := range set {
		n += generic(r)
	}
	return n
}

// blamedElsewhere is 1 when another counterexample of the run than f is
// blamed on every rule of set, else 0.
func (c *checker) blamedElsewhere(f *Failure, set []model.RuleID) int {
	for _, r := range set {
		found := false
		for i := range c.rep.Failures {
			if o := &c.rep.Failures[i]; o != f && slices.Contains(o.Rules, r) {
				found = true
				break
			}
		}
		if !found {
			return 0
		}
	}
	return 1
}

// reblame moves the run's list of broken rules from old to set once no
// counterexample is blamed on a rule of old any longer.
func (c *checker) reblame(old, set []model.RuleID) {
	c.rep.Broken = slices.Clone(c.rep.Broken) // it may share an array with a diagnosis
	for _, r := range old {
		if slices.ContainsFunc(c.rep.Failures, func(f Failure) bool { return slices.Contains(f.Rules, r) }) {
			continue
		}
		c.rep.Broken = slices.DeleteFunc(c.rep.Broken, func(x model.RuleID) bool { return x == r })
	}
	for _, r := range set {
		if !slices.Contains(c.rep.Broken, r) {
			c.rep.Broken = append(c.rep.Broken, r)
		}
	}
}

// shortestPerRule keeps one counterexample per diagnosis, the shortest, in
// the order they were found, and returns beside it, for each one kept, the
// others of its diagnosis, shortest first (standIns). A trace in which a
// call killed its process (made in a child process:
// drivers.Info.PostRecvUnsafe, NegativeSGEUnsafe) is kept apart from the
// rule's other traces: a crash is a finding of its own, with its own
// replay file.
func shortestPerRule(fs []Failure) (kept []Failure, others [][]Failure) {
	var groups [][]Failure
	at := map[string]int{}
	for _, f := range fs {
		k := strings.Join(model.RuleNames(f.Rules), "+")
		if k == "" {
			k = "unexplained:" + f.Rule.String()
		}
		if sig := killedIn(f.Trace); sig != "" {
			k += " killed by " + sig
		}
		i, ok := at[k]
		if !ok {
			at[k] = len(groups)
			groups = append(groups, nil)
			i = len(groups) - 1
		}
		groups[i] = append(groups[i], f)
	}
	for _, g := range groups {
		// Stable: of traces as long, the first found stands.
		slices.SortStableFunc(g, func(a, b Failure) int { return len(a.Trace.Steps) - len(b.Trace.Steps) })
		kept = append(kept, standFor(g))
		others = append(others, g[1:])
	}
	return kept, others
}

// standFor returns g's first failure with the sources of the others in
// AlsoIn.
func standFor(g []Failure) Failure {
	f := g[0]
	f.AlsoIn = nil
	for _, o := range g[1:] {
		f.AlsoIn = append(f.AlsoIn, o.Source)
	}
	return f
}

// maxStandIns is how many counterexamples of one diagnosis are minimized
// in turn when each one's blame moves elsewhere (minimizeAll).
const maxStandIns = 3

// minimizeAll minimizes each counterexample shortestPerRule kept. When
// minimizing moves one's blame to other rules, the runs it stood for
// were diagnosed on their own as it first was, and may be right: the next
// of them (standIns[i], shortest first) is minimized in turn and reported
// beside it, up to maxStandIns a diagnosis. Without this a device that
// breaks two rules lost one of them whenever the shorter counterexample
// of that rule turned out, minimized, to be the other's (siw's bad-key
// status behind its zero-length SGE).
func (c *checker) minimizeAll(standIns [][]Failure) {
	tries := make([]int, len(standIns))
	for i := 0; i < len(c.rep.Failures) && c.ctx.Err() == nil; i++ {
		f := &c.rep.Failures[i]
		was := slices.Clone(f.Rules)
		c.minimize(f)
		if i >= len(standIns) || len(standIns[i]) == 0 || slices.Equal(was, f.Rules) {
			continue
		}
		f.AlsoIn = nil // they failed on the rules it was first blamed on
		if tries[i]++; tries[i] >= maxStandIns {
			continue
		}
		next := standFor(standIns[i])
		c.rep.Failures = append(c.rep.Failures, next)
		standIns = append(standIns, standIns[i][1:])
		tries = append(tries, tries[i])
	}
}

// replayOnModel steps a model, with rules relaxed, through a trace's
// recorded observations (model.Consistent): an error when it departs, or
// when w stops the replay first (nil: never).
func replayOnModel(p model.Profile, caps model.Caps, relaxed []model.RuleID, tr Trace, w *model.Meter) error {
	return model.Consistent(p, caps, relaxed, tr.modelSteps(), w)
}
