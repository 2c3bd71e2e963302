package emu

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"syscall"

	"github.com/srqconform/srqconform/drivers"
)

// wqe is one receive WQE as it sits in a ring slot.
type wqe struct {
	id   uint64
	sges []drivers.SGE
	// src is set by the keep-caller-wr mutant: the slot then refers to the
	// caller's WR and reads it only when fetched.
	src  *drivers.RecvWR
	nsge int
	// holds says the WQE's slot stays in use until its completion is polled.
	holds bool
}

// cqe is one entry of the completion queue.
type cqe struct {
	drivers.Completion
	holds bool // polling it frees a ring slot (free-at-poll)
}

// region is a registered memory region: key index -> valid flag, and the
// bytes the responder scattered into it.
type region struct {
	valid bool
	buf   []byte
}

// srq is one shared receive queue with its CQ, event queue, regions and QPs.
// Every field is guarded by dev.mu.
type srq struct {
	dev    *device
	cfg    *config
	closed bool
	// destroyed says Destroy succeeded: the SRQ is gone, its CQ and event
	// queue stay until Close.
	destroyed bool

	// The WQE ring. prod is the producer index the doorbell publishes, cons
	// the consumer index the responder advances; both run freely and are
	// taken modulo len(ring), a power of two.
	ring       []wqe
	prod, cons uint32
	capacity   uint32 // max_wr as create and query report it
	hold       uint32 // slots that may be in use at once
	held       uint32 // fetched WQEs whose slot frees at poll (free-at-poll)
	leaked     uint32 // slots that never free (slot-leak)
	maxSGE     uint32

	armed      uint32 // the threshold the responder fires at; 0 disarmed
	shown      uint32 // the limit query reads
	firstLimit uint32 // the first limit ever armed (query-limit-stale)
	errored    bool

	regions []region
	cq      []cqe
	events  []drivers.Event
	qps     []*qp

	fetches   uint64 // WQEs fetched so far
	successes uint64 // successful completions written so far
	wraps     uint64 // times the producer index went round the ring
	st        stateful

	// fired counts the limit events raised, and inLimitWindow says a
	// limit check is in limit-race-twice's window (race mutants only).
	fired         uint64
	inLimitWindow bool
}

var _ drivers.SRQ = (*srq)(nil)

// sizes returns the capacity reported for a request of n WRs and the
// number of slots the ring lets be in use.
// rules: CREATE-ATTR, RESIZE-CAPACITY
func (s *srq) sizes(n uint32) (capacity, hold uint32) {
	switch {
	case s.cfg.has(CapacityPow2):
		c := roundupPow2(n+1) - 1
		return c, c
	case s.cfg.has(CapacityHidden):
		return n, roundupPow2(n)
	case s.cfg.has(CapacityPow2Unreported):
		return n, roundupPow2(n+1) - 1
	}
	return n, n
}

// outstanding is the number of posted WQEs not yet fetched.
// rules: RECV-RNR, LIMIT-FIRE
func (s *srq) outstanding() uint32 { return s.prod - s.cons }

// inUse is the number of ring slots not free for posting.
// rule: RESIZE-BELOW-COUNT
func (s *srq) inUse() uint32 { return s.outstanding() + s.held + s.leaked }

// fullAt is the number of slots in use at which a post fails with ENOMEM.
// rule: POST-FULL
func (s *srq) fullAt() uint32 {
	switch {
	case s.cfg.has(CapacityOneShort) && s.hold > 0:
		return s.hold - 1
	case s.cfg.has(CapacityOneOver):
		return s.hold + 1
	case s.cfg.has(WrapFullLate) && s.wrapped():
		return s.hold + 1
	}
	return s.hold
}

// errno converts a positive errno to the provider's return convention.
// rule: POST-RETURN
func (s *srq) errno(e int) int {
	switch {
	case s.cfg.has(ErrnoNegative):
		return -e
	case s.cfg.has(ErrnoMinusOne):
		return -1
	}
	return e
}

// keyValid says whether key names a registered, valid region.
// rule: RECV-BAD-KEY
func (s *srq) keyValid(key int) bool {
	return key >= 0 && key < len(s.regions) && s.regions[key].valid
}

// dead says the SRQ takes no verb: closed, or destroyed by Destroy.
// rule: DESTROY-BUSY
func (s *srq) dead() bool { return s.closed || s.destroyed }

// rule: none (only post-refused-in-err asks it)
func (s *srq) anyQPIn(st drivers.QPState) bool {
	for _, q := range s.qps {
		if !q.gone && q.state == st {
			return true
		}
	}
	return false
}

// Post writes the WRs into ring slots in order and rings the doorbell for
// those written; the first WR that fails stops the list.
// rule: POST-ORDER
func (s *srq) Post(wrs []drivers.RecvWR) (int, int) {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	// rule: DESTROY-BUSY
	if s.dead() {
		return s.errno(eINVAL), firstBad(wrs)
	}
	if s.cfg.has(NegativeSGEKills) && slices.ContainsFunc(wrs, func(w drivers.RecvWR) bool { return w.NumSGE < 0 }) {
		return drivers.KilledErrno + int(syscall.SIGSEGV), 0
	}
	if s.cfg.has(PostRefusedInErr) && s.anyQPIn(drivers.Err) && len(wrs) > 0 {
		return s.errno(eINVAL), 0
	}
	prod := s.prod
	if s.cfg.has(PostRaceLoses) && len(wrs) > 0 {
		cons := s.cons
		s.openWindow()
		if s.dead() {
			return s.errno(eINVAL), firstBad(wrs)
		}
		if s.cons != cons {
			prod = s.prod // a fetch came meanwhile: read again, nothing lost
		}
	}
	mask := uint32(len(s.ring) - 1)
	for i := range wrs {
		if e := s.check(&wrs[i], prod-s.cons+s.held+s.leaked); e != 0 {
			if !s.cfg.has(PostAllOrNothing) {
				s.prod = prod // doorbell: publish the WQEs written so far
			}
			// rule: POST-BADWR
			bad := i
			if s.cfg.has(BadWROffByOne) {
				bad++
			}
			// rules: POST-BADWR, POST-RETURN
			return s.errno(e), bad
		}
		// rule: FETCH-FIFO
		s.ring[prod&mask] = s.makeWQE(&wrs[i])
		prod++
		// rule: none (counts wraps for wrap-full-late)
		if prod&mask == 0 {
			s.wraps++
		}
	}
	s.prod = prod // doorbell
	// rule: POST-RETURN
	return 0, -1
}

// firstBad is bad_wr for a list that fails as a whole.
// rule: POST-BADWR
func firstBad(wrs []drivers.RecvWR) int {
	if len(wrs) == 0 {
		return -1
	}
	return 0
}

// check returns the errno posting wr fails with when inUse slots are taken,
// or 0.
// rule: POST-SGE
func (s *srq) check(wr *drivers.RecvWR, inUse uint32) int {
	// rule: POST-FULL
	full := inUse >= s.fullAt()
	n := wr.NumSGE
	maxN := int(s.maxSGE)
	if s.cfg.has(SGEAgainstDevice) {
		maxN = maxSRQSGE
	}
	if s.cfg.has(SGEOffByOne) {
		maxN++
	}
	badSGE := n > maxN || (n < 0 && !s.cfg.has(NegativeSGEAccepted)) || (n == 0 && s.cfg.has(RejectZeroSGE))
	if s.cfg.has(CheckSGEFirst) {
		if badSGE {
			return eINVAL
		}
		if full {
			return eNOMEM
		}
	} else {
		// rule: POST-FULL
		if full {
			return eNOMEM
		}
		if badSGE {
			return eINVAL
		}
	}
	if s.cfg.has(PostChecksKey) {
		for _, g := range wr.SGEs[:numSGE(wr)] {
			if !s.keyValid(g.Key) {
				return eINVAL
			}
		}
	}
	// rules: POST-FULL, POST-SGE
	return 0
}

// numSGE is the number of SGEs of wr the device reads: NumSGE bounded by
// the slice, a negative count reading none.
// rules: RECV-FIT, RECV-NUMSGE0
func numSGE(wr *drivers.RecvWR) int {
	return max(0, min(wr.NumSGE, len(wr.SGEs)))
}

// makeWQE copies wr into a WQE.
// rules: POST-COPY, RECV-COMPLETION
func (s *srq) makeWQE(wr *drivers.RecvWR) wqe {
	if s.cfg.has(KeepCallerWR) {
		return wqe{src: wr, nsge: wr.NumSGE}
	}
	return wqe{id: wr.ID, sges: append([]drivers.SGE(nil), wr.SGEs[:numSGE(wr)]...)}
}

// fetch takes the head WQE (the tail under lifo), accounts for its slot
// and checks the limit. The caller has made sure one is outstanding.
// rule: FETCH-FIFO
func (s *srq) fetch() wqe {
	mask := uint32(len(s.ring) - 1)
	var i uint32
	if s.cfg.has(LIFO) {
		s.prod--
		i = s.prod & mask
	} else {
		i = s.cons & mask
		if s.cfg.has(FetchRaceTwice) {
			c, seen := s.cons, s.ring[i]
			s.openWindow()
			if s.cons != c {
				// Another QP took it meanwhile: this one takes it too.
				return s.fetched(seen)
			}
		}
		// rule: FETCH-ONCE
		s.cons++
	}
	w := s.ring[i]
	// rule: FETCH-ONCE
	s.ring[i] = wqe{}
	return s.fetched(w)
}

// fetched finishes a fetch of w: the WR copied out of the caller's memory
// where the SRQ kept a reference, the slot accounting, the limit check.
// rule: LIMIT-FIRE
func (s *srq) fetched(w wqe) wqe {
	// rule: none (only keep-caller-wr sets src)
	if w.src != nil {
		n := max(0, min(w.nsge, len(w.src.SGEs)))
		w = wqe{id: w.src.ID, sges: append([]drivers.SGE(nil), w.src.SGEs[:n]...)}
	}
	// rule: none (counts fetches for slot-leak)
	s.fetches++
	switch {
	case s.cfg.has(SlotLeak) && s.fetches%4 == 0:
		s.leaked++
	case s.cfg.has(FreeAtPoll):
		s.held++
		w.holds = true
	}
	s.checkLimit()
	return w
}

// release frees the slot of a fetched WQE that will get no completion.
// rule: SLOT-FREE
func (s *srq) release(w wqe) {
	if w.holds {
		s.held--
	}
}

// arm arms the limit at l (non-zero): the level checkLimit fires below.
// rules: LIMIT-ARM, QUERY-LIMIT, LIMIT-FIRE
func (s *srq) arm(l uint32) {
	s.armed, s.shown = l, l
	// rule: none (remembers the first limit for query-limit-stale)
	if s.firstLimit == 0 {
		s.firstLimit = l
	}
}

// checkLimit fires the limit if the outstanding count dropped below it.
// rule: LIMIT-FIRE
func (s *srq) checkLimit() {
	// rules: LIMIT-DISARM, LIMIT-ONCE, LIMIT-FIRE
	if s.armed == 0 || s.cfg.has(LimitNever) {
		return
	}
	n := s.limitCount()
	if n < s.armed || (s.cfg.has(LimitAtEqual) && n == s.armed) {
		if s.cfg.has(LimitRaceTwice) && !s.inLimitWindow {
			// Another fetch may fire and disarm meanwhile; this one
			// fires all the same.
			s.inLimitWindow = true
			seen := s.fired
			s.openWindowUntil(func() bool { return s.fired != seen }, limitRaceWindow)
			s.inLimitWindow = false
		}
		s.fireLimit()
	}
}

// fireLimit raises SRQ_LIMIT_REACHED and disarms as the deviations say.
// rule: LIMIT-FIRE
func (s *srq) fireLimit() {
	s.events = append(s.events, drivers.Event{Type: evSRQLimit, QP: -1})
	// rule: none (remembers the fired limit for rearm-same-ignored, and
	// counts events for limit-race-twice's window)
	s.st.lastFired = s.armed
	s.fired++
	switch {
	case s.cfg.has(LimitReadsArmed):
	case s.cfg.has(LimitNotDisarmed):
		s.shown = 0
	case s.cfg.has(LimitKept):
		s.armed = 0
	// rules: LIMIT-ONCE, LIMIT-AFTER-FIRE
	default:
		s.armed, s.shown = 0, 0
	}
}

// Query returns the attributes and the limit as query reads them.
// rule: QUERY-ATTR
func (s *srq) Query() (drivers.SRQAttr, int) {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	// rule: DESTROY-BUSY
	if s.dead() {
		return drivers.SRQAttr{}, eINVAL
	}
	if s.cfg.has(QueryUnsupported) {
		return drivers.SRQAttr{}, eOPNOTSUPP
	}
	a := drivers.SRQAttr{MaxWR: s.capacity, MaxSGE: s.maxSGE, SRQLimit: s.shown}
	if s.cfg.has(CapacityPow2Unreported) {
		a.MaxWR = s.hold // the kernel reports its queue's size
	}
	if s.cfg.has(QueryTwice) {
		a.MaxWR = 2*s.capacity + 1
	}
	if s.cfg.has(QueryWrongSGE) {
		a.MaxSGE++
	}
	if s.cfg.has(QueryLimitStale) && s.firstLimit != 0 {
		a.SRQLimit = s.firstLimit
	}
	return a, 0
}

// ModifyLimit arms the limit at limit, or disarms it for 0.
// rule: LIMIT-ARM
func (s *srq) ModifyLimit(limit uint32) int {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if s.dead() {
		return eINVAL
	}
	// rule: LIMIT-DISARM
	if limit == 0 {
		if !s.cfg.has(LimitZeroKeeps) {
			s.armed, s.shown = 0, 0
		}
		return 0
	}
	// rule: LIMIT-BOUND
	if !s.cfg.has(LimitBoundMissing) {
		bound := s.capacity
		if s.cfg.has(CapacityPow2Unreported) || s.cfg.has(CapacityHidden) {
			// rxe-6.1 and siw bound the limit by the queue they hold
			// (siw_modify_srq: srq_limit > srq->num_rqe, and num_rqe is
			// roundup_pow_of_two(max_wr)).
			bound = s.hold
		}
		if limit > bound || (s.cfg.has(LimitBoundStrict) && limit >= bound) {
			return eINVAL
		}
	}
	if s.cfg.has(RearmSameIgnored) && limit == s.st.lastFired {
		return 0 // taken for "unchanged": nothing is armed or recorded
	}
	s.arm(limit)
	if s.cfg.has(ArmFiresAtOnce) && s.outstanding() < limit {
		s.fireLimit()
	}
	return 0
}

// Resize changes the capacity, keeping the outstanding WQEs in order.
// rule: RESIZE-CAPACITY
func (s *srq) Resize(maxWR uint32) int {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	c := s.cfg
	switch {
	case s.dead(), c.has(ResizeUnsupported), c.has(ResizeAlwaysFails):
		return eINVAL
	// rule: RESIZE-BOUNDS
	case maxWR == 0 && !c.has(ResizeAcceptsZero), maxWR > maxSRQWR:
		return eINVAL
	case c.has(ResizeBelowLimitRejected) && s.armed != 0 && maxWR < s.armed:
		return eINVAL
	}
	capacity, hold := s.sizes(maxWR)
	// rule: RESIZE-BELOW-COUNT
	if hold < s.inUse() && !c.has(ResizeIgnoresCount) {
		return eINVAL
	}
	if c.has(ResizeNoChange) {
		return 0
	}
	keep := s.outstanding()
	if room := hold - min(hold, s.held+s.leaked); keep > room {
		keep = room // resize-ignores-count: the newest WQEs are lost
	}
	ring := make([]wqe, ringSize(hold))
	oldMask := uint32(len(s.ring) - 1)
	for i := range keep {
		ring[i] = s.ring[(s.cons+i)&oldMask]
	}
	s.ring, s.cons, s.prod = ring, 0, keep
	// rule: none (remembers carried WRs for resize-limit-miscount)
	s.st.carried = keep
	s.capacity, s.hold = capacity, hold
	if c.has(ResizeClearsLimit) {
		s.armed, s.shown = 0, 0
	}
	return 0
}

// CreateQP creates a QP attached to the SRQ, in RESET, with its peer.
// rule: QP-CREATE
func (s *srq) CreateQP(ctx context.Context, t drivers.QPType) (drivers.QP, error) {
	q, _, err := s.CreateQPCaps(ctx, t, drivers.RecvCapsZero)
	return q, err
}

// recvCapsErrno is the errno creating a QP with the SRQ and the receive
// caps c fails with: none, as documented, unless a deviation checks them.
// rule: QP-SRQ-CAPS
func (s *srq) recvCapsErrno(c drivers.RecvCaps) int {
	switch {
	case c == drivers.RecvCapsAboveWR && (s.cfg.has(RecvWRChecked) || s.cfg.has(RecvCapsChecked)):
		return eINVAL
	case c == drivers.RecvCapsAboveSGE && (s.cfg.has(RecvCapsChecked) || s.cfg.has(QPChecksRecvSGE)):
		return eINVAL
	}
	return 0
}

// CreateQPCaps is CreateQP asking for the receive caps c.
// rule: QP-CREATE
func (s *srq) CreateQPCaps(ctx context.Context, t drivers.QPType, c drivers.RecvCaps) (drivers.QP, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("emu: CreateQP: %w", err)
	}
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if s.dead() {
		return nil, 0, fmt.Errorf("emu: CreateQP on a closed or destroyed SRQ: %w", drivers.ErrCallFailed)
	}
	switch t {
	case drivers.RC:
	case drivers.UD:
		if s.cfg.has(NoUD) {
			return nil, 0, fmt.Errorf("emu: CreateQP(UD): %w (deviation %s)", drivers.ErrUnsupported, NoUD)
		}
	default:
		return nil, 0, fmt.Errorf("emu: CreateQP(type %d): unknown QP type, want RC (0) or UD (1)", t)
	}
	if c > drivers.RecvCapsAboveSGE {
		return nil, 0, fmt.Errorf("emu: CreateQP(receive caps %d): unknown, want 0 to %d", c, drivers.RecvCapsAboveSGE)
	}
	if e := s.recvCapsErrno(c); e != 0 {
		return nil, e, nil
	}
	// rule: RECV-COMPLETION
	q := &qp{s: s, idx: len(s.qps), typ: t, state: drivers.Reset}
	s.qps = append(s.qps, q)
	return q, 0, nil
}

// InvalidateKey deregisters region key.
// rule: RECV-BAD-KEY
func (s *srq) InvalidateKey(key int) error {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if s.dead() {
		return fmt.Errorf("emu: InvalidateKey(%d) on a closed or destroyed SRQ: %w", key, drivers.ErrCallFailed)
	}
	if key < 0 || key >= len(s.regions) {
		return fmt.Errorf("emu: InvalidateKey(%d): no such region, keys are 0..%d", key, len(s.regions)-1)
	}
	s.regions[key].valid = false
	s.dev.keepBuf(s.regions[key].buf)
	s.regions[key].buf = nil
	return nil
}

// PollCQ removes and returns up to max completions (all for max <= 0),
// the oldest first: what POLL-MAX says a poll returns (the annotation was
// FETCH-ONCE's, written before POLL-MAX existed).
// rule: POLL-MAX
func (s *srq) PollCQ(max int) ([]drivers.Completion, error) {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("emu: PollCQ(%d) on a closed SRQ: %w", max, drivers.ErrCallFailed)
	}
	n := len(s.cq)
	// rule: POLL-MAX
	if max > 0 && max < n {
		n = max
	}
	out := make([]drivers.Completion, n)
	for i, c := range s.cq[:n] {
		out[i] = c.Completion
		// rule: SLOT-FREE
		if c.holds {
			s.held--
		}
	}
	// A completion polled is not returned again; the rest stay.
	// rules: POLL-MAX, FETCH-ONCE
	s.cq = append(s.cq[:0], s.cq[n:]...)
	return out, nil
}

// PollEvents removes and returns every pending async event.
// rules: LIMIT-ONCE, QP-LAST-WQE
func (s *srq) PollEvents() ([]drivers.Event, error) {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("emu: PollEvents on a closed SRQ: %w", drivers.ErrCallFailed)
	}
	ev := s.events
	s.events = nil
	return ev, nil
}

// InjectSRQError puts the SRQ in error, raising SRQ_ERR on entry.
// rule: SRQ-ERR-EVENT
func (s *srq) InjectSRQError() error {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if s.dead() {
		return fmt.Errorf("emu: InjectSRQError on a closed or destroyed SRQ: %w", drivers.ErrCallFailed)
	}
	if !s.errored {
		// rule: SRQ-ERR-NOFETCH
		s.errored = true
		if !s.cfg.has(SRQErrorSilent) {
			s.events = append(s.events, drivers.Event{Type: evSRQErr, QP: -1})
		}
	}
	return nil
}

// CreateOther creates a second SRQ the way v says and destroys it at once:
// only the errno of the create shows (the variants of CREATE-EX as well as
// the limits of CREATE-MAX).
// rules: CREATE-MAX, CREATE-EX
func (s *srq) CreateOther(attr drivers.SRQAttr, v drivers.CreateVariant) (int, error) {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if s.dead() {
		return 0, fmt.Errorf("emu: CreateOther on a closed or destroyed SRQ: %w", drivers.ErrCallFailed)
	}
	return s.cfg.createErrno(attr, v), nil
}

// Destroy is ibv_destroy_srq: EBUSY while a QP is attached (the kernel's
// usecnt check), else the SRQ is gone and its ring freed; the CQ and the
// event queue stay until Close.
// rule: DESTROY-BUSY
func (s *srq) Destroy() (int, error) {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if s.dead() {
		return 0, fmt.Errorf("emu: Destroy on a closed or destroyed SRQ: %w", drivers.ErrCallFailed)
	}
	for _, q := range s.qps {
		if !q.gone && !s.cfg.has(DestroyIgnoresQPs) {
			return eBUSY, nil
		}
	}
	s.destroyed = true
	s.ring, s.prod, s.cons = nil, 0, 0
	return 0, nil
}

// Close destroys the QPs, the SRQ, its regions and CQ. It is idempotent.
// rule: DESTROY-BUSY
func (s *srq) Close() error {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	s.destroy()
	return nil
}

// destroy releases everything; the caller holds dev.mu.
// rule: DESTROY-BUSY
func (s *srq) destroy() {
	if s.closed {
		return
	}
	for i := len(s.qps) - 1; i >= 0; i-- {
		s.qps[i].filling, s.qps[i].buffered = nil, nil
	}
	s.closed = true
	for _, r := range s.regions {
		s.dev.keepBuf(r.buf)
	}
	s.qps, s.ring, s.cq, s.events, s.regions = nil, nil, nil, nil, nil
}

// pushCQE writes a completion, twice for every third success under
// double-complete.
// rule: RECV-COMPLETION
func (s *srq) pushCQE(c drivers.Completion, holds bool) {
	c.QP = s.reportedQP(c.QP)
	if s.cfg.has(WrongQP) {
		c.QP = 0
	}
	if s.cfg.has(WRIDTruncated) {
		c.WRID &= 0xffffffff // a 32-bit field somewhere on the way
	}
	s.cq = append(s.cq, cqe{Completion: c, holds: holds})
	// rule: none (counts successes for double-complete)
	if c.Status == wcSuccess {
		s.successes++
		if s.cfg.has(DoubleComplete) && s.successes%3 == 0 {
			s.cq = append(s.cq, cqe{Completion: c})
		}
	}
}

// sgeLen is the number of bytes an SGE holds.
// rule: SGE-LEN0
func (s *srq) sgeLen(g drivers.SGE) uint64 {
	if g.Length == 0 && !s.cfg.has(ZeroLengthZero) {
		return zeroLenBytes
	}
	// A non-zero length holds as many bytes: the sum RECV-FIT compares.
	// rule: RECV-FIT
	return uint64(g.Length)
}

// wqeCapacity is the number of bytes a WQE's SGEs hold.
// rule: RECV-FIT
func (s *srq) wqeCapacity(w wqe) uint64 {
	var n uint64
	for _, g := range w.sges {
		n += s.sgeLen(g)
	}
	return n
}

// badKey says whether the WQE names an invalid key where it is checked:
// every SGE, or under key-check-touched only those need bytes land in.
// rule: RECV-BAD-KEY
func (s *srq) badKey(w wqe, need uint64) bool {
	if !s.cfg.has(KeyCheckTouched) {
		for _, g := range w.sges {
			if !s.keyValid(g.Key) {
				return true
			}
		}
		return false
	}
	rem := need
	for _, g := range w.sges {
		if rem == 0 {
			break
		}
		l := s.sgeLen(g)
		if l == 0 {
			continue
		}
		if !s.keyValid(g.Key) {
			return true
		}
		rem -= min(l, rem)
	}
	return false
}

// scatter writes the incoming stream (grh zero bytes of GRH area, then the
// payload msg.Pattern+i) into the WQE's SGEs, laid out consecutively within
// each region, reads it back and describes any byte out of place.
// rule: RECV-COMPLETION
func (s *srq) scatter(w wqe, msg drivers.Message, grh uint64) string {
	need := grh + uint64(msg.Len)
	type place struct {
		key      int
		off, pos uint64
		n        uint64
	}
	var placeBuf [8]place
	places := placeBuf[:0]
	type keyOff struct {
		key int
		off uint64
	}
	var offBuf [8]keyOff
	offs := offBuf[:0] // how far each key's region is laid out
	var pos uint64
	for _, g := range w.sges {
		if pos == need {
			break
		}
		k := slices.IndexFunc(offs, func(o keyOff) bool { return o.key == g.Key })
		if k < 0 {
			offs, k = append(offs, keyOff{key: g.Key}), len(offs)
		}
		l := s.sgeLen(g)
		n := min(l, need-pos)
		if n > 0 {
			places = append(places, place{g.Key, offs[k].off, pos, n})
		}
		offs[k].off += l
		pos += n
	}
	// Room first, then the bytes. Unzeroed where it reuses room: scatter
	// reads back only the bytes it has just written. For the same reason
	// a buffer too small is replaced, not grown, before anything is
	// written: growing copies and clears it in calls the Go runtime cannot
	// preempt, which for an SGE of gigabytes stall every goroutine, the
	// run's watchdog among them, for seconds; a new one is cleared in
	// preemptible chunks, if at all.
	for _, p := range places {
		if p.key < 0 || p.key >= len(s.regions) {
			continue
		}
		r := &s.regions[p.key]
		if end := p.off + p.n; uint64(len(r.buf)) < end {
			if uint64(cap(r.buf)) < end {
				r.buf = make([]byte, end)
			}
			r.buf = r.buf[:end]
		}
	}
	for _, p := range places {
		if p.key >= 0 && p.key < len(s.regions) {
			fillStream(s.regions[p.key].buf[p.off:p.off+p.n], p.pos, grh, msg.Pattern)
		}
	}
	var got uint64
	for _, p := range places {
		if p.key < 0 || p.key >= len(s.regions) {
			return fmt.Sprintf("bytes %d..%d of the message went to key %d, which names no region", p.pos, p.pos+p.n-1, p.key)
		}
		if i := streamDiff(s.regions[p.key].buf[p.off:p.off+p.n], p.pos, grh, msg.Pattern); i >= 0 {
			b, want := s.regions[p.key].buf[p.off+uint64(i)], streamByte(p.pos+uint64(i), grh, msg.Pattern)
			return fmt.Sprintf("byte %d of the message reads %#x in key %d at offset %d, want %#x", p.pos+uint64(i), b, p.key, p.off+uint64(i), want)
		}
		got += p.n
	}
	if got != need {
		return fmt.Sprintf("%d bytes of the message landed, want %d", got, need)
	}
	return ""
}

// ramp holds the bytes 0 to 255 twice: any 256 consecutive payload bytes
// of the stream are a slice of it.
var ramp = func() (r [512]byte) {
	for i := range r {
		r[i] = byte(i)
	}
	return r
}()

// zeroChunk is the GRH area's bytes, a chunk at a time.
var zeroChunk [256]byte

// streamChunk returns the next at most 256 of the stream's n bytes from p
// on (streamByte), as a slice of zeroChunk or ramp, which nobody writes.
// rule: RECV-COMPLETION
func streamChunk(p, n, grh uint64, pattern byte) []byte {
	if p < grh {
		return zeroChunk[:min(grh-p, n, 256)]
	}
	s := pattern + byte(p-grh)
	return ramp[s : uint64(s)+min(n, 256)]
}

// fillStream writes the stream's bytes from p on into b (streamByte).
// rule: RECV-COMPLETION
func fillStream(b []byte, p, grh uint64, pattern byte) {
	for at := 0; at < len(b); {
		at += copy(b[at:], streamChunk(p+uint64(at), uint64(len(b)-at), grh, pattern))
	}
}

// streamDiff returns the index of the first byte of b that is not the
// stream's from p on, or -1.
// rule: RECV-COMPLETION
func streamDiff(b []byte, p, grh uint64, pattern byte) int {
	for at := 0; at < len(b); {
		c := streamChunk(p+uint64(at), uint64(len(b)-at), grh, pattern)
		if !bytes.Equal(b[at:at+len(c)], c) {
			for i := range c {
				if b[at+i] != c[i] {
					return at + i
				}
			}
		}
		at += len(c)
	}
	return -1
}

// streamByte is byte p of the stream scatter writes: grh zero bytes of GRH
// area, then the payload, pattern+i.
// rule: RECV-COMPLETION
func streamByte(p, grh uint64, pattern byte) byte {
	if p < grh {
		return 0
	}
	return pattern + byte(p-grh)
}
