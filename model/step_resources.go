package model

import (
	"fmt"
	"slices"
)

func (m *machine) checkQP(n int) error {
	if n < 0 || n >= m.qps.len() {
		return unmodelled("qp%d does not exist", n)
	}
	if m.qps.at(n).gone {
		return unmodelled("qp%d was destroyed", n)
	}
	return nil
}

// createQP creates a QP with the SRQ. Receive caps of 0 are what every
// QP asks for (QP-CREATE); above the device's limits they are ignored, or
// refused with EINVAL as the profile says (QP-SRQ-CAPS).
func (m *machine) createQP(o CreateQP, got *Observation) (Observation, error) {
	rule, want := RuleQPCreate, 0
	switch o.RecvCaps {
	case RecvCapsZero:
	case RecvCapsAboveWR:
		rule = RuleQPSRQCaps
		if m.qpRecvCaps() != RecvCapsIgnored {
			want = EINVAL
		}
	case RecvCapsAboveSGE:
		rule = RuleQPSRQCaps
		if m.qpRecvCaps() == RecvCapsBothChecked {
			want = EINVAL
		}
	default:
		return Observation{}, unmodelled("receive caps %d", o.RecvCaps)
	}
	m.touch(rule)
	obs := Observation{Errno: want, BadWR: -1}
	if got != nil && got.Errno != want {
		// A create refused though it should succeed breaks QP-CREATE
		// whatever the caps asked for: a relaxed QP-CREATE excuses it.
		refused := want == 0 && got.Errno != 0 && rule != RuleQPCreate && m.relaxed(RuleQPCreate)
		if !(refused && m.excuse(RuleQPCreate)) && !m.excuse(rule) {
			return obs, dev(rule, "return value", ErrnoName(want), ErrnoName(got.Errno))
		}
		obs.Errno = got.Errno
	}
	if obs.Errno == 0 {
		m.qps.add(qp{typ: o.Type, state: Reset})
	}
	return obs, nil
}

// attached returns the number of QPs attached to the SRQ: created and not
// destroyed.
func (m *machine) attached() int { return m.qps.attached }

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
	above := m.aboveLimits(o)
	anyErr := func(e int) bool { return e != 0 }
	switch {
	case o.Variant == CreateExBadType && !above:
		return m.errnoIn(RuleCreateEx, EINVAL, "EINVAL or EOPNOTSUPP", func(e int) bool { return e == EINVAL || e == EOPNOTSUPP }, got)
	case above && o.Variant != CreatePlain && got != nil && got.Errno == 0 && m.relaxedBroad(RuleCreateEx) && m.excuse(RuleCreateEx):
		// CREATE-EX promises the ex form makes what ibv_create_srq
		// makes: relaxed, it admits an ex form that took sizes the plain
		// one refuses (one that reads them from elsewhere). Counted as
		// two departures, so that alone it stays CREATE-MAX's.
		m.depart(RuleCreateEx)
		return *got, nil
	case above:
		return m.errnoIn(RuleCreateMax, EINVAL, "an error", anyErr, got)
	case (o.Variant == CreateEx || o.Variant == CreateExCQ) && m.refusedAsPlainOther(got):
		return *got, nil
	case o.Variant == CreateExCQ:
		return m.errnoIn(RuleCreateEx, 0, "0 or EOPNOTSUPP", func(e int) bool { return e == 0 || e == EOPNOTSUPP }, got)
	case o.Variant == CreateEx:
		if m.exRefusedAsPlain(got) {
			return *got, nil
		}
		return m.errnoIn(RuleCreateEx, 0, "0", func(e int) bool { return e == 0 }, got)
	case o.Variant == CreatePlain && (o.MaxWR == m.caps.MaxSRQWR || o.MaxSGE == m.caps.MaxSRQSGE):
		return m.errnoIn(RuleCreateMax, 0, "0 or ENOMEM (not enough memory)", func(e int) bool { return e == 0 || e == ENOMEM }, got)
	case o.Variant == CreatePlain:
		return m.errnoIn(RuleCreateMax, 0, "0", func(e int) bool { return e == 0 }, got)
	}
	return Observation{}, unmodelled("create variant %d", o.Variant)
}

// aboveLimits says whether another SRQ's create asks for more than the
// device's max_srq_wr or max_srq_sge (CREATE-MAX's, whichever verb).
func (m *machine) aboveLimits(o CreateOther) bool {
	return o.MaxWR > m.caps.MaxSRQWR || o.MaxSGE > m.caps.MaxSRQSGE
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
	q := m.qps.at(o.QP)
	switch {
	case q.owesRest() || len(q.pending) > 0:
		return Observation{}, unmodelled("destroy_qp qp%d with a message in flight or buffered", o.QP)
	case q.repeatOK || slices.ContainsFunc(m.events, func(e Event) bool { return e.QP == o.QP }):
		return Observation{}, unmodelled("destroy_qp qp%d with events of it unread", o.QP)
	case slices.ContainsFunc(m.cq, func(e cqe) bool { return e.c.QP == o.QP }):
		return Observation{}, unmodelled("destroy_qp qp%d with completions of it unpolled", o.QP)
	}
	m.qps.setGone(o.QP)
	return m.plainResult(RuleDestroyBusy, 0, got)
}

// destroySRQ is ibv_destroy_srq: EBUSY, and nothing changes, while a QP is
// attached; success once none is (rule DESTROY-BUSY). A relaxed device's
// outcome is adopted: the SRQ is gone when it said 0, else kept as it was.
func (m *machine) destroySRQ(got *Observation) (Observation, error) {
	m.touch(RuleDestroyBusy)
	want := 0
	if m.attached() > 0 {
		want = EBUSY
	}
	obs := Observation{Errno: want, BadWR: -1}
	if got != nil && got.Errno != want {
		if !m.excuse(RuleDestroyBusy) {
			return obs, dev(RuleDestroyBusy, "return value", ErrnoName(want), ErrnoName(got.Errno))
		}
		obs.Errno = got.Errno
	}
	m.destroyed = obs.Errno == 0
	if got != nil && obs.Errno != 0 {
		m.failedTouched(RuleDestroyBusy)
		if !m.dying && m.relaxedBroad(RuleDestroyBusy) && m.may(RuleDestroyBusy) {
			// Refused, but the SRQ does not keep working as before:
			// the destroy went part of the way, and posts may fail.
			m.dying = true
		}
	}
	return obs, nil
}

// failedTouched is a failed call's departure where rule, which promises
// the call changes nothing when it fails (MODIFY-ONLY-MASKED for a
// modify, DESTROY-BUSY for a destroy refused while QPs are attached,
// LIMIT-BOUND for an arm refused above the bound), is
// relaxed: the call may have disarmed the limit, the state of the SRQ a
// failed call can reach that a later query and event show.
func (m *machine) failedTouched(rule RuleID) {
	if m.armed && m.relaxedBroad(rule) && m.may(rule) {
		m.armed, m.limit = false, 0
	}
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
		m.touch(RuleCreateEx) // libibverbs makes it an ibv_create_srq: all that follows holds
	default:
		return Observation{}, unmodelled("the SRQ under test made %s: only ibv_create_srq and its ibv_create_srq_ex equivalent are", o.Variant)
	}
	m.created = true
	report := m.capacityReport()
	obs := Observation{BadWR: -1, Attr: SRQAttr{MaxWR: m.reportedCapacity(o.MaxWR), MaxSGE: o.MaxSGE}}
	m.touch(RuleCreateAttr)
	adopted := false
	if got != nil {
		if got.Errno != 0 {
			if m.excuse(createRefusedRule(o)) || o.Variant == CreateEx && m.exRefusedAsPlain(got) || got.Errno == EINVAL && m.excuse(RuleCreateMax) {
				// Nothing follows a refused create of the SRQ under test.
				return *got, nil
			}
			return obs, dev(createRefusedRule(o), "return value", 0, ErrnoName(got.Errno))
		}
		a := got.Attr
		var d *Deviation
		switch {
		case report == ReportAtLeast && a.MaxWR < o.MaxWR:
			d = dev(RuleCreateAttr, "max_wr written back", fmt.Sprintf(">= %d", o.MaxWR), a.MaxWR)
		case report != ReportAtLeast && a.MaxWR != obs.Attr.MaxWR:
			d = dev(RuleCreateAttr, "max_wr written back", fmt.Sprintf("%d (%s)", obs.Attr.MaxWR, report), a.MaxWR)
		case a.MaxSGE < o.MaxSGE:
			d = dev(RuleCreateAttr, "max_sge written back", fmt.Sprintf(">= %d", o.MaxSGE), a.MaxSGE)
		case uint64(a.MaxWR) > mostHeld(o.MaxWR, m.caps.MaxSRQWR):
			d = dev(RuleCreateAttr, "max_wr written back", fmt.Sprintf(">= %d and at most %d (max_srq_wr, or the request rounded up)", o.MaxWR, mostHeld(o.MaxWR, m.caps.MaxSRQWR)), a.MaxWR)
		case uint64(a.MaxSGE) > mostHeld(o.MaxSGE, m.caps.MaxSRQSGE):
			d = dev(RuleCreateAttr, "max_sge written back", fmt.Sprintf(">= %d and at most %d (max_srq_sge, or the request rounded up)", o.MaxSGE, mostHeld(o.MaxSGE, m.caps.MaxSRQSGE)), a.MaxSGE)
		}
		if d != nil && o.Variant == CreateEx {
			d.Rule = RuleCreateEx // the ex form writes back what the plain one would not
		}
		if d != nil && !m.excuse(d.Rule) && !(o.Variant == CreateEx && m.exAsPlain()) {
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
		m.wbWR, m.wbSGE = got.Attr.MaxWR, got.Attr.MaxSGE
	}
	if got != nil && o.Variant == CreateEx && !m.narrow && m.relax != nil && m.relax[RuleCreateEx] && m.may(RuleCreateEx) {
		// Relaxed, CREATE-EX admits an ex form that made another SRQ
		// than it wrote back (one that read max_sge from elsewhere): the
		// posts it refuses or takes, or a query, tell how many SGEs a
		// WR holds. Counted as two departures, so that a trace one
		// refused post shows stays POST-SGE's; asked only where relaxed,
		// so that a diagnosis does not try it on every ex create.
		m.depart(RuleCreateEx)
		m.sgeLoose = true
	}
	if o.Limit > 0 {
		m.touch(RuleCreateLimit)
		if m.limitAtCreate() == Accepted {
			m.armed, m.limit, m.threshold = true, o.Limit, o.Limit
		} else if m.relaxedBroad(RuleCreateLimit) {
			m.createLimit = o.Limit // armed later, or never (armAtDoorbell)
		}
	}
	return obs, nil
}

// createRefusedRule is the rule a refused create of the SRQ under test
// breaks: a create within the device's limits succeeds (CREATE-ATTR), and
// the ibv_create_srq_ex form makes what ibv_create_srq makes (CREATE-EX).
// A refusal with EINVAL, the errno of a create above the device's limits,
// is also CREATE-MAX's, which governs which sizes a create accepts: a
// device that refuses every create, plain or ex, is one departure.
func createRefusedRule(o CreateSRQ) RuleID {
	if o.Variant == CreateEx {
		return RuleCreateEx
	}
	return RuleCreateAttr
}

// exRefusedAsPlain reports whether a refused ibv_create_srq_ex (BASIC,
// within the device's limits) is excused as the plain create's departure
// (exAsPlain): a device that refuses every create is one departure of
// CREATE-ATTR. EINVAL, the errno of a create above the limits, is
// CREATE-MAX's (createRefusedRule).
func (m *machine) exRefusedAsPlain(got *Observation) bool {
	return got != nil && got.Errno != 0 && got.Errno != EINVAL && m.exAsPlain()
}

// exAsPlain reports whether what an ibv_create_srq_ex (BASIC) did that
// CREATE-EX does not allow (refused, or sizes written back that CREATE-ATTR
// does not allow) is excused as the plain create's departure: CREATE-ATTR
// governs whether a create within the limits succeeds and what it writes
// back, and CREATE-EX promises only that the ex form makes what
// ibv_create_srq makes. It counts as two departures (the ex form's, and
// the plain form's presumed the same), so that a trace showing only the ex
// form's reads as CREATE-EX's, while a run whose plain creates do the same
// is CREATE-ATTR's alone.
func (m *machine) exAsPlain() bool {
	if !m.relaxedBroad(RuleCreateAttr) || !m.excuse(RuleCreateAttr) {
		return false
	}
	m.depart(RuleCreateAttr)
	return true
}

// refusedAsPlainOther says whether an ibv_create_srq_ex of another SRQ
// within the device's limits, refused with an errno CREATE-EX does not
// allow, is what CREATE-MAX relaxed explains: the plain create of the
// same SRQ refused (CREATE-MAX's departure), and the extended one makes
// the same SRQ as the plain one (CREATE-EX kept). Counted as two
// departures, so that alone such a refusal stays CREATE-EX's.
func (m *machine) refusedAsPlainOther(got *Observation) bool {
	if got == nil || got.Errno == 0 || got.Errno == EOPNOTSUPP || !m.relaxedBroad(RuleCreateMax) || !m.excuse(RuleCreateMax) {
		return false
	}
	m.depart(RuleCreateMax)
	return true
}

// mostHeld is the most WRs (or SGEs) an SRQ can hold, or a create or query
// write back, for a request of req on a device whose limit is limit
// (max_srq_wr, max_srq_sge; man ibv_query_device): the limit, or the
// request rounded up to a power of two (rxe rounds a request of the limit
// itself past it). More is a wild value, not a rounding.
func mostHeld(req, limit uint32) uint64 { return max(uint64(limit), 2*uint64(req)+1) }

func (m *machine) query(got *Observation) (Observation, error) {
	if m.lateLimit == 2 {
		// A check that runs late may have run since (at a completion a
		// flush wrote, say): the query reads the SRQ it left.
		m.owedLimit()
	}
	rule := m.queryRule()
	m.touch(RuleQueryAttr)
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
		if !m.excuse(RuleQueryAttr) {
			return obs, dev(RuleQueryAttr, "return value", ErrnoName(want), ErrnoName(got.Errno))
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
		if m.excuse(RuleQueryAttr) {
			return *got, nil
		}
		return obs, dev(RuleQueryAttr, "return value", 0, ErrnoName(got.Errno))
	}
	a := got.Attr
	if resized {
		m.touch(RuleResizeCapacity)
		if m.armed {
			m.touch(RuleModifyOnlyMasked)
		}
	}
	if m.sgeLoose && a.MaxSGE != m.maxSGE && a.MaxSGE <= m.caps.MaxSRQSGE {
		// What the modify that changed max_sge left it at: pinned now.
		m.maxSGE, m.sgeLoose = a.MaxSGE, false
	}
	switch {
	case a.MaxWR < m.capacity && m.capRaisedTo == m.capacity && a.MaxWR >= m.capRaisedFrom &&
		m.relaxedBroad(RulePostFull) && m.excuse(RulePostFull):
		// The posts taken past what the model knew of the capacity
		// raised it, and query reports less, no less than the model knew:
		// POST-FULL governs how many WRs fit, and relaxed the device
		// holds more than max_wr. The report is max_wr.
		m.slack += int(m.capacity - a.MaxWR)
		m.capacity, m.capRaisedTo = a.MaxWR, 0
	case a.MaxWR > m.capacity && m.capExact && m.capPinned == m.capacity && uint64(a.MaxWR) <= mostHeld(m.capacity, m.caps.MaxSRQWR) &&
		m.relaxedBroad(RulePostFull) && m.excuse(RulePostFull):
		// A post met the queue full, which pinned the capacity, and
		// query reports more: relaxed, POST-FULL's device holds fewer
		// than max_wr.
		m.slack -= int(a.MaxWR - m.capacity)
		m.capacity, m.capPinned = a.MaxWR, 0
	}
	var d *Deviation
	switch {
	case rule == QueryAtLeast || !m.capExact:
		if a.MaxWR < m.capacity || uint64(a.MaxWR) > mostHeld(m.capacity, m.caps.MaxSRQWR) {
			d = dev(RuleQueryAttr, "max_wr", fmt.Sprintf(">= %d and at most %d", m.capacity, mostHeld(m.capacity, m.caps.MaxSRQWR)), a.MaxWR)
		} else if rule == QuerySame && resized && a.MaxWR > m.capacity && m.relaxedBroad(RuleResizeCapacity) && m.may(RuleResizeCapacity) {
			// RESIZE-CAPACITY promises that what query reports after a
			// resize fits: relaxed, the report (the new ring's size, say)
			// is what it says until the next resize, and the posts tell
			// what fits.
			m.queryWR = a.MaxWR
		} else if rule == QuerySame {
			// The query pins a capacity that was only a lower bound.
			m.capacity, m.capExact = a.MaxWR, m.capacityRule() != CapacityAtLeast
		}
	case a.MaxWR != m.capacity:
		d = dev(RuleQueryAttr, "max_wr", m.capacity, a.MaxWR)
	}
	if d == nil && a.MaxSGE != m.maxSGE {
		d = dev(RuleQueryAttr, "max_sge", m.maxSGE, a.MaxSGE)
	}
	if d != nil && m.wbWR != 0 && a.MaxWR == m.wbWR && a.MaxSGE == m.wbSGE {
		d = nil // as created: the write-back CREATE-ATTR adopted
	}
	if d != nil && a.MaxSGE == m.maxSGE && (m.queryWR != 0 && a.MaxWR == m.queryWR ||
		resized && (a.MaxWR < m.resizeReq || !m.resizeShort) && m.excuse(RuleResizeCapacity)) {
		// RESIZE-CAPACITY governs what query reports after a resize:
		// relaxed, the device's report is adopted as what it says until
		// the next resize, and what fits stays the model's to check.
		// After a request below the count that the device took, a report
		// of at least the request is the count check's to explain.
		m.queryWR, d = a.MaxWR, nil
	}
	if d != nil && !m.excuse(RuleQueryAttr) {
		return obs, d
	}
	m.touch(RuleQueryLimit)
	if m.limitFree && m.armed && a.SRQLimit != 0 {
		// The limit a relaxed LIMIT-BOUND let through reads as armed.
		m.limit, m.threshold = a.SRQLimit, a.SRQLimit
	}
	m.limitFree = false
	if m.armLate != 0 && a.SRQLimit == m.armLate {
		if m.branch(2) == 0 {
			// The arm LIMIT-ARM's departure left undone has taken
			// effect.
			m.armed, m.limit, m.threshold, m.firesThisArming = true, a.SRQLimit, a.SRQLimit, 0
		} else {
			// The device recorded the limit the query reads and left
			// its arming as it was (a driver that keeps the value and
			// does not program it): disarmed, or armed at the old
			// level.
			m.limit = a.SRQLimit
		}
		m.armLate = 0
	}
	if a.SRQLimit != m.limit && !m.armed && m.firesThisArming > 0 &&
		m.relaxedBroad(RuleLimitAfterFire) && m.excuse(RuleLimitAfterFire) {
		// After the limit event srq_limit read what the model did not
		// hold (the armed value, 0, the count left at the event, any
		// value): LIMIT-AFTER-FIRE governs every read after the event,
		// whenever it comes (before the event was polled, or after).
		return *got, nil
	}
	if a.SRQLimit != m.limit && d != nil && m.relaxedBroad(RuleQueryAttr) {
		// The same reply got max_wr or max_sge wrong too, and QUERY-ATTR
		// took that: one wrong reply (a zeroed or garbled struct) is
		// one departure, not QUERY-ATTR and QUERY-LIMIT.
		return *got, nil
	}
	if a.SRQLimit != m.limit && !m.excuse(RuleQueryLimit) {
		return obs, dev(RuleQueryLimit, "srq_limit", m.limit, a.SRQLimit)
	}
	return *got, nil
}

// modifyTouched is what MODIFY-ONLY-MASKED, relaxed broad, admits of a
// modify that succeeded: it touched an attribute its mask did not name,
// max_wr (where wr says the mask did not name it) or max_sge. The SRQ
// then holds some other number of WRs, at least those it holds, or of
// SGEs a WR (sgeLoose): the next query, ENOMEM or EINVAL says which.
func (m *machine) modifyTouched(wr bool) {
	if !m.relaxedBroad(RuleModifyOnlyMasked) {
		return
	}
	ways := 2
	if wr {
		ways = 3
	}
	switch m.choose(RuleModifyOnlyMasked, ways) {
	case 1:
		m.sgeLoose = true
	case 2:
		m.capacity, m.capExact = uint32(m.occupied()), false
	}
}

func (m *machine) arm(o Arm, got *Observation) (Observation, error) {
	m.limitFree = false
	m.createLimitOver = m.createLimit > 0
	if o.Limit == 0 {
		if errnoDiffers(0, got) && m.excuse(RuleLimitDisarm) {
			if m.relaxedBroad(RuleLimitDisarm) && m.armed && m.choose(RuleLimitDisarm, 2) == 1 {
				m.armed, m.limit = false, 0 // refused, and disarmed all the same
			}
			return *got, nil // refused: nothing changes, still armed if it was
		}
		if errnoDiffers(0, got) && m.relaxedBroad(RuleLimitArm) && m.excuse(RuleLimitArm) {
			// LIMIT-ARM governs the call's result: a device that
			// refuses srq_limit modifies refuses a disarm too. Counted
			// as three departures, so that alone it stays LIMIT-DISARM's
			// (whose own reading, refused and disarmed, counts two).
			m.depart(RuleLimitArm)
			m.depart(RuleLimitArm)
			return *got, nil // refused: nothing changes
		}
		if !m.may(RuleLimitDisarm) {
			m.armed, m.limit = false, 0
			m.dropLateCheck()
			// Relaxed, LIMIT-DISARM admits a limit event after the
			// disarm, at whatever level the device left armed.
			m.looseDisarm = m.relaxedBroad(RuleLimitDisarm) // a refused disarm returned above
		}
		if got != nil && got.Errno == 0 {
			m.modifyTouched(true)
		}
		return m.plainResult(RuleLimitDisarm, 0, got)
	}
	// The two bounds differ only on a limit equal to the capacity:
	// LimitBound is decided there alone.
	over := o.Limit > m.capacity
	if o.Limit == m.capacity && m.limitBound() == LimitBelowCapacity {
		over = true
	}
	if over || o.Limit+1 >= m.capacity {
		m.touch(RuleLimitBound)
	}
	if over && got != nil && got.Errno == 0 && !m.relaxed(RuleLimitBound) && m.relaxedBroad(RuleLimitArm) && m.limitNoOp() {
		// LIMIT-ARM governs the call's result: a device whose srq_limit
		// modify does nothing takes a limit above the bound too, and
		// arms nothing. Counted as two departures, so that alone it
		// stays LIMIT-BOUND's.
		m.depart(RuleLimitArm)
		return *got, nil
	}
	if over && !m.capExact && got != nil && got.Errno == 0 && !m.may(RuleLimitBound) {
		// The capacity is only a lower bound: a device that takes the
		// limit holds at least that many WRs (unless it broke the bound,
		// where LIMIT-BOUND is relaxed).
		m.capacity, over = o.Limit, false
	}
	if over {
		if !errnoDiffers(EINVAL, got) || !m.excuse(RuleLimitBound) {
			obs, err := m.plainResult(RuleLimitBound, EINVAL, got)
			if err == nil && got != nil {
				// Refused as the rule says, but LIMIT-BOUND also promises
				// the refusal changes nothing: relaxed, it may have
				// disarmed the limit armed before.
				m.failedTouched(RuleLimitBound)
			}
			return obs, err
		}
		// Accepted above the bound: it arms like any other limit, at
		// the request or at a value the device clamped it to.
		m.limitFree = got != nil && got.Errno == 0
	}
	if !over && got != nil && got.Errno == EINVAL && m.relaxedBroad(RuleLimitBound) && m.excuse(RuleLimitBound) {
		// LIMIT-BOUND governs the bound: relaxed, the device's may lie
		// below the model's, and a limit within it refused as above.
		return *got, nil // refused: nothing changes
	}
	refusedArmed := false
	if errnoDiffers(0, got) {
		if !m.excuse(RuleLimitArm) {
			return m.plainResult(RuleLimitArm, 0, got)
		}
		// LIMIT-ARM governs the arming, and the call's result is its
		// departure: refused, the device may have armed all the same
		// (a second branch, counted as a second departure).
		if !m.relaxedBroad(RuleLimitArm) || m.choose(RuleLimitArm, 2) == 0 {
			return *got, nil // refused: nothing changes
		}
		refusedArmed = true
	}
	m.armLate = 0
	if !refusedArmed && m.may(RuleLimitArm) {
		// Accepted, but not armed: the device may arm later, which a
		// query reading the limit or the limit's event shows (armLate).
		// Where it may arm later it is counted as two departures (the
		// arm that did not take, and the one that takes at some later
		// step), so that a trace a rule explains with one departure of
		// what it governs (a refused call that disarmed, a limit event
		// that came twice) goes to that rule.
		if !m.narrow {
			m.armLate = o.Limit
			m.depart(RuleLimitArm)
		}
		return m.plainResult(RuleLimitArm, 0, got)
	}
	if got != nil && !refusedArmed {
		m.modifyTouched(true)
	}
	m.armed, m.limit, m.threshold, m.firesThisArming = true, o.Limit, o.Limit, 0
	m.looseDisarm = false
	m.dropLateCheck()
	if uint32(len(m.queue)) < o.Limit {
		m.touch(RuleLimitFire)
		if m.armBelow() == FireAtOnce {
			m.fireLimit()
		}
	}
	if refusedArmed {
		return *got, nil // its departure is recorded
	}
	return m.plainResult(RuleLimitArm, 0, got)
}

// limitNoOp decides, under a relaxed LIMIT-ARM, whether an arm above
// the bound the device took did nothing: where the capacity is exact the
// bound is passed and the departure is sure; where it is only a lower
// bound the device may hold enough WRs for the limit, so it is a branch.
func (m *machine) limitNoOp() bool {
	if m.capExact {
		return m.excuse(RuleLimitArm)
	}
	return m.choose(RuleLimitArm, 2) == 1
}

func (m *machine) resizeSRQ(o Resize, got *Observation) (Observation, error) {
	m.armAtDoorbell() // a resize writes the SRQ's context too
	m.touch(RuleResizeOptional)
	outOfBounds := o.MaxWR == 0 || o.MaxWR > m.caps.MaxSRQWR
	if m.resize() == ResizeUnsupported || !m.caps.Resize {
		return m.resizeUnsupported(o, outOfBounds, got)
	}
	if outOfBounds {
		return m.resizeOutOfBounds(o, got)
	}
	if m.armed && o.MaxWR < m.limit {
		m.touch(RuleResizeBelowLimit)
		if m.resizeBelowLimit() == Rejected {
			return m.plainResult(RuleResizeBelowLimit, EINVAL, got)
		}
	}
	newCap, short := m.realCapacity(o.MaxWR), false
	if m.leaked > 0 && got != nil && got.Errno == 0 && m.branch(2) == 1 {
		// Slots that never came back (SLOT-FREE's departure) are the
		// old ring's: a resize that copies the outstanding WRs into a
		// new ring may leave them behind, and count only the WRs.
		m.leaked = 0
	}
	exact := m.capacityReport() != ReportAtLeast || m.capacityRule() == CapacityPow2
	if over := m.occupied() - int(newCap); over > 0 && over <= max(1, m.slack) && got != nil && got.Errno == 0 &&
		m.relaxedBroad(RulePostFull) && m.excuse(RulePostFull) {
		// POST-FULL governs how many WRs fit against max_wr: relaxed, a
		// device that holds more than max_wr takes a resize below the
		// count it holds, by no more than the posts showed it holds over
		// (one, where they have not shown it).
		m.slack = max(m.slack, over)
	} else if int(newCap) < m.occupied() && !m.resizeShowsLeftOut(newCap, got) {
		if obs, err, done := m.resizeBelowCount(newCap, exact, got); done {
			return obs, err
		}
		newCap = uint32(m.occupied()) // rounded up far enough
		short = true
	}
	if errnoDiffers(0, got) && errnoIs(got.Errno, EINVAL) && m.fetched > m.held+m.leaked &&
		int(newCap) >= m.occupied() && m.relaxed(RuleSlotFree) && m.excuse(RuleSlotFree) {
		// Refused as below the count: slots that never came back hold it.
		m.leaked += int(newCap) - m.occupied() + 1
		return *got, nil
	}
	if int(o.MaxWR) < m.occupied() {
		m.touch(RuleResizeBelowCount)
		if errnoDiffers(0, got) && m.excuse(RuleResizeBelowCount) {
			m.unsupportedCountsTwice(RuleResizeBelowCount, got)
			return *got, nil // refused for the request, not the rounded size
		}
	}
	if errnoDiffers(0, got) && errnoIs(got.Errno, EINVAL) {
		// A valid request refused with the bound and count checks' errno,
		// at the value next to the bound or to the count: a check placed
		// one off. Relaxed, the rule of that check takes it; any other
		// refusal of a valid request is RESIZE-OPTIONAL's.
		if (o.MaxWR == m.caps.MaxSRQWR || o.MaxWR == 1) && m.relaxed(RuleResizeBounds) && m.excuse(RuleResizeBounds) {
			return *got, nil
		}
		if int(min(o.MaxWR, newCap)) == m.occupied() && m.relaxed(RuleResizeBelowCount) && m.excuse(RuleResizeBelowCount) {
			return *got, nil
		}
		if m.relaxedBroad(RuleResizeBelowCount) && m.excuse(RuleResizeBelowCount) {
			// RESIZE-BELOW-COUNT governs the count check both ways:
			// relaxed, the device's check may refuse with EINVAL a
			// request that holds the WRs. Counted as two departures,
			// so that alone such a refusal stays RESIZE-OPTIONAL's.
			m.depart(RuleResizeBelowCount)
			return *got, nil
		}
		if m.relaxedBroad(RuleResizeBounds) && m.excuse(RuleResizeBounds) {
			// RESIZE-BOUNDS governs the bound check both ways: relaxed,
			// the device's check may refuse with EINVAL a request within
			// the bounds anywhere (a comparison turned round). Two
			// departures, as for the count check.
			m.depart(RuleResizeBounds)
			return *got, nil
		}
	}
	if errnoDiffers(0, got) {
		if m.excuse(RuleResizeOptional) {
			return *got, nil // advertised, valid, and refused
		}
		return m.plainResult(RuleResizeOptional, 0, got)
	}
	// No driver writes the new size back: it is exact where the profile
	// rounds deterministically, and otherwise a lower bound that the next
	// query or ENOMEM pins.
	if !m.may(RuleResizeCapacity) {
		m.capacity = newCap
		m.capExact = exact && m.capacityRule() != CapacityAtLeast
	} else {
		// The departure: the device holds some other number of WRs, at
		// least those it holds; the next query or ENOMEM says which.
		m.capacity, m.capExact = uint32(m.occupied()), false
	}
	if m.armed && m.may(RuleModifyOnlyMasked) {
		m.armed, m.limit = false, 0 // the resize touched the limit too
	} else if !m.armed && m.threshold > 0 && m.relaxedBroad(RuleModifyOnlyMasked) && m.may(RuleModifyOnlyMasked) {
		// The resize wrote the last armed limit back too (a driver's
		// cached attributes, limit bit set): armed again at it.
		m.armed, m.limit, m.firesThisArming = true, m.threshold, 0
	}
	m.modifyTouched(false) // max_wr is the resize's own
	m.resized = true
	m.wbWR, m.wbSGE, m.queryWR = 0, 0, 0
	m.resizeReq, m.resizeShort = o.MaxWR, short
	return m.plainResult(RuleResizeOptional, 0, got)
}

// resizeShowsLeftOut adopts POST-ORDER's departure where a resize to
// newCap, below the slots the model holds, shows it (leftOut): a device
// that took the resize holds fewer WRs, which posts that returned 0 left
// out of its queue. It reports whether it adopted it.
func (m *machine) resizeShowsLeftOut(newCap uint32, got *Observation) bool {
	over := m.occupied() - int(newCap)
	return got != nil && got.Errno == 0 && over <= len(m.queue) && m.leftOut(over)
}

// notSupported reports whether errno, in either sign, says a verb is not
// supported: EOPNOTSUPP, or ENOSYS, which providers and libibverbs
// return for a verb they do not implement as well (the profile's Query
// field has both).
func notSupported(errno int) bool { return errnoIs(errno, EOPNOTSUPP) || errnoIs(errno, ENOSYS) }

// resizeUnsupported is a resize on a device or profile without it.
func (m *machine) resizeUnsupported(o Resize, outOfBounds bool, got *Observation) (Observation, error) {
	obs, err := failResult(RuleResizeOptional, EOPNOTSUPP, got)
	if err != nil && m.excuse(RuleResizeOptional) {
		return *got, nil
	}
	// RESIZE-OPTIONAL governs whether a valid resize works. Relaxed on a
	// device that advertises resize, it explains a request out of bounds
	// or below the count refused only as "not supported": another errno
	// is RESIZE-BOUNDS' or RESIZE-BELOW-COUNT's.
	invalid := outOfBounds || int(o.MaxWR) < m.occupied()
	if err == nil && got != nil && m.caps.Resize && invalid && m.relaxed(RuleResizeOptional) && !notSupported(got.Errno) {
		return obs, dev(RuleResizeOptional, "return value", ErrnoName(EOPNOTSUPP), ErrnoName(got.Errno))
	}
	return obs, err
}

// unsupportedAnswer reports whether RESIZE-OPTIONAL, relaxed, explains a
// resize a device that advertises resize refused as not supported
// (notSupported): that answer is about whether resize works, what
// RESIZE-OPTIONAL governs, whatever the request, out of bounds or below
// the count included. Nothing changes.
func (m *machine) unsupportedAnswer(got *Observation) bool {
	return got != nil && m.caps.Resize && notSupported(got.Errno) && m.excuse(RuleResizeOptional)
}

// unsupportedCountsTwice records a second departure of rule, the bound or
// count check that excused got, where got refused the resize as not
// supported (notSupported) on a device that advertises resize: that answer
// is about whether resize works, what RESIZE-OPTIONAL governs whatever
// the request, so alone it stays RESIZE-OPTIONAL's.
func (m *machine) unsupportedCountsTwice(rule RuleID, got *Observation) {
	if got != nil && m.caps.Resize && notSupported(got.Errno) {
		m.depart(rule)
	}
}

// resizeOutOfBounds is a resize to 0 or past max_srq_wr.
func (m *machine) resizeOutOfBounds(o Resize, got *Observation) (Observation, error) {
	m.touch(RuleResizeBounds)
	if m.unsupportedAnswer(got) {
		return *got, nil
	}
	if got != nil && got.Errno != EINVAL && m.excuse(RuleResizeBounds) {
		m.unsupportedCountsTwice(RuleResizeBounds, got)
		if got.Errno == 0 {
			// Accepted out of bounds: what it holds now is unknown, at
			// least what it holds, and a query may report the request
			// (past max_srq_wr): the departure, not the query's.
			m.capacity, m.capExact = uint32(m.occupied()), false
			m.wbWR, m.wbSGE, m.queryWR = 0, 0, o.MaxWR
		}
		return *got, nil // or refused with another errno: nothing changes
	}
	return m.plainResult(RuleResizeBounds, EINVAL, got)
}

// resizeBelowCount is a resize whose new capacity, newCap, would not hold
// the outstanding WRs. Where the report is "at least the request", a
// device may round up far enough: done is false, and the resize goes on
// at the count.
func (m *machine) resizeBelowCount(newCap uint32, exact bool, got *Observation) (obs Observation, err error, done bool) {
	m.touch(RuleResizeBelowCount)
	if !exact && got != nil && got.Errno == 0 {
		// Or it took the request as it was: it dropped the newest WRs
		// that no longer fit, kept them all over the new capacity, or
		// holds what it held and reports the request.
		if i := m.choose(RuleResizeBelowCount, 4); i > 0 {
			m.belowCount(newCap, belowCountWay(i-1))
			return *got, nil, true
		}
	}
	if !exact && got != nil && got.Errno == 0 {
		return Observation{}, nil, false
	}
	if m.unsupportedAnswer(got) {
		return *got, nil, true
	}
	if got != nil && got.Errno != EINVAL && m.excuse(RuleResizeBelowCount) {
		m.unsupportedCountsTwice(RuleResizeBelowCount, got)
		if got.Errno != 0 {
			return *got, nil, true // refused with another errno: nothing changes
		}
		// Accepted: the newest WRs that no longer fit are gone, or all
		// stay over the new capacity until fetches drain them, or the
		// device holds what it held and reports the request.
		way := belowCountWay(m.branch(3))
		m.belowCount(newCap, way)
		if way != keptOld {
			m.capExact = exact && m.capacityRule() != CapacityAtLeast
		}
		return *got, nil, true
	}
	obs, err = m.plainResult(RuleResizeBelowCount, EINVAL, got)
	if err == nil && got != nil && m.relaxedBroad(RuleModifyOnlyMasked) && m.may(RuleModifyOnlyMasked) {
		// Refused as the rule says, but the post path took the size
		// all the same (a driver that stores it before the command and
		// does not restore it when the command fails), while query
		// reads what it did: MODIFY-ONLY-MASKED governs what a modify
		// changes beyond what it did.
		m.queryWR, m.capacity, m.capExact = m.capacity, newCap, exact && m.capacityRule() != CapacityAtLeast
	}
	return obs, err, true
}

// belowCountWay is what a device that accepted a resize below the
// outstanding count did with it.
type belowCountWay int

const (
	droppedNewest belowCountWay = iota // the newest WRs that no longer fit are gone
	keptOver                           // all stay, over the new capacity, until fetches drain them
	keptOld                            // nothing changed but what query reports: the request
)

// belowCount is a resize to newCap, below the outstanding WRs, that the
// device accepted, the way it did (RESIZE-BELOW-COUNT's departure).
func (m *machine) belowCount(newCap uint32, way belowCountWay) {
	m.resized = true
	m.wbWR, m.wbSGE, m.queryWR = 0, 0, 0
	m.resizeReq, m.resizeShort = newCap, false
	switch way {
	case droppedNewest:
		m.dropNewest(m.occupied() - int(newCap))
		m.capacity, m.capExact = newCap, true
	case keptOver:
		m.capacity, m.capExact = newCap, true
	case keptOld:
		// What it holds is what it held: at least the outstanding WRs;
		// the next ENOMEM pins it.
		m.capacity, m.capExact = max(m.capacity, uint32(m.occupied())), false
		m.queryWR = newCap
	}
}

// dropNewest drops up to n of the newest outstanding WRs.
func (m *machine) dropNewest(n int) {
	drop := min(len(m.queue), n)
	m.queue = clip(m.queue[:len(m.queue)-drop]) // clipped: clones share what lies past it
	m.posted -= drop
}

func (m *machine) modifyQP(o ModifyQP, got *Observation) (Observation, error) {
	if err := m.checkQP(o.QP); err != nil {
		return Observation{}, err
	}
	q := m.qps.mut(o.QP)
	from := q.state
	if q.filling != nil && o.State != Err {
		return Observation{}, unmodelled("modify_qp qp%d to %s while it is filling a WR", o.QP, o.State)
	}
	legal := legalTransition(from, o.State)
	m.touch(RuleQPTransitions)
	want := 0
	if !legal {
		want = EINVAL
	}
	if errnoDiffers(want, got) {
		if !m.excuse(RuleQPTransitions) {
			if legal {
				return m.plainResult(RuleQPTransitions, 0, got)
			}
			return failResult(RuleQPTransitions, EINVAL, got)
		}
		// Adopt what the device did. QP-TRANSITIONS governs the QP's
		// state too: a device that refused a legal transition may have
		// made it all the same (its error came after the change), which
		// later messages show. No second departure.
		if !legal || m.narrow || got == nil || m.branch(2) == 0 {
			legal = !legal
		}
	}
	if !legal {
		return failResult(RuleQPTransitions, EINVAL, got)
	}
	if got != nil && o.State == Err && from != o.State && m.relaxedBroad(RuleQPTransitions) && m.may(RuleQPTransitions) {
		// QP-TRANSITIONS governs the QP's state: the device accepted the
		// modify to ERR and left the QP where it was. What follows (no
		// LAST_WQE_REACHED, messages still taken) is the same departure.
		// Only to ERR: a fork at every modify kept too many candidates
		// (a run with it relaxed went to 3.6 times its budget); a QP left
		// short of RTR or RTS shows at its next message anyway.
		return *got, nil
	}
	switch {
	case o.State == Err:
		if from == Err && m.lastWQE() == Raise && m.lastWQERepeat() == PerPacket {
			m.qps.setRepeat(o.QP)
		}
		if f := q.filling; f != nil && from != Err && got != nil && m.relaxedBroad(RuleQPNoFetchStates) && m.may(RuleQPNoFetchStates) {
			// QP-NOFETCH-STATES governs what a QP in ERR processes:
			// relaxed, the QP may go on with the message it was filling
			// (an ERR applied after its next packet). The WR is not
			// flushed, and the rest of the message completes it.
			q.filling = nil
			m.enterErr(o.QP)
			q = m.qps.mut(o.QP)
			q.filling, q.restOwed = f, false
			break
		}
		if from == Err && q.filling != nil {
			// A QP that went on filling after its ERR (the departure
			// above): another modify to ERR ends the message.
			m.flushFilling(o.QP, q)
		}
		m.enterErr(o.QP)
	case o.State == Reset:
		m.qps.setState(o.QP, Reset)
		q.pending = nil
		q.restOwed = false // the reset abandons the peer's half-sent message
	default:
		m.qps.setState(o.QP, o.State)
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
	return m.plainResult(RuleQPTransitions, 0, got)
}
