package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Deviation is an observation the model does not allow.
type Deviation struct {
	// Rule is the rule whose check noticed the difference. Which rule the
	// device broke is the diagnosis's to say: see Diagnose.
	Rule string
	What string // the part of the observation that differs
	Want string // what the model allows
	Got  string // what was observed

	step int         // the step (1-based) that deviated
	diag *diagSource // what Diagnose replays
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
// machine must be discarded. The rule a Deviation names is the rule whose
// check noticed the difference; which rule the device broke is the
// diagnosis's to say (Diagnose).
func (m *machine) step(op Op, got *Observation) (Observation, error) {
	if _, ok := op.(CreateSRQ); !ok && !m.created {
		return Observation{}, unmodelled("%s before create_srq", op.Name())
	}
	if _, ok := op.(Poll); !ok && m.destroyed {
		return Observation{}, unmodelled("%s after destroy_srq succeeded", op.Name())
	}
	switch o := op.(type) {
	case CreateSRQ:
		return m.createSRQ(o, got)
	case CreateQP:
		return m.createQP(o, got)
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
	case CreateOther:
		return m.createOther(o, got)
	case DestroyQP:
		return m.destroyQP(o, got)
	case DestroySRQ:
		return m.destroySRQ(got)
	case InjectSRQError:
		m.touch("SRQ-ERR-EVENT")
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
	if m.qps[n].gone {
		return unmodelled("qp%d was destroyed", n)
	}
	return nil
}

// createQP creates a QP with the SRQ. Receive caps of 0 are what every
// QP asks for (QP-CREATE); above the device's limits they are ignored, or
// refused with EINVAL as the profile says (QP-SRQ-CAPS).
func (m *machine) createQP(o CreateQP, got *Observation) (Observation, error) {
	rule, want := "QP-CREATE", 0
	switch o.RecvCaps {
	case RecvCapsZero:
	case RecvCapsAboveWR:
		rule = "QP-SRQ-CAPS"
		if m.qpRecvCaps() != RecvCapsIgnored {
			want = EINVAL
		}
	case RecvCapsAboveSGE:
		rule = "QP-SRQ-CAPS"
		if m.qpRecvCaps() == RecvCapsBothChecked {
			want = EINVAL
		}
	default:
		return Observation{}, unmodelled("receive caps %d", o.RecvCaps)
	}
	m.touch(rule)
	obs := Observation{Errno: want, BadWR: -1}
	if got != nil && got.Errno != want {
		if !m.excuse(rule) {
			return obs, dev(rule, "return value", ErrnoName(want), ErrnoName(got.Errno))
		}
		obs.Errno = got.Errno
	}
	if obs.Errno == 0 {
		m.qps = append(m.qps, qp{typ: o.Type, state: Reset})
	}
	return obs, nil
}

// attached returns the number of QPs attached to the SRQ: created and not
// destroyed.
func (m *machine) attached() int {
	n := 0
	for _, q := range m.qps {
		if !q.gone {
			n++
		}
	}
	return n
}

// createOther predicts the create of a second SRQ, destroyed at once:
// above the device's max_srq_wr or max_sge it fails (CREATE-MAX: any
// errno, EINVAL in every provider read); within them it succeeds, except
// where an ibv_create_srq_ex goes past libibverbs' BASIC shortcut to the
// provider (CREATE-EX: with the CQ bit, 0 or EOPNOTSUPP; an unknown
// srq_type, EINVAL or EOPNOTSUPP). At a device limit the queue may need
// more memory than the host has: ENOMEM is then a resource failure, not a
// refusal (rxe_srq_from_init; real rxe on 6.1 advertises 2^20 WRs of 27
// SGEs, a 1 GiB queue, and a 1 GiB guest cannot back it).
func (m *machine) createOther(o CreateOther, got *Observation) (Observation, error) {
	if o.MaxWR == 0 || o.MaxSGE == 0 {
		return Observation{}, unmodelled("create of another SRQ with max_wr or max_sge 0")
	}
	above := o.MaxWR > m.caps.MaxSRQWR || o.MaxSGE > m.caps.MaxSRQSGE
	anyErr := func(e int) bool { return e != 0 }
	switch {
	case o.Variant == CreateExBadType && !above:
		return m.errnoIn("CREATE-EX", EINVAL, "EINVAL or EOPNOTSUPP", func(e int) bool { return e == EINVAL || e == EOPNOTSUPP }, got)
	case above:
		return m.errnoIn("CREATE-MAX", EINVAL, "an error", anyErr, got)
	case o.Variant == CreateExCQ:
		return m.errnoIn("CREATE-EX", 0, "0 or EOPNOTSUPP", func(e int) bool { return e == 0 || e == EOPNOTSUPP }, got)
	case o.Variant == CreateEx:
		return m.errnoIn("CREATE-EX", 0, "0", func(e int) bool { return e == 0 }, got)
	case o.Variant == CreatePlain && (o.MaxWR == m.caps.MaxSRQWR || o.MaxSGE == m.caps.MaxSRQSGE):
		return m.errnoIn("CREATE-MAX", 0, "0 or ENOMEM (not enough memory)", func(e int) bool { return e == 0 || e == ENOMEM }, got)
	case o.Variant == CreatePlain:
		return m.errnoIn("CREATE-MAX", 0, "0", func(e int) bool { return e == 0 }, got)
	}
	return Observation{}, unmodelled("create variant %d", o.Variant)
}

// errnoIn checks a verb whose return value must satisfy ok (want
// describes it); canonical is the model's own pick. A relaxed rule's
// departure is adopted; the verb changes nothing the model tracks.
func (m *machine) errnoIn(rule string, canonical int, want string, ok func(int) bool, got *Observation) (Observation, error) {
	m.touch(rule)
	obs := Observation{Errno: canonical, BadWR: -1}
	if got == nil {
		return obs, nil
	}
	if !ok(got.Errno) && !m.excuse(rule) {
		return obs, dev(rule, "return value", want, ErrnoName(got.Errno))
	}
	obs.Errno = got.Errno
	return obs, nil
}

// destroyQP destroys a quiet QP. What becomes of a QP's unpolled
// completions and unread events when it is destroyed differs between
// providers (mlx5 cleans its CQEs from the CQ, rxe leaves them; the kernel
// drops unread events of the QP), so the model predicts only a QP with
// none of them, nothing in flight and nothing buffered.
func (m *machine) destroyQP(o DestroyQP, got *Observation) (Observation, error) {
	if err := m.checkQP(o.QP); err != nil {
		return Observation{}, err
	}
	q := &m.qps[o.QP]
	switch {
	case q.filling != nil || len(q.pending) > 0:
		return Observation{}, unmodelled("destroy_qp qp%d with a message in flight or buffered", o.QP)
	case q.repeatOK || slices.ContainsFunc(m.events, func(e Event) bool { return e.QP == o.QP }):
		return Observation{}, unmodelled("destroy_qp qp%d with events of it unread", o.QP)
	case slices.ContainsFunc(m.cq, func(e cqe) bool { return e.c.QP == o.QP }):
		return Observation{}, unmodelled("destroy_qp qp%d with completions of it unpolled", o.QP)
	}
	q.gone = true
	return m.plainResult("DESTROY-BUSY", 0, got)
}

// destroySRQ is ibv_destroy_srq: EBUSY, and nothing changes, while a QP is
// attached; success once none is (rule DESTROY-BUSY). A relaxed device's
// outcome is adopted: the SRQ is gone when it said 0, else kept as it was.
func (m *machine) destroySRQ(got *Observation) (Observation, error) {
	m.touch("DESTROY-BUSY")
	want := 0
	if m.attached() > 0 {
		want = EBUSY
	}
	obs := Observation{Errno: want, BadWR: -1}
	if got != nil && got.Errno != want {
		if !m.excuse("DESTROY-BUSY") {
			return obs, dev("DESTROY-BUSY", "return value", ErrnoName(want), ErrnoName(got.Errno))
		}
		obs.Errno = got.Errno
	}
	m.destroyed = obs.Errno == 0
	return obs, nil
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

// errnoDiffers reports whether the observed errno of a verb contradicts
// want (0: success, else a failure of any errno), so that a caller can
// excuse the difference.
func errnoDiffers(want int, got *Observation) bool {
	if got == nil {
		return false
	}
	if want == 0 {
		return got.Errno != 0
	}
	return got.Errno == 0
}

func (m *machine) createSRQ(o CreateSRQ, got *Observation) (Observation, error) {
	if m.created {
		return Observation{}, unmodelled("a second create_srq")
	}
	if o.MaxWR == 0 || o.MaxWR > m.caps.MaxSRQWR || o.MaxSGE == 0 || o.MaxSGE > m.caps.MaxSRQSGE {
		return Observation{}, unmodelled("create_srq outside the device's limits (%d, %d)", m.caps.MaxSRQWR, m.caps.MaxSRQSGE)
	}
	switch o.Variant {
	case CreatePlain:
	case CreateEx:
		m.touch("CREATE-EX") // libibverbs makes it an ibv_create_srq: all that follows holds
	default:
		return Observation{}, unmodelled("the SRQ under test made %s: only ibv_create_srq and its ibv_create_srq_ex equivalent are", o.Variant)
	}
	m.created = true
	report := m.capacityReport()
	obs := Observation{BadWR: -1, Attr: SRQAttr{MaxWR: m.reportedCapacity(o.MaxWR), MaxSGE: o.MaxSGE}}
	m.touch("CREATE-ATTR")
	adopted := false
	if got != nil {
		if got.Errno != 0 {
			return obs, dev("CREATE-ATTR", "return value", 0, ErrnoName(got.Errno))
		}
		a := got.Attr
		var d *Deviation
		switch {
		case report == ReportAtLeast && a.MaxWR < o.MaxWR:
			d = dev("CREATE-ATTR", "max_wr written back", fmt.Sprintf(">= %d", o.MaxWR), a.MaxWR)
		case report != ReportAtLeast && a.MaxWR != obs.Attr.MaxWR:
			d = dev("CREATE-ATTR", "max_wr written back", fmt.Sprintf("%d (%s)", obs.Attr.MaxWR, report), a.MaxWR)
		case a.MaxSGE < o.MaxSGE:
			d = dev("CREATE-ATTR", "max_sge written back", fmt.Sprintf(">= %d", o.MaxSGE), a.MaxSGE)
		case uint64(a.MaxWR) > mostHeld(o.MaxWR, m.caps.MaxSRQWR):
			d = dev("CREATE-ATTR", "max_wr written back", fmt.Sprintf(">= %d and at most %d (max_srq_wr, or the request rounded up)", o.MaxWR, mostHeld(o.MaxWR, m.caps.MaxSRQWR)), a.MaxWR)
		case uint64(a.MaxSGE) > mostHeld(o.MaxSGE, m.caps.MaxSRQSGE):
			d = dev("CREATE-ATTR", "max_sge written back", fmt.Sprintf(">= %d and at most %d (max_srq_sge, or the request rounded up)", o.MaxSGE, mostHeld(o.MaxSGE, m.caps.MaxSRQSGE)), a.MaxSGE)
		}
		if d != nil && !m.excuse("CREATE-ATTR") {
			return obs, d
		}
		adopted = d != nil
		if !adopted {
			obs.Attr = a
		}
		obs.Attr.SRQLimit = 0
	}
	m.capacity, m.maxSGE = obs.Attr.MaxWR, obs.Attr.MaxSGE
	m.capExact = m.capacityRule() != CapacityAtLeast
	if m.capacityRule() == CapacityPow2 {
		m.capacity = m.realCapacity(o.MaxWR)
	}
	if adopted {
		obs = *got // the report departs; the SRQ holds what the request gives
	}
	if o.Limit > 0 {
		m.touch("CREATE-LIMIT")
		if m.limitAtCreate() == Accepted {
			m.armed, m.limit, m.threshold = true, o.Limit, o.Limit
		}
	}
	return obs, nil
}

// mostHeld is the most WRs (or SGEs) an SRQ can hold, or a create or query
// write back, for a request of req on a device whose limit is limit
// (max_srq_wr, max_srq_sge; man ibv_query_device): the limit, or the
// request rounded up to a power of two (rxe rounds a request of the limit
// itself past it). More is a wild value, not a rounding.
func mostHeld(req, limit uint32) uint64 { return max(uint64(limit), 2*uint64(req)+1) }

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

// hasInvalidKey reports whether a WR names a key that is not valid.
func (m *machine) hasInvalidKey(w WR) bool {
	return slices.ContainsFunc(w.SGEs, func(s SGE) bool { return !m.validKey(s.Key) })
}

// notAllReady reports whether some attached QP is not in RTS, or none is
// attached: the states POST-ANY-STATE is about.
func (m *machine) notAllReady() bool {
	return m.attached() == 0 || slices.ContainsFunc(m.qps, func(q qp) bool { return !q.gone && q.state != RTS })
}

// post applies a post: checked against what the device did when got is
// set (postObserved), else with the canonical outcome.
func (m *machine) post(o Post, got *Observation) (Observation, error) {
	if got != nil {
		return m.postObserved(o, got)
	}
	obs := Observation{BadWR: -1}
	if m.copyMode == 0 && len(o.WRs) > 0 {
		m.copyMode = 1 + m.choose("POST-COPY", 2)
	}
	for i, w := range o.WRs {
		if w.NumSGE >= 0 && w.NumSGE != len(w.SGEs) {
			return obs, unmodelled("wr %d: num_sge %d with %d SGEs", w.ID, w.NumSGE, len(w.SGEs))
		}
		bad, err := m.sgeInvalid(w)
		if err != nil {
			return obs, err
		}
		full := m.occupied() >= int(m.capacity)+m.slack
		if full && !m.capExact {
			m.capExact = true // canonically the queue is full: an ENOMEM here pins the capacity
		}
		errno := 0
		switch {
		case bad && full:
			errno = ENOMEM
			if m.checkOrder() == SGEFirst {
				errno = EINVAL
			}
		case bad:
			errno = EINVAL
		case full:
			errno = ENOMEM
		}
		if errno != 0 {
			obs.Errno, obs.BadWR = m.postErr(errno), i
			return obs, nil
		}
		m.enqueue(w)
	}
	return obs, nil
}

func errnoIs(got, want int) bool { return got == want || got == -want }

// dropsPrefix reports whether a failing list's prefix is dropped with it:
// a relaxed POST-ORDER device does so from its first failing list on.
func (m *machine) dropsPrefix() bool {
	if m.orderMode == 0 {
		m.orderMode = 1 + m.choose("POST-ORDER", 2)
	} else {
		m.touch("POST-ORDER")
	}
	return m.orderMode == 2
}

// postObserved checks a post against what the device did. The device's
// bad_wr says where it stopped, so the model need not guess: every WR
// before it was taken, and it was refused; a departure is admitted only
// where a relaxed rule allows it. Only bad_wr itself, when POST-BADWR is
// relaxed, and the reason for a refusal the model cannot explain are
// branched on.
func (m *machine) postObserved(o Post, got *Observation) (Observation, error) {
	if got.Killed != "" {
		return m.postKilled(o, got)
	}
	n := len(o.WRs)
	if m.copyMode == 0 && n > 0 {
		m.copyMode = 1 + m.choose("POST-COPY", 2)
	}
	m.touch("POST-BADWR")
	stopAt := n
	switch {
	case got.Errno == 0 && got.BadWR >= 0:
		if !m.excuse("POST-BADWR") {
			return Observation{BadWR: -1}, dev("POST-BADWR", "bad_wr", "unset on success", got.BadWR)
		}
	case got.Errno != 0:
		stopAt = got.BadWR
		var alts []int
		switch {
		case got.BadWR < 0 || got.BadWR >= n:
			for i := range n {
				alts = append(alts, i)
			}
		default:
			for _, i := range []int{got.BadWR - 1, got.BadWR + 1} {
				if i >= 0 && i < n {
					alts = append(alts, i)
				}
			}
		}
		if m.relaxed("POST-BADWR") && len(alts) > 0 {
			k := 0
			if got.BadWR < 0 || got.BadWR >= n {
				k = 1 + m.branch(len(alts)) // misreported for certain
				m.excuse("POST-BADWR")
			} else {
				k = m.choose("POST-BADWR", 1+len(alts))
			}
			if k > 0 {
				stopAt = alts[k-1]
			}
		}
		if stopAt < 0 || stopAt >= n {
			return Observation{BadWR: -1}, dev("POST-BADWR", "bad_wr", fmt.Sprintf("0 to %d", n-1), got.BadWR)
		}
	}
	notReady := m.notAllReady()
	// POST-ATOMIC relaxed: a post that returned 0 may have been
	// overwritten by a concurrent one, its WRs lost.
	lost := got.Errno == 0 && n > 0 && m.relaxed("POST-ATOMIC") && m.may("POST-ATOMIC")
	queued := 0 // WRs of this post the queue took
	for i, w := range o.WRs {
		if w.NumSGE >= 0 && w.NumSGE != len(w.SGEs) {
			return Observation{BadWR: -1}, unmodelled("wr %d: num_sge %d with %d SGEs", w.ID, w.NumSGE, len(w.SGEs))
		}
		bad, err := m.sgeInvalid(w)
		if err != nil {
			return Observation{BadWR: -1}, err
		}
		m.touch("POST-SGE")
		full := m.occupied() >= int(m.capacity)+m.slack
		if full && !m.capExact {
			// The real capacity is unknown: the device may take more.
			switch {
			case i < stopAt:
				full = false // taken: there was room
				m.capacity = uint32(m.occupied() + 1)
			case !bad || errnoIs(got.Errno, ENOMEM):
				m.capExact = true // an ENOMEM here pins the capacity
			default:
				full = false // refused as a bad WR: says nothing of the capacity
			}
		}
		if full || m.occupied()+1 >= int(m.capacity) {
			m.touch("POST-FULL")
			if m.fetched > 0 {
				m.touch("SLOT-FREE")
			}
		}
		if notReady {
			m.touch("POST-ANY-STATE")
		}
		invalidKey := m.hasInvalidKey(w)
		if invalidKey {
			m.touch("POST-NO-KEY-CHECK")
		}
		if i < stopAt {
			// The device took it.
			if bad && !m.excuse("POST-SGE") {
				return Observation{BadWR: -1}, dev("POST-SGE", "result", fmt.Sprintf("EINVAL with bad_wr=%d (wr%d)", i, w.ID), got.Describe(o))
			}
			if full && m.leftOut(-1) {
				full = false // a WR posted before never reached the queue: there was room
			}
			if full {
				if !m.excuse("POST-FULL") {
					return Observation{BadWR: -1}, dev("POST-FULL", "result", fmt.Sprintf("ENOMEM with bad_wr=%d (wr%d)", i, w.ID), got.Describe(o))
				}
				m.slack = m.occupied() + 1 - int(m.capacity) // it holds more: learn how many
			}
			if !lost {
				m.enqueue(w)
				queued++
			}
			continue
		}
		// The device refused it: for the model's reasons, or for one a
		// relaxed rule admits (the queue full where the model has room, the
		// WR invalid where the model finds it valid, any refusal where the
		// rule forbids none).
		type reason struct {
			rule string
			fix  func()
			any  bool
		}
		var rs []reason
		if bad || full {
			rs = append(rs, reason{})
		}
		if !full {
			if errnoIs(got.Errno, ENOMEM) && m.fetched > m.held+m.leaked && m.relaxed("SLOT-FREE") {
				rs = append(rs, reason{"SLOT-FREE", func() { m.leaked += max(1, int(m.capacity)-m.occupied()); full = true }, false})
			}
			if m.relaxed("POST-FULL") {
				// It holds fewer than the model thought.
				rs = append(rs, reason{"POST-FULL", func() { full, m.slack = true, m.occupied()-int(m.capacity) }, false})
			}
		} else if bad && m.relaxed("POST-FULL") {
			// It holds more, and refused the WR as bad only.
			rs = append(rs, reason{"POST-FULL", func() { full, m.slack = false, m.occupied()+1-int(m.capacity) }, false})
		}
		if !bad && m.relaxed("POST-SGE") {
			rs = append(rs, reason{"POST-SGE", func() { bad = true }, false})
		}
		if notReady && m.relaxed("POST-ANY-STATE") {
			rs = append(rs, reason{"POST-ANY-STATE", nil, true})
		}
		if invalidKey && m.relaxed("POST-NO-KEY-CHECK") {
			rs = append(rs, reason{"POST-NO-KEY-CHECK", nil, true})
		}
		if len(rs) == 0 {
			r := "POST-SGE"
			if errnoIs(got.Errno, ENOMEM) {
				r = "POST-FULL"
			}
			return Observation{BadWR: -1}, dev(r, "result", fmt.Sprintf("wr%d posted", w.ID), got.Describe(o))
		}
		pick := rs[0]
		if len(rs) > 1 {
			pick = rs[m.branch(len(rs))]
		}
		if pick.rule != "" {
			m.excuse(pick.rule)
		}
		if pick.fix != nil {
			pick.fix()
		}
		errno, rule, anyErrno := 0, pick.rule, pick.any
		switch {
		case anyErrno:
			errno = EINVAL
		case bad && full:
			m.touch("POST-CHECK-ORDER")
			errno, rule = ENOMEM, "POST-CHECK-ORDER"
			if m.checkOrder() == SGEFirst {
				errno = EINVAL
			}
		case bad:
			errno, rule = EINVAL, "POST-SGE"
		case full:
			errno, rule = ENOMEM, "POST-FULL"
		}
		if i > 0 && m.dropsPrefix() {
			// The failing list's prefix was dropped with it (what of it
			// the queue still holds: a departure may have taken some).
			k := min(queued, len(m.queue))
			m.queue = m.queue[:len(m.queue)-k]
			m.posted -= k
		}
		m.touch("POST-RETURN")
		want := m.postErr(errno)
		if !anyErrno && got.Errno != want {
			r, other := rule, 0
			switch {
			case errnoIs(got.Errno, errno) || got.Errno == -1:
				r = "POST-RETURN" // the right error, the wrong convention
			case errno != ENOMEM && errnoIs(got.Errno, ENOMEM):
				r, other = "POST-FULL", ENOMEM // refused as full: POST-FULL's errno, not the reason's
			case errno != EINVAL && errnoIs(got.Errno, EINVAL):
				r, other = "POST-SGE", EINVAL // refused as invalid
			}
			if !m.excuse(r) {
				return Observation{Errno: want, BadWR: i}, dev(r, "return value", ErrnoName(want), ErrnoName(got.Errno))
			}
			if other != 0 && got.Errno != m.postErr(other) && !m.excuse("POST-RETURN") {
				// That errno, and in the wrong convention.
				return Observation{Errno: want, BadWR: i}, dev("POST-RETURN", "return value", ErrnoName(m.postErr(other)), ErrnoName(got.Errno))
			}
		}
		return *got, nil
	}
	return *got, nil
}

// enqueue adds a posted WR: a copy, or, where a relaxed POST-COPY device
// keeps the caller's WR, what the harness scribbled over it.
func (m *machine) enqueue(w WR) {
	cp := w
	cp.SGEs = append([]SGE(nil), w.SGEs...)
	e := entry{wr: cp}
	if m.copyMode == 2 {
		e.wr.ID = ^w.ID
		for k := range e.wr.SGEs {
			e.wr.SGEs[k] = SGE{Length: 0xdeadbeef, Key: -1}
		}
		e.loose = true
	}
	m.queue = append(m.queue, e)
	m.posted++
}

// postKilled checks a post that killed the process making it (the driver
// made it in a child process). Only a WR the provider must refuse can
// explain that, as a departure from the rule that makes it invalid: a
// negative num_sge, which POST-SGE says is refused with EINVAL. The SRQ
// holds nothing of the list: the child's SRQ took whatever it took.
func (m *machine) postKilled(o Post, got *Observation) (Observation, error) {
	i := slices.IndexFunc(o.WRs, func(w WR) bool { return w.NumSGE < 0 })
	if i < 0 {
		return Observation{BadWR: -1}, unmodelled("a post of %d WRs, none with a negative num_sge, killed the process (%s)", len(o.WRs), got.Killed)
	}
	m.touch("POST-SGE")
	err := dev("POST-SGE", "result", fmt.Sprintf("EINVAL with bad_wr=%d (wr%d, num_sge %d)", i, o.WRs[i].ID, o.WRs[i].NumSGE), "the process killed by "+got.Killed)
	if m.excuse("POST-SGE") {
		return *got, nil
	}
	return Observation{BadWR: -1}, err
}

func (m *machine) postRecv(o PostRecv, got *Observation) (Observation, error) {
	if err := m.checkQP(o.QP); err != nil {
		return Observation{}, err
	}
	if got != nil && got.Killed != "" {
		// A verb that kills its caller refuses nothing: the process is gone.
		err := dev("POST-QP-RQ", "return value", "an error, with bad_wr on the first WR", "the process killed by "+got.Killed)
		if m.excuse("POST-QP-RQ") {
			return *got, nil
		}
		return Observation{}, err
	}
	obs, err := failResult("POST-QP-RQ", m.postErr(EINVAL), got)
	want := 0
	if m.postRecvBadWR() == BadWRNull {
		want = -1
	}
	obs.BadWR = want
	m.touch("POST-QP-RQ")
	if err == nil && got != nil && got.BadWR != want {
		err = dev("POST-QP-RQ", "bad_wr", want, got.BadWR)
	}
	if err != nil && m.excuse("POST-QP-RQ") {
		return *got, nil
	}
	return obs, err
}

func (m *machine) query(got *Observation) (Observation, error) {
	rule := m.queryRule()
	m.touch("QUERY-ATTR")
	switch rule {
	case QueryENOSYS, QueryEOPNOTSUPP:
		want := ENOSYS
		if rule == QueryEOPNOTSUPP {
			want = EOPNOTSUPP
		}
		obs := Observation{Errno: want, BadWR: -1}
		if got == nil || got.Errno == want || got.Errno == -want {
			return obs, nil
		}
		if !m.excuse("QUERY-ATTR") {
			return obs, dev("QUERY-ATTR", "return value", ErrnoName(want), ErrnoName(got.Errno))
		}
		if got.Errno != 0 {
			return *got, nil // another error: nothing to check
		}
		rule = QuerySame // it answered after all: what it says is checked
	}
	obs := Observation{BadWR: -1, Attr: SRQAttr{MaxWR: m.capacity, MaxSGE: m.maxSGE, SRQLimit: m.limit}}
	resized := m.resized
	m.resized = false
	if got == nil {
		if !m.capExact && rule == QuerySame {
			m.capExact = m.capacityRule() != CapacityAtLeast
		}
		return obs, nil
	}
	if got.Errno != 0 {
		if m.excuse("QUERY-ATTR") {
			return *got, nil
		}
		return obs, dev("QUERY-ATTR", "return value", 0, ErrnoName(got.Errno))
	}
	a := got.Attr
	if resized {
		m.touch("RESIZE-CAPACITY")
		if m.armed {
			m.touch("MODIFY-ONLY-MASKED")
		}
	}
	var d *Deviation
	switch {
	case rule == QueryAtLeast || !m.capExact:
		if a.MaxWR < m.capacity || uint64(a.MaxWR) > mostHeld(m.capacity, m.caps.MaxSRQWR) {
			d = dev("QUERY-ATTR", "max_wr", fmt.Sprintf(">= %d and at most %d", m.capacity, mostHeld(m.capacity, m.caps.MaxSRQWR)), a.MaxWR)
		} else if rule == QuerySame {
			// The query pins a capacity that was only a lower bound.
			m.capacity, m.capExact = a.MaxWR, m.capacityRule() != CapacityAtLeast
		}
	case a.MaxWR != m.capacity:
		d = dev("QUERY-ATTR", "max_wr", m.capacity, a.MaxWR)
	}
	if d == nil && a.MaxSGE != m.maxSGE {
		d = dev("QUERY-ATTR", "max_sge", m.maxSGE, a.MaxSGE)
	}
	if d != nil && !m.excuse("QUERY-ATTR") {
		return obs, d
	}
	m.touch("QUERY-LIMIT")
	if a.SRQLimit != m.limit && !m.excuse("QUERY-LIMIT") {
		return obs, dev("QUERY-LIMIT", "srq_limit", m.limit, a.SRQLimit)
	}
	return *got, nil
}

func (m *machine) arm(o Arm, got *Observation) (Observation, error) {
	if o.Limit == 0 {
		if !m.may("LIMIT-DISARM") {
			m.armed, m.limit = false, 0
		}
		return m.plainResult("LIMIT-DISARM", 0, got)
	}
	over := o.Limit > m.capacity
	if m.limitBound() == LimitBelowCapacity {
		over = o.Limit >= m.capacity
	}
	if over || o.Limit+1 >= m.capacity {
		m.touch("LIMIT-BOUND")
	}
	if over && !m.capExact && got != nil && got.Errno == 0 && !m.may("LIMIT-BOUND") {
		// The capacity is only a lower bound: a device that takes the
		// limit holds at least that many WRs (unless it broke the bound,
		// where LIMIT-BOUND is relaxed).
		m.capacity, over = o.Limit, false
	}
	if over {
		if !errnoDiffers(EINVAL, got) || !m.excuse("LIMIT-BOUND") {
			return m.plainResult("LIMIT-BOUND", EINVAL, got)
		}
		// Accepted above the bound: it arms like any other limit.
	}
	if errnoDiffers(0, got) {
		if m.excuse("LIMIT-ARM") {
			return *got, nil // refused: nothing changes
		}
		return m.plainResult("LIMIT-ARM", 0, got)
	}
	if m.may("LIMIT-ARM") {
		return m.plainResult("LIMIT-ARM", 0, got) // accepted, but not armed
	}
	m.armed, m.limit, m.threshold, m.firesThisArming = true, o.Limit, o.Limit, 0
	if uint32(len(m.queue)) < o.Limit {
		m.touch("LIMIT-FIRE")
		if m.armBelow() == FireAtOnce {
			m.fireLimit()
		}
	}
	return m.plainResult("LIMIT-ARM", 0, got)
}

func (m *machine) resizeSRQ(o Resize, got *Observation) (Observation, error) {
	m.touch("RESIZE-OPTIONAL")
	if m.resize() == ResizeUnsupported || !m.caps.Resize {
		obs, err := failResult("RESIZE-OPTIONAL", EOPNOTSUPP, got)
		if err != nil && m.excuse("RESIZE-OPTIONAL") {
			return *got, nil
		}
		return obs, err
	}
	if o.MaxWR == 0 || o.MaxWR > m.caps.MaxSRQWR {
		m.touch("RESIZE-BOUNDS")
		if errnoDiffers(EINVAL, got) && m.excuse("RESIZE-BOUNDS") {
			// Accepted out of bounds: what it holds now is unknown, at
			// least what it holds.
			m.capacity, m.capExact = uint32(m.occupied()), false
			return *got, nil
		}
		return m.plainResult("RESIZE-BOUNDS", EINVAL, got)
	}
	if m.armed && o.MaxWR < m.limit {
		m.touch("RESIZE-BELOW-LIMIT")
		if m.resizeBelowLimit() == Rejected {
			return m.plainResult("RESIZE-BELOW-LIMIT", EINVAL, got)
		}
	}
	newCap := m.realCapacity(o.MaxWR)
	exact := m.capacityReport() != ReportAtLeast || m.capacityRule() == CapacityPow2
	if int(newCap) < m.occupied() {
		m.touch("RESIZE-BELOW-COUNT")
		// The new capacity must hold the outstanding WRs. Where the report
		// is "at least the request", a device may round up far enough.
		if !exact && got != nil && got.Errno == 0 && m.may("RESIZE-BELOW-COUNT") {
			// Or it took the request as it was and dropped the newest.
			drop := min(len(m.queue), m.occupied()-int(newCap))
			m.queue = m.queue[:len(m.queue)-drop]
			m.posted -= drop
			m.capacity, m.capExact, m.resized = newCap, true, true
			return *got, nil
		}
		if exact || got == nil || got.Errno != 0 {
			if errnoDiffers(EINVAL, got) && m.excuse("RESIZE-BELOW-COUNT") {
				// Accepted: the newest WRs that no longer fit are gone.
				drop := min(len(m.queue), m.occupied()-int(newCap))
				m.queue = m.queue[:len(m.queue)-drop]
				m.posted -= drop
				m.capacity, m.capExact, m.resized = newCap, exact && m.capacityRule() != CapacityAtLeast, true
				return *got, nil
			}
			return m.plainResult("RESIZE-BELOW-COUNT", EINVAL, got)
		}
		newCap = uint32(m.occupied())
	}
	if errnoDiffers(0, got) && errnoIs(got.Errno, EINVAL) && m.fetched > m.held+m.leaked &&
		int(newCap) >= m.occupied() && m.relaxed("SLOT-FREE") && m.excuse("SLOT-FREE") {
		// Refused as below the count: slots that never came back hold it.
		m.leaked += int(newCap) - m.occupied() + 1
		return *got, nil
	}
	if int(o.MaxWR) < m.occupied() {
		m.touch("RESIZE-BELOW-COUNT")
		if errnoDiffers(0, got) && m.excuse("RESIZE-BELOW-COUNT") {
			return *got, nil // refused for the request, not the rounded size
		}
	}
	if errnoDiffers(0, got) {
		if m.excuse("RESIZE-OPTIONAL") {
			return *got, nil // advertised, valid, and refused
		}
		return m.plainResult("RESIZE-OPTIONAL", 0, got)
	}
	// No driver writes the new size back: it is exact where the profile
	// rounds deterministically, and otherwise a lower bound that the next
	// query or ENOMEM pins.
	if !m.may("RESIZE-CAPACITY") {
		m.capacity = newCap
		m.capExact = exact && m.capacityRule() != CapacityAtLeast
	} else {
		// The departure: the device holds some other number of WRs, at
		// least those it holds; the next query or ENOMEM says which.
		m.capacity, m.capExact = uint32(m.occupied()), false
	}
	if m.armed && m.may("MODIFY-ONLY-MASKED") {
		m.armed, m.limit = false, 0 // the resize touched the limit too
	}
	m.resized = true
	return m.plainResult("RESIZE-OPTIONAL", 0, got)
}

func (m *machine) modifyQP(o ModifyQP, got *Observation) (Observation, error) {
	if err := m.checkQP(o.QP); err != nil {
		return Observation{}, err
	}
	q := &m.qps[o.QP]
	from := q.state
	if q.filling != nil && o.State != Err {
		return Observation{}, unmodelled("modify_qp qp%d to %s while it is filling a WR", o.QP, o.State)
	}
	legal := legalTransition(from, o.State)
	m.touch("QP-TRANSITIONS")
	want := 0
	if !legal {
		want = EINVAL
	}
	if errnoDiffers(want, got) {
		if !m.excuse("QP-TRANSITIONS") {
			if legal {
				return m.plainResult("QP-TRANSITIONS", 0, got)
			}
			return failResult("QP-TRANSITIONS", EINVAL, got)
		}
		legal = !legal // adopt what the device did
	}
	if !legal {
		return failResult("QP-TRANSITIONS", EINVAL, got)
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
				if !q.state.Fetches() {
					break // an error completion moved it to ERR: the rest are not processed
				}
				m.deliverNew(o.QP, msg)
			}
		}
	}
	if got != nil {
		return *got, nil
	}
	return m.plainResult("QP-TRANSITIONS", 0, got)
}

// peerResult checks the peer's outcome against the allowed set; relaxed,
// rule admits any outcome.
func (m *machine) peerResult(rule string, allowed PeerSet, got *Observation, stake ...string) (Observation, error) {
	obs := Observation{BadWR: -1, Peer: allowed.First()}
	if got != nil && got.Peer == PeerSilent {
		if err := silentPeer(rule, allowed); err != nil {
			return obs, err
		}
		obs.Peer = got.Peer
		return obs, nil
	}
	if got != nil {
		if !allowed.Has(got.Peer) && !m.excuseStake(cqe{stake: stake}, rule) {
			return obs, dev(rule, "peer outcome", allowed, got.Peer)
		}
		obs.Peer = got.Peer
	}
	return obs, nil
}

// dropped is what a peer may see for a message the receiver drops.
func dropped(rc bool) PeerSet {
	if rc {
		return Peers(PeerRNR, PeerError)
	}
	return Peers(PeerOK)
}

func (m *machine) arrive(o Arrive, got *Observation) (Observation, error) {
	if err := m.checkQP(o.QP); err != nil {
		return Observation{}, err
	}
	q := &m.qps[o.QP]
	if !o.Msg.Opcode.ValidOn(q.typ) {
		return Observation{}, unmodelled("%s on a %s QP", o.Msg.Opcode, q.typ)
	}
	m.stake = nil
	if q.filling != nil {
		return Observation{}, unmodelled("arrive on qp%d while it is filling a WR", o.QP)
	}
	rc := q.typ == RC
	if !q.state.Fetches() {
		if q.state != Err {
			m.touch("QP-BEFORE-RTR")
			if m.beforeRTR() == Buffered {
				if o.FirstPacketOnly {
					return Observation{}, unmodelled("a partial message to a QP that buffers")
				}
				q.pending = append(q.pending, o.Msg)
				return m.peerResult("QP-BEFORE-RTR", Peers(PeerOK, PeerRNR, PeerError), got)
			}
		}
		if q.state == Err && m.lastWQE() == Raise && m.lastWQERepeat() == PerPacket {
			q.repeatOK = true
		}
		if !m.may("QP-NOFETCH-STATES") {
			if rc {
				return m.peerResult("QP-NOFETCH-STATES", Peers(PeerError), got)
			}
			return m.peerResult("QP-NOFETCH-STATES", Peers(PeerOK), got)
		}
		// The departure: the QP processes the message as if it were ready.
		m.stake = append(m.stake, "QP-NOFETCH-STATES")
	} else if q.state != RTS {
		if m.may("QP-FETCH-STATES") {
			return m.peerResult("QP-FETCH-STATES", dropped(rc), got)
		}
		m.stake = append(m.stake, "QP-FETCH-STATES")
	}
	// The opcodes whose consumption a device may get wrong: every one
	// FETCH-OPCODES names but the plain Send, which every other rule of
	// receiving presumes.
	consumes, loose := o.Msg.Opcode.Consumes(), false
	if o.Msg.Opcode != Send && (o.Msg.Opcode != SendImm || !m.narrow) {
		if m.may("FETCH-OPCODES") {
			consumes, loose = !consumes, true
		}
		m.stake = append(m.stake, "FETCH-OPCODES")
	}
	if !consumes {
		return m.peerResult("FETCH-OPCODES", Peers(PeerOK), got)
	}
	if m.srqErr {
		if !m.may("SRQ-ERR-NOFETCH") {
			if rc {
				return m.peerResult("SRQ-ERR-NOFETCH", Peers(PeerRNR, PeerError), got)
			}
			return m.peerResult("SRQ-ERR-NOFETCH", Peers(PeerOK), got)
		}
	}
	if len(m.recent) > 0 && !o.FirstPacketOnly && m.relaxed("FETCH-ONCE") {
		if k := m.choose("FETCH-ONCE", 1+len(m.recent)); k > 0 {
			// A fetch racing others was handed a WR one of them took.
			before := len(m.cq)
			allowed := m.deliverEntry(o.QP, m.recent[k-1], o.Msg, loose)
			rule := "FETCH-ONCE"
			if len(m.cq) > before {
				rule = m.cq[len(m.cq)-1].rule
			}
			return m.peerResult(rule, allowed, got)
		}
	}
	if len(m.queue) > 0 && got != nil && rc && got.Peer == PeerRNR {
		// The device found the SRQ empty: where POST-ORDER is relaxed, the
		// WRs the model holds never reached its queue.
		m.leftOut(len(m.queue))
	}
	if len(m.queue) == 0 {
		m.touch("RECV-RNR")
		if rc {
			if m.emptyRC() == EmptyTerminate {
				m.enterErr(o.QP)
				return m.peerResult("RECV-RNR", Peers(PeerError), got)
			}
			return m.peerResult("RECV-RNR", Peers(PeerRNR), got)
		}
		return m.peerResult("RECV-RNR", Peers(PeerOK), got)
	}
	if o.FirstPacketOnly {
		e := m.fetch()
		q.filling = &inflight{wr: e.wr, msg: o.Msg}
		return m.peerResult("QP-FLUSH-INPROGRESS", Peers(PeerOK, PeerRNR, PeerError), got)
	}
	before := len(m.cq)
	e := m.fetch()
	allowed := m.deliverEntry(o.QP, e, o.Msg, loose)
	rule, stake := "RECV-COMPLETION", m.stake
	if len(m.cq) > before {
		// The rules of what the model just completed.
		rule, stake = m.cq[len(m.cq)-1].rule, m.cq[len(m.cq)-1].stake
	}
	return m.peerResult(rule, allowed, got, stake...)
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
	return m.peerResult("RECV-COMPLETION", m.deliver(o.QP, f.wr, f.msg), got)
}

// fetch takes the head WR (FIFO) and applies the limit rule. Relaxed
// FETCH-FIFO lets the device fetch from the wrong end, the newest first,
// from its first fetch on.
func (m *machine) fetch() entry {
	pos := 0
	if len(m.queue) > 1 {
		if m.fifoMode == 0 {
			m.fifoMode = 1 + m.choose("FETCH-FIFO", 2)
		} else {
			m.touch("FETCH-FIFO")
		}
		if m.fifoMode == 2 {
			pos = len(m.queue) - 1
		}
	}
	e := m.queue[pos]
	m.queue = append(clip(m.queue[:pos]), m.queue[pos+1:]...)
	m.fetched++
	if m.relax != nil {
		m.lastFetched = e.wr
	}
	if m.relaxed("FETCH-ONCE") {
		// Racing fetches: as many as there are QPs at once, at most 4.
		m.recent = append(clip(m.recent), e)
		if len(m.recent) > min(4, len(m.qps)) {
			m.recent = m.recent[1:]
		}
	}
	if m.slotFree() == FreeAtPoll {
		m.held++
	}
	m.checkLimit()
	return e
}

// deliverNew delivers a message to a QP in a fetching state and returns what
// the peer may see.
func (m *machine) deliverNew(n int, msg Message) PeerSet {
	m.stake = nil
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
	return m.deliverEntry(n, m.fetch(), msg, false)
}

// deliverEntry fills a fetched entry; a loose one (or a message a departure
// made consume) completes with only its wr_id and QP known.
func (m *machine) deliverEntry(n int, e entry, msg Message, loose bool) PeerSet {
	if !e.loose && !loose {
		return m.deliver(n, e.wr, msg)
	}
	c := Completion{WRID: e.wr.ID, QP: n}
	m.completeLoose(c, AnyError|Statuses(WCSuccess), "RECV-COMPLETION", true)
	if m.qps[n].typ == RC && m.branch(2) == 1 {
		m.enterErr(n) // an error completion on RC may have killed the QP
	}
	return Peers(PeerOK, PeerRNR, PeerError)
}

// raiseErrorEvent raises, where the profile says a receive error does, the
// affiliated event of an RC QP that an error completion moved to ERR:
// QP_FATAL for a message too long, QP_ACCESS_ERR for a bad key
// (QP-ERROR-EVENT).
func (m *machine) raiseErrorEvent(n int, oversize bool) {
	m.touch("QP-ERROR-EVENT")
	if m.errorEvent() != Raise {
		return
	}
	ev := EventQPAccessErr
	if oversize {
		ev = EventQPFatal
	}
	m.fire(ev, n)
}

// nearFit reports whether whether a message fits its WR is a close call
// that RECV-FIT governs: the length within one byte of the WR's room, or a
// room past what a 32-bit sum of SGE lengths holds.
func (m *machine) nearFit(need, room uint64) bool {
	return need+1 >= room && need <= room+1 || room > math.MaxInt32
}

// deliver fills a fetched WR with a message and completes it.
func (m *machine) deliver(n int, w WR, msg Message) PeerSet {
	q := &m.qps[n]
	rc := q.typ == RC
	c := Completion{WRID: w.ID, QP: n, HasImm: msg.Opcode.HasImm(), Imm: msg.Imm}
	if msg.Opcode.HasImm() {
		m.touch("RECV-IMM")
		m.stake = append(m.stake, "RECV-IMM")
	}
	if !msg.Opcode.Scatters() {
		m.stake = append(m.stake, "RECV-WRITE-IMM")
	}
	if !msg.Opcode.Scatters() && !m.may("RECV-WRITE-IMM") {
		// RDMA Write with Immediate: the payload goes to the remote
		// address; the WR only carries the completion.
		c.Opcode, c.ByteLen = WCRecvRDMAWithImm, msg.Len
		m.complete(c, Statuses(WCSuccess), "RECV-WRITE-IMM")
		return Peers(PeerOK)
	}
	need, byteLen := uint64(msg.Len), uint64(msg.Len)
	noGRH := false
	if !rc {
		grh := uint64(UDHeader)
		// A device that ignores the GRH area ignores it on every UD
		// message: one persistent choice, not one per message, or the
		// candidates double with every arrival.
		if m.grhMode == 0 {
			m.grhMode = 1 + m.choose("UD-GRH", 2)
		} else {
			m.touch("UD-GRH")
		}
		if m.grhMode == 2 {
			grh, noGRH = 0, true
		}
		m.stake = append(m.stake, "UD-GRH")
		need, byteLen = need+grh, byteLen+grh
	}
	room := m.capacityOf(w)
	oversize := need > room
	if slices.ContainsFunc(w.SGEs, func(s SGE) bool { return s.Length == 0 }) {
		m.touch("SGE-LEN0")
		m.stake = append(m.stake, "SGE-LEN0")
	}
	switch {
	case w.NumSGE == 0 && need > 0:
		if m.may("RECV-NUMSGE0") {
			oversize = false // an empty WR took bytes
		}
		m.stake = append(m.stake, "RECV-NUMSGE0")
	case m.nearFit(need, room):
		if need == room || need == room+1 {
			if m.may("RECV-FIT") {
				oversize = !oversize // the boundary is off by one
			}
		} else {
			m.touch("RECV-FIT")
		}
		m.stake = append(m.stake, "RECV-FIT")
	}
	badKey := m.keyFault(w, need)
	if badKey || m.hasInvalidKey(w) {
		if m.may("RECV-BAD-KEY") {
			badKey = false // the key was not checked
		}
		m.stake = append(m.stake, "RECV-BAD-KEY")
	}
	if oversize {
		m.stake = append(m.stake, "RECV-TOO-LARGE")
	}
	rule := "RECV-COMPLETION"
	var allowed StatusSet
	var fate Fate
	switch {
	case oversize:
		m.touch("RECV-TOO-LARGE")
		rule = "RECV-TOO-LARGE"
		if m.may("RECV-TOO-LARGE") {
			// Truncated to the WR and reported as a success.
			c.Opcode, c.ByteLen = WCRecv, uint32(min(room, uint64(^uint32(0))))
			m.complete(c, Statuses(WCSuccess), rule)
			m.cq[len(m.cq)-1].scatterLost = true
			return Peers(PeerOK)
		}
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
		c.Opcode, c.ByteLen = WCRecv, uint32(byteLen)
		if !msg.Opcode.Scatters() {
			c.Opcode = WCRecvRDMAWithImm
		}
		m.complete(c, Statuses(WCSuccess), rule)
		// A departure that made it fit, or put it where the GRH goes,
		// cannot have scattered it as the WR says.
		m.cq[len(m.cq)-1].scatterLost = need > room || noGRH
		return Peers(PeerOK)
	}
	c.Status = allowed.First()
	c.HasImm, c.Imm = false, 0
	m.complete(c, allowed, rule)
	if fate == ToErr {
		m.enterErr(n)
		if rc {
			m.raiseErrorEvent(n, oversize)
		}
		if msg.Len > minPathMTU && m.lastWQE() == Raise && m.lastWQERepeat() == PerPacket {
			// The message's later packets, already sent, reach the QP
			// in ERR: a PerPacket device raises the event for each.
			m.qps[n].repeatOK = true
		}
	}
	if rc {
		return Peers(PeerError)
	}
	return Peers(PeerOK)
}

// keyFault reports whether filling w with need bytes meets an invalid key.
func (m *machine) keyFault(w WR, need uint64) bool {
	if m.keyCheck() == CheckAllSGEs {
		return m.hasInvalidKey(w)
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
	if o.Scope == PollEventsArrived {
		return m.pollArrived(got)
	}
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
		cs := m.dropDuplicates(got.Completions)
		if o.Max > 0 && len(cs) < len(got.Completions) {
			// Duplicates took slots of the poll: it returned fewer of
			// the completions due.
			n = min(n, len(cs))
		}
		if err := m.checkCompletions(cs, n); err != nil {
			return obs, err
		}
		if o.Scope == PollAll {
			if err := m.checkEvents(obs.Events, got.Events); err != nil {
				return obs, err
			}
		}
		obs.Completions = got.Completions
		obs.Events = got.Events
	}
	for _, e := range m.cq[:n] {
		if e.holds {
			m.held--
		}
	}
	m.cq = m.cq[n:]
	if o.Scope == PollCQ {
		obs.Events = nil
		return obs, nil
	}
	m.events = nil
	for i := range m.qps {
		m.qps[i].repeatOK = false
	}
	return obs, nil
}

// pollArrived is Poll with PollEventsArrived: the events got must be
// among the pending ones (a repeated LAST_WQE_REACHED where the profile
// allows it); those are taken and the rest stay pending.
func (m *machine) pollArrived(got *Observation) (Observation, error) {
	obs := Observation{BadWR: -1}
	if got == nil {
		// The model on its own: everything pending has arrived.
		obs.Events = append([]Event(nil), m.events...)
		m.events = nil
		return obs, nil
	}
	left := slices.Clone(m.events)
	var extra []Event
	for _, e := range got.Events {
		if i := slices.Index(left, e); i >= 0 {
			left = slices.Delete(left, i, i+1)
			continue
		}
		extra = append(extra, e)
	}
	if len(extra) > 0 {
		// Check the extras as a poll that expected none of them.
		if err := m.checkEvents(nil, extra); err != nil {
			return obs, err
		}
	}
	m.events = clip(left)
	obs.Events = got.Events
	return obs, nil
}

// dropDuplicates removes, where FETCH-ONCE is relaxed, completions of a
// wr_id that already completed: the departure adopted.
func (m *machine) dropDuplicates(got []Completion) []Completion {
	var out []Completion
	for i, g := range got {
		dup := m.completedBefore(g.WRID) || slices.ContainsFunc(got[:i], func(c Completion) bool { return c.WRID == g.WRID })
		// A duplicate the model itself made (a racing fetch handed the WR
		// out again) is due, up to the number of times the CQ holds it.
		due := 0
		for _, e := range m.cq {
			if e.c.WRID == g.WRID {
				due++
			}
		}
		for _, c := range got[:i] {
			if c.WRID == g.WRID {
				due--
			}
		}
		if dup && due <= 0 && !m.isOutstanding(g.WRID) && m.excuse("FETCH-ONCE") {
			continue
		}
		out = append(out, g)
	}
	return out
}

func (m *machine) checkCompletions(got []Completion, n int) error {
	for i := 0; i < n && i < len(got); i++ {
		want, g := m.cq[i], got[i]
		what := fmt.Sprintf("completion %d", i+1)
		m.touch("FETCH-ONCE")
		// A wr_id mangled on its way (the low 32 bits kept) is the
		// completion's fault; any other is the fetch's, which forks decide.
		if g.WRID != want.c.WRID && (m.fetchedOutOfOrder(i, g) || m.headsLeftOut(i, g)) {
			continue // the device's WR, whose fields the model cannot know
		}
		if g.WRID == ^want.c.WRID && !want.loose && m.relaxedBroad("POST-COPY") && m.excuse("POST-COPY") {
			// The WR as the caller scribbled it after the post (the
			// harness inverts wr_id and spoils the SGEs): this WR, at
			// least, the device did not copy.
			continue
		}
		if g.WRID != want.c.WRID && (uint32(g.WRID) != uint32(want.c.WRID) || !m.excuse("RECV-COMPLETION")) {
			return dev("RECV-COMPLETION", what+" wr_id", want.c, g)
		}
		m.touch("RECV-COMPLETION")
		if g.QP != want.c.QP && !m.excuse("RECV-COMPLETION") {
			return dev("RECV-COMPLETION", what+" qp", want.c, g)
		}
		if want.loose {
			continue
		}
		if !want.allowed.Has(g.Status) {
			if !m.narrow && m.excuseStake(want, want.rule) {
				m.adoptStatus(g)
				continue
			}
			return dev(want.rule, what+" status", want.allowed, g.Status)
		}
		if g.Status != WCSuccess {
			continue
		}
		if g.Opcode != want.c.Opcode || g.ByteLen != want.c.ByteLen {
			if m.excuseStake(want) {
				continue // the specific rule's departure: the rest of it is the device's
			}
			if !m.excuse("RECV-COMPLETION") {
				if g.Opcode != want.c.Opcode {
					return dev("RECV-COMPLETION", what+" opcode", want.c.Opcode, g.Opcode)
				}
				return dev("RECV-COMPLETION", what+" byte_len", want.c.ByteLen, g.ByteLen)
			}
		}
		if (g.HasImm != want.c.HasImm || (g.HasImm && g.Imm != want.c.Imm)) && !m.excuse("RECV-IMM") {
			return dev("RECV-IMM", what+" immediate", want.c, g)
		}
		if g.PayloadErr != "" && !want.scatterLost && !m.excuseStake(want) && !m.excuse("RECV-COMPLETION") {
			return dev("RECV-COMPLETION", fmt.Sprintf("payload of wr_id %d", g.WRID), "the message bytes in the SGEs, in order", g.PayloadErr)
		}
	}
	switch {
	case len(got) < n:
		return dev(m.cq[len(got)].rule, "completions", fmt.Sprint(m.cqCompletions(n)), fmt.Sprint(got))
	case len(got) > n:
		return dev("RECV-COMPLETION", "completions", fmt.Sprint(m.cqCompletions(n)), fmt.Sprint(got))
	}
	return nil
}

// fetchedOutOfOrder excuses, where FETCH-FIFO is relaxed, a completion
// (the i-th the CQ holds) of a WR still outstanding in the model's queue
// where the model completed another: the device fetched that WR instead
// of the head, whatever the order it fetches in. The two WRs change
// places: the one the model fetched goes back where the other stood.
func (m *machine) fetchedOutOfOrder(i int, g Completion) bool {
	want := m.cq[i]
	k := m.completedInstead(i, g, "FETCH-FIFO")
	if k < 0 || !m.excuse("FETCH-FIFO") {
		return false
	}
	took := m.queue[k]
	m.queue = append(clip(m.queue[:k]), append([]entry{{wr: want.wr}}, m.queue[k+1:]...)...)
	m.cq = slices.Clone(m.cq) // the backing array is shared with other candidates
	m.cq[i].c.WRID, m.cq[i].wr, m.cq[i].loose = took.wr.ID, took.wr, true
	return true
}

// leftOut is POST-ORDER's departure adopted where it shows: WRs that
// posts which returned 0 (or the prefix of one that failed) left out of
// the queue, a slot counted but never written. n WRs went missing from
// the head of the queue (the device found it empty), or, with n < 0, one
// WR (the device had room where the model holds the queue full): the
// model takes the oldest, without branching on which (a branch per WR of
// a long post multiplies the candidates past any bound); a completion
// that shows it was another fails the candidate. It reports whether it
// took the departure.
func (m *machine) leftOut(n int) bool {
	if len(m.queue) == 0 || !m.relaxedBroad("POST-ORDER") || !m.excuse("POST-ORDER") {
		return false
	}
	n = max(min(n, len(m.queue)), 1)
	m.queue = clip(m.queue[n:])
	m.posted -= n
	return true
}

// headsLeftOut adopts, where POST-ORDER is relaxed, a completion (the
// i-th the CQ holds) of a WR still in the model's queue where the model
// completed the head: the WR the model fetched and those before the
// completed one never reached the device's queue.
func (m *machine) headsLeftOut(i int, g Completion) bool {
	k := m.completedInstead(i, g, "POST-ORDER")
	if k < 0 || !m.excuse("POST-ORDER") {
		return false
	}
	took := m.queue[k]
	m.queue = clip(m.queue[k+1:])
	m.posted -= k + 1
	m.cq = slices.Clone(m.cq) // the backing array is shared with other candidates
	m.cq[i].c.WRID, m.cq[i].wr, m.cq[i].loose = took.wr.ID, took.wr, true
	return true
}

// completedInstead returns where in the queue stands the WR that the
// device completed as the CQ's i-th completion, where the model completed
// a WR it knows in full and rule is relaxed broadly; -1 otherwise.
func (m *machine) completedInstead(i int, g Completion, rule string) int {
	want := m.cq[i]
	if !m.relaxedBroad(rule) || want.wr.ID != want.c.WRID || want.loose {
		return -1
	}
	return slices.IndexFunc(m.queue, func(e entry) bool { return e.wr.ID == g.WRID && !e.loose })
}

// excuseStake excuses a departure in a completion's fields as one of the
// specific rules that governed it (cqe.stake), or of the extra rules
// given: the first of them relaxed takes it. A relaxed rule admits any
// departure in what it governs, not only the misbehaviours its fault
// points foresee.
func (m *machine) excuseStake(want cqe, extra ...string) bool {
	for _, r := range extra {
		m.touch(r)
	}
	stake := want.stake
	if m.narrow {
		stake = nil
	}
	for _, r := range append(extra, stake...) {
		if r != "" && m.relaxed(r) && m.excuse(r) {
			return true
		}
	}
	return false
}

// adoptStatus adopts a completion status that a relaxed rule excused: an
// error completion on an RC QP may have moved the QP to ERR, as the
// device's own error handling would (the model branches on it).
func (m *machine) adoptStatus(g Completion) {
	if g.Status == WCSuccess || g.QP < 0 || g.QP >= len(m.qps) {
		return
	}
	q := m.qps[g.QP]
	if q.typ == RC && q.state != Err && !q.gone && m.branch(2) == 1 {
		m.enterErr(g.QP)
	}
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
		case e.Type.QPError(), e.Type > EventQPAccessErr && e.QP >= 0:
			rule = "QP-ERROR-EVENT" // a type no event of the model has is the device's error too
		case e.Type > EventQPAccessErr:
			rule = "SRQ-ERR-EVENT"
		}
		if rule != "LIMIT-FIRE" && m.excuse(rule) {
			continue
		}
		return dev(rule, "events", fmt.Sprint(want), fmt.Sprint(got))
	}
	return nil
}

// minPathMTU is the smallest path MTU (IBV_MTU_256): a message no longer
// is one packet on any device; a longer one may be several.
const minPathMTU = 256
