package model

import (
	"errors"
	"fmt"
	"slices"
)

// Deviation is an observation the model does not allow.
type Deviation struct {
	Rule string // the rule at stake
	What string // the part of the observation that differs
	Want string // what the model allows
	Got  string // what was observed
}

func (d *Deviation) Error() string {
	return fmt.Sprintf("[%s] %s = %s, wanted %s", d.Rule, d.What, d.Got, d.Want)
}

// ErrNotModelled is returned for an operation the model cannot predict under
// the profile (for example a negative num_sge on a provider that does not
// check it) or that is invalid in the current state (a harness error).
var ErrNotModelled = errors.New("operation not modelled")

func unmodelled(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrNotModelled, fmt.Sprintf(format, a...))
}

func dev(rule, what string, want, got any) *Deviation {
	return &Deviation{Rule: rule, What: what, Want: fmt.Sprint(want), Got: fmt.Sprint(got)}
}

// step applies op. With got == nil it takes the canonical outcome and returns
// it; otherwise it checks got and advances as got determines. On error the
// machine must be discarded.
func (m *machine) step(op Op, got *Observation) (Observation, error) {
	if _, ok := op.(CreateSRQ); !ok && !m.created {
		return Observation{}, unmodelled("%s before create_srq", op.Name())
	}
	switch o := op.(type) {
	case CreateSRQ:
		return m.createSRQ(o, got)
	case CreateQP:
		m.qps = append(m.qps, qp{typ: o.Type, state: Reset})
		return m.plainResult("QP-CREATE", 0, got)
	case Post:
		return m.post(o, got)
	case PostRecv:
		return m.postRecv(o, got)
	case Query:
		return m.query(got)
	case Arm:
		return m.arm(o, got)
	case Resize:
		return m.resizeSRQ(o, got)
	case ModifyQP:
		if o.QP >= 0 && o.QP < len(m.qps) {
			m.qps[o.QP].errRule = ""
		}
		return m.modifyQP(o, got)
	case Invalidate:
		if o.Key < 0 || o.Key >= len(m.keys) {
			return Observation{}, unmodelled("key %d out of range", o.Key)
		}
		m.keys[o.Key] = false
		return m.plainResult("RECV-BAD-KEY", 0, got)
	case Arrive:
		return m.arrive(o, got)
	case ArriveRest:
		return m.arriveRest(o, got)
	case Poll:
		return m.poll(o, got)
	case InjectSRQError:
		if !m.srqErr { // the event marks entering the error state
			m.srqErr = true
			m.fire(EventSRQErr, -1)
		}
		return m.plainResult("SRQ-ERR-EVENT", 0, got)
	case InjectSQE:
		if err := m.checkQP(o.QP); err != nil {
			return Observation{}, err
		}
		if m.qps[o.QP].state != RTS {
			return Observation{}, unmodelled("inject_sqe on qp%d in %s: only RTS enters SQE", o.QP, m.qps[o.QP].state)
		}
		m.qps[o.QP].state = SQE
		return m.plainResult("QP-FETCH-STATES", 0, got)
	}
	return Observation{}, unmodelled("unknown operation %T", op)
}

func (m *machine) checkQP(n int) error {
	if n < 0 || n >= len(m.qps) {
		return unmodelled("qp%d does not exist", n)
	}
	return nil
}

// plainResult checks a verb that returns only an errno.
func (m *machine) plainResult(rule string, want int, got *Observation) (Observation, error) {
	obs := Observation{Errno: want, BadWR: -1}
	if got == nil {
		return obs, nil
	}
	if got.Errno != want {
		return obs, dev(rule, "return value", ErrnoName(want), ErrnoName(got.Errno))
	}
	return *got, nil
}

// failResult checks a verb that must fail with any errno; nothing changes.
func failResult(rule string, canonical int, got *Observation) (Observation, error) {
	obs := Observation{Errno: canonical, BadWR: -1}
	if got == nil {
		return obs, nil
	}
	if got.Errno == 0 {
		return obs, dev(rule, "return value", "an error", "0 (success)")
	}
	return *got, nil
}

func (m *machine) createSRQ(o CreateSRQ, got *Observation) (Observation, error) {
	if m.created {
		return Observation{}, unmodelled("a second create_srq")
	}
	if o.MaxWR == 0 || o.MaxWR > m.caps.MaxSRQWR || o.MaxSGE == 0 || o.MaxSGE > m.caps.MaxSRQSGE {
		return Observation{}, unmodelled("create_srq outside the device's limits (%d, %d)", m.caps.MaxSRQWR, m.caps.MaxSRQSGE)
	}
	m.created = true
	report := m.capacityReport()
	obs := Observation{BadWR: -1, Attr: SRQAttr{MaxWR: m.reportedCapacity(o.MaxWR), MaxSGE: o.MaxSGE}}
	if got != nil {
		if got.Errno != 0 {
			return obs, dev("CREATE-ATTR", "return value", 0, ErrnoName(got.Errno))
		}
		a := got.Attr
		switch report {
		case ReportAtLeast:
			if a.MaxWR < o.MaxWR {
				return obs, dev("CREATE-ATTR", "max_wr written back", fmt.Sprintf(">= %d", o.MaxWR), a.MaxWR)
			}
		default:
			if a.MaxWR != obs.Attr.MaxWR {
				return obs, dev("CREATE-ATTR", "max_wr written back", fmt.Sprintf("%d (%s)", obs.Attr.MaxWR, report), a.MaxWR)
			}
		}
		if a.MaxSGE < o.MaxSGE {
			return obs, dev("CREATE-ATTR", "max_sge written back", fmt.Sprintf(">= %d", o.MaxSGE), a.MaxSGE)
		}
		obs.Attr = a
		obs.Attr.SRQLimit = 0
	}
	m.capacity, m.maxSGE = obs.Attr.MaxWR, obs.Attr.MaxSGE
	m.capExact = m.capacityRule() != CapacityAtLeast
	if m.capacityRule() == CapacityPow2 {
		m.capacity = m.realCapacity(o.MaxWR)
	}
	m.createLimit = o.Limit > 0
	if o.Limit > 0 && m.limitAtCreate() == Accepted {
		m.armed, m.limit, m.armedEver = true, o.Limit, true
	}
	return obs, nil
}

// sgeInvalid reports whether a WR fails the num_sge check, or an error if
// the profile makes the outcome unpredictable.
func (m *machine) sgeInvalid(w WR) (bool, error) {
	switch {
	case w.NumSGE < 0:
		if m.negativeSGE() == Accepted {
			return false, unmodelled("negative num_sge on a provider that does not check it")
		}
		return true, nil
	case w.NumSGE == 0:
		return m.zeroSGE() == Rejected, nil
	case m.sgeLimit() == SGEAgainstDevice:
		return uint32(w.NumSGE) > m.caps.MaxSRQSGE, nil
	}
	return uint32(w.NumSGE) > m.maxSGE, nil
}

func (m *machine) post(o Post, got *Observation) (Observation, error) {
	obs := Observation{BadWR: -1}
	earlierPrefix := m.prefixOutstanding()
	for i, w := range o.WRs {
		if w.NumSGE >= 0 && w.NumSGE != len(w.SGEs) {
			return obs, unmodelled("wr %d: num_sge %d with %d SGEs", w.ID, w.NumSGE, len(w.SGEs))
		}
		bad, err := m.sgeInvalid(w)
		if err != nil {
			return obs, err
		}
		full := m.occupied() >= int(m.capacity)
		if full && !m.capExact {
			// The real capacity is unknown: the device may take more.
			// The observation decides; canonically the queue is full.
			switch {
			case got == nil || (got.BadWR == i && (!bad || errnoIs(got.Errno, ENOMEM))):
				m.capExact = true // an ENOMEM here pins the capacity
			case got.BadWR == i:
				full = false // refused as a bad WR: says nothing of the capacity
			default:
				full = false // taken: there was room
				m.capacity = uint32(m.occupied() + 1)
			}
		}
		errno := 0
		rule := ""
		switch {
		case bad && full:
			if m.checkOrder() == SGEFirst {
				errno, rule = EINVAL, "POST-CHECK-ORDER"
			} else {
				errno, rule = ENOMEM, "POST-CHECK-ORDER"
			}
		case bad:
			errno, rule = EINVAL, "POST-SGE"
		case full:
			errno, rule = ENOMEM, "POST-FULL"
		}
		if errno != 0 {
			for _, prev := range o.WRs[:i] {
				m.prefixIDs = append(m.prefixIDs, prev.ID)
			}
			obs.Errno, obs.BadWR = m.postErr(errno), i
			if got != nil {
				if got.BadWR != i {
					if got.BadWR >= 0 && got.BadWR < i {
						// An earlier WR refused: a misreported index when the
						// errno is the expected EINVAL, else a wrong refusal.
						r := m.refusalRule(o.WRs[got.BadWR], got.Errno)
						if got.Errno == obs.Errno && !errnoIs(got.Errno, ENOMEM) && r == "POST-SGE" {
							r = "POST-BADWR"
						}
						return obs, dev(r, "bad_wr", fmt.Sprintf("%d (wr%d)", i, w.ID), got.BadWR)
					}
					if got.BadWR < 0 {
						if errno == ENOMEM && earlierPrefix {
							rule = "POST-ORDER" // room the model filled with a prefix
						}
						return obs, dev(rule, "result", fmt.Sprintf("%s with bad_wr=%d (wr%d)", ErrnoName(obs.Errno), i, w.ID), "0 (all posted)")
					}
					return obs, dev("POST-BADWR", "bad_wr", i, got.BadWR)
				}
				if got.Errno != obs.Errno {
					switch {
					case got.Errno == -obs.Errno || (m.postErrno() == ErrnoMinusOne) != (got.Errno == -1):
						rule = "POST-RETURN"
					case errnoIs(got.Errno, ENOMEM) && !full:
						rule = m.refusalRule(w, got.Errno) // the device thought it full
					}
					return obs, dev(rule, "return value", ErrnoName(obs.Errno), ErrnoName(got.Errno))
				}
			}
			return obs, nil
		}
		// The SRQ keeps a copy: the caller may reuse its WR at once.
		cp := w
		cp.SGEs = append([]SGE(nil), w.SGEs...)
		m.queue = append(m.queue, entry{wr: cp})
		m.posted++
	}
	if got != nil && (got.Errno != 0 || got.BadWR >= 0) {
		rule := "POST-ORDER"
		if got.BadWR >= 0 && got.BadWR < len(o.WRs) {
			rule = m.refusalRule(o.WRs[got.BadWR], got.Errno)
		}
		return obs, dev(rule, "result", fmt.Sprintf("0 (all %d posted)", len(o.WRs)), got.Describe(o))
	}
	return obs, nil
}

// refusalRule names the rule a device broke by refusing a WR the model
// accepts, from what the WR and the SRQ's surroundings suggest.
func (m *machine) refusalRule(w WR, errno int) string {
	for _, s := range w.SGEs {
		if !m.validKey(s.Key) {
			return "POST-NO-KEY-CHECK"
		}
	}
	if errnoIs(errno, ENOMEM) {
		if m.fetched > 0 && m.posted >= int(m.capacity) {
			return "SLOT-FREE" // full only if fetched slots never came back
		}
		return "POST-FULL"
	}
	ready := len(m.qps) > 0
	for _, q := range m.qps {
		ready = ready && q.state == RTS
	}
	if !ready {
		return "POST-ANY-STATE"
	}
	return "POST-SGE"
}

// prefixOutstanding reports whether a WR posted as a failed list's prefix is
// still in the SRQ.
func (m *machine) prefixOutstanding() bool {
	for _, e := range m.queue {
		if m.isPrefix(e.wr.ID) {
			return true
		}
	}
	return false
}

func errnoIs(got, want int) bool { return got == want || got == -want }

func (m *machine) postRecv(o PostRecv, got *Observation) (Observation, error) {
	if err := m.checkQP(o.QP); err != nil {
		return Observation{}, err
	}
	obs, err := failResult("POST-QP-RQ", m.postErr(EINVAL), got)
	want := 0
	if m.postRecvBadWR() == BadWRNull {
		want = -1
	}
	obs.BadWR = want
	if err == nil && got != nil && got.BadWR != want {
		return obs, dev("POST-QP-RQ", "bad_wr", want, got.BadWR)
	}
	return obs, err
}

func (m *machine) query(got *Observation) (Observation, error) {
	rule := m.queryRule()
	switch rule {
	case QueryENOSYS, QueryEOPNOTSUPP:
		want := ENOSYS
		if rule == QueryEOPNOTSUPP {
			want = EOPNOTSUPP
		}
		obs := Observation{Errno: want, BadWR: -1}
		if got != nil && got.Errno != want && got.Errno != -want {
			return obs, dev("QUERY-ATTR", "return value", ErrnoName(want), ErrnoName(got.Errno))
		}
		return obs, nil
	}
	obs := Observation{BadWR: -1, Attr: SRQAttr{MaxWR: m.capacity, MaxSGE: m.maxSGE, SRQLimit: m.limit}}
	if got == nil {
		if !m.capExact && rule == QuerySame {
			m.capExact = m.capacityRule() != CapacityAtLeast
		}
		m.resized = ""
		return obs, nil
	}
	if got.Errno != 0 {
		return obs, dev("QUERY-ATTR", "return value", 0, ErrnoName(got.Errno))
	}
	a := got.Attr
	capRule, maskRule := "QUERY-ATTR", "QUERY-LIMIT"
	if m.resized != "" {
		capRule, maskRule = m.resized, "MODIFY-ONLY-MASKED"
	}
	switch {
	case rule == QueryAtLeast || !m.capExact:
		if a.MaxWR < m.capacity {
			return obs, dev(capRule, "max_wr", fmt.Sprintf(">= %d", m.capacity), a.MaxWR)
		}
		if rule == QuerySame {
			// The query pins a capacity that was only a lower bound.
			m.capacity, m.capExact = a.MaxWR, m.capacityRule() != CapacityAtLeast
		}
	case a.MaxWR != m.capacity:
		return obs, dev(capRule, "max_wr", m.capacity, a.MaxWR)
	}
	if a.MaxSGE != m.maxSGE {
		return obs, dev(capRule, "max_sge", m.maxSGE, a.MaxSGE)
	}
	if a.SRQLimit != m.limit {
		r := maskRule
		switch {
		case !m.armed && m.firesThisArming > 0:
			r = "LIMIT-AFTER-FIRE"
		case !m.armed && m.armedEver && m.limit == 0:
			r = "LIMIT-DISARM"
		}
		return obs, dev(r, "srq_limit", m.limit, a.SRQLimit)
	}
	m.resized = ""
	return *got, nil
}

func (m *machine) arm(o Arm, got *Observation) (Observation, error) {
	if o.Limit == 0 {
		m.armed, m.limit = false, 0
		return m.plainResult("LIMIT-DISARM", 0, got)
	}
	over := o.Limit > m.capacity
	if m.limitBound() == LimitBelowCapacity {
		over = o.Limit >= m.capacity
	}
	if over {
		return m.plainResult("LIMIT-BOUND", EINVAL, got)
	}
	m.armed, m.limit, m.firesThisArming, m.armedEver = true, o.Limit, 0, true
	if uint32(len(m.queue)) < o.Limit && m.armBelow() == FireAtOnce {
		m.fireLimit()
	}
	return m.plainResult("LIMIT-ARM", 0, got)
}

func (m *machine) resizeSRQ(o Resize, got *Observation) (Observation, error) {
	if m.resize() == ResizeUnsupported || !m.caps.Resize {
		return failResult("RESIZE-OPTIONAL", EOPNOTSUPP, got)
	}
	switch {
	case o.MaxWR == 0 || o.MaxWR > m.caps.MaxSRQWR:
		return m.plainResult("RESIZE-BOUNDS", EINVAL, got)
	case m.armed && o.MaxWR < m.limit && m.resizeBelowLimit() == Rejected:
		return m.plainResult("RESIZE-BELOW-LIMIT", EINVAL, got)
	}
	newCap := m.realCapacity(o.MaxWR)
	exact := m.capacityReport() != ReportAtLeast || m.capacityRule() == CapacityPow2
	if int(newCap) < m.occupied() {
		// The new capacity must hold the outstanding WRs. Where the report
		// is "at least the request", a device may round up far enough.
		if exact || got == nil || got.Errno != 0 {
			return m.plainResult("RESIZE-BELOW-COUNT", EINVAL, got)
		}
		newCap = uint32(m.occupied())
	}
	rule := "RESIZE-OPTIONAL" // advertised, valid, and refused
	if int(o.MaxWR) < m.occupied() {
		rule = "RESIZE-BELOW-COUNT"
	}
	obs, err := m.plainResult(rule, 0, got)
	if err != nil {
		return obs, err
	}
	if rule == "RESIZE-OPTIONAL" {
		rule = "RESIZE-CAPACITY" // what a later query checks
	}
	// No driver writes the new size back: it is exact where the profile
	// rounds deterministically, and otherwise a lower bound that the next
	// query or ENOMEM pins.
	m.capacity = newCap
	m.capExact = exact && m.capacityRule() != CapacityAtLeast
	m.resized = rule
	return obs, nil
}

func (m *machine) modifyQP(o ModifyQP, got *Observation) (Observation, error) {
	if err := m.checkQP(o.QP); err != nil {
		return Observation{}, err
	}
	q := &m.qps[o.QP]
	from := q.state
	if !legalTransition(from, o.State) {
		return failResult("QP-TRANSITIONS", EINVAL, got)
	}
	if q.filling != nil && o.State != Err {
		return Observation{}, unmodelled("modify_qp qp%d to %s while it is filling a WR", o.QP, o.State)
	}
	switch {
	case o.State == Err:
		if from == Err && m.lastWQE() == Raise && m.lastWQERepeat() == PerPacket {
			q.repeatOK = true
		}
		m.enterErr(o.QP)
	case o.State == Reset:
		q.state, q.pending = Reset, nil
	default:
		q.state = o.State
		if o.State.Fetches() && !from.Fetches() {
			pending := q.pending
			q.pending = nil
			for _, msg := range pending {
				m.deliverNew(o.QP, msg)
			}
		}
	}
	return m.plainResult("QP-TRANSITIONS", 0, got)
}

// noFetch records why an arrival took no WR, for attributing a completion
// the device produced anyway.
func (m *machine) noFetch(rule string, allowed PeerSet, got *Observation) (Observation, error) {
	m.noFetchRule = rule
	return peerResult(rule, allowed, got)
}

// peerResult checks the peer's outcome against the allowed set.
func peerResult(rule string, allowed PeerSet, got *Observation) (Observation, error) {
	obs := Observation{BadWR: -1, Peer: allowed.First()}
	if got != nil {
		if !allowed.Has(got.Peer) {
			return obs, dev(rule, "peer outcome", allowed, got.Peer)
		}
		obs.Peer = got.Peer
	}
	return obs, nil
}

func (m *machine) arrive(o Arrive, got *Observation) (Observation, error) {
	if err := m.checkQP(o.QP); err != nil {
		return Observation{}, err
	}
	q := &m.qps[o.QP]
	if !o.Msg.Opcode.ValidOn(q.typ) {
		return Observation{}, unmodelled("%s on a %s QP", o.Msg.Opcode, q.typ)
	}
	if q.filling != nil {
		return Observation{}, unmodelled("arrive on qp%d while it is filling a WR", o.QP)
	}
	rc := q.typ == RC
	if !q.state.Fetches() {
		if q.state != Err && m.beforeRTR() == Buffered {
			if o.FirstPacketOnly {
				return Observation{}, unmodelled("a partial message to a QP that buffers")
			}
			q.pending = append(q.pending, o.Msg)
			return m.noFetch("QP-BEFORE-RTR", Peers(PeerOK, PeerRNR, PeerError), got)
		}
		if q.state == Err && m.lastWQE() == Raise && m.lastWQERepeat() == PerPacket {
			q.repeatOK = true
		}
		if rc {
			return m.noFetch("QP-NOFETCH-STATES", Peers(PeerError), got)
		}
		return m.noFetch("QP-NOFETCH-STATES", Peers(PeerOK), got)
	}
	if !o.Msg.Opcode.Consumes() {
		return m.noFetch("FETCH-OPCODES", Peers(PeerOK), got)
	}
	if m.srqErr {
		if rc {
			return m.noFetch("SRQ-ERR-NOFETCH", Peers(PeerRNR, PeerError), got)
		}
		return m.noFetch("SRQ-ERR-NOFETCH", Peers(PeerOK), got)
	}
	if len(m.queue) == 0 {
		if rc {
			return m.noFetch("RECV-RNR", Peers(PeerRNR), got)
		}
		return m.noFetch("RECV-RNR", Peers(PeerOK), got)
	}
	if o.FirstPacketOnly {
		w := m.fetch()
		q.filling = &inflight{wr: w, msg: o.Msg}
		return peerResult("QP-FLUSH-INPROGRESS", Peers(PeerOK, PeerRNR, PeerError), got)
	}
	prefix, state, before := m.isPrefix(m.queue[0].wr.ID), q.state, len(m.cq)
	allowed := m.deliverNew(o.QP, o.Msg)
	rule := "RECV-COMPLETION"
	switch {
	case prefix && got != nil && got.Peer == PeerRNR:
		rule = "POST-ORDER" // a device that dropped the prefix has nothing here
	case state != RTS:
		rule = "QP-FETCH-STATES"
	case len(m.cq) > before:
		rule = m.cq[len(m.cq)-1].rule // the rule of what the model just completed
	}
	return peerResult(rule, allowed, got)
}

func (m *machine) arriveRest(o ArriveRest, got *Observation) (Observation, error) {
	if err := m.checkQP(o.QP); err != nil {
		return Observation{}, err
	}
	q := &m.qps[o.QP]
	if q.filling == nil {
		return Observation{}, unmodelled("arrive_rest on qp%d, which is filling nothing", o.QP)
	}
	f := *q.filling
	q.filling = nil
	return peerResult("RECV-COMPLETION", m.deliver(o.QP, f.wr, f.msg), got)
}

// fetch takes the head WR (FIFO) and applies the limit rule.
func (m *machine) fetch() WR {
	w := m.queue[0].wr
	m.queue = m.queue[1:]
	m.fetched++
	if m.slotFree() == FreeAtPoll {
		m.held++
	}
	m.checkLimit()
	return w
}

// deliverNew delivers a message to a QP in a fetching state and returns what
// the peer may see.
func (m *machine) deliverNew(n int, msg Message) PeerSet {
	rc := m.qps[n].typ == RC
	if !msg.Opcode.Consumes() {
		return Peers(PeerOK)
	}
	if m.srqErr {
		if rc {
			return Peers(PeerRNR, PeerError)
		}
		return Peers(PeerOK)
	}
	if len(m.queue) == 0 {
		if rc {
			return Peers(PeerRNR)
		}
		return Peers(PeerOK)
	}
	return m.deliver(n, m.fetch(), msg)
}

// deliver fills a fetched WR with a message and completes it.
func (m *machine) deliver(n int, w WR, msg Message) PeerSet {
	q := &m.qps[n]
	rc := q.typ == RC
	c := Completion{WRID: w.ID, QP: n, HasImm: msg.Opcode.HasImm(), Imm: msg.Imm}
	if !msg.Opcode.Scatters() {
		// RDMA Write with Immediate: the payload goes to the remote
		// address; the WR only carries the completion.
		c.Opcode, c.ByteLen = WCRecvRDMAWithImm, msg.Len
		m.complete(c, Statuses(WCSuccess), "RECV-WRITE-IMM")
		return Peers(PeerOK)
	}
	need := uint64(msg.Len)
	if !rc {
		need += UDHeader
	}
	room := m.capacityOf(w)
	oversize := need > room
	badKey := m.keyFault(w, need)
	rule := m.fitRule(w, msg, need, room)
	var allowed StatusSet
	var fate Fate
	switch {
	case oversize:
		// No source orders the length and key checks: either status.
		allowed = m.prof.OversizeRCStatus
		if !rc {
			allowed = m.prof.OversizeUDStatus
		}
		if badKey {
			allowed |= m.prof.KeyErrorStatus
		}
		fate = m.oversizeQP(q.typ)
	case badKey:
		allowed, fate, rule = m.prof.KeyErrorStatus, m.keyErrorQP(q.typ), "RECV-BAD-KEY"
	default:
		c.Opcode, c.ByteLen = WCRecv, uint32(need)
		m.complete(c, Statuses(WCSuccess), rule)
		return Peers(PeerOK)
	}
	c.Status = allowed.First()
	c.HasImm, c.Imm = false, 0
	m.complete(c, allowed, rule)
	if fate == ToErr {
		m.enterErr(n)
		q.errRule = rule
	} else {
		q.survived = rule
	}
	if rc {
		return Peers(PeerError)
	}
	return Peers(PeerOK)
}

// fitRule names the rule that decides whether msg fits w: the one a device
// that got the fit wrong most likely broke.
func (m *machine) fitRule(w WR, msg Message, need, room uint64) string {
	for _, s := range w.SGEs {
		if s.Length == 0 && m.zeroLength() == ZeroIs2GiB {
			return "SGE-LEN0"
		}
	}
	switch {
	case m.keyCheck() == CheckAllSGEs && m.keyFault(w, need):
		return "RECV-BAD-KEY"
	case w.NumSGE == 0:
		return "RECV-NUMSGE0"
	case need != uint64(msg.Len) && uint64(msg.Len) <= room && need+UDHeader > room:
		return "UD-GRH"
	case need > room:
		return "RECV-TOO-LARGE"
	}
	return "RECV-FIT"
}

// keyFault reports whether filling w with need bytes meets an invalid key.
func (m *machine) keyFault(w WR, need uint64) bool {
	if m.keyCheck() == CheckAllSGEs {
		for _, s := range w.SGEs {
			if !m.validKey(s.Key) {
				return true
			}
		}
		return false
	}
	left := need
	for _, s := range w.SGEs {
		if left == 0 {
			break
		}
		b := m.sgeBytes(s)
		if b == 0 {
			continue
		}
		if !m.validKey(s.Key) {
			return true
		}
		left -= min(left, b)
	}
	return false
}

func (m *machine) validKey(k int) bool { return k >= 0 && k < len(m.keys) && m.keys[k] }

func (m *machine) poll(o Poll, got *Observation) (Observation, error) {
	n := len(m.cq)
	if o.Max > 0 && o.Max < n {
		n = o.Max
	}
	obs := Observation{BadWR: -1}
	for _, e := range m.cq[:n] {
		obs.Completions = append(obs.Completions, e.c)
	}
	obs.Events = append([]Event(nil), m.events...)
	if got != nil {
		if err := m.checkCompletions(got.Completions, n); err != nil {
			return obs, err
		}
		if err := m.checkEvents(obs.Events, got.Events); err != nil {
			return obs, err
		}
		obs.Completions = got.Completions
	}
	for _, e := range m.cq[:n] {
		if e.holds {
			m.held--
		}
	}
	m.cq = m.cq[n:]
	m.events = nil
	for i := range m.qps {
		m.qps[i].repeatOK = false
	}
	return obs, nil
}

func (m *machine) checkCompletions(got []Completion, n int) error {
	for i := 0; i < n && i < len(got); i++ {
		want, g := m.cq[i], got[i]
		what := fmt.Sprintf("completion %d", i+1)
		rule := "RECV-COMPLETION"
		if g.WRID != want.c.WRID {
			rule = "FETCH-FIFO"
			switch {
			case g.WRID == ^want.c.WRID:
				rule = "POST-COPY" // the harness scribbles ^wr_id after posting
			case m.completedBefore(g.WRID) || slices.ContainsFunc(got[:i], func(c Completion) bool { return c.WRID == g.WRID }):
				rule = "FETCH-ONCE"
			case want.state != RTS && !m.cqHas(g.WRID, n):
				rule = "QP-FETCH-STATES"
			case m.isPrefix(want.c.WRID) && !m.cqHas(g.WRID, n):
				rule = "POST-ORDER"
			}
			return dev(rule, what+" wr_id", want.c, g)
		}
		if g.QP != want.c.QP {
			return dev(rule, what+" qp", want.c, g)
		}
		if !want.allowed.Has(g.Status) {
			return dev(want.rule, what+" status", want.allowed, g.Status)
		}
		if g.Status != WCSuccess {
			continue
		}
		if g.Opcode != want.c.Opcode {
			return dev(rule, what+" opcode", want.c.Opcode, g.Opcode)
		}
		if g.ByteLen != want.c.ByteLen {
			r := rule
			if m.qps[want.c.QP].typ == UD {
				r = "UD-GRH"
			}
			return dev(r, what+" byte_len", want.c.ByteLen, g.ByteLen)
		}
		if g.HasImm != want.c.HasImm || (g.HasImm && g.Imm != want.c.Imm) {
			return dev("RECV-IMM", what+" immediate", want.c, g)
		}
	}
	switch {
	case len(got) < n:
		missing := m.cq[len(got)]
		rule := missing.rule
		switch {
		case m.isPrefix(missing.c.WRID):
			rule = "POST-ORDER"
		case missing.state != RTS && missing.c.Status == WCSuccess:
			rule = "QP-FETCH-STATES"
		case m.qps[missing.c.QP].survived != "" && missing.c.Status == WCSuccess:
			rule = m.qps[missing.c.QP].survived
		}
		return dev(rule, "completions", fmt.Sprint(m.cqCompletions(n)), fmt.Sprint(got))
	case len(got) > n:
		extra := got[n]
		rule := "RECV-COMPLETION"
		switch {
		case extra.Status == WCWRFlushErr:
			rule = "QP-FLUSH-INPROGRESS"
		case m.completedBefore(extra.WRID):
			rule = "FETCH-ONCE"
		case m.isOutstanding(extra.WRID) && m.noFetchRule != "":
			rule = m.noFetchRule
		}
		return dev(rule, "completions", fmt.Sprint(m.cqCompletions(n)), fmt.Sprint(got))
	}
	return nil
}

// cqHas reports whether one of the first n expected completions is for id.
func (m *machine) cqHas(id uint64, n int) bool {
	for _, e := range m.cq[:n] {
		if e.c.WRID == id {
			return true
		}
	}
	return false
}

func (m *machine) cqCompletions(n int) []Completion {
	out := make([]Completion, n)
	for i := range n {
		out[i] = m.cq[i].c
	}
	return out
}

func (m *machine) isOutstanding(id uint64) bool {
	for _, e := range m.queue {
		if e.wr.ID == id {
			return true
		}
	}
	return false
}

func (m *machine) completedBefore(id uint64) bool {
	done := len(m.completedHistory) - len(m.cq)
	for _, x := range m.completedHistory[:done] {
		if x == id {
			return true
		}
	}
	return false
}

// checkEvents compares events as multisets: the async queue does not order
// events of different objects.
func (m *machine) checkEvents(want, got []Event) error {
	count := map[Event]int{}
	for _, e := range want {
		count[e]++
	}
	for _, e := range got {
		count[e]--
	}
	keys := make([]Event, 0, len(count))
	for e := range count {
		keys = append(keys, e)
	}
	slices.SortFunc(keys, func(a, b Event) int {
		if a.Type != b.Type {
			return int(a.Type) - int(b.Type)
		}
		return a.QP - b.QP
	})
	for _, e := range keys {
		c := count[e]
		if c == 0 {
			continue
		}
		if c < 0 && e.Type == EventQPLastWQEReached && e.QP >= 0 && e.QP < len(m.qps) && m.qps[e.QP].repeatOK {
			continue // a PerPacket device repeats it for packets met in ERR
		}
		rule := "LIMIT-FIRE"
		switch {
		case e.Type == EventSRQErr:
			rule = "SRQ-ERR-EVENT"
		case e.Type == EventQPLastWQEReached:
			rule = "QP-LAST-WQE"
			if c > 0 && e.QP >= 0 && e.QP < len(m.qps) && m.qps[e.QP].errRule != "" {
				rule = m.qps[e.QP].errRule // the error completion should have killed the QP
			}
		case c > 0 || m.armed:
			// A missing event, or one raised too early while armed.
		case m.firesThisArming > 0:
			rule = "LIMIT-ONCE"
		case !m.armedEver && m.createLimit:
			rule = "CREATE-LIMIT"
		default:
			rule = "LIMIT-DISARM"
		}
		return dev(rule, "events", fmt.Sprint(want), fmt.Sprint(got))
	}
	return nil
}
