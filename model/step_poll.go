package model

import (
	"fmt"
	"slices"
)

func (m *machine) poll(o Poll, got *Observation) (Observation, error) {
	if o.Scope != PollCQ {
		m.owedLimit()
	}
	if o.Scope == PollEventsArrived {
		return m.pollArrived(got)
	}
	n := len(m.cq)
	if o.Max > 0 && o.Max < n {
		n = o.Max
		m.touch(RulePollMax) // the bound holds back completions the CQ has
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
		if m.udLeftOutBetween(cs) > 0 {
			n = min(n, len(m.cq)) // a bound stays; all the CQ holds is fewer
		}
		if len(cs) < n && m.udTakenForEmpty(len(cs), n) {
			n = len(cs)
		}
		if len(cs) < n && m.heldBack(len(cs), n, o.Max > 0) {
			n = len(cs)
		}
		surplus := RuleRecvCompletion
		if o.Max > 0 && len(cs) > o.Max && n == o.Max {
			// More than num_entries asked for: POLL-MAX's departure.
			// Relaxed, the poll returned more than it asked, and what it
			// returned past the bound is checked as the CQ's next
			// completions (beyond those, RECV-COMPLETION's surplus).
			surplus = RulePollMax
			if m.excuse(RulePollMax) {
				n, surplus = min(len(cs), len(m.cq)), RuleRecvCompletion
			}
		}
		var err error
		if n, err = m.checkCompletions(cs, n, surplus); err != nil {
			return obs, err
		}
		if o.Scope == PollAll {
			// m.events, not obs.Events: an error status adopted above may
			// have moved a QP to ERR, and raised its events, in this poll.
			if err := m.checkEvents(m.events, got.Events); err != nil {
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
	m.qps.clearRepeats()
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

// udTakenForEmpty adopts, where RECV-RNR, QP-FETCH-STATES or POST-ORDER
// is relaxed, the completions due from the k-th to the n-th missing, when
// every one is of a message to a UD QP: the device took no WR for those
// messages and dropped them. Each rule governs it: RECV-RNR when the
// device took the SRQ for empty, QP-FETCH-STATES when the QP, in a state
// that fetches, took nothing (on UD the sender hears the same); their WRs
// are still queued, at the head, in order. POST-ORDER when the SRQ was
// empty: the posts that returned 0 left those WRs out of the device's
// queue (as leftOut adopts where RC's sender hears RNR), and they are
// gone.
func (m *machine) udTakenForEmpty(k, n int) bool {
	// POST-ORDER is asked before the WRs are looked at: an unrelaxed
	// model keeps none in its completions (wr), and a diagnosis tries
	// only the rules its replay asked.
	leftOut := m.relaxedBroad(RulePostOrder)
	for _, e := range m.cq[k:n] {
		if !m.udKnown(e) {
			return false
		}
	}
	rule := RuleRecvRNR
	if !m.relaxedBroad(rule) {
		rule = RuleQPFetchStates
	}
	if !m.relaxedBroad(rule) {
		if !leftOut {
			return false
		}
		rule = RulePostOrder
	}
	if !m.excuse(rule) {
		return false
	}
	if rule == RulePostOrder {
		m.posted -= n - k
	} else {
		back := make([]entry, 0, n-k+len(m.queue))
		for _, e := range m.cq[k:n] {
			back = append(back, entry{wr: e.wr})
		}
		m.queue = append(back, m.queue...)
	}
	m.fetched -= n - k
	m.cq = append(slices.Clone(m.cq[:k]), m.cq[n:]...)
	m.unfireLimit()
	return true
}

// udKnown says whether e is the completion of a message to a UD QP whose
// WR the model knows, holding no slot: one the device may have dropped
// having taken no WR for it (udTakenForEmpty, udLeftOutBetween).
func (m *machine) udKnown(e cqe) bool {
	q := e.c.QP
	return q >= 0 && q < m.qps.len() && m.qps.at(q).typ == UD && !e.loose && e.wr.ID == e.c.WRID && !e.holds
}

// udLeftOutBetween adopts, where POST-ORDER is relaxed, completions due
// to UD messages missing from before those the poll got (cs), which are
// the CQ's others, in order: the posts that returned 0 left those WRs out
// of the device's queue, their messages found it empty and were dropped
// (on UD the sender hears nothing), and the messages after them took the
// WRs the model has them take. It returns how many it took out (0 where
// it adopts nothing); missing completions after the last one got are
// udTakenForEmpty's. POST-ORDER is asked only where a completion got is
// not the model's at its place.
func (m *machine) udLeftOutBetween(cs []Completion) int {
	lined := true
	for i := range min(len(cs), len(m.cq)) {
		if m.cq[i].c.WRID != cs[i].WRID || m.cq[i].c.QP != cs[i].QP {
			lined = false
			break
		}
	}
	if lined || !m.relaxedBroad(RulePostOrder) {
		return 0
	}
	var gone []int
	j := 0
	for i := 0; i < len(m.cq) && j < len(cs); i++ {
		if e := m.cq[i]; e.c.WRID == cs[j].WRID && e.c.QP == cs[j].QP {
			j++
			continue
		}
		if !m.udKnown(m.cq[i]) {
			return 0
		}
		gone = append(gone, i)
	}
	if j < len(cs) || len(gone) == 0 || !m.excuse(RulePostOrder) {
		return 0
	}
	cq := make([]cqe, 0, len(m.cq)-len(gone))
	for i, e := range m.cq {
		if !slices.Contains(gone, i) {
			cq = append(cq, e)
		}
	}
	m.cq = cq
	m.posted -= len(gone)
	m.fetched -= len(gone)
	m.unfireLimit()
	return len(gone)
}

// heldBack adopts, where POLL-MAX is relaxed, a poll that returned k
// completions where it was due n (its num_entries, or all the CQ holds if
// fewer): what it returned is checked as the CQ's first k, and the rest
// stay in the CQ, in order, for a later poll. Each completion held back
// is a departure. A poll with a bound (bounded) may hold back again what
// an earlier one did (a device that miscounts num_entries does so at
// every such poll); a poll for all the CQ holds must return it: a
// completion that never comes is its own rule's to lose (lost), not a
// poll's to hold.
func (m *machine) heldBack(k, n int, bounded bool) bool {
	m.touch(RulePollMax)
	if !m.relaxedBroad(RulePollMax) || !bounded && slices.ContainsFunc(m.cq[k:n], func(e cqe) bool { return e.heldBack }) {
		return false
	}
	m.cq = slices.Clone(m.cq) // the backing array is shared with other candidates
	for i := k; i < n; i++ {
		m.cq[i].heldBack = true
		m.excuse(RulePollMax)
	}
	return true
}

// unfireLimit takes back the limit event a fetch raised that an adopted
// departure has undone (the WRs are queued again, or were never queued
// and the message took nothing): the event, not yet read, is withdrawn
// and the SRQ armed again, as if the fetch had not happened, so that the
// missing event is no second departure. Where the count is no longer
// below the limit, no fetch but an undone one raised it; where it still
// is, an earlier fetch may have, and the model branches on which. An
// event already read stays.
func (m *machine) unfireLimit() {
	if m.armed || m.firesThisArming == 0 {
		return
	}
	i := slices.Index(m.events, Event{Type: EventSRQLimitReached, QP: -1})
	if i < 0 {
		return
	}
	if uint32(len(m.queue)) < m.threshold && m.branch(2) == 0 {
		return
	}
	m.events = slices.Delete(slices.Clone(m.events), i, i+1)
	m.armed, m.limit = true, m.threshold
	m.firesThisArming--
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
		if dup && due <= 0 && !m.isOutstanding(g.WRID) && m.excuse(RuleFetchOnce) {
			continue
		}
		if !dup && m.relaxedBroad(RuleFetchOnce) && repeats(got[:i], g) && m.isOutstanding(g.WRID) && m.excuse(RuleFetchOnce) {
			// One message took a second WR: the device completed it
			// again on a WR the model still holds queued.
			m.takeAgain(g.WRID)
			continue
		}
		out = append(out, g)
	}
	return out
}

// repeats reports whether g, a successful completion, is a copy of one of
// before but for its wr_id: the same message completed on another WR.
func repeats(before []Completion, g Completion) bool {
	if g.Status != WCSuccess {
		return false
	}
	return slices.ContainsFunc(before, func(c Completion) bool {
		c.WRID = g.WRID
		return c == g
	})
}

// takeAgain takes the queued WR id out of the SRQ as a fetch does (its
// slot, the limit), for a message that already took one: FETCH-ONCE
// relaxed. Its completion is the one being polled.
func (m *machine) takeAgain(id uint64) {
	k := slices.IndexFunc(m.queue, func(e entry) bool { return e.wr.ID == id })
	m.queue = append(clip(m.queue[:k]), m.queue[k+1:]...)
	m.fetched++
	m.checkLimit()
}

// completionField names a field of the i-th completion a poll returned,
// as a Deviation's What.
func completionField(i int, field string) string {
	return fmt.Sprintf("completion %d %s", i+1, field)
}

// checkCompletions checks got, the completions a poll returned, against
// the first n the CQ holds, and returns how many of those the poll took:
// fewer than n where the device lost some (lost). A completion past
// those is surplus's departure.
func (m *machine) checkCompletions(got []Completion, n int, surplus RuleID) (int, error) {
	for i := 0; i < n && i < len(got); i++ {
		if m.cq[i].c.WRID != got[i].WRID {
			n -= m.lost(i, n, &got[i])
		}
		want, g := m.cq[i], got[i]
		m.touch(RuleFetchOnce)
		// A wr_id mangled on its way (the low 32 bits kept) is the
		// completion's fault; any other is the fetch's, which forks decide.
		if g.WRID != want.c.WRID && (m.fetchedOutOfOrder(i, g) || m.headsLeftOut(i, g) || m.fetchedEmptySlot(i, g)) {
			continue // the device's WR, whose fields the model cannot know
		}
		if want.another && g.WRID == want.c.WRID {
			// The sender's outcome said another WR; this is the model's.
			return n, dev(want.rule, completionField(i, "wr_id"), "the WR another than the model fetched, as the sender's outcome showed", g)
		}
		if g.WRID == ^want.c.WRID && !want.loose && m.relaxedBroad(RulePostCopy) && m.excuse(RulePostCopy) {
			// The WR as the caller scribbled it after the post (the
			// harness inverts wr_id and spoils the SGEs): this WR, at
			// least, the device did not copy.
			continue
		}
		if m.copyMode == copyGarbled {
			// The device's copy of the WR was not the WR posted: any
			// wr_id but the one posted, each a departure of POST-COPY.
			// The wr_id of another WR the model holds is which WR was
			// fetched, the fetch rules' to explain.
			if g.WRID == want.c.WRID || m.holdsWRID(g.WRID) {
				return n, dev(RulePostCopy, completionField(i, "wr_id"), "a wr_id no WR posted carries (the device's copy of every WR is not the WR posted)", g)
			}
			m.depart(RulePostCopy)
			if g.QP != want.c.QP && !m.excuse(RuleRecvCompletion) {
				return n, dev(RuleRecvCompletion, completionField(i, "qp"), want.c, g)
			}
			continue
		}
		if g.WRID != want.c.WRID && want.loose && want.rule == RuleQPFlushInProgress && m.relaxedBroad(RuleQPFlushInProgress) && m.excuse(RuleQPFlushInProgress) {
			// The flush of the WR the QP was filling, which that rule
			// governs, named another WR: its fields are the device's.
			continue
		}
		if g.WRID != want.c.WRID {
			// The completion names another wr_id than the WR the
			// message took: RECV-COMPLETION governs the wr_id a
			// completion carries. Relaxed, any wr_id is its departure
			// (the WR taken stays the model's); in a narrow model, only
			// one mangled on its way with the low 32 bits kept.
			mangled := uint32(g.WRID) == uint32(want.c.WRID)
			if !mangled && !m.relaxedBroad(RuleRecvCompletion) || !m.excuse(RuleRecvCompletion) {
				return n, dev(RuleRecvCompletion, completionField(i, "wr_id"), want.c, g)
			}
		}
		m.touch(RuleRecvCompletion)
		if g.QP != want.c.QP && !m.excuse(RuleRecvCompletion) {
			return n, dev(RuleRecvCompletion, completionField(i, "qp"), want.c, g)
		}
		if want.loose {
			continue
		}
		if !want.allowed.Has(g.Status) {
			if !m.narrow && m.excuseStake(want, FieldStatus, want.rule) {
				m.adoptStatus(g)
				continue
			}
			return n, dev(want.rule, completionField(i, "status"), want.allowed, g.Status)
		}
		if g.Status != WCSuccess {
			continue
		}
		if g.Opcode != want.c.Opcode || g.ByteLen != want.c.ByteLen {
			var differ Field
			if g.Opcode != want.c.Opcode {
				differ |= FieldOpcode
			}
			if g.ByteLen != want.c.ByteLen {
				differ |= FieldByteLen
			}
			if m.excuseStake(want, differ) {
				continue // the specific rule's departure: the rest of it is the device's
			}
			if !m.excuse(RuleRecvCompletion) {
				if g.Opcode != want.c.Opcode {
					return n, dev(RuleRecvCompletion, completionField(i, "opcode"), want.c.Opcode, g.Opcode)
				}
				return n, dev(RuleRecvCompletion, completionField(i, "byte_len"), want.c.ByteLen, g.ByteLen)
			}
		}
		if (g.HasImm != want.c.HasImm || (g.HasImm && g.Imm != want.c.Imm)) && !m.excuseStake(want, FieldImm, RuleRecvImm) {
			return n, dev(RuleRecvImm, completionField(i, "immediate"), want.c, g)
		}
		if g.PayloadErr != "" && !want.scatterLost && !m.excuseStake(want, FieldPayload) && !m.excuse(RuleRecvCompletion) {
			return n, dev(RuleRecvCompletion, fmt.Sprintf("payload of wr_id %d", g.WRID), "the message bytes in the SGEs, in order", g.PayloadErr)
		}
	}
	if len(got) < n {
		n -= m.lost(len(got), n, nil)
	}
	switch {
	case len(got) < n:
		return n, dev(m.cq[len(got)].rule, "completions", m.cqCompletions(n), slices.Clone(got))
	case len(got) > n:
		return n, dev(surplus, "completions", m.cqCompletions(n), slices.Clone(got))
	}
	return n, nil
}

// lost adopts that the device lost the completions the CQ holds from the
// i-th on, up to the one of g's wr_id (up to the n-th when g is nil): they
// never came. A completion that never comes departs from the rule that
// governs it (cqe.rule: RECV-COMPLETION for a message that fit, the error
// and flush rules for theirs), and that rule relaxed broadly admits it. The
// WRs stay taken, and a slot freed at poll stays held. It returns how many
// it took out: 0 where one of their rules is not relaxed, or g is none of
// them.
func (m *machine) lost(i, n int, g *Completion) int {
	j := n
	if g != nil {
		j = slices.IndexFunc(m.cq[i:n], func(e cqe) bool { return e.c.WRID == g.WRID && !e.loose })
		if j <= 0 {
			return 0
		}
		j += i
	}
	for _, e := range m.cq[i:j] {
		if !m.relaxedBroad(e.rule) {
			return 0
		}
	}
	for _, e := range m.cq[i:j] {
		m.excuse(e.rule)
	}
	m.cq = append(slices.Clone(m.cq[:i]), m.cq[j:]...)
	return j - i
}

// fetchedOutOfOrder excuses, where FETCH-FIFO is relaxed, a completion
// (the i-th the CQ holds) of a WR still outstanding in the model's queue
// where the model completed another: the device fetched that WR instead
// of the head, whatever the order it fetches in. The two WRs change
// places: the one the model fetched goes back where the other stood.
func (m *machine) fetchedOutOfOrder(i int, g Completion) bool {
	want := m.cq[i]
	k := m.completedInstead(i, g, RuleFetchFIFO)
	if k < 0 {
		return m.dueSwapped(i, g)
	}
	if k == 0 && m.fifoMode == 2 {
		// The device took the oldest WR queued: this candidate's
		// newest-first fetching is refuted, and the fields of a WR
		// taken in posting order are no departure of FETCH-FIFO's.
		return false
	}
	if !m.excuse(RuleFetchFIFO) {
		return false
	}
	took := m.queue[k]
	m.queue = append(clip(m.queue[:k]), append([]entry{{wr: want.wr}}, m.queue[k+1:]...)...)
	m.cq = slices.Clone(m.cq) // the backing array is shared with other candidates
	m.cq[i].c.WRID, m.cq[i].wr, m.cq[i].loose, m.cq[i].another = took.wr.ID, took.wr, true, false
	return true
}

// fetchedEmptySlot excuses, where FETCH-FIFO is relaxed broad, a
// completion (the i-th the CQ holds) that carries the wr_id of an empty
// slot (emptySlot) where no WR the model holds does: the device fetched a
// slot past the head that holds no WR, instead of the head, which it
// lost. Its fields are the device's. A completion that is the model's but
// for a wr_id cut to its low 32 bits (0 for 1<<40) is the completion's
// fault (RECV-COMPLETION), not an empty slot's.
func (m *machine) fetchedEmptySlot(i int, g Completion) bool {
	want := m.cq[i]
	if g.WRID != emptySlot.ID || want.c.WRID == emptySlot.ID || truncatedTo(want.c, g) || (want.loose && !want.another) ||
		!m.relaxedBroad(RuleFetchFIFO) || m.holdsPostedWRID(emptySlot.ID) || !m.excuse(RuleFetchFIFO) {
		return false
	}
	m.cq = slices.Clone(m.cq) // the backing array is shared with other candidates
	m.cq[i].c.WRID, m.cq[i].wr, m.cq[i].loose, m.cq[i].another = emptySlot.ID, emptySlot, true, false
	return true
}

// truncatedTo reports whether g is want with its wr_id cut to the low 32
// bits, and nothing else changed.
func truncatedTo(want, g Completion) bool {
	want.WRID, want.PayloadErr, g.PayloadErr = uint64(uint32(want.WRID)), "", ""
	return want == g
}

// dueSwapped excuses, where FETCH-FIFO is relaxed, a completion (the i-th
// the CQ holds) of a WR the model fetched for a later message, still due:
// the device handed the two messages each other's WR. Both completions'
// fields are then the device's.
func (m *machine) dueSwapped(i int, g Completion) bool {
	want := m.cq[i]
	if !m.relaxedBroad(RuleFetchFIFO) || want.wr.ID != want.c.WRID || (want.loose && !want.another) {
		return false
	}
	j := slices.IndexFunc(m.cq[i+1:], func(e cqe) bool { return e.c.WRID == g.WRID && e.wr.ID == g.WRID && !e.loose })
	if j < 0 || !m.excuse(RuleFetchFIFO) {
		return false
	}
	j += i + 1
	m.cq = slices.Clone(m.cq) // the backing array is shared with other candidates
	m.cq[i].c.WRID, m.cq[i].wr, m.cq[i].loose, m.cq[i].another = m.cq[j].wr.ID, m.cq[j].wr, true, false
	m.cq[j].c.WRID, m.cq[j].wr, m.cq[j].loose = want.wr.ID, want.wr, true
	return true
}

// leftOut is POST-ORDER's departure adopted where it shows: WRs that
// posts which returned 0 (or the prefix of one that failed) left out of
// the queue, a slot counted but never written. n WRs went missing from
// the head of the queue (the device found it empty), or, with n < 0, one
// WR (the device had room where the model holds the queue full): the
// model takes the oldest or the newest (a doorbell one short), without
// branching on any other (a branch per WR of a long post multiplies the
// candidates past any bound); a completion that shows it was another
// fails the candidate. It reports whether it took the departure.
func (m *machine) leftOut(n int) bool {
	if len(m.queue) == 0 || !m.relaxedBroad(RulePostOrder) || !m.excuse(RulePostOrder) {
		return false
	}
	if n < 0 && len(m.queue) > 1 && m.branch(2) == 1 {
		// The newest: a doorbell that published one WR short.
		m.queue = clip(m.queue[:len(m.queue)-1])
		m.posted--
		return true
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
	k := m.completedInstead(i, g, RulePostOrder)
	if k < 0 || !m.excuse(RulePostOrder) {
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
func (m *machine) completedInstead(i int, g Completion, rule RuleID) int {
	want := m.cq[i]
	if !m.relaxedBroad(rule) || want.wr.ID != want.c.WRID || (want.loose && !want.another) {
		return -1
	}
	return slices.IndexFunc(m.queue, func(e entry) bool { return e.wr.ID == g.WRID && !e.loose })
}

// excuseStake excuses a departure in the given fields of a completion
// (or of the peer's outcome) as one of the specific rules that governed
// its message (cqe.stake) and govern those fields (Governs), or of the
// extra rules given: the first of them relaxed takes it. A relaxed rule
// admits any departure in what it governs, not only the misbehaviours its
// fault points foresee, and nothing in what it does not: the rule that
// decides whether a message consumes a WR does not excuse its byte_len.
func (m *machine) excuseStake(want cqe, fields Field, extra ...RuleID) bool {
	return m.excusedBy(want, fields, extra...) != 0
}

// excusedBy is excuseStake, returning the rule that took the departure
// ("" when none did).
func (m *machine) excusedBy(want cqe, fields Field, extra ...RuleID) RuleID {
	for _, r := range extra {
		m.touch(r)
	}
	stake := want.stake
	if m.narrow {
		stake = nil
	}
	for _, r := range extra {
		if r != 0 && m.relaxed(r) && m.excuse(r) {
			return r
		}
	}
	for _, r := range stake {
		if fields&(FieldStatus|FieldPeer) != 0 && slices.Contains(want.moot, r) {
			continue // its departure would not have changed the message's fate
		}
		if Governs(r, fields) && m.relaxed(r) && m.excuse(r) {
			return r
		}
	}
	return 0
}

// adoptStatus adopts a completion status that a relaxed rule excused: an
// error completion on an RC QP may have moved the QP to ERR, as the
// device's own error handling would (the model branches on it).
func (m *machine) adoptStatus(g Completion) {
	if g.Status == WCSuccess || g.QP < 0 || g.QP >= m.qps.len() {
		return
	}
	q := m.qps.at(g.QP)
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

// srqEventFields returns got with the QP field of each SRQ event (limit
// reached, SRQ error: events of the SRQ, which name no QP) that names one
// set to none, where the rule that governs the event is relaxed: the
// event's fields are that rule's as much as its coming is. Otherwise got
// is returned as it is, and the event counts as one the model did not
// raise.
func (m *machine) srqEventFields(got []Event) []Event {
	var out []Event
	for i, e := range got {
		if e.QP == -1 || (e.Type != EventSRQLimitReached && e.Type != EventSRQErr) {
			continue
		}
		rule := RuleLimitFire
		if e.Type == EventSRQErr {
			rule = RuleSRQErrEvent
		}
		if !m.relaxedBroad(rule) || !m.excuse(rule) {
			continue
		}
		if out == nil {
			out = slices.Clone(got)
		}
		out[i].QP = -1
	}
	if out == nil {
		return got
	}
	return out
}

// checkEvents compares events as multisets: the async queue does not order
// events of different objects.
func (m *machine) checkEvents(want, got []Event) error {
	got = m.srqEventFields(got)
	count := map[Event]int{}
	for _, e := range want {
		count[e]++
	}
	for _, e := range got {
		count[e]--
	}
	// An arming that fired: its limit event is among those due.
	fired := slices.ContainsFunc(want, func(e Event) bool { return e.Type == EventSRQLimitReached })
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
		if c < 0 && e.Type == EventQPLastWQEReached && e.QP >= 0 && e.QP < m.qps.len() && m.qps.at(e.QP).repeatOK {
			continue // a PerPacket device repeats it for packets met in ERR
		}
		if c < 0 && e.Type == EventSRQLimitReached && m.armLate != 0 && !m.armed {
			// The arm LIMIT-ARM's departure left undone took effect
			// and fired: adopted, no second departure.
			m.limit, m.armLate, m.firesThisArming = m.armLate, 0, 1
			if m.limitAfterFire() == LimitReadsZero {
				m.limit = 0
			}
			continue
		}
		if c < 0 && e.Type == EventSRQLimitReached && (m.firesThisArming > 0 || fired) && m.relaxedBroad(RuleLimitOnce) && m.excuse(RuleLimitOnce) {
			// Another limit event of an arming that fired already, in
			// whatever shape it came: LIMIT-ONCE's departure. The
			// arming may be an earlier one than the SRQ's now, re-armed
			// before the poll: its event is among those due.
			continue
		}
		rule := RuleLimitFire
		switch {
		case e.Type == EventSRQErr:
			rule = RuleSRQErrEvent
		case e.Type == EventQPLastWQEReached:
			rule = RuleQPLastWQE
		case e.Type.QPError(), e.Type > EventQPAccessErr && e.QP >= 0:
			rule = RuleQPErrorEvent // a type no event of the model has is the device's error too
		case e.Type > EventQPAccessErr:
			rule = RuleSRQErrEvent
		}
		if rule != RuleLimitFire && m.excuse(rule) {
			continue
		}
		return dev(rule, "events", fmt.Sprint(want), fmt.Sprint(got))
	}
	return nil
}

// holdsWRID reports whether a WR the model holds, outstanding or completed
// and not yet polled, carries wr_id id.
func (m *machine) holdsWRID(id uint64) bool {
	return slices.ContainsFunc(m.queue, func(e entry) bool { return e.wr.ID == id }) ||
		slices.ContainsFunc(m.cq, func(e cqe) bool { return e.c.WRID == id })
}

// holdsPostedWRID is holdsWRID not counting the completions whose
// contents the model lost (loose), as those of the empty slots it adopted
// (fetchedEmptySlot).
func (m *machine) holdsPostedWRID(id uint64) bool {
	return slices.ContainsFunc(m.queue, func(e entry) bool { return e.wr.ID == id }) ||
		slices.ContainsFunc(m.cq, func(e cqe) bool { return e.c.WRID == id && !e.loose })
}
