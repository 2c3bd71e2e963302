package concurrent

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/srqconform/srqconform/model"
)

// DefaultCheckTimeout is the bound srqconform concurrent puts on
// porcupine's search per history (-check-timeout), and the sweep of the
// race mutants uses (it checks a history undecided by then again with
// twice the bound). Most histories of 600 operations are decided in under
// a second; at 1 min one post-race-loses history of CI's 100 was not, and
// at 2 min one of a later CI run.
const DefaultCheckTimeout = 2 * time.Minute

// CheckOptions bound a check.
type CheckOptions struct {
	// Timeout bounds porcupine's search (0: unbounded). A search that runs
	// out gives an Unknown result, not a violation.
	Timeout time.Duration
	// ReduceBudget bounds the search for a smaller counterexample after a
	// violation (0: 20 s; negative: no reduction).
	ReduceBudget time.Duration
	// HTML, when set, is where porcupine's visualisation of a violation
	// (of the reduced history) is written.
	HTML string
	// MemoryLimit bounds the heap, in bytes, a search may grow to (0:
	// DefaultMemoryLimit). A search that passes it is abandoned: Unknown,
	// as one that runs out of time.
	MemoryLimit uint64
}

// Result is what Check found.
type Result struct {
	// Verdict is "linearizable", "violation" or "unknown" (the search ran
	// out of time or memory; Bound says which).
	Verdict string        `json:"verdict"`
	Bound   string        `json:"bound,omitempty"` // on unknown: "time" or "memory"
	Ops     int           `json:"ops"`
	Time    time.Duration `json:"check_ns"`
	// On a violation: the rule the violation breaks (the diagnosis of the
	// longest linearization the search found, followed by the operation
	// no order could place next), the model's complaint, the operations
	// of that linearization and the one that failed, and a reduced
	// history that still has no linearization.
	Rule      model.RuleID   `json:"rule,omitempty"`
	Also      []model.RuleID `json:"also,omitempty"`       // other rules whose relaxation explains it too
	NoticedBy model.RuleID   `json:"noticed_by,omitempty"` // the rule whose check failed first
	// Evidence lists the rules the history shows broken on its face
	// (see evidence), which the blame prefers.
	Evidence []model.RuleID `json:"evidence,omitempty"`
	// Decisive says that waiving Rule alone lets the whole history
	// linearize (see decisive).
	Decisive bool `json:"decisive,omitempty"`
	// BlameUndecided says a bound of the blame's searches cut it short at
	// every scale of blameScales: Rule is the best guess of the last try,
	// not a decision (a timer is never evidence; see blameScales).
	BlameUndecided bool        `json:"blame_undecided,omitempty"`
	Complaint      string      `json:"complaint,omitempty"`
	Prefix         []Operation `json:"prefix,omitempty"`
	Failing        *Operation  `json:"failing,omitempty"`
	Reduced        []Operation `json:"reduced,omitempty"`
	HTML           string      `json:"html,omitempty"`

	failDev *model.Deviation // the model's complaint about Failing
}

// Violation reports whether the history had no linearization.
func (r *Result) Violation() bool { return r.Verdict == "violation" }

// Verdicts of a check.
const (
	Linearizable = "linearizable"
	Violation    = "violation"
	Unknown      = "unknown"
)

// checker holds what the porcupine model of one history needs.
type checker struct {
	h    *History
	prof model.Profile
	init *model.Model
	// scale multiplies the blame's bounds (0 counts as 1); cut records
	// that one of them, not the search, ended a step of the blame.
	scale time.Duration
	cut   bool
	// memLimit bounds the heap of each search (see memGuard); overMemory
	// records that one search passed it.
	memLimit   uint64
	overMemory bool
	// unrefuted are the rules the complaint's events favour whose
	// decisive search a bound cut short: neither fitted nor refuted.
	unrefuted []model.RuleID
}

// bound is d scaled by c.scale.
func (c *checker) bound(d time.Duration) time.Duration { return d * max(c.scale, 1) }

func newChecker(h *History, relaxed ...model.RuleID) (*checker, error) {
	p, err := h.ProfileOf()
	if err != nil {
		return nil, fmt.Errorf("concurrent: %w", err)
	}
	m, err := model.NewRelaxed(p, h.Caps, relaxed)
	if err != nil {
		return nil, fmt.Errorf("concurrent: %w", err)
	}
	m.Narrow() // porcupine keeps every state it reaches
	for i, s := range h.Setup.Steps() {
		if err := m.Step(s.Op, s.Obs); err != nil {
			return nil, fmt.Errorf("concurrent: setup step %d (%s -> %s): %w", i+1, s.Op, s.Obs.Describe(s.Op), err)
		}
	}
	return &checker{h: h, prof: p, init: m}, nil
}

// apply runs the steps of o on a copy of m: the states o can lead to.
// A known outcome leads to one state or none (the model refuses it); an
// unknown one to m itself (it did not happen) and to m with the model's
// own outcome (it did).
func apply(m *model.Model, o Operation) ([]*model.Model, error) {
	c := m.Clone()
	if o.Output.Unknown {
		for _, s := range o.Steps() {
			if _, err := c.Run(s.Op); err != nil {
				return []*model.Model{m}, nil
			}
		}
		return []*model.Model{m, c}, nil
	}
	for _, s := range o.Steps() {
		if err := c.Step(s.Op, s.Obs); err != nil {
			return nil, err
		}
	}
	return []*model.Model{c}, nil
}

// porcupineModel is the reference model as porcupine sees it: the state
// is a *model.Model, an operation's input is its index in ops.
func (c *checker) porcupineModel(ops []Operation, g *memGuard) porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []any { return []any{c.init} },
		Step: func(state, input, _ any) []any {
			if g.tripped() {
				return nil // no next state: the search unwinds
			}
			next, _ := apply(state.(*model.Model), ops[input.(int)])
			out := make([]any, len(next))
			for i, n := range next {
				out[i] = n
			}
			return out
		},
		Equal: func(a, b any) bool {
			return a.(*model.Model).Fingerprint() == b.(*model.Model).Fingerprint()
		},
		Hash: func(s any) uint64 { return s.(*model.Model).Fingerprint() },
		DescribeOperation: func(input, _ any) string {
			return ops[input.(int)].String()
		},
		DescribeState: func(s any) string { return describe(s.(*model.Model)) },
	}
	return nm.ToModel()
}

// porcupineOps converts ops; an info operation returns at the end of time.
func porcupineOps(ops []Operation) []porcupine.Operation {
	out := make([]porcupine.Operation, len(ops))
	for i, o := range ops {
		ret := int64(o.Return)
		if o.Output.Unknown {
			ret = int64(Forever)
		}
		out[i] = porcupine.Operation{ClientId: o.Client, Input: i, Call: int64(o.Call), Return: ret}
	}
	return out
}

// linearize runs porcupine on ops. A search that passes c.memLimit is
// Unknown, and marks c.overMemory.
func (c *checker) linearize(ops []Operation, timeout time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo, porcupine.Model) {
	g := startGuard(c.memLimit)
	defer g.end()
	pm := c.porcupineModel(ops, g)
	res, info := porcupine.CheckOperationsVerbose(pm, porcupineOps(ops), timeout)
	if g.tripped() {
		c.overMemory = true
		return porcupine.Unknown, info, pm
	}
	return res, info, pm
}

// Check checks h for linearizability against the model under h's
// profile. On a violation it names the rule broken (see explain) and
// reduces the history while it stays a violation blamed on that rule.
func Check(h *History, opts CheckOptions) (*Result, error) {
	c, err := newChecker(h)
	if err != nil {
		return nil, err
	}
	c.memLimit = opts.MemoryLimit
	start := time.Now()
	res, info, pm := c.linearize(h.Ops, opts.Timeout)
	r := &Result{Ops: len(h.Ops)}
	defer func() { r.Time = time.Since(start) }()
	switch res {
	case porcupine.Ok:
		r.Verdict = Linearizable
		return r, nil
	case porcupine.Unknown:
		r.Verdict, r.Bound = Unknown, "time"
		if c.overMemory {
			r.Bound = "memory"
		}
		return r, nil
	}
	r.Verdict = Violation
	c.explainScaled(r, h.Ops, info)
	ops := h.Ops
	if opts.ReduceBudget >= 0 && r.Rule != 0 {
		budget := opts.ReduceBudget
		if budget == 0 {
			budget = 20 * time.Second
		}
		evidenced := model.RuleID(0)
		if slices.Contains(r.Evidence, r.Rule) {
			evidenced = r.Rule
		}
		ops = c.reduce(h.Ops, r.NoticedBy, evidenced, budget, opts.Timeout)
		r.Reduced = ops
		if len(ops) < len(h.Ops) {
			_, info, pm = c.linearize(ops, opts.Timeout)
			small := &Result{}
			c.notice(small, ops, info)
			r.Prefix, r.Failing, r.Complaint, r.NoticedBy = small.Prefix, small.Failing, small.Complaint, small.NoticedBy
		}
	}
	if opts.HTML != "" {
		if err := porcupine.VisualizePath(pm, info, opts.HTML); err != nil {
			return r, fmt.Errorf("concurrent: write the visualisation %s: %w", opts.HTML, err)
		}
		r.HTML = opts.HTML
	}
	return r, nil
}

// blameScales are the scales of the blame's bounds, tried in turn while
// a bound cuts the blame short: on a busy machine a favoured rule's search
// that took 12 s on a quiet one can run past its 15 s, and the blame would
// then fall to a ranking that names another rule.
var blameScales = []time.Duration{1, 2, 4}

// explainScaled explains r as explain does, again with the bounds scaled
// up while one of them cut the blame short; r.BlameUndecided says the
// last try was cut too.
func (c *checker) explainScaled(r *Result, ops []Operation, info porcupine.LinearizationInfo) {
	base := *r
	for _, s := range blameScales {
		*r = base
		c.scale, c.cut, c.unrefuted = s, false, nil
		c.explain(r, ops, info)
		if !c.cut {
			return
		}
	}
	r.BlameUndecided = true
	// A rule a bound kept from fitting or being refuted stays a
	// candidate: a timer is never evidence against it.
	for _, rule := range c.unrefuted {
		if rule != r.Rule && !slices.Contains(r.Also, rule) {
			r.Also = append(r.Also, rule)
		}
	}
}

// explain names the rule a violation breaks. It replays the longest
// linearization porcupine found, then tries each operation that could
// come next (called before every other remaining operation returned);
// none fits. Each failing one ends a sequential trace, which the
// sequential suite's diagnosis explains (package model: the smallest set
// of rules whose relaxation makes the trace consistent, the rules only
// concurrency can break included). The rule that explains the most of
// those traces is the one broken, ties going to model.Rank.
func (c *checker) explain(r *Result, ops []Operation, info porcupine.LinearizationInfo) {
	m, trace, cands := c.notice(r, ops, info)
	if r.Failing != nil {
		c.blame(r, ops, m, trace, cands)
	}
}

// notice replays the longest linearization into r.Prefix and finds the
// first operation that could come next and fails: r.Failing, r.Complaint
// and r.NoticedBy. It returns the state after the prefix, the prefix as a
// sequential trace and the operations that could come next.
func (c *checker) notice(r *Result, ops []Operation, info porcupine.LinearizationInfo) (*model.Model, []model.Step, []int) {
	var best []int
	for _, part := range info.PartialLinearizations() {
		for _, l := range part {
			if len(l) > len(best) {
				best = l
			}
		}
	}
	m := c.init
	trace := c.h.Setup.Steps()
	done := make([]bool, len(ops))
	for _, i := range best {
		next, err := apply(m, ops[i])
		if err != nil || len(next) == 0 {
			break
		}
		m = next[len(next)-1]
		done[i] = true
		r.Prefix = append(r.Prefix, ops[i])
		if !ops[i].Output.Unknown {
			trace = append(trace, ops[i].Steps()...)
		}
	}
	first := Forever
	for i, o := range ops {
		if !done[i] && !o.Output.Unknown {
			first = min(first, o.Return)
		}
	}
	var cands []int
	for i, o := range ops {
		if !done[i] && o.Call <= first && !o.Output.Unknown {
			cands = append(cands, i)
		}
	}
	slices.SortStableFunc(cands, func(a, b int) int { return cmpDur(ops[a].Call, ops[b].Call) })
	for _, i := range cands {
		_, err := apply(m, ops[i])
		var d *model.Deviation
		if errors.As(err, &d) {
			o := ops[i]
			r.Failing, r.Complaint, r.NoticedBy, r.failDev = &o, d.Error(), d.Rule, d
			break
		}
	}
	if r.Failing == nil {
		r.Complaint = "every operation that could come next fits on its own; only their combination has no order"
	}
	return m, trace, cands
}

// blame names the rule broken (see explain).
func (c *checker) blame(r *Result, ops []Operation, m *model.Model, trace []model.Step, cands []int) {
	deadline := time.Now().Add(c.bound(blameBudget))
	votes := c.vote(ops, m, trace, cands, deadline)
	ev := evidence(ops, c.prof.FlushInProgress.Allows(model.NoRaise))
	// Without direct evidence (which needs no search; see below), a rule
	// whose relaxation alone linearizes the whole history is the one
	// broken (see blameDecisive).
	if len(ev) == 0 && c.blameDecisive(r, ops, votes) {
		c.cut = false // a rule whose waiver alone linearizes all is proof
		return
	}
	ranked := c.rankByReach(ops, votes, ev, deadline)
	r.Rule = r.NoticedBy
	if len(ranked) > 0 {
		r.Rule = ranked[0]
	}
	// Direct evidence in the history outranks the rest: a WR completed
	// twice, a limit event more than its armings allow, a WR lost.
	if len(ev) > 0 {
		r.Rule = ev[0]
		for _, rule := range ranked {
			if slices.Contains(ev, rule) {
				r.Rule = rule // the best ranked among the evidenced
				break
			}
		}
		r.Evidence = ev
	}
	for _, rule := range ranked {
		if rule != r.Rule {
			r.Also = append(r.Also, rule)
		}
	}
}

// vote diagnoses the sequential trace up to each candidate that fails
// after state m (at most maxExplained of them, until deadline) and counts,
// for each rule, the explanations that name it.
func (c *checker) vote(ops []Operation, m *model.Model, trace []model.Step, cands []int, deadline time.Time) map[model.RuleID]int {
	votes := map[model.RuleID]int{}
	tried := 0
	for _, i := range cands {
		_, err := apply(m, ops[i])
		var d *model.Deviation
		if !errors.As(err, &d) {
			continue
		}
		if tried++; tried > maxExplained {
			break
		}
		if time.Now().After(deadline) {
			c.cut = true
			break
		}
		dg := model.DiagnoseAmong(c.prof, c.h.Caps, nil, append(slices.Clone(trace), ops[i].Steps()...), workloadRules)
		for _, set := range dg.Explains() {
			for _, rule := range set {
				votes[rule]++
			}
		}
	}
	return votes
}

// blameDecisive looks for a rule whose relaxation alone linearizes the
// whole history, and if it finds one blames it in r and returns true. The
// rules of the events the complaint differs in are tried first, then the
// rules the diagnoses name (most voted first), the rule that noticed, and
// the workload's others.
func (c *checker) blameDecisive(r *Result, ops []Operation, votes map[model.RuleID]int) bool {
	voted := slices.Collect(maps.Keys(votes))
	slices.SortFunc(voted, func(a, b model.RuleID) int {
		if votes[a] != votes[b] {
			return votes[b] - votes[a]
		}
		return model.Rank(a) - model.Rank(b)
	})
	rest := slices.Clone(workloadRules)
	slices.SortStableFunc(rest, func(a, b model.RuleID) int { return model.Rank(a) - model.Rank(b) })
	favoured := eventRules(r.failDev)
	var order []model.RuleID
	for _, rule := range slices.Concat(favoured, voted, []model.RuleID{r.NoticedBy}, rest) {
		if rule != 0 && !slices.Contains(order, rule) {
			order = append(order, rule)
		}
	}
	rule := c.decisive(ops, order, len(favoured), time.Now().Add(c.bound(decisiveBudget)))
	if rule == 0 {
		return false
	}
	r.Rule, r.Decisive = rule, true
	for _, o := range order {
		if o != rule && votes[o] > 0 {
			r.Also = append(r.Also, o)
		}
	}
	return true
}

// rankByReach ranks the rules the diagnoses name (votes), and those the
// history shows on its face (ev), best first. Each is tried on the whole
// history: a greedy linearization under the model with the rule relaxed,
// taking at each point the earliest-called operation that fits. The rule
// broken is the one whose linearization gets furthest (a rule that
// explains the failure by accident seldom explains what follows: a lost
// post also looks like a queue that holds too many, until the lost WR
// never completes). Ties go to the most voted, then to the rules only
// concurrency can break, then by model.Rank. The rules not measured by
// deadline rank last.
func (c *checker) rankByReach(ops []Operation, votes map[model.RuleID]int, ev []model.RuleID, deadline time.Time) []model.RuleID {
	ranked := slices.Collect(maps.Keys(votes))
	for _, rule := range ev {
		if !slices.Contains(ranked, rule) {
			ranked = append(ranked, rule) // a sequential trace seldom shows it
		}
	}
	reach := map[model.RuleID]int{}
	for _, rule := range ranked {
		if time.Now().After(deadline) {
			c.cut = true
			break // the rules not measured rank last
		}
		reach[rule] = c.reach(ops, rule, deadline)
	}
	concurrentOnly := func(rule model.RuleID) int {
		if slices.Contains(model.ConcurrentOnly, rule) {
			return 0
		}
		return 1
	}
	slices.SortFunc(ranked, func(a, b model.RuleID) int {
		if reach[a] != reach[b] {
			return reach[b] - reach[a]
		}
		if votes[a] != votes[b] {
			return votes[b] - votes[a]
		}
		if d := concurrentOnly(a) - concurrentOnly(b); d != 0 {
			return d
		}
		return model.Rank(a) - model.Rank(b)
	})
	return ranked
}

// evidence returns the rules the history shows broken on its face, in
// the order checked:
//   - FETCH-ONCE: a wr_id posted once completes twice, or one message
//     (its number, the immediate data) completes successfully on two WRs;
//   - LIMIT-ONCE: one read of the events holds more limit events than
//     the armings since the previous read, plus one, can have raised;
//   - POST-ATOMIC: WRs of posts that returned 0, and overlapped another
//     post in time, never complete, though WRs posted after those posts
//     returned did (FIFO would have fetched them first). Where the profile
//     lets a QP entering ERR take the WR it was filling without a
//     completion (vanish: FlushInProgress allows NoRaise), there must be
//     more such WRs than moves to ERR.
func evidence(ops []Operation, vanish bool) []model.RuleID {
	var out []model.RuleID
	postedAt := map[uint64]int{} // wr_id -> index of the successful post
	completed := map[uint64]int{}
	for i, o := range ops {
		if o.Input.Kind == KindPost {
			n := len(o.Input.WRs)
			if o.Output.Errno != 0 {
				n = max(0, min(o.Output.BadWR, n))
			}
			for _, w := range o.Input.WRs[:n] {
				postedAt[w.ID] = i
			}
		}
		for _, c := range o.Output.Completions {
			completed[c.WRID]++
		}
	}
	twice := false
	for id, n := range completed {
		if _, ok := postedAt[id]; ok && n > 1 {
			twice = true
			break
		}
	}
	for _, o := range ops {
		if o.Input.Kind == KindMessage && o.Input.Msg.Opcode.HasImm() && successes(o.Output.Completions) > 1 {
			twice = true
			break
		}
	}
	if twice {
		out = append(out, model.RuleFetchOnce)
	}
	prev := time.Duration(0)
	for _, o := range ops {
		if o.Input.Kind != KindEvents && o.Input.Kind != KindFinal {
			continue
		}
		limits := 0
		for _, e := range o.Output.Events {
			if e.Type == model.EventSRQLimitReached {
				limits++
			}
		}
		arms := 0
		for _, a := range ops {
			if a.Input.Kind == KindArm && a.Output.Errno == 0 && a.Input.Limit > 0 && a.Return > prev && a.Call < o.Return {
				arms++
			}
		}
		if limits > arms+1 {
			out = append(out, model.RuleLimitOnce)
			break
		}
		prev = o.Call
	}
	mayVanish := 0
	if vanish {
		for _, o := range ops {
			if o.Input.Kind == KindModify && o.Input.State == model.Err && o.Output.Errno == 0 {
				mayVanish++
			}
		}
	}
	overlapped := func(i int) bool {
		for j, o := range ops {
			if j != i && o.Input.Kind == KindPost && o.Call < ops[i].Return && ops[i].Call < o.Return {
				return true
			}
		}
		return false
	}
	lost := 0
	for id, i := range postedAt {
		if completed[id] > 0 || !overlapped(i) {
			continue
		}
		for later, j := range postedAt {
			if completed[later] > 0 && ops[j].Call > ops[i].Return {
				lost++
				break
			}
		}
	}
	if lost > mayVanish {
		out = append(out, model.RulePostAtomic)
	}
	return out
}

// decisive returns the first of rules whose relaxation alone lets
// porcupine linearize the whole of ops, trying rules until deadline; ""
// when none does. The first favoured rules (the ones the history or the
// complaint points at) get decisiveLong each, the others decisiveTimeout.
// It is the strongest blame there is: the history breaks that rule and no
// other. (rxe's histories missing LAST_WQE events were blamed on
// LIMIT-FIRE by the greedy reach; they linearize with QP-LAST-WQE waived,
// one of them only after 12 s of search.) When none does and a favoured
// rule's search ran out before it fitted or was refuted, a bound decided
// the outcome: decisive marks c.cut, and the blame is tried again at a
// larger scale (see blameScales).
func (c *checker) decisive(ops []Operation, rules []model.RuleID, favoured int, deadline time.Time) model.RuleID {
	unsure := false // a favoured rule neither fitted nor was refuted
	for i, rule := range rules {
		left := time.Until(deadline)
		if left <= 0 {
			unsure = unsure || i < favoured
			if i < favoured {
				c.unrefuted = append(c.unrefuted, rules[i:favoured]...) // never tried
			}
			break
		}
		rc, err := newChecker(c.h, rule)
		if err != nil {
			continue
		}
		rc.memLimit = c.memLimit
		bound := c.bound(decisiveTimeout)
		if i < favoured {
			bound = c.bound(decisiveLong)
		}
		switch res, _, _ := rc.linearize(ops, min(bound, left)); {
		case res == porcupine.Ok:
			return rule
		case res == porcupine.Unknown && i < favoured:
			unsure = true
			c.unrefuted = append(c.unrefuted, rule)
		}
	}
	c.cut = c.cut || unsure
	return 0
}

// eventRules are the rules owning the event types a complaint about the
// events differs in, the likelier first: more limit events than the model
// allows is LIMIT-ONCE before LIMIT-FIRE, fewer is LIMIT-FIRE; any
// difference in LAST_WQE events is QP-LAST-WQE.
func eventRules(d *model.Deviation) []model.RuleID {
	if d == nil || !strings.Contains(d.What, "event") {
		return nil
	}
	var out []model.RuleID
	limit := model.EventSRQLimitReached.String()
	switch got, want := strings.Count(d.Got, limit), strings.Count(d.Want, limit); {
	case got > want:
		out = append(out, model.RuleLimitOnce, model.RuleLimitFire)
	case got < want:
		out = append(out, model.RuleLimitFire)
	}
	last := model.EventQPLastWQEReached.String()
	if strings.Count(d.Got, last) != strings.Count(d.Want, last) {
		out = append(out, model.RuleQPLastWQE)
	}
	return out
}

// decisiveTimeout bounds each of decisive's searches (a relaxation that
// fits is found quickly; one that does not can take porcupine long to
// refute), decisiveLong those of the favoured rules, and decisiveBudget
// all of them (variables for the tests of a cut blame).
var (
	decisiveTimeout = 2 * time.Second
	decisiveLong    = 15 * time.Second
	decisiveBudget  = 45 * time.Second
)

// reachBeam is how many candidates a relaxed model keeps in reach.
const reachBeam = 512

// reach is how many operations of ops a greedy linearization places
// under the model with rule relaxed: at each point, of the operations
// that could come next, the earliest called that the model accepts. It
// stops at deadline with what it placed by then.
func (c *checker) reach(ops []Operation, rule model.RuleID, deadline time.Time) int {
	rc, err := newChecker(c.h, rule)
	if err != nil {
		return 0
	}
	m := rc.init.Beam(reachBeam)
	left := slices.Clone(ops)
	placed := 0
	for len(left) > 0 {
		if time.Now().After(deadline) {
			c.cut = true
			return placed
		}
		first := Forever
		for _, o := range left {
			if !o.Output.Unknown {
				first = min(first, o.Return)
			}
		}
		moved := false
		for i, o := range left {
			if o.Call > first {
				break // ops are in call order
			}
			next, err := apply(m, o)
			if err != nil || len(next) == 0 {
				continue
			}
			m = next[len(next)-1]
			left = slices.Delete(left, i, i+1)
			placed++
			moved = true
			break
		}
		if !moved {
			return placed
		}
	}
	return placed
}

// maxExplained bounds how many failing operations get a diagnosis, and
// blameBudget the time the blame takes before it settles for what it has:
// a diagnosis replays the whole prefix once per rule.
const maxExplained = 2

var blameBudget = 30 * time.Second

// workloadRules are the rules a concurrent workload's operations can
// show broken (model.WorkloadRules); a diagnosis tries no other.
var workloadRules = model.WorkloadRules

func cmpDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// reduce drops operations while the history stays a violation that the
// same rule's check notices (the full blame is too dear to run on every
// try), in chunks halving down to one operation, within budget. A post
// stays while a completion left names one of its WRs (else the history
// would fail for a WR nobody posted), an event keeps a cause
// (causesKept), and the final poll stays: it is where a missing event
// shows. Where the history shows the rule broken on its face (evidenced,
// see evidence), the reduced history still shows it: dropping what
// explains a departure can leave another that the same check notices (a
// WR out of order once the message that took the WRs before it is gone).
func (c *checker) reduce(ops []Operation, noticed, evidenced model.RuleID, budget, timeout time.Duration) []Operation {
	deadline := time.Now().Add(budget)
	vanish := c.prof.FlushInProgress.Allows(model.NoRaise)
	keeps := func(cand []Operation) bool {
		posted := map[uint64]bool{}
		for _, o := range cand {
			for _, w := range o.Input.WRs {
				posted[w.ID] = true
			}
		}
		for _, o := range cand {
			for _, cp := range o.Output.Completions {
				if !posted[cp.WRID] {
					return false
				}
			}
		}
		if !causesKept(cand) {
			return false
		}
		if evidenced != 0 && !slices.Contains(evidence(cand, vanish), evidenced) {
			return false
		}
		res, info, _ := c.linearize(cand, timeout)
		if res != porcupine.Illegal {
			return false
		}
		var r Result
		c.notice(&r, cand, info)
		return r.NoticedBy == noticed
	}
	cur := slices.Clone(ops)
	for chunk := max(1, len(cur)/2); ; chunk /= 2 {
		for i := 0; i < len(cur) && time.Now().Before(deadline); {
			end := min(len(cur), i+chunk)
			if end-i == 1 && cur[i].Input.Kind == KindFinal {
				i++
				continue
			}
			cand := slices.Concat(cur[:i], cur[end:])
			if len(cand) > 0 && keeps(cand) {
				cur = cand
				continue
			}
			i = end
		}
		if chunk <= 1 || time.Now().After(deadline) {
			return cur
		}
	}
}

// causesKept says every event left has a cause left before it: an arming
// for a limit event, a move to ERR of its QP for a last-WQE event.
// Without it a reduced history fails for an event nothing raised, not
// for what the device did.
func causesKept(ops []Operation) bool {
	for _, o := range ops {
		for _, e := range o.Output.Events {
			if !slices.ContainsFunc(ops, func(p Operation) bool {
				if p.Call > o.Return {
					return false
				}
				switch e.Type {
				case model.EventSRQLimitReached:
					return p.Input.Kind == KindArm
				case model.EventQPLastWQEReached:
					return p.Input.Kind == KindModify && p.Input.QP == e.QP && p.Input.State == model.Err
				}
				return true
			}) {
				return false
			}
		}
	}
	return true
}

// describe is a model state for people: what the SRQ holds and the QPs'
// states (of the first candidate).
func describe(m *model.Model) string {
	v := m.View()
	s := fmt.Sprintf("%d WRs outstanding", v.Outstanding)
	if v.Armed {
		s += fmt.Sprintf(", armed at %d", v.Limit)
	}
	for i, st := range v.QPStates {
		s += fmt.Sprintf(", qp%d %s", i, st)
	}
	return s
}

// successes counts the successful completions in cs.
func successes(cs []model.Completion) int {
	n := 0
	for _, c := range cs {
		if c.Status == model.WCSuccess {
			n++
		}
	}
	return n
}
