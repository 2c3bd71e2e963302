package model

import (
	"math"
	"slices"
)

// peerResult checks the peer's outcome against the allowed set; relaxed,
// rule admits any outcome.
func (m *machine) peerResult(rule RuleID, allowed PeerSet, got *Observation) (Observation, error) {
	obs, _, err := m.peerExcused(rule, allowed, got, cqe{})
	return obs, err
}

// peerExcused is peerResult, returning also the rule that excused an
// outcome outside the allowed set ("" when none had to), from rule or
// the rules at stake in the message's completion.
func (m *machine) peerExcused(rule RuleID, allowed PeerSet, got *Observation, made cqe) (Observation, RuleID, error) {
	obs := Observation{BadWR: -1, Peer: allowed.First()}
	if got != nil && got.Peer == PeerSilent {
		if err := silentPeer(rule, allowed); err != nil {
			return obs, 0, err
		}
		obs.Peer = got.Peer
		return obs, 0, nil
	}
	var by RuleID
	if got != nil {
		if !allowed.Has(got.Peer) {
			if by = m.excusedBy(made, FieldPeer, rule); by == 0 {
				return obs, 0, dev(rule, "peer outcome", allowed, got.Peer)
			}
		}
		obs.Peer = got.Peer
	}
	return obs, by, nil
}

// failedInstead adopts what follows from a peer told of an error where
// the model completed the message (the last completion, on RC qp n) with
// success, when rule excused it: the completion is an error of the kind
// rule governs, and the QP may have gone to ERR, as a device failing the
// message would leave it. One departure, not a new one at every later
// step its consequences show.
func (m *machine) failedInstead(n int, rule RuleID) {
	last := len(m.cq) - 1
	if last < 0 || m.cq[last].c.Status != WCSuccess || m.cq[last].c.QP != n || !Governs(rule, FieldStatus) && rule != RuleRecvCompletion {
		// A rule of whether the message is processed says nothing of its
		// status; the catch-all's statement (a message that fits
		// completes successfully) is about nothing else.
		return
	}
	statuses := AnyError
	switch {
	case rule == RuleRecvBadKey:
		statuses = m.prof.KeyErrorStatus
	case Governs(rule, FieldByteLen|FieldStatus):
		statuses = m.prof.OversizeRCStatus // the message did not fit
	}
	m.cq = slices.Clone(m.cq) // the backing array is shared with other candidates
	e := &m.cq[last]
	e.allowed, e.c.Status, e.c.HasImm, e.c.Imm = statuses, statuses.First(), false, 0
	if q := m.qps.at(n); q.state != Err && !q.gone && m.branch(2) == 1 {
		m.enterErr(n)
	}
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
	q := m.qps.mut(o.QP)
	if !o.Msg.Opcode.ValidOn(q.typ) {
		return Observation{}, unmodelled("%s on a %s QP", o.Msg.Opcode, q.typ)
	}
	m.stake, m.moot = nil, nil
	if q.owesRest() {
		return Observation{}, unmodelled("arrive on qp%d while the rest of a message is owed", o.QP)
	}
	rc := q.typ == RC
	if obs, done, err := m.arriveInState(o, q, got); done {
		return obs, err
	}
	// The opcodes whose consumption a device may get wrong: every one
	// FETCH-OPCODES names but the plain Send, which every other rule of
	// receiving presumes.
	consumes, loose := o.Msg.Opcode.Consumes(), false
	if o.Msg.Opcode != Send && (o.Msg.Opcode != SendImm || !m.narrow) {
		if m.may(RuleFetchOpcodes) {
			consumes, loose = !consumes, true
		}
		m.stakeOn(RuleFetchOpcodes)
	}
	if !consumes {
		return m.peerResult(RuleFetchOpcodes, Peers(PeerOK), got)
	}
	if m.srqErr {
		if !m.may(RuleSRQErrNoFetch) {
			if rc {
				if got != nil && got.Peer == PeerError && m.relaxedBroad(RuleRecvRNR) && m.may(RuleRecvRNR) {
					// No WR to give, and the error answer killed the
					// QP: RECV-RNR governs what a message the SRQ has
					// no WR for does, as in arriveEmpty.
					m.enterErr(o.QP)
				}
				if got != nil && got.Peer == PeerOK && m.relaxedBroad(RuleRecvRNR) && m.excuse(RuleRecvRNR) {
					// Acknowledged, with no WR given: what the sender
					// hears of a message the SRQ has no WR for is
					// RECV-RNR's, as in arriveEmpty.
					return *got, nil
				}
				return m.peerResult(RuleSRQErrNoFetch, Peers(PeerRNR, PeerError), got)
			}
			return m.peerResult(RuleSRQErrNoFetch, Peers(PeerOK), got)
		}
	}
	return m.arriveFetch(o, q, loose, got)
}

// arriveInState applies what QP o.QP's (q's) state does to a message:
// one that does not fetch buffers it or drops it (QP-BEFORE-RTR,
// QP-NOFETCH-STATES), and one that fetches but is not RTS may drop it
// where QP-FETCH-STATES is relaxed. done says the message went no further.
func (m *machine) arriveInState(o Arrive, q *qp, got *Observation) (obs Observation, done bool, err error) {
	rc := q.typ == RC
	if !q.state.Fetches() {
		if q.state != Err {
			m.touch(RuleQPBeforeRTR)
			if (m.beforeRTR() == Buffered) != m.beforeRTRFlipped(q, o.Msg.Opcode) {
				if o.FirstPacketOnly {
					return Observation{}, true, unmodelled("a partial message to a QP that buffers")
				}
				q.pending = append(q.pending, o.Msg)
				obs, err := m.peerResult(RuleQPBeforeRTR, Peers(PeerOK, PeerRNR, PeerError), got)
				return obs, true, err
			}
		}
		if q.state == Err && m.lastWQE() == Raise && m.lastWQERepeat() == PerPacket {
			m.qps.setRepeat(o.QP)
		}
		if !m.may(RuleQPNoFetchStates) {
			peers := Peers(PeerOK)
			if rc {
				peers = Peers(PeerError)
			}
			obs, err := m.peerResult(RuleQPNoFetchStates, peers, got)
			return obs, true, err
		}
		// The departure: the QP processes the message as if it were ready.
		m.stakeOn(RuleQPNoFetchStates)
		if q.state == Err {
			m.readyInErr = o.QP + 1
		}
	} else if q.state != RTS {
		if m.may(RuleQPFetchStates) {
			if o.FirstPacketOnly && rc {
				return m.firstPacketUntaken(q, got)
			}
			obs, err := m.peerResult(RuleQPFetchStates, dropped(rc), got)
			return obs, true, err
		}
		m.stakeOn(RuleQPFetchStates)
	} else if q.stuck || m.stuckNow(o.QP, rc, got) {
		// An RTS QP that takes no WR though WRs are queued: one
		// departure of QP-FETCH-STATES, which holds until the QP's state
		// changes (a device that miscounts the SRQ, RECV-RNR's, answers
		// RNR to one message and takes the next).
		if o.FirstPacketOnly {
			q.restOwed = true // the rest reaches a QP that took nothing
		}
		obs, err := m.peerResult(RuleQPFetchStates, dropped(rc), got)
		return obs, true, err
	} else if o.FirstPacketOnly && rc && m.relaxedBroad(RuleQPFetchStates) && m.may(RuleQPFetchStates) {
		return m.firstPacketUntaken(q, got)
	}
	return Observation{}, false, nil
}

// firstPacketUntaken is an RC message's first packet that a QP in RTR or
// RTS took no WR for (QP-FETCH-STATES): the rest is owed to a QP that
// took nothing, and the packet's answer, which the sender hears only
// with the rest (the harness reports the model's), may be any. The QP is
// not held stuck: nothing tells one that stopped fetching from one that
// missed this message, and a later message it does not take decides
// (stuckNow).
func (m *machine) firstPacketUntaken(q *qp, got *Observation) (Observation, bool, error) {
	q.restOwed = true
	obs, err := m.peerResult(RuleQPFetchStates, Peers(PeerOK, PeerRNR, PeerError), got)
	return obs, true, err
}

// beforeRTRFlipped decides, where QP-BEFORE-RTR is relaxed broadly,
// whether a message of opcode op to QP q before RTR meets the other fate
// than the profile's (buffered where it says dropped, or the reverse):
// the rule governs every message before RTR, and a device may buffer in
// INIT but not in RESET, on UD but not on RC, or a Write with Immediate
// (which a responder may park apart) but not a Send. One persistent
// choice per state, QP type and kind of opcode, the first met following
// the profile.
func (m *machine) beforeRTRFlipped(q *qp, op Opcode) bool {
	if !m.relaxedBroad(RuleQPBeforeRTR) {
		return false
	}
	k := 0
	if q.state == Init {
		k = 1
	}
	if q.typ == UD {
		k += 2
	}
	if op == WriteImm {
		k += 4
	}
	if m.beforeRTRWays == 0 {
		m.beforeRTRWays = 1 << (2 * k) // the first met: the profile's
	}
	way := m.beforeRTRWays >> (2 * k) & 3
	if way == 0 {
		way = uint16(1 + m.choose(RuleQPBeforeRTR, 2))
		m.beforeRTRWays |= way << (2 * k)
	}
	return way == 2
}

// stuckNow adopts, where QP-FETCH-STATES is relaxed, that QP n in RTS
// took no WR for a message, and marks it stuck: on RC the device answered
// RNR while WRs are queued (as for an empty SRQ), or an error (as a QP
// that does not fetch answers, whatever the message; then only as a
// branch, since a message the QP took and failed is answered so too); on
// UD, where the sender hears nothing, as a branch.
func (m *machine) stuckNow(n int, rc bool, got *Observation) bool {
	if got == nil {
		return false
	}
	if !rc {
		// On UD the sender hears nothing: once QP-FETCH-STATES is
		// relaxed (asked only then: alone, a UD message dropped with WRs
		// queued is RECV-RNR's, see udTakenForEmpty), a branch taken
		// once per QP, which then stays stuck, so that what follows from
		// the WRs still queued (a post refused as full, a resize, the
		// limit event not raised) is no second departure before the
		// poll that lacks the completion shows it.
		if m.narrow || m.relax == nil || !m.relax[RuleQPFetchStates] || len(m.queue) == 0 || !m.may(RuleQPFetchStates) {
			return false
		}
		m.qps.mut(n).stuck = true
		return true
	}
	if !m.relaxedBroad(RuleQPFetchStates) {
		return false
	}
	switch got.Peer {
	case PeerRNR:
		if len(m.queue) == 0 || !m.excuse(RuleQPFetchStates) {
			return false // RNR is an empty SRQ's answer
		}
	case PeerError:
		if !m.may(RuleQPFetchStates) {
			return false
		}
		// Two departures: the QP took nothing, and it answered as a QP
		// that does not fetch. A trace that reads as well as one message
		// the QP took and failed (RECV-FIT, RECV-RNR on an empty SRQ)
		// goes to that rule; a device whose QPs stop fetching, once the
		// run adopted it, explains its later errors with no new rule.
		m.depart(RuleQPFetchStates)
	default:
		return false
	}
	m.qps.mut(n).stuck = true
	return true
}

// arriveEmpty is what a consuming message meeting an empty SRQ gets on QP
// n (RECV-RNR): RNR on RC, or the connection terminated as the profile
// says; dropped on UD.
func (m *machine) arriveEmpty(n int, rc bool, got *Observation) (Observation, error) {
	m.touch(RuleRecvRNR)
	if rc {
		if m.emptyRC() == EmptyTerminate {
			m.enterErr(n)
			return m.peerResult(RuleRecvRNR, Peers(PeerError), got)
		}
		obs, by, err := m.peerExcused(RuleRecvRNR, Peers(PeerRNR), got, cqe{})
		if err == nil && by != 0 && got.Peer == PeerError && !m.narrow && m.branch(2) == 1 {
			// The sender told of an error where RNR was due: the device
			// may have failed the message and moved the QP to ERR, as a
			// device failing a message does. One departure.
			m.enterErr(n)
		}
		return obs, err
	}
	if got != nil && m.relaxedBroad(RuleRecvRNR) && m.may(RuleRecvRNR) {
		// RECV-RNR governs what a message meeting an empty SRQ does: on
		// UD the sender hears nothing either way, so the departure (the
		// QP killed, not the message dropped) shows only later, in the
		// QP's LAST_WQE_REACHED and the messages it no longer takes.
		m.enterErr(n)
	}
	return m.peerResult(RuleRecvRNR, Peers(PeerOK), got)
}

// seesEmpty reports whether a consuming message found the SRQ empty though
// WRs are queued: RECV-RNR governs when the SRQ counts as empty, and
// relaxed it admits a device that miscounts. Its WRs stay queued.
//   - On RC the sender's RNR shows it. An error, where an empty SRQ
//     terminates the connection, has too many other causes to be taken
//     for it.
//   - On UD the sender hears nothing: the poll that lacks the message's
//     completion shows it (udTakenForEmpty). A branch here at every UD
//     message would multiply the candidates past any bound.
//
// The rule is consulted (relaxed is asked) only where the sender heard
// RNR, so that a diagnosis need not try it on every trace with a fetch.
func (m *machine) seesEmpty(rc bool, got *Observation) bool {
	if got == nil || !rc || got.Peer != PeerRNR || !m.relaxedBroad(RuleRecvRNR) {
		return false
	}
	return m.emptyRC() != EmptyTerminate && m.excuse(RuleRecvRNR)
}

// arriveFetch fetches a WR for a message that consumes one, on QP o.QP
// (q), and delivers the message, or for its first packet only starts
// filling the WR; loose says the model no longer knows what the WR holds
// (a relaxed FETCH-OPCODES).
func (m *machine) arriveFetch(o Arrive, q *qp, loose bool, got *Observation) (Observation, error) {
	rc := q.typ == RC
	if len(m.recent) > 0 && !o.FirstPacketOnly && m.relaxed(RuleFetchOnce) {
		if k := m.choose(RuleFetchOnce, 1+len(m.recent)); k > 0 {
			// A fetch racing others was handed a WR one of them took.
			before := len(m.cq)
			allowed := m.deliverEntry(o.QP, m.recent[k-1], o.Msg, loose)
			rule := RuleFetchOnce
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
	if len(m.queue) == 0 || m.seesEmpty(rc, got) {
		return m.arriveEmpty(o.QP, rc, got)
	}
	if o.FirstPacketOnly {
		e := m.fetch()
		q.filling = &inflight{wr: e.wr, msg: o.Msg}
		return m.peerResult(RuleQPFlushInProgress, Peers(PeerOK, PeerRNR, PeerError), got)
	}
	var saved *machine
	if got != nil && !loose && !m.narrow && m.relax != nil && (m.relax[RuleFetchFIFO] || rc && m.relax[RulePostOrder] && len(m.queue) > 1) {
		// To take back the delivery if another WR took the message. The
		// rules count as consulted only where the outcome departs, below.
		saved = m.clone()
	}
	before := len(m.cq)
	e := m.fetch()
	obs, err := m.deliveredPeer(o.QP, rc, before, m.deliverEntry(o.QP, e, o.Msg, loose), got)
	if err != nil && rc && m.relaxedBroad(RulePostOrder) && saved != nil && len(saved.queue) > 1 &&
		saved.probeDelivery(o.QP, 1, o.Msg).Has(got.Peer) && saved.leftOut(1) {
		// The sender's outcome is the next WR's: the head never reached
		// the device's queue (POST-ORDER's departure, as leftOut adopts
		// where the sender hears RNR). The message takes the next.
		*m = *saved
		return m.arriveFetch(o, m.qps.mut(o.QP), loose, got)
	}
	if err != nil && len(m.cq) > before && m.relaxedBroad(RuleFetchFIFO) && saved != nil &&
		saved.anotherGives(o.QP, o.Msg, e.wr.ID, got.Peer) && saved.excuse(RuleFetchFIFO) {
		// FETCH-FIFO governs which WR a message takes: the sender's
		// outcome says the device handed it another WR than the head.
		*m = *saved
		return m.tookAnother(o.QP, got)
	}
	return obs, err
}

// anotherGives reports whether a WR queued in m other than the one with
// wr_id took (the WR the model fetched) would give a message msg to QP n
// the sender's outcome p: FETCH-FIFO governs which WR a message takes,
// not what a WR does with it, so the outcome must be one another WR gives.
// A WR whose contents the model lost (loose) gives any outcome, and so
// does one whose delivery the model cannot tell without forking on an
// open field.
func (m *machine) anotherGives(n int, msg Message, took uint64, p PeerStatus) bool {
	for k, e := range m.queue {
		if e.wr.ID == took && !e.loose {
			continue
		}
		if e.loose || m.probeDelivery(n, k, msg).Has(p) {
			return true
		}
	}
	// Or a slot past the head that holds no WR (emptySlot).
	return !m.holdsPostedWRID(emptySlot.ID) && m.probeEntry(n, entry{wr: emptySlot}, msg).Has(p)
}

// emptySlot is what a device finds in a slot of its ring that holds no
// posted WR: zeroed memory, wr_id 0 and no SGEs. A relaxed FETCH-FIFO
// admits a fetch from such a slot instead of the head (the head is lost
// with it): the device fetched from somewhere other than the head.
var emptySlot = WR{}

// probeDelivery returns the sender's outcomes a message msg to QP n would
// allow if the device took the k-th queued WR, on a faithful copy of m.
func (m *machine) probeDelivery(n, k int, msg Message) PeerSet {
	c := m.clone()
	e := c.queue[k]
	c.queue = append(clip(c.queue[:k]), c.queue[k+1:]...)
	return c.deliverProbe(n, e, msg)
}

// probeEntry is probeDelivery for an entry the queue does not hold.
func (m *machine) probeEntry(n int, e entry, msg Message) PeerSet {
	return m.clone().deliverProbe(n, e, msg)
}

// deliverProbe delivers e on m, a copy of the model made for a probe,
// faithfully, and returns the sender's outcomes it allows. A delivery
// that forks on an open field allows every outcome.
func (m *machine) deliverProbe(n int, e entry, msg Message) (allowed PeerSet) {
	defer func() {
		if r := recover(); r != nil {
			switch r.(type) {
			case fork, faultFork:
				allowed = Peers(PeerOK, PeerRNR, PeerError, PeerSilent)
			default:
				panic(r)
			}
		}
	}()
	m.faithful, m.stake, m.moot = true, nil, nil
	return m.deliverEntry(n, e, msg, false)
}

// tookAnother delivers a message to QP n with a WR other than the head,
// as a relaxed FETCH-FIFO admits: the model fetches the head as usual,
// the completion's fields are the device's, and it must show another
// wr_id (a queued WR's, or a later message's).
//
// The sender's outcome decides the QP's fate without a branch (a branch
// at every such message multiplies the candidates): an error NAK on RC
// left it in ERR, any other answer did not.
func (m *machine) tookAnother(n int, got *Observation) (Observation, error) {
	e := m.fetch()
	m.completeLoose(Completion{WRID: e.wr.ID, QP: n}, AnyError|Statuses(WCSuccess), RuleRecvCompletion, true)
	last := len(m.cq) - 1
	m.cq = slices.Clone(m.cq) // the backing array is shared with other candidates
	m.cq[last].another = true
	if q := m.qps.at(n); q.typ == RC && got.Peer == PeerError && q.state != Err {
		m.enterErr(n)
	}
	return Observation{BadWR: -1, Peer: got.Peer}, nil
}

func (m *machine) arriveRest(o ArriveRest, got *Observation) (Observation, error) {
	if err := m.checkQP(o.QP); err != nil {
		return Observation{}, err
	}
	q := m.qps.mut(o.QP)
	if q.filling == nil && q.restOwed {
		// The WR was flushed when the QP went to ERR; the rest of the
		// message reaches a QP that takes nothing (QP-NOFETCH-STATES), and
		// the sender's send fails.
		q.restOwed = false
		m.touch(RuleQPNoFetchStates)
		return m.peerResult(RuleQPNoFetchStates, Peers(PeerError), got)
	}
	if q.filling == nil {
		return Observation{}, unmodelled("arrive_rest on qp%d, which is filling nothing", o.QP)
	}
	f := *q.filling
	q.filling = nil
	// The rest decides the message's fate as a whole message's delivery
	// does (arriveFetch): the rule at stake in what the sender hears is
	// the rule of the completion the message made (RECV-TOO-LARGE for a
	// message too long for the WR), not the catch-all.
	m.stake, m.moot = nil, nil
	before := len(m.cq)
	// A garbled copy (copyGarbled) leaves what the WR holds unknown.
	return m.deliveredPeer(o.QP, q.typ == RC, before, m.deliverEntry(o.QP, entry{wr: f.wr, loose: m.copyMode == copyGarbled}, f.msg, false), got)
}

// deliveredPeer checks what the sender heard of a message the model has
// just delivered on QP n (allowed; the CQ held before completions before
// it), under the rule and stake of the completion the message made, or
// the catch-all where it made none. A sender told of an error that a
// relaxed rule excuses carries its consequence on RC (failedInstead).
func (m *machine) deliveredPeer(n int, rc bool, before int, allowed PeerSet, got *Observation) (Observation, error) {
	rule, made := RuleRecvCompletion, cqe{stake: m.stake, moot: m.moot}
	if len(m.cq) > before {
		rule, made = m.cq[len(m.cq)-1].rule, m.cq[len(m.cq)-1]
	}
	obs, by, err := m.peerExcused(rule, allowed, got, made)
	if err == nil && by != 0 && len(m.cq) > before && rc && got.Peer == PeerError {
		m.failedInstead(n, by)
	}
	return obs, err
}

// fetch takes the head WR (FIFO) and applies the limit rule. Relaxed
// FETCH-FIFO lets the device fetch from the wrong end, the newest first,
// from its first fetch on.
func (m *machine) fetch() entry {
	pos := 0
	if len(m.queue) > 1 {
		if m.fifoMode == 0 {
			m.fifoMode = 1 + m.choose(RuleFetchFIFO, 2)
		} else {
			m.touch(RuleFetchFIFO)
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
	if m.relaxed(RuleFetchOnce) {
		// Racing fetches: as many as there are QPs at once, at most 4.
		m.recent = append(clip(m.recent), e)
		if len(m.recent) > min(4, m.qps.len()) {
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
	m.stake, m.moot = nil, nil
	rc := m.qps.at(n).typ == RC
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
	m.completeLoose(c, AnyError|Statuses(WCSuccess), RuleRecvCompletion, true)
	if m.qps.at(n).typ == RC && m.branch(2) == 1 {
		m.enterErr(n) // an error completion on RC may have killed the QP
	}
	return Peers(PeerOK, PeerRNR, PeerError)
}

// raiseErrorEvent raises, where the profile says a receive error does, the
// affiliated event of an RC QP that an error completion moved to ERR:
// QP_FATAL for a message too long, QP_ACCESS_ERR for a bad key
// (QP-ERROR-EVENT).
func (m *machine) raiseErrorEvent(n int, oversize bool) {
	m.touch(RuleQPErrorEvent)
	if m.errorEvent() != Raise {
		return
	}
	ev := EventQPAccessErr
	if oversize {
		ev = EventQPFatal
	}
	m.fire(ev, n)
}

// misjudgedFar decides, where RECV-FIT is relaxed, whether a message far from
// its WR's fit boundary is misjudged; numSGE is the WR's num_sge. On RC
// each message forks: what the sender hears settles it at once. On UD
// nothing is heard until the poll, so a fork per message would double the
// candidates with every arrival; a UD misjudgement is taken as the
// device's way instead (udFitFlip): once a candidate has misjudged a UD
// message one way (a fitting one too large, or one too large fitting), it
// misjudges every later one of that kind into a WR of as many SGEs
// (udFitSGEs). A device sums the SGE list, and a sum gone wrong with the
// number of SGEs (an SGE left out, each length miscounted) may leave WRs
// of another num_sge summed right; a message of that kind into one of
// them forks once more, misjudged (then every WR is: a sum that counts
// none) or not.
func (m *machine) misjudgedFar(rc, oversize bool, numSGE int) bool {
	if rc {
		return m.may(RuleRecvFit)
	}
	way := int8(1) // fitting, taken as too large
	if oversize {
		way = 2
	}
	sges := int8(min(max(numSGE, 0), 127))
	switch {
	case m.udFitFlip == 0:
		if m.may(RuleRecvFit) {
			m.udFitFlip, m.udFitSGEs = way, sges
			return true
		}
	case m.udFitFlip != way:
		m.touch(RuleRecvFit)
	case m.udFitSGEs < 0 || m.udFitSGEs == sges:
		m.touch(RuleRecvFit)
		m.depart(RuleRecvFit)
		return true
	case m.may(RuleRecvFit):
		m.udFitSGEs = -1
		return true
	}
	return false
}

// validKeyFailed decides, where RECV-BAD-KEY is relaxed, whether the key
// check fails a WR whose keys are all valid. As with misjudgedFar, each RC
// message forks, and a UD failure is the candidate's way with every later
// UD message (udKeyFlip): one fork, not one per UD arrival.
func (m *machine) validKeyFailed(rc bool) bool {
	if rc {
		return m.may(RuleRecvBadKey)
	}
	if m.udKeyFlip {
		m.touch(RuleRecvBadKey)
		m.depart(RuleRecvBadKey)
		return true
	}
	m.udKeyFlip = m.may(RuleRecvBadKey)
	return m.udKeyFlip
}

// countZeroSGEs counts w's SGEs of length 0.
func countZeroSGEs(w WR) int {
	n := 0
	for _, s := range w.SGEs {
		if s.Length == 0 {
			n++
		}
	}
	return n
}

// nearFit reports whether whether a message fits its WR is a close call
// that RECV-FIT governs: the length within one byte of the WR's room, or a
// room past what a 32-bit sum of SGE lengths holds.
func (m *machine) nearFit(need, room uint64) bool {
	return need+1 >= room && need <= room+1 || room > math.MaxInt32
}

// deliver fills a fetched WR with a message and completes it.
func (m *machine) deliver(n int, w WR, msg Message) PeerSet {
	q := m.qps.mut(n)
	rc := q.typ == RC
	c := Completion{WRID: w.ID, QP: n, HasImm: msg.Opcode.HasImm(), Imm: msg.Imm}
	if msg.Opcode.HasImm() {
		m.touch(RuleRecvImm)
		m.stakeOn(RuleRecvImm)
	}
	if !msg.Opcode.Scatters() {
		m.stakeOn(RuleRecvWriteImm)
	}
	if !msg.Opcode.Scatters() && !m.may(RuleRecvWriteImm) {
		// RDMA Write with Immediate: the payload goes to the remote
		// address; the WR only carries the completion.
		c.Opcode, c.ByteLen = WCRecvRDMAWithImm, msg.Len
		m.complete(c, Statuses(WCSuccess), RuleRecvWriteImm)
		return Peers(PeerOK)
	}
	f := m.fitOf(w, msg, rc)
	badKey := m.keyFault(w, f.need)
	if badKey || m.hasInvalidKey(w) {
		if m.may(RuleRecvBadKey) {
			badKey = false // the key was not checked
		}
		m.stakeOn(RuleRecvBadKey)
	} else if len(w.SGEs) > 0 && m.relaxedBroad(RuleRecvBadKey) && m.validKeyFailed(rc) {
		// RECV-BAD-KEY governs which keys the fill finds invalid: a
		// device whose key check fails a valid key. Like a fit misjudged
		// far from its boundary, it counts as two departures and shows
		// only as the status that says a key failed (deliverFailed).
		badKey, f.keyFlip = true, true
		m.depart(RuleRecvBadKey)
	}
	if f.oversize {
		m.stakeOn(RuleRecvTooLarge)
	}
	if f.oversize || badKey {
		return m.deliverFailed(n, q.typ, c, msg, f, badKey)
	}
	c.Opcode, c.ByteLen = WCRecv, uint32(f.byteLen)
	if !msg.Opcode.Scatters() {
		c.Opcode = WCRecvRDMAWithImm
	}
	m.complete(c, Statuses(WCSuccess), RuleRecvCompletion)
	// A departure that made it fit, or put it where the GRH goes,
	// cannot have scattered it as the WR says.
	m.cq[len(m.cq)-1].scatterLost = f.need > f.room || f.noGRH
	return Peers(PeerOK)
}

// fit is how a message meets the WR it fills: the bytes it needs (with a
// UD message's GRH area), the completion's byte_len, the WR's room, and
// whether it is too large for the WR.
type fit struct {
	need, byteLen, room uint64
	noGRH               bool // a UD message with no GRH area (UD-GRH)
	oversize            bool
	farFlip             bool // RECV-FIT relaxed decided it far from the boundary
	keyFlip             bool // RECV-BAD-KEY relaxed found a valid key invalid
}

// fitOf sizes msg against w under the rules that govern the boundary
// (UD-GRH, SGE-LEN0, RECV-NUMSGE0, RECV-FIT), where a relaxed one may
// move it.
func (m *machine) fitOf(w WR, msg Message, rc bool) fit {
	f := fit{need: uint64(msg.Len), byteLen: uint64(msg.Len)}
	if !rc {
		grh := uint64(UDHeader)
		// A device that ignores the GRH area ignores it on every UD
		// message: one persistent choice, not one per message, or the
		// candidates double with every arrival.
		if m.grhMode == 0 {
			m.grhMode = 1 + m.choose(RuleUDGRH, 2)
		} else {
			m.touch(RuleUDGRH)
		}
		if m.grhMode == 2 {
			grh, f.noGRH = 0, true
		}
		m.stakeOn(RuleUDGRH)
		f.need, f.byteLen = f.need+grh, f.byteLen+grh
	}
	f.room = m.capacityOf(w)
	f.oversize = f.need > f.room
	if l := uint64(msg.Len); m.relax != nil && !rc && (l > f.room || l+2*UDHeader <= f.room) {
		// Too large with no GRH area at all, or fitting with twice the
		// area: no GRH area from none to twice its size decides its fate,
		// so UD-GRH governs its byte_len and payload only.
		m.moot = append(m.moot, RuleUDGRH)
	}
	if zeros := countZeroSGEs(w); zeros > 0 {
		m.touch(RuleSGELen0)
		m.stakeOn(RuleSGELen0)
		// The room with each 0-length SGE read the other way (2^31
		// bytes or none): where that would not change the fit, SGE-LEN0
		// does not decide the message's fate. Only a relaxed model reads
		// it (cqe.moot).
		if m.relax != nil {
			alt := f.room + uint64(zeros)*TwoGiB
			if m.sgeBytes(SGE{}) != 0 {
				alt = f.room - uint64(zeros)*TwoGiB
			}
			if (f.need > f.room) == (f.need > alt) {
				m.moot = append(m.moot, RuleSGELen0)
			}
		}
	}
	switch {
	case w.NumSGE == 0:
		// Either way: an empty WR took bytes, or refused an empty
		// message. Both at the boundary, as for any WR, are also
		// RECV-FIT's: an empty message refused (0 of 0), or one byte
		// taken (the boundary off by one).
		flip := m.may(RuleRecvNumSGE0)
		if f.need == f.room || f.need == f.room+1 {
			flip = flip || m.may(RuleRecvFit)
			m.stakeOn(RuleRecvFit)
		}
		if flip {
			f.oversize = !f.oversize
		}
		m.stakeOn(RuleRecvNumSGE0)
	case m.nearFit(f.need, f.room):
		if f.need == f.room || f.need == f.room+1 {
			if m.may(RuleRecvFit) {
				f.oversize = !f.oversize // the boundary is off by one
			}
		} else {
			m.touch(RuleRecvFit)
		}
		m.stakeOn(RuleRecvFit)
	case m.relaxedBroad(RuleRecvFit) && m.misjudgedFar(rc, f.oversize, w.NumSGE):
		// RECV-FIT governs whether a message fits at any size: a device
		// that sums the SGEs wrongly (drops one, counts none) decides
		// far from the boundary. A flip there counts as two departures,
		// so that a rule that explains the same message with one (the
		// GRH area of UD-GRH) keeps the blame; and a fitting message
		// failed far from the boundary is the fit's departure only with
		// the status that says so, a length error (deliverFailed): any
		// other error names some other check that failed.
		f.oversize = !f.oversize
		f.farFlip = true
		m.depart(RuleRecvFit) // not at stake: the flip is all it excuses
	}
	return f
}

// deliverFailed completes a message too large for its WR, or naming a bad
// key, on QP n of type typ, with the statuses the profile allows, and moves
// the QP to ERR where the profile says; a relaxed RECV-TOO-LARGE device
// may instead truncate the message and report success.
func (m *machine) deliverFailed(n int, typ QPType, c Completion, msg Message, f fit, badKey bool) PeerSet {
	rc := typ == RC
	rule, allowed := RuleRecvBadKey, m.prof.KeyErrorStatus
	var fate Fate
	if f.oversize {
		m.touch(RuleRecvTooLarge)
		rule = RuleRecvTooLarge
		if m.may(RuleRecvTooLarge) {
			// Truncated to the WR and reported as a success.
			c.Opcode, c.ByteLen = WCRecv, uint32(min(f.room, uint64(^uint32(0))))
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
		if f.farFlip {
			allowed = Statuses(WCLocLenErr)
		}
		fate = m.oversizeQP(typ)
	} else {
		fate = m.keyErrorQP(typ)
		if f.keyFlip {
			// Not RECV-BAD-KEY's to excuse again: a valid key found
			// invalid shows as a key's failure or not at all.
			rule, allowed = RuleRecvCompletion, Statuses(WCLocProtErr)
		}
	}
	c.Status = allowed.First()
	c.HasImm, c.Imm = false, 0
	m.complete(c, allowed, rule)
	if fate == ToErr {
		m.enterErr(n)
		if rc {
			m.raiseErrorEvent(n, f.oversize)
		}
		if msg.Len > minPathMTU && m.lastWQE() == Raise && m.lastWQERepeat() == PerPacket {
			// The message's later packets, already sent, reach the QP
			// in ERR: a PerPacket device raises the event for each.
			m.qps.setRepeat(n)
		}
	}
	if rc {
		return Peers(PeerError)
	}
	return Peers(PeerOK)
}

// keyFault reports whether filling w with need bytes meets an invalid key.
func (m *machine) keyFault(w WR, need uint64) bool {
	if !m.hasInvalidKey(w) {
		return false // no policy finds a fault: KeyCheck stays open
	}
	if m.keyCheck() == CheckAllSGEs {
		return true
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

// minPathMTU is the smallest path MTU (IBV_MTU_256): a message no longer
// is one packet on any device; a longer one may be several.
const minPathMTU = 256
