package model

import (
	"errors"
	"slices"
	"time"
)

// Diagnosis names the rules a failing trace shows broken: the smallest set
// of rules whose relaxation (relax.go) makes every observation of the trace
// consistent with the model. The rule whose check noticed the difference is
// often not the rule broken: a WR fetched out of order shows only when its
// completion is polled, and a QP that died too early shows as a missing
// event.
type Diagnosis struct {
	// Rules is the diagnosis: one rule, or two when no single rule
	// explains the trace. Empty when the trace is consistent, or when no
	// set of up to two rules explains it (Unexplained is then set).
	Rules []RuleID `json:"rules,omitempty"`
	// Also lists the other sets of the same size that explain the trace
	// as well; the diagnosis preferred Rules by the rule's place in
	// Specificity.
	Also [][]RuleID `json:"also,omitempty"`
	// DepartedAt is the step (1-based) where the device first departed,
	// under the diagnosis; VisibleAt is the step whose check noticed it.
	DepartedAt int `json:"departed_at,omitempty"`
	VisibleAt  int `json:"visible_at,omitempty"`
	// NoticedBy is the rule whose check noticed the difference.
	NoticedBy   RuleID `json:"noticed_by,omitempty"`
	Unexplained bool   `json:"unexplained,omitempty"`
	// Refuted lists rule sets that explained the trace as well as Rules
	// but that runs of the device without one of its steps refuted
	// (conformance: a departure that did not come again from the same
	// state); they are no longer in Also.
	Refuted [][]RuleID `json:"refuted,omitempty"`
	// Cut says the diagnosis spent its Effort before it tried every
	// rule and pair it would have: a set not tried might explain the
	// trace as well or better. The diagnosis is then what the allowance
	// reached, not a decision. The allowance is work, not time, so a
	// trace is cut, or not, the same way on any machine, unless its
	// Meter also has times to stop at (Meter.StopAt) and one passed.
	Cut bool `json:"cut,omitempty"`
}

// Explains returns every rule set the diagnosis found sufficient: Rules,
// then Also.
func (d Diagnosis) Explains() [][]RuleID {
	if len(d.Rules) == 0 {
		return nil
	}
	return append([][]RuleID{d.Rules}, d.Also...)
}

// Specificity orders the rules for breaking ties between diagnoses of the
// same size that need as many departures (after model.Generic's catch-all
// has lost to every specific rule): a rule whose departure needs more of
// the trace to take effect comes first, because it explains less by
// accident. A slot that never freed needs a fetch before the post that
// found the queue full; a capacity one short needs only the post. The
// rules whose relaxation admits a departure of many shapes (a WR left out
// of the queue, fetched out of order, or fetched twice) come late. The rules not listed follow, in catalogue order.
// It is derived from each rule's Facts.Rank.
var Specificity = ranked()

// ranked lists the rules that have a Rank, by rank.
func ranked() []RuleID {
	var rs []Rule
	for _, r := range catalogue {
		if r.Rank > 0 {
			rs = append(rs, r)
		}
	}
	slices.SortStableFunc(rs, func(a, b Rule) int { return a.Rank - b.Rank })
	ids := make([]RuleID, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	return ids
}

// Generic lists the catch-all rules: their relaxation admits a departure in
// any field of what they govern (every receive completion's wr_id, QP,
// length and payload), so they explain almost any trace with one rule. A
// diagnosis blames one only when no set of as many specific rules explains
// the trace, whatever the departures' count: a specific rule that explains
// the same departure names the promise the device broke.
var Generic = []RuleID{RuleRecvCompletion}

// genericIn counts the generic rules in a rule set.
func genericIn(rules []RuleID) int {
	n := 0
	for _, r := range rules {
		if slices.Contains(Generic, r) {
			n++
		}
	}
	return n
}

// ConcurrentOnly lists the rules only concurrent calls can break (package
// concurrent checks them): a sequential trace is never diagnosed with one
// unless asked for by name. It is derived from Facts.ConcurrentOnly.
var ConcurrentOnly = rulesWhere(func(f Facts) bool { return f.ConcurrentOnly })

// WorkloadRules are the rules a concurrent workload's operations can show
// broken (posts, messages, QP moves, arming, events), in catalogue order;
// derived from Facts.Workload.
var WorkloadRules = rulesWhere(func(f Facts) bool { return f.Workload })

// Rank is a rule's place in the tie-break order: its place in Specificity,
// then catalogue order.
func Rank(id RuleID) int {
	if i := slices.Index(Specificity, id); i >= 0 {
		return i
	}
	for i, r := range catalogue {
		if r.ID == id {
			return len(Specificity) + i
		}
	}
	return 1 << 20
}

// diagSource is what a deviation keeps so that it can be diagnosed.
type diagSource struct {
	prof    Profile
	caps    Caps
	relaxed []RuleID
	steps   *stepList // shared with the model: a deviation is common, its diagnosis rare
}

// Diagnose diagnoses the deviation: see Diagnosis. It replays the trace
// that led to it once per candidate rule, so it costs a few milliseconds.
func (d *Deviation) Diagnose() Diagnosis {
	if d.diag == nil {
		return Diagnosis{NoticedBy: d.Rule, VisibleAt: d.step, Unexplained: true}
	}
	s := d.diag
	return Diagnose(s.prof, s.caps, s.relaxed, s.steps.steps())
}

// replayPastBy steps a model relaxed in rules through steps. It returns
// the number of steps that agreed, the error of the next one (nil when
// all agreed), and the faults the model took. It widens the beam only
// when the beam got past step past (0-based) before it failed: a
// relaxation that does not even get past the step where the trace first
// fails is not worth the wide replay, whose cost grows with every fault
// point the rules open. It charges its work to w (nil: unmetered): once
// w's pair allowance is spent no wide replay starts (a replay that
// needed one fails with errDiagnosisEffort), and one under way stops
// where it is, failing there with errDiagnosisEffort.
func replayPastBy(p Profile, c Caps, rules []RuleID, steps []Step, past int, w *Meter, count ...RuleID) (int, error, []FaultUse) {
	k, err, faults, _ := replayConsulted(p, c, rules, steps, past, w, count...)
	return k, err, faults
}

// replayConsulted is replayPastBy that also returns the rules the replay
// consulted (Model.consulted): every rule when it widened, whose
// candidates' consultations it does not keep.
func replayConsulted(p Profile, c Caps, rules []RuleID, steps []Step, past int, w *Meter, count ...RuleID) (int, error, []FaultUse, ruleSet) {
	m, err := NewRelaxed(p, c, rules)
	if err != nil {
		return 0, err, nil, ruleSet{}
	}
	for i, s := range steps {
		err := m.advanceBy(s, w)
		if errors.Is(err, errDiagnosisEffort) {
			return i, err, nil, allRules
		}
		if err != nil {
			if m.pruned && m.width < maxCandidates && i > past {
				if w.pairsSpent() {
					// The wide replay there is no allowance for might
					// have explained it: no verdict on these rules.
					return i, errDiagnosisEffort, nil, allRules
				}
				// The beam may have dropped the explaining candidate.
				k, err, faults := replayWide(p, c, rules, steps, w, count...)
				return k, err, faults, allRules
			}
			return i, err, nil, m.consulted
		}
	}
	return len(steps), nil, m.Faults(count...), m.consulted
}

// replayWide is replayPastBy keeping up to maxCandidates candidates; once w's
// pair allowance is spent it stops where it is, failing there.
func replayWide(p Profile, c Caps, rules []RuleID, steps []Step, w *Meter, count ...RuleID) (int, error, []FaultUse) {
	m, err := NewRelaxed(p, c, rules)
	if err != nil {
		return 0, err, nil
	}
	m.width = maxCandidates
	for i, s := range steps {
		if w.pairsSpent() {
			return i, errDiagnosisEffort, nil
		}
		if err := m.advanceBy(s, w); err != nil {
			return i, err, nil
		}
	}
	return len(steps), nil, m.Faults(count...)
}

// advanceBy is advanceQuiet charging w for the step: the candidates the
// model carries into it, and those it made, cost as those it took. Past
// w's StopAt time for its Total the step is not taken and it fails with
// errDiagnosisEffort: a replay under way stops where it is.
func (m *Model) advanceBy(s Step, w *Meter) error {
	if w.overdue() {
		return errDiagnosisEffort
	}
	before, weight := len(m.cands), w.weightOf(m)
	w.charge(before * weight)
	err := m.advanceQuiet(s.Op, s.Obs)
	w.charge((len(m.cands) - before) * weight)
	return err
}

// errDiagnosisEffort ends a replay that ran past its allowance: a wide
// one past the Pairs, any past the StopAt time for the Total.
var errDiagnosisEffort = errors.New("model: diagnosis effort spent during a replay")

// Effort bounds a diagnosis in work, not in time: in candidate steps,
// one for each candidate the model carries into one step of a replay, or
// out of it where the step made more (they are fingerprinted and ranked
// as the others), weighted by the state's size (machine.stepWeight: 1
// for the states of short traces, about 3 for 25 outstanding WRs).
// The same trace gets the same diagnosis on a quiet machine and on a busy
// one; the time it takes is the work over the machine's speed. Zero is
// no bound.
type Effort struct {
	// Pairs is the work past which no pair of rules is tried (their
	// search replays the trace once per pair, the bulk of the cost of a
	// trace no single rule explains) and no single rule's replay widens
	// its beam (a wide replay under way stops).
	Pairs int64
	// Total is the work past which no single rule's replay starts
	// either: the diagnosis is Cut with the explanations found so far.
	Total int64
}

// Meter is the work diagnoses have spent, against an Effort: one
// diagnosis's (DiagnoseBy), or a whole run's, shared by its diagnoses
// (DiagnoseWithin, DeparturesWithin). A nil Meter counts nothing and
// bounds nothing.
type Meter struct {
	spent int64
	e     Effort
	// pairsAt and totalAt, when set (StopAt), are the times past which
	// the Meter counts as spent, its Pairs and its Total, whatever the
	// work: a backstop for a run on a machine, or a trace, slower than
	// the work was measured on. The clock is read once per clockEvery of
	// work.
	pairsAt, totalAt     time.Time
	tick                 int64
	pairsPast, totalPast bool
}

// clockEvery is how much work passes between two readings of the clock
// by a Meter with StopAt times: a few milliseconds of a diagnosis.
const clockEvery = 1 << 11

// NewMeter returns a Meter with nothing spent of e.
func NewMeter(e Effort) *Meter { return &Meter{e: e} }

// StopAt makes w count its Pairs as spent from time pairs on, and its
// Total from time total on, whatever work is left: a diagnosis under way
// then is Cut with the explanations it found (reported inconclusive,
// never a verdict of its own), as when the work runs out. The zero time
// is no stop.
func (w *Meter) StopAt(pairs, total time.Time) {
	w.pairsAt, w.totalAt, w.tick = pairs, total, 0
	w.readClock()
}

// readClock notes which of w's StopAt times have passed.
func (w *Meter) readClock() {
	now := time.Now()
	w.pairsPast = !w.pairsAt.IsZero() && !now.Before(w.pairsAt)
	w.totalPast = !w.totalAt.IsZero() && !now.Before(w.totalAt)
}

// Clock returns a Meter that bounds only by time: w's StopAt times, with
// none of w's work spent or charged to it (nil for nil). The replays a run
// makes around its diagnoses (DepartureStep, StateBefore,
// DepartureRecurs, Consistent) take it: past the run's stops they end
// where they are, and before them they leave the diagnoses' allowance as
// it is.
func (w *Meter) Clock() *Meter {
	if w == nil {
		return nil
	}
	c := &Meter{pairsAt: w.pairsAt, totalAt: w.totalAt}
	c.readClock()
	return c
}

// overdue reports whether w's StopAt time for its Total has passed (as
// of the clock's last reading): no replay goes on then.
func (w *Meter) overdue() bool { return w != nil && w.totalPast }

// PairsLeft reports whether work is left before Effort.Pairs: what the
// pair search, wide replays and a run's optional refinements may use.
func (w *Meter) PairsLeft() bool { return !w.pairsSpent() }

// charge adds n candidate steps to the work spent (none for n <= 0).
func (w *Meter) charge(n int) {
	if w == nil || n <= 0 {
		return
	}
	w.spent += int64(n)
	if w.pairsAt.IsZero() && w.totalAt.IsZero() || w.totalPast {
		return
	}
	if w.tick += int64(n); w.tick >= clockEvery {
		w.tick = 0
		w.readClock()
	}
}

// weightOf is what one candidate step of m costs (machine.stepWeight of
// its first candidate: candidates of one model differ little in size);
// 1 when w is nil, which counts nothing.
func (w *Meter) weightOf(m *Model) int {
	if w == nil || len(m.cands) == 0 {
		return 1
	}
	return m.cands[0].stepWeight()
}

// pairsSpent reports whether the pair allowance is spent.
func (w *Meter) pairsSpent() bool {
	return w != nil && (w.pairsPast || w.totalPast || w.e.Pairs > 0 && w.spent >= w.e.Pairs)
}

// totalSpent reports whether the whole allowance is spent.
func (w *Meter) totalSpent() bool {
	return w != nil && (w.totalPast || w.e.Total > 0 && w.spent >= w.e.Total)
}

// advanceQuiet is Step without history or diagnosis.
func (m *Model) advanceQuiet(op Op, got Observation) error { return m.advance(op, &got) }

// Diagnose finds the smallest set of rules, beyond those already relaxed,
// whose relaxation makes the trace consistent under profile p. Ties are
// broken by Specificity.
func Diagnose(p Profile, c Caps, relaxed []RuleID, steps []Step) Diagnosis {
	return DiagnoseAmong(p, c, relaxed, steps, nil)
}

// DiagnoseAmong is Diagnose with the candidate rules limited to among (all
// rules when among is nil).
func DiagnoseAmong(p Profile, c Caps, relaxed []RuleID, steps []Step, among []RuleID) Diagnosis {
	return diagnoseAmong(p, c, relaxed, steps, among, nil)
}

// DiagnoseBy is Diagnose within an allowance of pairs candidate steps
// (Effort.Pairs): past it no pair of rules is tried, and a trace that
// would need one is left unexplained; nor does a single rule's replay
// widen its beam. Zero is no bound.
func DiagnoseBy(p Profile, c Caps, relaxed []RuleID, steps []Step, pairs int64) Diagnosis {
	return diagnoseAmong(p, c, relaxed, steps, nil, &Meter{e: Effort{Pairs: pairs}})
}

// DiagnoseWithin is DiagnoseAmong charging its work to w, which may be
// shared by every diagnosis of a run: past w's Pairs as DiagnoseBy, and
// past its Total no single rule's replay starts either, and the
// diagnosis is Cut with the explanations found so far. The single-rule
// replays run on past Pairs so that a trace one rule explains still gets
// its diagnosis. The bound is work, never time: a busy machine takes
// longer over the same work, and reaches the same diagnosis.
func DiagnoseWithin(p Profile, c Caps, relaxed []RuleID, steps []Step, among []RuleID, w *Meter) Diagnosis {
	return diagnoseAmong(p, c, relaxed, steps, among, w)
}

// DiagnoseOneWithin is DiagnoseWithin that tries single rules only: a
// trace no one rule explains is left Unexplained, without the pair search.
func DiagnoseOneWithin(p Profile, c Caps, relaxed []RuleID, steps []Step, among []RuleID, w *Meter) Diagnosis {
	return diagnose(p, c, relaxed, steps, among, w, false)
}

// explanation is a set of rules whose relaxation explains a trace, and the
// departures the replay took.
type explanation struct {
	rules  []RuleID
	faults []FaultUse
}

// suspects are the rules a diagnosis tries: those not relaxed already,
// within among where it is given; a rule only concurrency can break only
// where among names it.
func suspects(relaxed, among []RuleID) []RuleID {
	var out []RuleID
	for _, r := range catalogue {
		if slices.Contains(ConcurrentOnly, r.ID) && !slices.Contains(among, r.ID) {
			continue // one thread cannot break it
		}
		if !slices.Contains(relaxed, r.ID) && (among == nil || slices.Contains(among, r.ID)) {
			out = append(out, r.ID)
		}
	}
	return out
}

// simplestFirst orders explanations: fewer rules, a specific rule before
// the catch-all, fewer departures of the rules blamed, then by rank.
func simplestFirst(a, b explanation) int {
	if len(a.rules) != len(b.rules) {
		return len(a.rules) - len(b.rules)
	}
	if ga, gb := genericIn(a.rules), genericIn(b.rules); ga != gb {
		return ga - gb // a specific rule before the catch-all
	}
	if na, nb := countIn(a.faults, a.rules), countIn(b.faults, b.rules); na != nb {
		return na - nb // the fewest departures of the rules blamed
	}
	for i := range min(len(a.rules), len(b.rules)) {
		if d := Rank(a.rules[i]) - Rank(b.rules[i]); d != 0 {
			return d
		}
	}
	return len(a.rules) - len(b.rules)
}

// diagnoseAmong is DiagnoseAmong charging its work to w.
func diagnoseAmong(p Profile, c Caps, relaxed []RuleID, steps []Step, among []RuleID, w *Meter) Diagnosis {
	return diagnose(p, c, relaxed, steps, among, w, true)
}

// diagnose is diagnoseAmong; pairs says whether to try pairs of rules
// where no single rule explains the trace.
func diagnose(p Profile, c Caps, relaxed []RuleID, steps []Step, among []RuleID, w *Meter, pairs bool) Diagnosis {
	n, err, _, asked := replayConsulted(p, c, relaxed, steps, 0, w)
	if err == nil {
		return Diagnosis{}
	}
	out := Diagnosis{VisibleAt: n + 1}
	first := err
	var d *Deviation
	if errors.As(err, &d) {
		out.NoticedBy = d.Rule
	} else {
		// Not a deviation: the model cannot predict the trace at all, or
		// the allowance ran out on the way.
		out.Unexplained = true
		out.Cut = errors.Is(err, errDiagnosisEffort)
		return out
	}
	candidates := suspects(relaxed, among)
	asked.union(&fieldOwnerRules) // relaxing one opens a field any step may read
	var singles []explanation
	var helpers []RuleID // rules that let the replay get further
	for _, r := range candidates {
		if pruneUnconsulted && !asked.has(r) {
			// Nothing up to the failing step consulted r: relaxed, the
			// replay fails at the same step the same way.
			continue
		}
		if w.totalSpent() {
			out.Cut = true
			break
		}
		k, err, faults := replayPastBy(p, c, append(slices.Clone(relaxed), r), steps, n, w, r)
		switch {
		case errors.Is(err, errDiagnosisEffort):
			out.Cut = true
		case err == nil:
			singles = append(singles, explanation{[]RuleID{r}, faults})
		case k > n || (k == n && err.Error() != first.Error()):
			helpers = append(helpers, r)
		}
	}
	sets := singles
	if len(sets) == 0 && pairs {
		// Two rules: at least one of them must get the replay past the
		// step that failed.
		for _, a := range helpers {
			if w.pairsSpent() {
				out.Cut = true
				break
			}
			for _, b := range candidates {
				if a == b || (slices.Contains(helpers, b) && Rank(b) < Rank(a)) {
					continue
				}
				if w.pairsSpent() {
					out.Cut = true
					break // the pairs tried so far are all there is work for
				}
				pair := []RuleID{a, b}
				slices.SortFunc(pair, func(x, y RuleID) int { return Rank(x) - Rank(y) })
				if _, err, faults := replayPastBy(p, c, append(slices.Clone(relaxed), pair...), steps, 0, w, pair...); err == nil {
					sets = append(sets, explanation{pair, faults})
				}
			}
		}
	}
	if len(sets) == 0 {
		out.Unexplained = true
		return out
	}
	slices.SortStableFunc(sets, simplestFirst)
	out.Rules = sets[0].rules
	for _, s := range sets[1:] {
		out.Also = append(out.Also, s.rules)
	}
	out.DepartedAt = out.VisibleAt
	for _, f := range sets[0].faults {
		if slices.Contains(out.Rules, f.Rule) {
			// A departure adopted where it shows (an excuse at a later
			// poll) is recorded there; it departed no later than the step
			// that noticed it.
			out.DepartedAt = min(f.Step, out.VisibleAt)
			break
		}
	}
	return out
}

// pruneUnconsulted skips, in a diagnosis, the single-rule replays of
// rules the failing replay never consulted (false only in the test that
// checks the skip changes no diagnosis).
var pruneUnconsulted = true

// allRules holds every rule of the catalogue.
var allRules = func() ruleSet {
	var s ruleSet
	for _, r := range catalogue {
		s.add(r.ID)
	}
	return s
}()

// fieldOwnerRules are the rules that own a profile field (Facts.Owns).
var fieldOwnerRules = func() ruleSet {
	var s ruleSet
	for _, r := range catalogue {
		if len(r.Owns) > 0 {
			s.add(r.ID)
		}
	}
	return s
}()

// DepartureStep returns the step (1-based) where the trace first departs
// under the given rules relaxed (besides those already relaxed), and
// whether the trace is consistent under them at all. The replay charges
// w (nil: unbounded); one that w stops is not consistent.
func DepartureStep(p Profile, c Caps, relaxed []RuleID, steps []Step, rules []RuleID, w *Meter) (int, bool) {
	_, err, faults := replayPastBy(p, c, append(slices.Clone(relaxed), rules...), steps, 0, w, rules...)
	if err != nil {
		return 0, false
	}
	for _, f := range faults {
		if slices.Contains(rules, f.Rule) {
			return f.Step, true
		}
	}
	return 0, false
}

// Consistent reports whether the model, with the rules relaxed, takes
// every step of the trace, as Model.Step would, charging w (nil:
// unbounded). The error is the first departure, or errDiagnosisEffort
// where w stopped the replay before the trace's end.
func Consistent(p Profile, c Caps, relaxed []RuleID, steps []Step, w *Meter) error {
	m, err := NewRelaxed(p, c, relaxed)
	if err != nil {
		return err
	}
	for _, s := range steps {
		if err := m.advanceBy(s, w); err != nil {
			return err
		}
	}
	return nil
}

// countIn counts the departures of the given rules.
func countIn(faults []FaultUse, rules []RuleID) int {
	n := 0
	for _, f := range faults {
		if slices.Contains(rules, f.Rule) {
			n++
		}
	}
	return n
}

// ExplainedWithin returns how many of the trace's leading steps are
// consistent with the given rules relaxed (besides those already
// relaxed): all of them when the trace is. It charges its work to w (nil:
// unmetered); cut says the replay needed work past w's Pairs, so that the
// count does not stand.
func ExplainedWithin(p Profile, c Caps, relaxed []RuleID, steps []Step, rules []RuleID, w *Meter) (k int, cut bool) {
	k, err, _ := replayPastBy(p, c, append(slices.Clone(relaxed), rules...), steps, 0, w)
	return k, errors.Is(err, errDiagnosisEffort)
}

// DeparturesWithin reports whether the trace is consistent with the given
// rules relaxed (besides those already relaxed), and how many departures
// of those rules the explanation takes, charging its work to w (nil:
// unmetered): cut says the replay needed work past w's Pairs, so that
// neither answer stands.
func DeparturesWithin(p Profile, c Caps, relaxed []RuleID, steps []Step, rules []RuleID, w *Meter) (n int, consistent, cut bool) {
	_, err, faults := replayPastBy(p, c, append(slices.Clone(relaxed), rules...), steps, 0, w, rules...)
	if errors.Is(err, errDiagnosisEffort) {
		return 0, false, true
	}
	if err != nil {
		return 0, false, false
	}
	return countIn(faults, rules), true, false
}
