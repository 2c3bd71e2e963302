package model

import (
	"fmt"
	"slices"
)

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
	return m.attached() == 0 || m.qps.unready > 0
}

// post applies a post: checked against what the device did when got is
// set (postObserved), else with the canonical outcome.
func (m *machine) post(o Post, got *Observation) (Observation, error) {
	m.armAtDoorbell()
	if got != nil {
		return m.postObserved(o, got)
	}
	obs := Observation{BadWR: -1}
	if m.copyMode == 0 && len(o.WRs) > 0 {
		m.copyMode = 1 + m.choose(RulePostCopy, m.copyWays())
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

// dropsPrefix reports whether a failing list's prefix is dropped with it
// (relaxed broad, the last WRs of it, as many as each list chooses): a
// relaxed POST-ORDER device may do so from its first failing list on.
func (m *machine) dropsPrefix() bool { return m.order() == orderDropsPrefix }

// postsSuffix reports whether the valid WRs after a failing list's
// failing WR are posted all the same: a relaxed POST-ORDER device may skip
// the failing WR, from its first failing list on.
func (m *machine) postsSuffix() bool { return m.order() == orderPostsSuffix }

// postsPhantom reports whether a failing list leaves one slot more in the
// queue than the WRs it took: a relaxed POST-ORDER device whose producer
// index the error path moves one too far, from its first failing list on.
// The slot holds no WR (emptySlot), or, where the list's loop wrote the
// WQE before its check failed (orderPhantomWR), the failing WR, of which
// only the wr_id is known. That one is started only where there was room
// and the WR was refused as invalid (EINVAL), and not where it is the
// list's first (a device whose first WR takes another path): such a
// failing list publishes nothing more.
func (m *machine) postsPhantom() bool {
	o := m.order()
	return o == orderPhantom || o == orderPhantomWR
}

// The ways a device may process a failing list (machine.orderMode): the
// faithful one, and the departures a relaxed POST-ORDER admits.
const (
	orderFaithful = 1 + iota
	orderDropsPrefix
	orderPostsSuffix
	orderPhantom
	orderPhantomWR
)

func (m *machine) order() int {
	if m.orderMode == 0 {
		m.orderMode = 1 + m.choose(RulePostOrder, 5)
	} else {
		m.touch(RulePostOrder)
	}
	return m.orderMode
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
		m.copyMode = 1 + m.choose(RulePostCopy, m.copyWays())
	}
	stopAt, err := m.postStopAt(n, got)
	if err != nil {
		return Observation{BadWR: -1}, err
	}
	notReady := m.notAllReady()
	// POST-ATOMIC relaxed: a post that returned 0 may have been
	// overwritten by a concurrent one, its WRs lost.
	lost := got.Errno == 0 && n > 0 && m.relaxed(RulePostAtomic) && m.may(RulePostAtomic)
	queued := 0 // WRs of this post the queue took
	for i, w := range o.WRs {
		c, err := m.classifyWR(w, i < stopAt, got, notReady)
		if err != nil {
			return Observation{BadWR: -1}, err
		}
		if i >= stopAt {
			return m.postRefused(o, got, i, c, notReady, queued)
		}
		// The device took it.
		if err := m.postTaken(o, got, i, c); err != nil {
			return Observation{BadWR: -1}, err
		}
		if !lost {
			m.enqueue(w)
			queued++
		}
		if m.relax != nil && notReady {
			m.postOK, m.postOKStates = true, m.qpStates()
		}
	}
	return *got, nil
}

// qpStates encodes the states of the QPs (and which are gone): two
// machines whose QPs stand alike encode alike.
func (m *machine) qpStates() uint64 {
	h := uint64(m.qps.len())
	for _, q := range m.qps.all() {
		x := uint64(q.state) << 1
		if q.gone {
			x |= 1
		}
		h = h*1000003 + x + 1
	}
	return h
}

// refusedForState reports whether a device that refuses posts for its
// QPs' states (POST-ANY-STATE's departure) may have refused this one: no
// post was taken with the QPs standing as they do now.
func (m *machine) refusedForState() bool {
	return !m.postOK || m.postOKStates != m.qpStates()
}

// postStopAt is where the device's bad_wr says a post of n WRs stopped
// (n: it took them all), checked against the return value; where
// POST-BADWR is relaxed, the device may have misreported it any way, and
// where POST-RETURN is, a failure with no bad_wr in the list may have
// been a success.
func (m *machine) postStopAt(n int, got *Observation) (int, error) {
	m.touch(RulePostBadWR)
	switch {
	case got.Errno == 0 && got.BadWR >= 0:
		if !m.excuse(RulePostBadWR) {
			return n, dev(RulePostBadWR, "bad_wr", "unset on success", got.BadWR)
		}
		return n, nil
	case got.Errno == 0:
		return n, nil
	case (got.BadWR < 0 || got.BadWR >= n) && m.relaxed(RulePostReturn) && m.may(RulePostReturn):
		// No bad_wr in the list: the post may have taken every WR and
		// returned something other than 0, POST-RETURN's departure.
		return n, nil
	}
	stopAt := got.BadWR
	var alts []int
	switch {
	case got.BadWR < 0 || got.BadWR >= n:
		for i := range n {
			alts = append(alts, i)
		}
	default:
		// Misreported anywhere in the list: where the post stopped is
		// whichever WR the model finds a reason to refuse.
		for i := range n {
			if i != got.BadWR {
				alts = append(alts, i)
			}
		}
	}
	if m.relaxed(RulePostBadWR) && len(alts) > 0 {
		k := 0
		if got.BadWR < 0 || got.BadWR >= n {
			k = 1 + m.branch(len(alts)) // misreported for certain
			m.excuse(RulePostBadWR)
		} else {
			k = m.choose(RulePostBadWR, 1+len(alts))
		}
		if k > 0 {
			stopAt = alts[k-1]
		}
	}
	if stopAt < 0 || stopAt >= n {
		return n, dev(RulePostBadWR, "bad_wr", fmt.Sprintf("0 to %d", n-1), got.BadWR)
	}
	return stopAt, nil
}

// wrClass is what the model finds of one WR of a post: invalid (bad), the
// queue full for it, or naming an invalid key.
type wrClass struct {
	bad, full, invalidKey bool
	numSGE                int // the WR's num_sge
}

// classifyWR classifies one WR of a post, of which the device took
// (taken) or refused it, and marks the checks that ran. Where the real
// capacity is unknown, what the device did pins or raises it.
func (m *machine) classifyWR(w WR, taken bool, got *Observation, notReady bool) (wrClass, error) {
	if w.NumSGE >= 0 && w.NumSGE != len(w.SGEs) {
		return wrClass{}, unmodelled("wr %d: num_sge %d with %d SGEs", w.ID, w.NumSGE, len(w.SGEs))
	}
	bad, err := m.sgeInvalid(w)
	if err != nil {
		return wrClass{}, err
	}
	m.touch(RulePostSGE)
	full := m.occupied() >= int(m.capacity)+m.slack
	if full && !m.capExact {
		// The real capacity is unknown: the device may take more.
		switch {
		case taken:
			full = false // taken: there was room
			if m.capRaisedTo != m.capacity {
				m.capRaisedFrom = m.capacity
			}
			m.capacity = uint32(m.occupied() + 1)
			m.capRaisedTo = m.capacity
		case !bad || errnoIs(got.Errno, ENOMEM):
			m.capExact = true // an ENOMEM here pins the capacity
			m.capPinned = m.capacity
		default:
			full = false // refused as a bad WR: says nothing of the capacity
		}
	}
	if full || m.occupied()+1 >= int(m.capacity) {
		m.touch(RulePostFull)
		if m.fetched > 0 {
			m.touch(RuleSlotFree)
		}
	}
	if notReady {
		m.touch(RulePostAnyState)
	}
	invalidKey := m.hasInvalidKey(w)
	if invalidKey {
		m.touch(RulePostNoKeyCheck)
	}
	return wrClass{bad: bad, full: full, invalidKey: invalidKey, numSGE: w.NumSGE}, nil
}

// postTaken checks WR i of a post, which the device took: only a relaxed
// rule excuses taking an invalid WR, or one the queue had no room for (a
// relaxed POST-FULL device holds more: the model learns how many).
func (m *machine) postTaken(o Post, got *Observation, i int, c wrClass) error {
	w := o.WRs[i]
	if c.bad && m.sgeLoose && w.NumSGE > int(m.maxSGE) && w.NumSGE <= int(m.caps.MaxSRQSGE) {
		c.bad, m.maxSGE = false, uint32(w.NumSGE) // the modify raised max_sge: it holds this many
	}
	if c.bad && !m.excuse(RulePostSGE) {
		return dev(RulePostSGE, "result", fmt.Sprintf("EINVAL with bad_wr=%d (wr%d)", i, w.ID), got.Describe(o))
	}
	if c.full && m.leftOut(-1) {
		c.full = false // a WR posted before never reached the queue: there was room
	}
	if c.full {
		if !m.excuse(RulePostFull) {
			return dev(RulePostFull, "result", fmt.Sprintf("ENOMEM with bad_wr=%d (wr%d)", i, w.ID), got.Describe(o))
		}
		m.slack = m.occupied() + 1 - int(m.capacity) // it holds more: learn how many
	}
	return nil
}

// refusal is a reason a device may have refused a WR: the model's own
// (rule ""), or a relaxed rule's, with what adopting it changes (fix) and
// whether it allows any errno.
type refusal struct {
	rule RuleID
	fix  func()
	any  bool
}

// refusals lists the reasons for refusing a WR classified c: the model's,
// if it refuses the WR, and those a relaxed rule admits (the queue full
// where the model has room, the WR invalid where the model finds it valid,
// any refusal where the rule forbids none). A reason's fix adopts it in c.
func (m *machine) refusals(got *Observation, c *wrClass, notReady bool) []refusal {
	var rs []refusal
	if c.bad || c.full {
		rs = append(rs, refusal{})
	}
	if !c.full {
		if errnoIs(got.Errno, ENOMEM) && m.fetched > m.held+m.leaked && m.relaxed(RuleSlotFree) {
			rs = append(rs, refusal{RuleSlotFree, func() { m.leaked += max(1, int(m.capacity)-m.occupied()); c.full = true }, false})
		}
		if m.relaxed(RulePostFull) {
			// It holds fewer than the model thought.
			rs = append(rs, refusal{RulePostFull, func() { c.full, m.slack = true, m.occupied()-int(m.capacity) }, false})
		}
	} else if c.bad {
		if m.relaxed(RulePostFull) {
			// It holds more, and refused the WR as bad only.
			rs = append(rs, refusal{RulePostFull, func() { c.full, m.slack = false, m.occupied()+1-int(m.capacity) }, false})
		}
		if len(m.queue) > 0 && m.relaxedBroad(RulePostOrder) {
			// A WR posted before never reached the queue (POST-ORDER's
			// departure, counted by leftOut): there was room, and the
			// WR was refused as bad only.
			rs = append(rs, refusal{0, func() { c.full = !m.leftOut(-1) }, false})
		}
	}
	if !c.bad && m.sgeLoose && c.numSGE > 0 && errnoIs(got.Errno, EINVAL) {
		// A modify changed max_sge (MODIFY-ONLY-MASKED's departure,
		// counted there): the device holds fewer SGEs than this WR's.
		rs = append(rs, refusal{0, func() { c.bad, m.maxSGE = true, uint32(c.numSGE-1) }, false})
	}
	if !c.bad && m.relaxed(RulePostSGE) {
		rs = append(rs, refusal{RulePostSGE, func() { c.bad = true }, false})
	}
	if m.dying {
		// A refused destroy left the SRQ not working (DESTROY-BUSY's
		// departure, counted there): it may refuse any post.
		rs = append(rs, refusal{0, nil, true})
	}
	if notReady && m.relaxed(RulePostAnyState) && m.refusedForState() {
		rs = append(rs, refusal{RulePostAnyState, nil, true})
	}
	if c.invalidKey && m.relaxed(RulePostNoKeyCheck) {
		rs = append(rs, refusal{RulePostNoKeyCheck, nil, true})
	}
	return rs
}

// postRefused checks WR i of a post, which the device refused, and the
// errno it returned; queued WRs of the post went to the queue before it.
func (m *machine) postRefused(o Post, got *Observation, i int, c wrClass, notReady bool, queued int) (Observation, error) {
	rs := m.refusals(got, &c, notReady)
	if len(rs) == 0 {
		r := RulePostSGE
		if errnoIs(got.Errno, ENOMEM) {
			r = RulePostFull
		}
		return Observation{BadWR: -1}, dev(r, "result", fmt.Sprintf("wr%d posted", o.WRs[i].ID), got.Describe(o))
	}
	pick := rs[0]
	if len(rs) > 1 {
		pick = rs[m.branch(len(rs))]
	}
	if pick.rule != 0 {
		m.excuse(pick.rule)
	}
	if pick.fix != nil {
		pick.fix()
	}
	errno, rule := ENOMEM, pick.rule
	switch {
	case pick.any:
		errno = EINVAL
	case c.bad && c.full:
		m.touch(RulePostCheckOrder)
		rule = RulePostCheckOrder
		if m.checkOrder() == SGEFirst {
			errno = EINVAL
		}
	case c.bad:
		errno, rule = EINVAL, RulePostSGE
	case c.full:
		rule = RulePostFull
	default:
		errno = 0
	}
	if i > 0 && m.dropsPrefix() {
		// The failing list's prefix was dropped with it (what of it
		// the queue still holds: a departure may have taken some), or,
		// relaxed broad, the last k WRs of it, any k from none to all,
		// at each failing list: an error path that takes back too many.
		k := queued
		if queued > 0 && m.relaxedBroad(RulePostOrder) {
			k = queued - m.branch(queued+1)
		}
		k = min(k, len(m.queue))
		m.queue = clip(m.queue[:len(m.queue)-k]) // clipped: clones share what lies past it
		m.posted -= k
	}
	if m.postsPhantom() {
		switch {
		case m.orderMode != orderPhantomWR:
			m.enqueue(emptySlot)
		case i > 0 && errno == EINVAL && !c.full:
			m.enqueue(o.WRs[i])
			m.queue[len(m.queue)-1].loose = true
		}
	}
	if i+1 < len(o.WRs) && m.postsSuffix() {
		for _, w := range o.WRs[i+1:] {
			if bad, err := m.sgeInvalid(w); err == nil && !bad && m.occupied() < int(m.capacity)+m.slack {
				m.enqueue(w)
			}
		}
	}
	m.touch(RulePostReturn)
	want := m.postErr(errno)
	if !pick.any && got.Errno != want {
		if err := m.checkPostErrno(got, want, errno, rule); err != nil {
			return Observation{Errno: want, BadWR: i}, err
		}
	}
	return *got, nil
}

// checkPostErrno checks the errno of a post refused for rule, which
// returned not want (errno, positive, in the profile's sign): the right
// error in the wrong convention is POST-RETURN's, and a refusal as full
// or as invalid that the model explains otherwise is that errno's rule's,
// unless relaxed.
func (m *machine) checkPostErrno(got *Observation, want, errno int, rule RuleID) error {
	r, other, both := rule, 0, false
	switch {
	case errnoIs(got.Errno, errno) || got.Errno == -1:
		r = RulePostReturn // the right error, the wrong convention
	case rule == RulePostCheckOrder && (got.Errno == m.postErr(ENOMEM) || got.Errno == m.postErr(EINVAL)) && m.relaxedBroad(RulePostCheckOrder):
		// The other check's errno: which of the two checks comes first
		// is what POST-CHECK-ORDER governs, relaxed at any post (a
		// device whose order changes, after a wrap or on one path).
		r = RulePostCheckOrder
	case errno != ENOMEM && errnoIs(got.Errno, ENOMEM):
		r, other = RulePostFull, ENOMEM // refused as full: POST-FULL's errno, not the reason's
	case errno != EINVAL && errnoIs(got.Errno, EINVAL):
		r, other = RulePostSGE, EINVAL // refused as invalid
	case rule == RulePostCheckOrder && errno == ENOMEM:
		// Neither check's errno: the errno of the check that ran
		// (POST-FULL's) is wrong, or, where both checks apply, the
		// device runs a third first (POST-CHECK-ORDER's statement is
		// the errno of a WR that meets both): either rule explains it,
		// and a device that gives the third errno to a full queue alone
		// shows it is the first.
		r, both = RulePostFull, true
	case rule == RulePostCheckOrder:
		r, both = RulePostSGE, true
	}
	if !m.excuse(r) && !(both && m.excuse(RulePostCheckOrder)) {
		return dev(r, "return value", ErrnoName(want), ErrnoName(got.Errno))
	}
	if other != 0 && got.Errno != m.postErr(other) && !m.excuse(RulePostReturn) {
		// That errno, and in the wrong convention.
		return dev(RulePostReturn, "return value", ErrnoName(m.postErr(other)), ErrnoName(got.Errno))
	}
	return nil
}

// copyWays is the number of ways a device may hold a posted WR (copyMode):
// a copy; the caller's WR, as the harness scribbled over it; and, where
// POST-COPY is relaxed broad, a copy that is not the WR posted at all
// (copyGarbled).
func (m *machine) copyWays() int {
	if m.relaxedBroad(RulePostCopy) {
		return 3
	}
	return 2
}

// copyCaller is the copyMode of a device that keeps the caller's WR, not a
// copy: what the harness scribbled over it after the post.
const copyCaller = 2

// copyGarbled is the copyMode of a device whose copy of every posted WR is
// not the WR posted (its own slot's leftovers, an empty WQE): what it
// scatters and which wr_id it completes with are unknown, and a completion
// that names the wr_id posted refutes it. POST-COPY governs the SRQ's copy
// of a WR, so a departure in any field of that copy is its own.
const copyGarbled = 3

// enqueue adds a posted WR: a copy, or, where a relaxed POST-COPY device
// keeps the caller's WR, what the harness scribbled over it, or (garbled)
// a WR of which only the wr_id posted is known, as the one it cannot carry.
func (m *machine) enqueue(w WR) {
	cp := w
	cp.SGEs = append([]SGE(nil), w.SGEs...)
	e := entry{wr: cp}
	if m.copyMode == copyGarbled {
		e.loose = true
	}
	if m.copyMode == copyCaller {
		e.wr.ID = ^w.ID
		for k := range e.wr.SGEs {
			e.wr.SGEs[k] = SGE{Length: 0xdeadbeef, Key: -1}
		}
		e.loose = true
	}
	m.queue = append(m.queue, e)
	m.posted++
}

// armAtDoorbell arms the SRQ, where a relaxed CREATE-LIMIT left the
// create's limit pending (createLimit), at this call or not yet: a driver
// that keeps a limit given at create as a pending arming arms the SRQ
// when a later call writes the SRQ's context (a post's doorbell, a
// resize), over whatever a modify armed in between. Either way the SRQ
// departs from the rule's promise once, as one armed at create does; over
// a modify of srq_limit since the create, twice: it undid what that
// modify promised as well, which LIMIT-ARM or LIMIT-DISARM governs.
func (m *machine) armAtDoorbell() {
	if m.createLimit > 0 && m.may(RuleCreateLimit) {
		m.armed, m.limit, m.threshold = true, m.createLimit, m.createLimit
		if m.createLimitOver {
			m.depart(RuleCreateLimit) // it undid a modify's arming or disarming
		}
		m.createLimit, m.createLimitOver = 0, false
	}
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
	m.touch(RulePostSGE)
	err := dev(RulePostSGE, "result", fmt.Sprintf("EINVAL with bad_wr=%d (wr%d, num_sge %d)", i, o.WRs[i].ID, o.WRs[i].NumSGE), "the process killed by "+got.Killed)
	if m.excuse(RulePostSGE) {
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
		err := dev(RulePostQPRQ, "return value", "an error, with bad_wr on the first WR", "the process killed by "+got.Killed)
		if m.excuse(RulePostQPRQ) {
			return *got, nil
		}
		return Observation{}, err
	}
	obs, err := failResult(RulePostQPRQ, m.postErr(EINVAL), got)
	want := 0
	if m.postRecvBadWR() == BadWRNull {
		want = -1
	}
	obs.BadWR = want
	m.touch(RulePostQPRQ)
	if err == nil && got != nil && got.BadWR != want {
		err = dev(RulePostQPRQ, "bad_wr", want, got.BadWR)
	}
	if err != nil && m.excuse(RulePostQPRQ) {
		return *got, nil
	}
	return obs, err
}
