package model

import (
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
)

// maxCandidates bounds the candidate set; no named profile comes near it.
const maxCandidates = 1 << 12

// beam is how many candidates a model with relaxed rules keeps, the most
// parsimonious first, when the departures it admits multiply them.
const beam = 1024

// Model is the reference model of one SRQ and its QPs under a profile. It
// holds one candidate machine per combination of the profile's open choices
// that the observations so far have not ruled out; a choice is split only
// when a step first depends on it. Model is deterministic and does no I/O.
// It is not safe for concurrent use, Clone and View included: they write
// what they share and cache.
type Model struct {
	cands   []*machine
	steps   int           // steps applied
	reached [1 << 8]int32 // by RuleID: steps whose check of the rule passed
	// consulted are the rules some candidate's steps checked or asked
	// about (machine.touched, machine.asked): relaxing any other rule
	// changes nothing the model did.
	consulted ruleSet

	// What a diagnosis needs: the profile and caps as given, the relaxed
	// rules, and the steps so far with their observations.
	prof    Profile
	caps    Caps
	relaxed []RuleID
	history *stepList

	// width is how many candidates a relaxed model keeps (0: beam);
	// pruned says some were dropped, so a deviation may be the beam's.
	width  int
	pruned bool

	fp uint64 // Fingerprint, once computed (0: not yet)

	qpv *qpView // View's per-QP part as last computed (qpview.go)
	// view is the View of the state as it is, when viewOK: a step clears
	// it. Views share their arrays, which nothing writes.
	view   View
	viewOK bool

	// scratch is the machine Expect steps, reused: what it makes is
	// dropped, so a copy of the candidate in it needs no allocation.
	scratch *machine
	// spare is the array of the candidates before the last step, which
	// the next step fills.
	spare []*machine
}

// stepList is a model's history, newest step first: an immutable list
// that clones share, so a clone's next step costs one node, not a copy of
// every step before it (a history check keeps hundreds of thousands of
// states, each some hundreds of steps deep). nil is the empty history.
type stepList struct {
	s    Step
	prev *stepList
	n    int // steps in the list, this one included
}

// push returns l with s appended.
func (l *stepList) push(s Step) *stepList {
	return &stepList{s: s, prev: l, n: l.len() + 1}
}

// len returns the number of steps in l.
func (l *stepList) len() int {
	if l == nil {
		return 0
	}
	return l.n
}

// steps returns l's steps, oldest first, in a new slice.
func (l *stepList) steps() []Step {
	out := make([]Step, l.len())
	for i := len(out) - 1; l != nil; i, l = i-1, l.prev {
		out[i] = l.s
	}
	return out
}

// Step is one operation of a trace and what the device was seen to do.
type Step struct {
	Op  Op
	Obs Observation
}

// New returns a model of a device with caps, under profile p.
func New(p Profile, c Caps) *Model {
	return &Model{cands: []*machine{newMachine(p, c)}, prof: p, caps: c}
}

// NewRelaxed returns a model under p with the given rules relaxed: each
// relaxed rule admits the misbehaviours it forbids (relax.go), and the
// profile fields an implementation-defined rule names are open to every
// value. It fails on an unknown rule ID.
func NewRelaxed(p Profile, c Caps, relaxed []RuleID) (*Model, error) {
	if len(relaxed) == 0 {
		return New(p, c), nil
	}
	set := relaxSet{}
	for _, id := range relaxed {
		if !id.Valid() {
			return nil, fmt.Errorf("model: relax rule %q: no such rule in the catalogue", id)
		}
		set[id] = true
	}
	q := p
	own := relaxFields(&q, relaxed)
	m := newMachine(q, c)
	m.relax, m.ownWidth, m.settled = set, own, false
	return &Model{cands: []*machine{m}, prof: p, caps: c,
		relaxed: slices.Clone(relaxed)}, nil
}

// beamWidth is how many candidates a relaxed model keeps.
func (m *Model) beamWidth() int {
	if m.width > 0 {
		return m.width
	}
	return beam
}

// widened replays the model's history in a model that keeps up to
// maxCandidates candidates, and reports whether every step is consistent
// there.
func (m *Model) widened() (*Model, bool) {
	if m.beamWidth() >= maxCandidates {
		return nil, false
	}
	w, err := NewRelaxed(m.prof, m.caps, m.relaxed)
	if err != nil {
		return nil, false
	}
	w.width = maxCandidates
	for _, s := range m.history.steps() {
		if err := w.advance(s.Op, &s.Obs); err != nil {
			return nil, false
		}
	}
	return w, true
}

// Reached returns, for every rule whose check ran, how many steps checked it
// and agreed (under the relaxation, for relaxed rules).
func (m *Model) Reached() map[RuleID]int {
	out := map[RuleID]int{}
	for r, n := range m.reached {
		if n > 0 {
			out[RuleID(r)] = int(n)
		}
	}
	return out
}

// Faults returns the departures the most parsimonious surviving candidate
// took: the fewest departures of the rules in count (all, when count is
// empty), and among those the earliest.
func (m *Model) Faults(count ...RuleID) []FaultUse {
	n := func(fs []FaultUse) int {
		if len(count) == 0 {
			return len(fs)
		}
		return countIn(fs, count)
	}
	var best []FaultUse
	for i, c := range m.cands {
		if i == 0 || n(c.faults) < n(best) || (n(c.faults) == n(best) && len(best) > 0 && len(c.faults) > 0 && c.faults[0].Step < best[0].Step) {
			best = c.faults
		}
	}
	return append([]FaultUse(nil), best...)
}

// Step checks the observation got of op against the model and advances. It
// returns a *Deviation when no candidate allows got, or an error wrapping
// ErrNotModelled when op cannot be predicted. After an error the model is
// spent: build a new one to go on.
func (m *Model) Step(op Op, got Observation) error {
	m.history = m.history.push(Step{Op: op, Obs: got})
	err := m.advance(op, &got)
	if err != nil {
		m.noteDeviation(err)
	}
	return err
}

// noteDeviation gives a *Deviation err what its diagnosis needs.
func (m *Model) noteDeviation(err error) {
	var d *Deviation
	if errors.As(err, &d) {
		d.step = m.history.len()
		d.diag = &diagSource{prof: m.prof, caps: m.caps, relaxed: m.relaxed, steps: m.history}
	}
}

// Run applies op with the model's canonical outcome (the first allowed value
// of every open choice) and returns that outcome. It is the model running on
// its own, for its properties and benchmarks.
func (m *Model) Run(op Op) (Observation, error) {
	if len(m.cands) == 0 {
		return Observation{}, errors.New("model is spent")
	}
	obs, err := m.Expect(op)
	if err != nil {
		return obs, err
	}
	m.history = m.history.push(Step{Op: op, Obs: obs})
	return obs, m.advance(op, &obs)
}

// Expect returns the canonical outcome of op without advancing.
func (m *Model) Expect(op Op) (Observation, error) {
	if len(m.cands) == 0 {
		return Observation{}, errors.New("model is spent")
	}
	// The canonical outcome takes no departure and the first value of
	// every open choice (faithful): one result.
	if m.scratch == nil {
		m.scratch = new(machine)
	}
	// An observation shares nothing with the machine that made it, and
	// the scratch's appends go past what the candidate's slices hold;
	// its QP table copies what it writes.
	*m.scratch = *m.cands[0]
	m.scratch.qps.tok = 0
	var buf [1]result
	r := run(buf[:0], m.scratch, op, nil, true, true)[0]
	return r.obs, r.err
}

// Predictable reports whether Expect(op) is sure to succeed, from checks
// that step nothing: they mirror every place a step is ErrNotModelled
// (step.go and the operations it calls: an SRQ not yet made or gone, a QP
// that does not exist, a num_sge that does not count its SGEs, a key out
// of range, a message its QP cannot take or take now). False means only
// that the checks cannot tell: call Expect. A caller that needs no
// canonical outcome skips Expect where this holds (the harness, for most
// steps).
func (m *Model) Predictable(op Op) bool {
	if len(m.cands) == 0 {
		return false
	}
	c := m.cands[0]
	_, creating := op.(CreateSRQ)
	_, polling := op.(Poll)
	if (!creating && !c.created) || (!polling && c.destroyed) {
		return false
	}
	switch o := op.(type) {
	case Post:
		for _, w := range o.WRs {
			if !countsSGEs(w) {
				return false
			}
		}
		return true
	case PostRecv:
		return c.checkQP(o.QP) == nil
	case Arrive:
		if o.FirstPacketOnly || c.checkQP(o.QP) != nil {
			return false
		}
		q := c.qps.at(o.QP)
		return o.Msg.Opcode.ValidOn(q.typ) && !q.owesRest()
	case ArriveRest:
		return c.checkQP(o.QP) == nil && c.qps.at(o.QP).owesRest()
	case ModifyQP:
		return c.checkQP(o.QP) == nil
	case DestroyQP:
		return c.checkQP(o.QP) == nil
	case Invalidate:
		return o.Key >= 0 && o.Key < len(c.keys)
	case CreateSRQ, CreateQP, Query, Arm, Resize, Poll, CreateOther, DestroySRQ, InjectSRQError:
		return true
	}
	return false
}

// countsSGEs reports whether w's num_sge is the number of its SGEs.
func countsSGEs(w WR) bool { return w.NumSGE >= 0 && w.NumSGE == len(w.SGEs) }

type result struct {
	m   *machine
	obs Observation
	err error
}

// run applies op to c, splitting it on every open choice the step reads,
// and appends the results to dst; faithful takes no departure of a relaxed
// rule and only the first value of an open choice (the canonical outcome).
// With owned, c belongs to the caller, which keeps only the results: run
// steps c itself, with no copy, and where the step forks puts c back as
// it was and steps a copy per branch. Otherwise run steps a copy of c.
func run(dst []result, c *machine, op Op, got *Observation, faithful, owned bool) []result {
	work := c
	var saved machine
	if owned {
		// What c shares stays as the sharers see it: its slices are
		// only appended to past what a clone sees (clip), and a clone
		// took its QP table's leaves from it (machine.clone). A
		// settled candidate cannot fork; any other is kept as it was,
		// its table copying a leaf before it writes to it.
		if !c.settled {
			c.qps.tok = 0
			saved = *c
		}
	} else {
		work = c.clone()
	}
	res, f, ff := try(work, op, got, faithful)
	switch {
	case ff != nil:
		restore(c, &saved, owned)
		for i := range ff.n {
			d := c.clone()
			d.script = append(clip(c.script), i)
			dst = run(dst, d, op, got, faithful, true)
		}
	case f != nil:
		restore(c, &saved, owned)
		n := f.n
		if faithful {
			n = 1 // the canonical outcome: the first value
		}
		start := len(dst)
		for i := range n {
			d := c.clone()
			p := *d.prof
			f.decide(&p, i)
			d.prof = &p
			d.open-- // a fork decides an open field
			d.settled = d.relax == nil && d.open == 0
			d.decided(f.field, i)
			d.picks = append(clip(d.picks), pickRec{f.field, i})
			dst = run(dst, d, op, got, faithful, true)
		}
		if coalesceForks && !faithful && got != nil && c.relax == nil && !c.narrow {
			dst = coalesce(dst, start, n, c)
		}
	default:
		dst = append(dst, res)
	}
	return dst
}

// coalesceForks turns coalesce on (false only in the test that checks a
// model that coalesces accepts what one that does not accepts).
var coalesceForks = true

// coalesce merges back the branches a fork on an open field made, the
// results dst[start:], where the field's value changed nothing: each of
// the n branches went on as one candidate, and all reached the same state.
// The candidate that stands for them keeps the field open (undecided, as
// c had it), so that a later step that depends on it forks again; the
// rules their checks ran are the union of theirs. Not under relaxation
// (a diagnosis counts each branch's departures) nor in a narrow model: a
// history check compares the states it reaches by fingerprint, and a
// merged state and the split ones it stands for would not compare equal.
func coalesce(dst []result, start, n int, c *machine) []result {
	rs := dst[start:]
	if len(rs) != n || n < 2 {
		return dst
	}
	s0 := rs[0].m.sketch()
	for _, r := range rs {
		if r.err != nil || len(r.m.picks) != len(c.picks)+1 || r.m.sketch() != s0 {
			return dst
		}
	}
	var h0 uint64
	for i, r := range rs {
		h := r.m.hashState(fingerprintSeed, false)
		if i == 0 {
			h0 = h
		} else if h != h0 {
			return dst
		}
	}
	m := rs[0].m
	for _, r := range rs[1:] {
		m.touched.union(&r.m.touched)
		m.asked.union(&r.m.asked)
	}
	m.prof, m.open, m.settled, m.picks = c.prof, c.open, c.settled, c.picks
	return dst[:start+1]
}

// stateSketch is a few counts of a machine's state: machines whose
// sketches differ are in different states (hashState), found without
// hashing.
type stateSketch struct {
	queue, cq, events, held, leaked, posted, fetched, qps int
	capacity, limit                                       uint32
	armed, srqErr                                         bool
}

func (m *machine) sketch() stateSketch {
	return stateSketch{len(m.queue), len(m.cq), len(m.events), m.held, m.leaked, m.posted, m.fetched, m.qps.len(),
		m.capacity, m.limit, m.armed, m.srqErr}
}

// restore puts an owned candidate back as it was before a step that
// forked (run).
func restore(c, saved *machine, owned bool) {
	if !owned {
		return
	}
	if c.settled {
		panic(fmt.Sprintf("model: a settled candidate forked (%+v)", c.picks))
	}
	*c = *saved
}

// try steps work once; a step that reads an open choice or meets a fault
// point of a relaxed rule stops there and returns the fork instead.
func try(work *machine, op Op, got *Observation, faithful bool) (res result, f *fork, ff *faultFork) {
	defer func() {
		if r := recover(); r != nil {
			switch x := r.(type) {
			case fork:
				f = &x
			case faultFork:
				ff = &x
			default:
				panic(r)
			}
		}
	}()
	work.faithful = work.faithful || faithful
	work.cursor, work.touched, work.asked = 0, ruleSet{}, ruleSet{}
	obs, err := work.step(op, got)
	work.script, work.cursor = nil, 0
	return result{m: work, obs: obs, err: err}, nil, nil
}

func (m *Model) advance(op Op, got *Observation) error {
	m.fp, m.viewOK = 0, false
	next := m.spare[:0]
	var firstErr error
	m.steps++
	var buf [4]result
	rs := buf[:0]
	lostAdded := false
	for _, c := range m.cands {
		c.stepN = m.steps
		// Cloned before the step: the candidate is stepped in place.
		lost := lostMessage(c, op, got)
		consistent := false
		// Every candidate is stepped in place (run puts back one whose
		// step forks): a model cloned from this one holds copies.
		rs = run(rs[:0], c, op, got, false, true)
		for _, r := range rs {
			m.consulted.union(&r.m.touched)
			m.consulted.union(&r.m.asked)
			if r.err != nil {
				// An inconclusive candidate outranks a deviating one: had
				// the device answered, that candidate might have agreed.
				if firstErr == nil || IsInconclusive(r.err) || (isDeviation(r.err) && !isDeviation(firstErr) && !IsInconclusive(firstErr)) {
					firstErr = r.err
				}
				continue
			}
			next = append(next, r.m)
			consistent = true
		}
		if consistent && lost != nil {
			next = append(next, lost)
			lostAdded = true
		}
	}
	if len(next) > 1 && (len(m.relaxed) > 0 || lostAdded) {
		// Only a relaxed rule's departures, or a message that may have
		// been lost, can lead two candidates to one state: otherwise every
		// candidate decided the profile's open fields its own way (picks),
		// and no two share a state.
		next = dedupe(next)
	}
	if w := m.beamWidth(); len(next) > w && len(m.relaxed) > 0 {
		// Relaxed rules can explain one observation many ways: keep the
		// most systematic explanations (machine.mixed), and among those
		// the most parsimonious (fewest departures).
		score := make(map[*machine]int, len(next))
		for _, c := range next {
			score[c] = c.mixed()
		}
		slices.SortStableFunc(next, func(a, b *machine) int {
			if d := score[a] - score[b]; d != 0 {
				return d
			}
			return len(a.faults) - len(b.faults)
		})
		next = next[:w]
		m.pruned = true
	}
	if len(next) > maxCandidates {
		return fmt.Errorf("model: %d candidates after %s: the profile has too many open choices", len(next), op)
	}
	clear(m.cands)
	m.spare, m.cands = m.cands[:0], next
	if len(next) == 0 {
		var d *Deviation
		if errors.As(firstErr, &d) {
			d.fill()
		}
		return firstErr
	}
	if got != nil {
		var seen ruleSet
		for _, c := range next {
			seen.union(&c.touched)
		}
		seen.each(func(r RuleID) { m.reached[r]++ })
	}
	return nil
}

// lostMessage returns, for a message whose peer heard nothing back
// (PeerSilent) where the model allows that (silentPeer), the candidate in which the message never reached the
// receiver: every try of an RC sender can be lost on a busy host, and the
// transport then gives up with the receiver untouched. The model's own
// path for the step (an error the receiver raised, or a WR it took) stays
// a candidate beside it; which one the device took shows in what follows.
// A timer is not evidence of either. nil for any other step.
func lostMessage(c *machine, op Op, got *Observation) *machine {
	if got == nil || got.Peer != PeerSilent {
		return nil
	}
	if _, ok := op.(Arrive); !ok {
		return nil
	}
	lost := c.clone()
	lost.cursor, lost.touched, lost.asked = 0, ruleSet{}, ruleSet{}
	return lost
}

// fingerprintSeed seeds candidate fingerprints for the process.
var fingerprintSeed = maphash.MakeSeed()

// dedupe keeps one candidate per state, the one with the fewest departures.
func dedupe(cs []*machine) []*machine {
	at := make(map[uint64]int, len(cs))
	out := cs[:0:0]
	for _, c := range cs {
		k := c.fingerprint(fingerprintSeed)
		if i, ok := at[k]; ok {
			if len(c.faults) < len(out[i].faults) {
				out[i] = c
			}
			continue
		}
		at[k] = len(out)
		out = append(out, c)
	}
	return out
}

func isDeviation(err error) bool {
	var d *Deviation
	return errors.As(err, &d)
}

// Clone returns an independent copy of m, for a search that tries several
// next steps from one state (package linearize). The copy shares nothing
// it could change with m.
func (m *Model) Clone() *Model {
	n := *m
	n.cands = make([]*machine, len(m.cands))
	for i, c := range m.cands {
		n.cands[i] = c.clone()
	}
	// n.history is shared: a stepList is never written, only extended.
	n.qpv = nil // each model its own: View writes it
	n.scratch, n.spare = nil, nil
	return &n
}

// Fingerprint hashes the state of every candidate, in no particular
// order: two models with the same fingerprint accept the same
// observations from here on (within the process; the hash is seeded).
func (m *Model) Fingerprint() uint64 {
	if m.fp != 0 {
		return m.fp
	}
	var sum uint64
	for _, c := range m.cands {
		// A sum of the candidates' hashes: order-free, and candidates are
		// deduplicated, so no two cancel out.
		sum += c.fingerprint(fingerprintSeed)
	}
	m.fp = sum ^ uint64(len(m.cands))
	if m.fp == 0 {
		m.fp = 1
	}
	return m.fp
}

// Narrow keeps m's relaxed rules to the misbehaviours their fault points
// foresee: none of the departures a relaxed rule adopts where they show
// (a completion's field excused by the rules at stake, a WR fetched out of
// order or left out of the queue). A search that keeps every state it
// reaches (package concurrent) asks for it: the broad relaxations admit
// so many interleavings that its states fill the memory.
func (m *Model) Narrow() {
	for _, c := range m.cands {
		c.narrow = true
	}
}

// Beam returns a copy of m that keeps at most n candidates from here on
// (a relaxed model splits at every fault point); it drops first those
// that took a departure only some of the time, then those with the most.
func (m *Model) Beam(n int) *Model {
	c := m.Clone()
	c.width = n
	return c
}

// Candidates returns how many candidate machines remain.
func (m *Model) Candidates() int { return len(m.cands) }

// Resolved returns, for each field left open in p, the values still
// possible after the observations so far.
func (m *Model) Resolved(p Profile) map[string][]string {
	out := map[string][]string{}
	for _, name := range p.OpenFields() {
		var seen []string
		for _, c := range m.cands {
			for _, v := range c.prof.values(name) {
				if !slices.Contains(seen, v) {
					seen = append(seen, v)
				}
			}
		}
		out[name] = seen
	}
	return out
}

// Outstanding returns the number of WRs in the SRQ (first candidate).
func (m *Model) Outstanding() int {
	if len(m.cands) == 0 {
		return 0
	}
	return len(m.cands[0].queue)
}

// View is a read-only summary of the model's state that generators use to
// pick operations valid in the current state. It describes the first
// candidate, and says where the candidates disagree on what decides whether
// an operation can be predicted at all: a QP's state, and whether it is
// filling a WR. A generator must issue only operations valid in every
// candidate (QPStateSure, FillingAll, FillingAny).
type View struct {
	Created bool
	// Destroyed says destroy_srq succeeded: only polls remain.
	Destroyed   bool
	Capacity    uint32
	MaxSGE      uint32
	Outstanding int
	Occupied    int
	Armed       bool
	Limit       uint32
	SRQError    bool
	QPTypes     []QPType
	QPStates    []QPState
	QPGone      []bool // destroyed QPs
	// Filling says the QP owes the rest of a message: a first packet took
	// a WR, which it is filling or which a flush took (ArriveRest).
	Filling []bool
	// QPStateSure says every candidate has the QP in QPStates' state;
	// FillingAny and FillingAll say whether some or every candidate has it
	// filling a WR.
	QPStateSure []bool
	// MinOutstanding is the fewest WRs any candidate has in the SRQ, and
	// SRQErrorAny whether any has the SRQ in error.
	MinOutstanding int
	SRQErrorAny    bool
	FillingAny     []bool
	FillingAll     []bool
	KeysValid      []bool
	HeadBytes      uint64 // sum of the head WR's SGE lengths, 0 counted as 0
	// HeadZeroPastFirst says the head WR has an SGE of length 0 after its
	// first.
	HeadZeroPastFirst bool
	CQ                int // completions waiting to be polled
	Events            int // events waiting to be collected
	Candidates        int
}

// View returns the state summary. Its slices are shared with other Views:
// read them, do not write them.
func (m *Model) View() View {
	if len(m.cands) == 0 {
		return View{}
	}
	if !m.viewOK {
		m.view, m.viewOK = m.newView(), true
	}
	return m.view
}

// newView computes the View.
func (m *Model) newView() View {
	c := m.cands[0]
	v := View{Created: c.created, Destroyed: c.destroyed, Capacity: c.capacity, MaxSGE: c.maxSGE, Outstanding: len(c.queue),
		Occupied: c.occupied(), Armed: c.armed, Limit: c.limit, SRQError: c.srqErr,
		KeysValid: m.view.KeysValid, CQ: len(c.cq), Events: len(c.events), Candidates: len(m.cands)}
	if !slices.Equal(v.KeysValid, c.keys[:]) {
		v.KeysValid = clip(slices.Clone(c.keys[:])) // Views share it: a change is a new array
	}
	if len(c.queue) > 0 {
		for i, sg := range c.queue[0].wr.SGEs {
			v.HeadBytes += uint64(sg.Length)
			v.HeadZeroPastFirst = v.HeadZeroPastFirst || (i > 0 && sg.Length == 0)
		}
	}
	v.MinOutstanding = len(c.queue)
	for _, o := range m.cands {
		v.MinOutstanding = min(v.MinOutstanding, len(o.queue))
		v.SRQErrorAny = v.SRQErrorAny || o.srqErr
	}
	m.qpView(&v)
	return v
}

// CheckInvariants checks the model's own laws on every candidate:
// the count never exceeds max_wr, posted = outstanding + fetched, at most one
// limit event per arming, and no wr_id completes twice.
func (m *Model) CheckInvariants() error {
	for i, c := range m.cands {
		if err := c.invariants(); err != nil {
			return fmt.Errorf("candidate %d: %w", i, err)
		}
	}
	return nil
}

func (c *machine) invariants() error {
	if c.capExact && c.occupied() > int(c.capacity) && !c.relaxed(RulePostFull) {
		return fmt.Errorf("INV-COUNT: %d slots in use, max_wr %d", c.occupied(), c.capacity)
	}
	if c.posted != len(c.queue)+c.fetched {
		return fmt.Errorf("INV-CONSERVE: posted %d != outstanding %d + fetched %d", c.posted, len(c.queue), c.fetched)
	}
	if c.firesThisArming > 1 && !c.relaxed(RuleLimitOnce) {
		return fmt.Errorf("INV-LIMIT-ONCE: %d limit events for one arming", c.firesThisArming)
	}
	seen := map[uint64]bool{}
	for _, id := range c.completedHistory {
		if seen[id] {
			return fmt.Errorf("INV-ONCE: wr_id %d completed twice", id)
		}
		seen[id] = true
	}
	if c.held < 0 || c.held > c.fetched {
		return fmt.Errorf("INV-HELD: %d held slots with %d fetched", c.held, c.fetched)
	}
	return nil
}
