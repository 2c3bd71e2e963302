package model

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math/bits"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// NumKeys is how many memory keys (registered regions) an SRQ's WRs can name.
// The driver registers them when the SRQ is created.
const NumKeys = 2

// UDHeader is the GRH area at the start of every UD receive buffer.
const UDHeader = 40

// TwoGiB is what an SGE length of 0 stands for in the documented semantics.
const TwoGiB = 1 << 31

// entry is a posted WR as the SRQ holds it: a copy, never the caller's memory.
type entry struct {
	wr WR
	// loose marks a WR whose contents the model no longer knows (a relaxed
	// POST-COPY device kept the caller's scribbled WR): its completion is
	// checked for wr_id and QP only.
	loose bool
}

// qp is one attached QP.
type qp struct {
	typ     QPType
	state   QPState
	pending []Message // messages buffered before RTR (BeforeRTR == Buffered)
	filling *inflight // a WR fetched for a message whose rest has not arrived
	// restOwed says the QP went to ERR while filling a WR: the WR was
	// flushed, and the rest of its message is still to come, to a QP
	// that takes nothing (arriveRest). A reset abandons it.
	restOwed bool
	// repeatOK says the QP met packets in ERR since the last poll, so a
	// PerPacket device may have raised LAST_WQE_REACHED for them.
	repeatOK bool
	// gone says the QP was destroyed: it no longer counts as attached.
	gone bool
	// stuck says a relaxed QP-FETCH-STATES adopted that this QP, in RTS,
	// takes no WR: until its state changes it takes none.
	stuck bool
}

// owesRest says a message's first packet reached the QP and its rest has
// not: the QP is filling the WR it took, or a flush took that WR.
func (q *qp) owesRest() bool { return q.filling != nil || q.restOwed }

type inflight struct {
	wr  WR
	msg Message
}

// cqe is a completion the CQ holds until it is polled, with the statuses the
// sources allow for it.
type cqe struct {
	c       Completion
	allowed StatusSet
	rule    RuleID // the rule at stake if the device's completion differs
	holds   bool   // it still holds an SRQ slot (SlotFree == FreeAtPoll)
	loose   bool   // only wr_id and QP are known (a departure made it)
	// another: the device handed the message another WR than the model
	// fetched (a relaxed FETCH-FIFO, seen in the sender's outcome): the
	// completion must show which.
	another bool
	// scatterLost: a departure made a message fit that the WR cannot hold,
	// so its bytes cannot all have landed.
	scatterLost bool
	// heldBack: a short poll left it in the CQ (a relaxed POLL-MAX): the
	// next poll for all the CQ holds must return it.
	heldBack bool
	// stake lists the specific rules that governed this completion's
	// fields (the GRH area of a UD message, a zero-length SGE, the fit
	// boundary, a key, immediate data): a departure in any of its fields
	// is theirs to explain before the catch-all RECV-COMPLETION's.
	stake []RuleID
	// moot lists the rules of stake whose departure could not have
	// changed whether the message fits (UD-GRH for a UD message too large
	// with no GRH area, or fitting with twice it): they govern its
	// byte_len and payload, not its status or what the sender heard.
	moot []RuleID
	// wr is the WR the model fetched for it (zero when none was).
	wr WR
}

// machine is the SRQ state under one decided profile.
type machine struct {
	// prof is the profile as this candidate decided it, shared read-only
	// with its clones: a fork gives the branch a copy of its own (run).
	prof *Profile
	caps Caps

	created bool
	// destroyed says destroy_srq succeeded: only polls remain.
	destroyed bool
	capacity  uint32 // max_wr as reported
	capExact  bool   // false while Capacity == CapacityAtLeast and no ENOMEM seen
	maxSGE    uint32
	queue     []entry // outstanding WRs, head first
	held      int     // fetched WRs still holding a slot until polled
	armed     bool
	limit     uint32 // what srq_limit reads
	srqErr    bool
	qps       qpTable
	keys      [NumKeys]bool // valid keys
	cq        []cqe
	events    []Event

	resized bool // a resize succeeded since the last query
	// wbWR and wbSGE are what a create whose write-back CREATE-ATTR
	// adopted reported (0: none, or a resize since): a query reading
	// them reads the SRQ "as created", which follows from that departure.
	wbWR, wbSGE uint32
	// queryWR is the max_wr a relaxed RESIZE-CAPACITY adopted as what
	// query reports since the last resize (0: none).
	queryWR uint32
	// errHolds says a relaxed SLOT-FREE adopted that error completions
	// hold their WR's slot until polled, where the profile frees at fetch.
	errHolds bool
	// resizeReq is the last accepted resize's request; resizeShort says
	// it was below the outstanding count, and the model rounded it up.
	resizeReq   uint32
	resizeShort bool
	// postOK and postOKStates record that a post was taken with the QPs
	// in the states postOKStates encodes (qpStates): a device that
	// refuses posts for its QPs' states would have refused that one too.
	postOK       bool
	postOKStates uint64
	// armLate is the limit of an arm the device took but, under a
	// relaxed LIMIT-ARM, did not arm at once (0: none): it may take
	// effect later, where a query or the limit's event shows it.
	armLate uint32
	// looseDisarm says a modify to limit 0, under a relaxed
	// LIMIT-DISARM, left the SRQ's arming unknown: LIMIT-DISARM governs
	// what follows a disarm, so one limit event may come at any fetch
	// until the SRQ is armed again.
	looseDisarm bool
	// sgeLoose says a modify, under a relaxed MODIFY-ONLY-MASKED,
	// changed max_sge too: maxSGE is what the device last showed of it
	// (a query, a post it refused or took), not what it was created with.
	sgeLoose bool
	// dying says a destroy refused under a relaxed DESTROY-BUSY left
	// the SRQ not working as before: it may refuse any post.
	dying bool

	threshold uint32 // the count below which an armed limit fires
	// limitFree says a relaxed LIMIT-BOUND took an arm above the bound:
	// what the device armed (the request, or a clamped value) is unknown
	// until a query reads it.
	limitFree bool
	// lateLimit is a limit event a relaxed LIMIT-FIRE let the device
	// raise late: a later fetch or poll raises it, or none does
	// (owedLimit). At 1 the SRQ disarmed at the fetch that should have
	// raised it; at 2 it stays armed until the event comes (a device
	// whose check runs late: it reads the limit until then).
	lateLimit int
	// createLimit is the srq_limit given at create, where a relaxed
	// CREATE-LIMIT let the create leave the SRQ unarmed: a later post
	// or resize may arm it all the same with that limit (a driver that
	// keeps the create's limit as a pending arming the next write of the
	// SRQ's context makes, whatever modifies came in between), or none
	// does.
	createLimit uint32
	// createLimitOver says a modify of srq_limit came after the create
	// while createLimit was pending: arming with the create's limit then
	// undoes what the modify promised too, a second departure.
	createLimitOver bool
	// readyInErr is QP n+1 when the step is a message that QP, in ERR,
	// processes as if it were ready (a relaxed QP-NOFETCH-STATES): an
	// error completion may take it into ERR again (enterErr). 0: none.
	// Cleared at every step.
	readyInErr int
	copyMode   int // POST-COPY: 0 undecided, 1 copies, copyCaller, copyGarbled
	fifoMode   int // FETCH-FIFO: 0 undecided, 1 head first, 2 newest first
	grhMode    int // UD-GRH: 0 undecided, 1 GRH area kept, 2 none
	// capRaisedFrom is the capacity the model knew before posts the
	// device took raised it to capRaisedTo (step_post.go classifyWR).
	capRaisedFrom, capRaisedTo uint32
	// capPinned is the capacity a post refused at full pinned (0: none
	// since).
	capPinned uint32
	// beforeRTRWays holds, 2 bits per QP state (RESET, INIT), type (RC,
	// UD) and kind of opcode (Write with Immediate or another), a relaxed
	// QP-BEFORE-RTR's fate for messages before RTR: 0 undecided, 1 the
	// profile's, 2 the other (beforeRTRFlipped).
	beforeRTRWays uint16
	// udFitFlip is how a relaxed RECV-FIT candidate misjudges UD messages
	// far from the boundary (misjudgedFar): 0 not yet, 1 fitting ones as too
	// large, 2 too large ones as fitting; udFitSGEs is the num_sge of the
	// WRs it misjudges, -1 for every WR.
	udFitFlip int8
	udFitSGEs int8
	// udKeyFlip: a relaxed RECV-BAD-KEY candidate fails valid keys on UD
	// (validKeyFailed).
	udKeyFlip bool
	orderMode int // POST-ORDER: 0 undecided, else orderFaithful, orderDropsPrefix or orderPostsSuffix
	leaked    int // fetched slots that never came back (SLOT-FREE relaxed)
	// recent holds the WRs fetched last, newest last, which a racing
	// fetch may hand out again (FETCH-ONCE relaxed; nil otherwise).
	recent []entry
	slack  int // how many more WRs a relaxed POST-FULL device holds than it should
	// stake gathers the specific rules that govern the message being
	// delivered (cqe.stake); the completion it makes takes them.
	stake []RuleID
	moot  []RuleID // the rules of stake that do not decide the fit (cqe.moot)
	// lastFetched is the WR the last fetch took (cqe.wr).
	lastFetched WR

	// settled says no step of this candidate can fork: nothing is
	// relaxed and every profile field is decided (open counts those
	// left). The model steps it in place (run), with no copy to go back
	// to.
	settled bool
	open    int

	// relaxation and diagnosis (relax.go)
	relax relaxSet // the relaxed rules, shared read-only; nil: none
	// narrow keeps a relaxed rule to its fault points: none of the
	// departures adopted where they show (broad). A history check, whose
	// search keeps every state it reaches, asks for it (Model.Narrow).
	narrow   bool
	faithful bool           // take no departure: the canonical outcome
	picks    []pickRec      // the open profile fields this candidate decided
	ownWidth map[string]int // opened fields: how many values the profile allows
	script   []int          // this step's fault decisions, taken in order
	cursor   int            // the next decision in script
	faults   []FaultUse     // departures this candidate took
	declines []RuleID       // the rules of the fault points where it kept to the rule
	touched  ruleSet        // rules whose checks ran in this step
	// asked are the rules this step consulted besides its checks: a
	// relaxed() query, a rule put at stake. With touched and the owners
	// of profile fields (fieldOwnerRules, whose reads are not tracked), they
	// are every rule whose relaxation could have changed the step.
	asked ruleSet
	stepN int // the number of the step being applied (1-based)

	// counters for the invariants
	posted, fetched  int
	firesThisArming  int
	completedHistory []uint64
}

func newMachine(p Profile, c Caps) *machine {
	open := openCount(&p)
	m := &machine{prof: &p, caps: c, capExact: true, open: open, settled: open == 0}
	for i := range m.keys {
		m.keys[i] = true
	}
	return m
}

// clone returns an independent copy. Append-only slices share their backing
// arrays with capacity clipped, so an append on either side reallocates.
func (m *machine) clone() *machine {
	n := *m
	n.detach()
	m.qps.tok = 0 // m shares its QPs from here on: its next write copies
	return &n
}

// detach clips m's append-only slices and makes its QP table copy on
// write, so that whatever m shares with a machine cloned from it or into
// it stays as that machine sees it.
func (m *machine) detach() {
	m.queue = clip(m.queue)
	m.recent = clip(m.recent)
	m.cq = clip(m.cq)
	m.events = clip(m.events)
	m.completedHistory = clip(m.completedHistory)
	m.faults = clip(m.faults)
	m.declines = clip(m.declines)
	m.picks = clip(m.picks)
	m.script = clip(m.script)
	m.stake = clip(m.stake)
	m.moot = clip(m.moot)
	m.qps = m.qps.clone()
}

func clip[T any](s []T) []T { return s[:len(s):len(s)] }

// occupied is the number of slots in use: outstanding WRs, plus fetched WRs
// whose completions have not been polled where the profile frees slots then.
func (m *machine) occupied() int { return len(m.queue) + m.held + m.leaked }

// fork is raised by pick when a step depends on an open profile choice; the
// Model then splits the candidate, one per allowed value, and re-runs it.
type fork struct {
	field  string
	n      int
	decide func(p *Profile, i int)
}

// pick returns the decided value of a profile choice, or forks.
func pick[T comparable](m *machine, name string, f func(*Profile) *Choice[T]) T {
	c := f(m.prof)
	if len(c.vals) == 1 {
		return c.vals[0]
	}
	panic(fork{field: name, n: len(c.vals), decide: func(p *Profile, i int) {
		fc := f(p)
		*fc = One(fc.vals[i])
	}})
}

// Accessors for every forkable profile field.
func (m *machine) checkOrder() CheckOrder {
	return pick(m, "CheckOrder", func(p *Profile) *Choice[CheckOrder] { return &p.CheckOrder })
}
func (m *machine) postErrno() ErrnoSign {
	return pick(m, "PostErrno", func(p *Profile) *Choice[ErrnoSign] { return &p.PostErrno })
}
func (m *machine) sgeLimit() SGELimit {
	return pick(m, "SGELimit", func(p *Profile) *Choice[SGELimit] { return &p.SGELimit })
}
func (m *machine) zeroSGE() Acceptance {
	return pick(m, "ZeroSGE", func(p *Profile) *Choice[Acceptance] { return &p.ZeroSGE })
}
func (m *machine) negativeSGE() Acceptance {
	return pick(m, "NegativeSGE", func(p *Profile) *Choice[Acceptance] { return &p.NegativeSGE })
}
func (m *machine) capacityReport() CapacityReport {
	return pick(m, "CapacityReport", func(p *Profile) *Choice[CapacityReport] { return &p.CapacityReport })
}
func (m *machine) capacityRule() CapacityRule {
	return pick(m, "Capacity", func(p *Profile) *Choice[CapacityRule] { return &p.Capacity })
}
func (m *machine) queryRule() QueryRule {
	return pick(m, "Query", func(p *Profile) *Choice[QueryRule] { return &p.Query })
}
func (m *machine) slotFree() SlotFree {
	return pick(m, "SlotFree", func(p *Profile) *Choice[SlotFree] { return &p.SlotFree })
}
func (m *machine) limitAtCreate() Acceptance {
	return pick(m, "LimitAtCreate", func(p *Profile) *Choice[Acceptance] { return &p.LimitAtCreate })
}
func (m *machine) limitBound() LimitBound {
	return pick(m, "LimitBound", func(p *Profile) *Choice[LimitBound] { return &p.LimitBound })
}
func (m *machine) armBelow() ArmBelow {
	return pick(m, "ArmBelow", func(p *Profile) *Choice[ArmBelow] { return &p.ArmBelow })
}
func (m *machine) limitAfterFire() LimitAfterFire {
	return pick(m, "LimitAfterFire", func(p *Profile) *Choice[LimitAfterFire] { return &p.LimitAfterFire })
}
func (m *machine) zeroLength() ZeroLength {
	return pick(m, "ZeroLength", func(p *Profile) *Choice[ZeroLength] { return &p.ZeroLength })
}
func (m *machine) beforeRTR() BeforeRTR {
	return pick(m, "BeforeRTR", func(p *Profile) *Choice[BeforeRTR] { return &p.BeforeRTR })
}
func (m *machine) emptyRC() EmptyRC {
	return pick(m, "EmptySRQRC", func(p *Profile) *Choice[EmptyRC] { return &p.EmptySRQRC })
}
func (m *machine) oversizeQP(t QPType) Fate {
	if t == UD {
		return pick(m, "OversizeUDQP", func(p *Profile) *Choice[Fate] { return &p.OversizeUDQP })
	}
	return pick(m, "OversizeRCQP", func(p *Profile) *Choice[Fate] { return &p.OversizeRCQP })
}
func (m *machine) keyCheck() KeyCheck {
	return pick(m, "KeyCheck", func(p *Profile) *Choice[KeyCheck] { return &p.KeyCheck })
}
func (m *machine) keyErrorQP(t QPType) Fate {
	if t == UD {
		return pick(m, "KeyErrorUDQP", func(p *Profile) *Choice[Fate] { return &p.KeyErrorUDQP })
	}
	return pick(m, "KeyErrorRCQP", func(p *Profile) *Choice[Fate] { return &p.KeyErrorRCQP })
}
func (m *machine) resize() ResizeSupport {
	return pick(m, "Resize", func(p *Profile) *Choice[ResizeSupport] { return &p.Resize })
}
func (m *machine) resizeBelowLimit() Acceptance {
	return pick(m, "ResizeBelowLimit", func(p *Profile) *Choice[Acceptance] { return &p.ResizeBelowLimit })
}
func (m *machine) lastWQE() Raised {
	return pick(m, "LastWQE", func(p *Profile) *Choice[Raised] { return &p.LastWQE })
}
func (m *machine) postRecvBadWR() BadWRReport {
	return pick(m, "PostRecvBadWR", func(p *Profile) *Choice[BadWRReport] { return &p.PostRecvBadWR })
}
func (m *machine) qpRecvCaps() RecvCapsCheck {
	return pick(m, "QPRecvCaps", func(p *Profile) *Choice[RecvCapsCheck] { return &p.QPRecvCaps })
}
func (m *machine) lastWQERepeat() Repeat {
	return pick(m, "LastWQERepeat", func(p *Profile) *Choice[Repeat] { return &p.LastWQERepeat })
}
func (m *machine) errorEvent() Raised {
	return pick(m, "ErrorEvent", func(p *Profile) *Choice[Raised] { return &p.ErrorEvent })
}
func (m *machine) flushInProgress() Raised {
	return pick(m, "FlushInProgress", func(p *Profile) *Choice[Raised] { return &p.FlushInProgress })
}

// reportedCapacity is the max_wr a create or resize to req reports under a
// deterministic CapacityReport, or req for ReportAtLeast (the canonical pick).
func (m *machine) reportedCapacity(req uint32) uint32 {
	if m.capacityReport() == ReportPow2Less1 {
		return pow2Above(req) - 1
	}
	return req
}

// realCapacity is how many WRs a create or resize to req holds, where the
// profile says so regardless of the report; otherwise the report's value.
func (m *machine) realCapacity(req uint32) uint32 {
	if m.capacityRule() == CapacityPow2 {
		return pow2Above(req) - 1
	}
	return m.reportedCapacity(req)
}

// pow2Above is the smallest power of two greater than n.
func pow2Above(n uint32) uint32 {
	return 1 << bits.Len32(n)
}

// postErr turns a positive errno into what a post returns under the profile.
func (m *machine) postErr(e int) int {
	switch m.postErrno() {
	case ErrnoNegative:
		return -e
	case ErrnoMinusOne:
		return -1
	}
	return e
}

// sgeBytes is what one SGE can hold.
func (m *machine) sgeBytes(s SGE) uint64 {
	if s.Length == 0 && m.zeroLength() == ZeroIs2GiB {
		return TwoGiB
	}
	return uint64(s.Length)
}

// capacityOf is the WR's total scatter length.
func (m *machine) capacityOf(w WR) uint64 {
	var total uint64
	for _, s := range w.SGEs {
		total += m.sgeBytes(s)
	}
	return total
}

// stakeOn puts rule at stake in the message being delivered (cqe.stake).
func (m *machine) stakeOn(rule RuleID) {
	m.stake = append(m.stake, rule)
	m.asked.add(rule)
}

func (m *machine) fire(ev EventType, qpn int) {
	m.events = append(m.events, Event{Type: ev, QP: qpn})
}

// checkLimit fires the limit event if a fetch left fewer WRs than the limit.
// Relaxed LIMIT-FIRE lets the event come at the count equal to the limit,
// or at any fetch above it (a miscount), late, or not at all.
func (m *machine) checkLimit() {
	m.owedLimit()
	if m.lateLimit == 2 {
		return // the check that runs late is owed already
	}
	if !m.armed {
		if m.looseDisarm && m.may(RuleLimitDisarm) {
			// The disarm left the SRQ armed at some level: its event.
			m.looseDisarm = false
			m.fire(EventSRQLimitReached, -1)
		}
		return
	}
	below := uint32(len(m.queue)) < m.threshold
	if below {
		switch m.choose(RuleLimitFire, 3) {
		case 1:
			below = false // never raised: still armed
		case 2:
			m.fireLate() // raised late: disarmed now, the event later
			return
		}
	} else if uint32(len(m.queue)) == m.threshold {
		if len(m.queue) > 0 && m.relaxedBroad(RulePostOrder) && m.branch(2) == 1 && m.leftOut(-1) {
			// A WR a post took never reached the device's queue
			// (POST-ORDER's departure): the count is below the limit.
			below = true
		} else if m.may(RuleLimitFire) {
			below = true // raised at the limit, not below it
		}
	} else if m.may(RuleLimitFire) {
		below = true // fired early: the device miscounts
	}
	if below {
		m.fireLimit()
	}
}

// owedLimit raises the limit event a relaxed LIMIT-FIRE let come late
// (lateLimit), now or not yet: a device raises it when what it waited for
// happens (the next fetch, the end of a message it counted, a poll), or
// never. The lateness was the departure (fireLate): when the event comes
// is what it left open.
func (m *machine) owedLimit() {
	if m.lateLimit > 0 && m.branch(2) == 1 {
		if m.lateLimit == 2 {
			m.disarmOnFire()
		}
		m.lateLimit = 0
		m.fire(EventSRQLimitReached, -1)
	}
}

// dropLateCheck forgets a late check of the arming a modify replaced
// (lateLimit 2): the device checks the new arming.
func (m *machine) dropLateCheck() {
	if m.lateLimit == 2 {
		m.lateLimit = 0
	}
}

// fireLate is fireLimit with the event owed to a later step (owedLimit):
// the SRQ disarms now, or when the event comes (a check that runs late).
func (m *machine) fireLate() {
	if m.branch(2) == 1 {
		m.lateLimit = 2
		return
	}
	m.lateLimit = 1
	m.disarmOnFire()
}

// fireLimit raises the limit event and disarms. Relaxed LIMIT-ONCE lets the
// SRQ stay armed, so that it fires again at the next fetch below.
func (m *machine) fireLimit() {
	m.fire(EventSRQLimitReached, -1)
	m.disarmOnFire()
}

// disarmOnFire is what a limit event does to the SRQ, raised or owed.
func (m *machine) disarmOnFire() {
	m.firesThisArming++
	m.armed = m.may(RuleLimitOnce)
	m.touch(RuleLimitAfterFire)
	if m.limitAfterFire() == LimitReadsZero {
		m.limit = 0
	}
}

// complete queues a completion for a fetched WR.
// Under FreeAtPoll the WR's slot, held since fetch, frees when this
// completion is polled.
func (m *machine) complete(c Completion, allowed StatusSet, rule RuleID) {
	m.completeLoose(c, allowed, rule, false)
}

// completeLoose queues a completion of which, when loose, only the wr_id
// and QP are known.
func (m *machine) completeLoose(c Completion, allowed StatusSet, rule RuleID, loose bool) {
	holds := m.slotFree() == FreeAtPoll
	if !holds && !loose && !allowed.Has(WCSuccess) && m.relaxedBroad(RuleSlotFree) && (m.errHolds || m.may(RuleSlotFree)) {
		// SLOT-FREE governs when a fetched WR's slot frees: relaxed, an
		// error completion's slot may stay held until it is polled where
		// the profile frees slots at fetch (an error path that gives the
		// slot back only at poll). One departure: the device's error
		// completions hold their slots from then on.
		holds, m.errHolds = true, true
		m.held++
	}
	e := cqe{c: c, allowed: allowed, rule: rule, holds: holds, loose: loose}
	if m.relax != nil {
		// What only a relaxed rule reads: a model with none relaxed (a
		// run's, or a history check's with its many states) keeps its
		// completions small.
		e.stake, e.moot = m.stake, m.moot
		if m.lastFetched.ID == c.WRID {
			e.wr = m.lastFetched
		}
	}
	m.cq = append(m.cq, e)
	m.stake, m.moot = nil, nil
	m.completedHistory = append(m.completedHistory, c.WRID)
}

// enterErr moves a QP to ERR, with the flush and event the profile says.
func (m *machine) enterErr(n int) {
	q := m.qps.mut(n)
	if q.state == Err {
		if m.readyInErr == n+1 && m.lastWQE() == Raise && m.branch(2) == 1 {
			// A QP in ERR that processed a message as if it were
			// ready (QP-NOFETCH-STATES' departure) may also enter ERR
			// again as a ready one would: its event once more.
			m.fire(EventQPLastWQEReached, n)
		}
		return
	}
	m.qps.setState(n, Err)
	q.pending = nil
	m.flushFilling(n, q)
	m.touch(RuleQPLastWQE)
	if m.lastWQE() == Raise {
		m.fire(EventQPLastWQEReached, n)
	}
}

// flushFilling ends the WR QP n (q) was filling as it enters ERR, as the
// profile says: flushed, or vanished.
func (m *machine) flushFilling(n int, q *qp) {
	if q.filling != nil {
		m.touch(RuleQPFlushInProgress)
		if m.flushInProgress() == Raise {
			allowed := Statuses(WCWRFlushErr)
			if m.relaxed(RuleQPFlushInProgress) {
				allowed = AnyError | Statuses(WCSuccess) // any status, as a departure
			}
			m.completeLoose(Completion{WRID: q.filling.wr.ID, Status: WCWRFlushErr, QP: n}, allowed, RuleQPFlushInProgress, m.relaxed(RuleQPFlushInProgress))
		} else if m.slotFree() == FreeAtPoll {
			m.held-- // the WR vanished: no completion will free its slot
		}
		q.filling, q.restOwed = nil, true
	}
}

// legalTransition is the QP state table of ibv_modify_qp (the kernel's
// qp_state_table in drivers/infiniband/core/verbs.c): any state may go to
// RESET, any but RESET to ERR; SQE is left only for RTS; no modify enters SQE.
func legalTransition(from, to QPState) bool {
	if to == Reset {
		return true
	}
	if to == Err {
		return from != Reset
	}
	switch from {
	case Reset:
		return to == Init
	case Init:
		return to == Init || to == RTR
	case RTR:
		return to == RTS
	case RTS:
		return to == RTS || to == SQD
	case SQD:
		return to == SQD || to == RTS
	case SQE:
		return to == RTS
	}
	return false
}

func (m *machine) String() string {
	return fmt.Sprintf("capacity=%d outstanding=%d held=%d armed=%v limit=%d", m.capacity, len(m.queue), m.held, m.armed, m.limit)
}

// fingerprint hashes everything that decides a candidate's future: two
// candidates with the same fingerprint accept the same observations from
// here on, so the model keeps one of them.
func (m *machine) fingerprint(seed maphash.Seed) uint64 {
	return m.hashState(seed, true)
}

// hashState hashes the state, and with picks the open fields the machine
// decided (which value each took).
//
// The state is written to a buffer and hashed once: dedupe fingerprints
// every candidate of a relaxed model at every step, and hashing value by
// value (maphash.WriteComparable) was most of a long diagnosis's time.
func (m *machine) hashState(seed maphash.Seed, withPicks bool) uint64 {
	bp := hashBufs.Get().(*[]byte)
	buf := m.appendState((*bp)[:0], withPicks)
	h := maphash.Bytes(seed, buf)
	*bp = buf
	hashBufs.Put(bp)
	return h
}

// appendState appends the state hashState hashes to buf.
func (m *machine) appendState(buf []byte, withPicks bool) []byte {
	w := func(vs ...uint64) {
		for _, v := range vs {
			buf = binary.LittleEndian.AppendUint64(buf, v)
		}
	}
	b := func(x bool) uint64 {
		if x {
			return 1
		}
		return 0
	}
	if withPicks {
		var parr [16]pickRec
		picks := append(parr[:0], m.picks...)
		slices.SortFunc(picks, func(a, b pickRec) int { return strings.Compare(a.field, b.field) })
		for _, p := range picks {
			w(uint64(len(p.field)))
			buf = append(buf, p.field...)
			w(uint64(p.i))
		}
	}
	w(b(m.created), b(m.destroyed), uint64(m.capacity), b(m.capExact), uint64(m.maxSGE), uint64(m.held), b(m.armed),
		uint64(m.limit), uint64(m.threshold), b(m.srqErr), uint64(m.copyMode), uint64(m.fifoMode), uint64(m.grhMode), uint64(m.capRaisedFrom), uint64(m.capRaisedTo), uint64(m.capPinned), uint64(m.beforeRTRWays), uint64(m.udFitFlip)|uint64(uint8(m.udFitSGEs))<<8, b(m.udKeyFlip), uint64(m.orderMode), uint64(m.leaked), uint64(int64(m.slack)),
		b(m.resized), uint64(m.wbWR), uint64(m.wbSGE), uint64(m.queryWR), uint64(m.resizeReq), b(m.resizeShort), b(m.errHolds), b(m.postOK), m.postOKStates, uint64(m.armLate), b(m.looseDisarm)|b(m.sgeLoose)<<1|b(m.dying)<<2, b(m.limitFree), uint64(m.lateLimit), uint64(m.createLimit)|b(m.createLimitOver)<<32, uint64(m.posted), uint64(m.fetched), uint64(m.firesThisArming))
	w(uint64(len(m.queue)))
	for _, e := range m.queue {
		w(e.wr.ID, uint64(int64(e.wr.NumSGE)), b(e.loose))
		for _, s := range e.wr.SGEs {
			w(uint64(s.Length), uint64(int64(s.Key)))
		}
	}
	w(uint64(len(m.recent)))
	for _, e := range m.recent {
		w(e.wr.ID)
	}
	w(uint64(len(m.cq)))
	for _, e := range m.cq {
		c := e.c
		w(c.WRID, uint64(c.Status), uint64(c.Opcode), uint64(c.ByteLen), b(c.HasImm), uint64(c.Imm), uint64(c.QP),
			uint64(e.allowed), b(e.holds), b(e.loose), b(e.another), b(e.scatterLost), b(e.heldBack))
		w(uint64(e.rule))
	}
	w(uint64(len(m.events)))
	for _, e := range m.events {
		w(uint64(e.Type), uint64(int64(e.QP)))
	}
	w(uint64(m.qps.len()))
	for i := range m.qps.len() {
		q := m.qps.at(i)
		w(uint64(q.typ), uint64(q.state), b(q.repeatOK), b(q.gone), b(q.stuck), b(q.restOwed), uint64(len(q.pending)))
		for _, p := range q.pending {
			w(uint64(p.Opcode), uint64(p.Len), uint64(p.Imm))
		}
		if q.filling != nil {
			w(1, q.filling.wr.ID, uint64(q.filling.msg.Len), uint64(q.filling.msg.Opcode))
			for _, s := range q.filling.wr.SGEs {
				w(uint64(s.Length), uint64(int64(s.Key)))
			}
		} else {
			w(0)
		}
	}
	for _, k := range m.keys {
		w(b(k))
	}
	w(uint64(len(m.completedHistory)))
	for _, id := range m.completedHistory {
		w(id)
	}
	return buf
}

// stateWords is how many words hashState writes without picks: the
// size of the state, which is what a step of the candidate costs in a
// diagnosis (its clone, its fingerprint). TestStateWordsIsWhatHashStateWrites
// keeps it in step with hashState.
func (m *machine) stateWords() int {
	n := 39 + 1 + len(m.recent) + 1 + 14*len(m.cq) + 1 + 2*len(m.events) + len(m.keys) + 1 + len(m.completedHistory)
	n++
	for _, e := range m.queue {
		n += 3 + 2*len(e.wr.SGEs)
	}
	n++
	for i := range m.qps.len() {
		q := m.qps.at(i)
		n += 7 + 3*len(q.pending) + 1
		if q.filling != nil {
			n += 3 + 2*len(q.filling.wr.SGEs)
		}
	}
	return n
}

// stepWeight is what one step of the candidate is charged in a metered
// diagnosis (Meter): 1 for a state of up to about 120 words, the most
// the suite's short traces make, and one more for every 80 words past
// that, so that the allowance bounds time on long traces too (a state of
// 25 outstanding WRs takes about three times as long to step).
func (m *machine) stepWeight() int {
	return max(1, (m.stateWords()+40)/80)
}

// hashBufs holds hashState's buffers: a state of many WRs takes several
// kilobytes, and growing a fresh buffer to that size for every candidate
// at every step was a fifth of a long diagnosis's time.
var hashBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// pickRec is one open profile field a candidate decided, and the value's
// index: candidates that decided the same fields alike share a profile.
type pickRec struct {
	field string
	i     int
}

// choiceVals indexes, in Profile, the value list (Choice.vals) of every
// Choice field.
var choiceVals = func() [][]int {
	t, ct := reflect.TypeFor[Profile](), reflect.TypeFor[choice]()
	var out [][]int
	for i := range t.NumField() {
		if t.Field(i).Type.Implements(ct) {
			out = append(out, []int{i, 0})
		}
	}
	return out
}()

// openCount is how many of p's fields are open (len(p.OpenFields())),
// counted without boxing a field: the model counts them for every case.
func openCount(p *Profile) int {
	v := reflect.ValueOf(p).Elem()
	n := 0
	for _, ix := range choiceVals {
		if v.FieldByIndex(ix).Len() > 1 {
			n++
		}
	}
	return n
}
