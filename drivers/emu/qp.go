package emu

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/srqconform/srqconform/drivers"
)

// qp is a receiving QP attached to the SRQ, with its peer. Its fields are
// guarded by s.dev.mu.
type qp struct {
	s     *srq
	idx   int
	typ   drivers.QPType
	state drivers.QPState
	// filling is the WQE a message is being scattered into between
	// DeliverFirstPacket and DeliverRest; nil when none.
	filling *fill
	// partial says a first packet was sent and DeliverRest is owed, even if
	// the filling WQE was flushed meanwhile.
	partial bool
	// restHeard is what the peer hears at DeliverRest when no WQE is
	// being filled: the first packet's refusal, or a flush's error.
	restHeard drivers.PeerStatus
	// buffered holds messages that arrived before RTR (buffer-before-rtr).
	buffered []drivers.Message
	// gone says Destroy destroyed the QP: it no longer holds the SRQ.
	gone bool
}

// dead says the QP takes no verb: destroyed, or its SRQ is.
// rule: DESTROY-BUSY
func (q *qp) dead() bool { return q.gone || q.s.dead() }

// Destroy is ibv_destroy_qp: a WQE being filled is lost with the QP, as are
// buffered messages; completions already written stay in the CQ.
// rule: DESTROY-BUSY
func (q *qp) Destroy() (int, error) {
	s := q.s
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if q.gone || s.closed {
		return 0, fmt.Errorf("emu: Destroy of QP %d, destroyed or of a closed SRQ: %w", q.idx, drivers.ErrCallFailed)
	}
	if q.filling != nil && !s.destroyed {
		// rule: SLOT-FREE
		s.release(q.filling.w)
	}
	q.gone, q.filling, q.partial, q.buffered = true, nil, false, nil
	return 0, nil
}

// fill is a WQE held by a message in flight.
type fill struct {
	w   wqe
	msg drivers.Message
}

var _ drivers.QP = (*qp)(nil)

// transitions lists the legal moves other than to RESET and ERR.
// rule: QP-TRANSITIONS
var transitions = map[[2]drivers.QPState]bool{
	{drivers.Reset, drivers.Init}: true,
	{drivers.Init, drivers.Init}:  true,
	{drivers.Init, drivers.RTR}:   true,
	{drivers.RTR, drivers.RTS}:    true,
	{drivers.RTS, drivers.RTS}:    true,
	{drivers.RTS, drivers.SQD}:    true,
	{drivers.SQD, drivers.SQD}:    true,
	{drivers.SQD, drivers.RTS}:    true,
	{drivers.SQE, drivers.RTS}:    true,
}

// legal says whether modify from -> to is accepted.
// rule: QP-TRANSITIONS
func (q *qp) legal(from, to drivers.QPState) bool {
	switch {
	case to == drivers.Reset:
		return true
	case to == drivers.Err:
		return from != drivers.Reset
	case transitions[[2]drivers.QPState{from, to}]:
		return true
	case q.s.cfg.has(TransitionsLax):
		return to == drivers.RTR && (from == drivers.RTS || from == drivers.Reset)
	}
	return false
}

// Modify moves the QP to state if the transition is legal.
// rule: QP-TRANSITIONS
func (q *qp) Modify(state drivers.QPState) int {
	s := q.s
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	return q.modify(state)
}

// modify is Modify with s.dev.mu held.
// rule: QP-TRANSITIONS
func (q *qp) modify(state drivers.QPState) int {
	s := q.s
	if q.dead() || state > drivers.Err || !q.legal(q.state, state) {
		return eINVAL
	}
	switch state {
	case drivers.Reset:
		// rule: QP-FLUSH-INPROGRESS
		if q.filling != nil {
			s.release(q.filling.w)
			q.filling = nil
		}
		// rule: QP-BEFORE-RTR
		q.buffered = nil
		// rule: QP-FLUSH-INPROGRESS
		q.partial = false // the reset abandons the peer's half-sent message
		q.state = drivers.Reset
	case drivers.Err:
		// rule: QP-LAST-WQE
		if q.state != drivers.Err {
			if s.cfg.has(FatalOnModify) {
				s.events = append(s.events, drivers.Event{Type: evQPFatal, QP: q.idx})
			}
			q.enterErr()
		} else if s.cfg.has(LastWQEPerPacket) && !s.cfg.has(NoLastWQE) {
			s.events = append(s.events, drivers.Event{Type: evLastWQE, QP: q.idx})
		}
	default:
		if s.cfg.has(SQDAgainNoFetch) && q.state == drivers.SQD && state == drivers.RTS {
			s.st.drained = setKey(s.st.drained, q.idx, true)
		}
		q.state = state
		// rule: QP-BEFORE-RTR
		if state == drivers.RTR {
			msgs := q.buffered
			q.buffered = nil
			for _, m := range msgs {
				q.deliver(m)
			}
		}
	}
	return 0
}

// enterErr moves the QP to ERR: the WQE being filled is flushed, buffered
// messages are discarded and QP_LAST_WQE_REACHED is raised.
// rule: QP-LAST-WQE
func (q *qp) enterErr() {
	s := q.s
	// rule: QP-NOFETCH-STATES
	q.state = drivers.Err
	// rule: QP-BEFORE-RTR
	q.buffered = nil
	// rule: QP-FLUSH-INPROGRESS
	if f := q.filling; f != nil {
		q.filling = nil
		switch {
		case s.cfg.has(NoFlush):
			s.release(f.w)
		case s.cfg.has(FlushSuccess):
			s.pushCQE(drivers.Completion{WRID: f.w.id, Status: wcSuccess, Opcode: wcRecv, ByteLen: f.msg.Len, QP: q.idx}, f.w.holds)
		default:
			s.pushCQE(drivers.Completion{WRID: f.w.id, Status: wcFlushErr, QP: q.idx}, f.w.holds)
		}
	}
	// rule: none (last-wqe-once-per-qp)
	if s.cfg.has(LastWQEOncePerQP) {
		if s.st.lastWQE[q.idx] {
			return
		}
		s.st.lastWQE = setKey(s.st.lastWQE, q.idx, true)
	}
	if !s.cfg.has(NoLastWQE) {
		s.events = append(s.events, drivers.Event{Type: evLastWQE, QP: q.idx})
		if s.cfg.has(LastWQETwice) {
			s.events = append(s.events, drivers.Event{Type: evLastWQE, QP: q.idx})
		}
	}
}

// PostRecv is ibv_post_recv on the QP's own receive queue, which an
// SRQ-attached QP does not have.
// rule: POST-QP-RQ
func (q *qp) PostRecv(wr drivers.RecvWR) (int, int) {
	s := q.s
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if !q.dead() && s.cfg.has(PostRecvAccepted) {
		return 0, -1
	}
	if s.cfg.has(PostRecvKills) {
		return drivers.KilledErrno + int(syscall.SIGFPE), 0
	}
	if s.cfg.has(PostRecvBadWRNull) {
		return s.errno(eINVAL), -1
	}
	return s.errno(eINVAL), 0
}

// fetching says whether the QP's state lets it take WQEs from the SRQ.
// rule: QP-FETCH-STATES
func (q *qp) fetching() bool {
	c := q.s.cfg
	switch q.state {
	case drivers.RTR, drivers.RTS:
		return true
	case drivers.SQD:
		return !c.has(SQDNoFetch) && !q.s.st.drained[q.idx]
	case drivers.SQE:
		return !c.has(SQENoFetch)
	// rule: QP-NOFETCH-STATES
	case drivers.Init:
		return c.has(InitFetches)
	// rule: QP-NOFETCH-STATES
	case drivers.Err:
		return c.has(ErrFetches)
	}
	// rule: QP-NOFETCH-STATES
	return false
}

// checkMsg rejects messages the peer cannot send.
// rules: none (the peer's own bounds: a harness error, not a verb)
func (q *qp) checkMsg(call string, m drivers.Message) error {
	if m.Opcode > drivers.FetchAdd {
		return fmt.Errorf("emu: %s(opcode %d): unknown opcode, want 0..%d", call, m.Opcode, drivers.FetchAdd)
	}
	limit := uint32(maxMessage)
	if q.typ == drivers.UD {
		limit = maxUDMessage
	}
	if m.Len > limit {
		return fmt.Errorf("emu: %s(len %d) on QP %d: above the largest message %d the peer sends", call, m.Len, q.idx, limit)
	}
	return nil
}

// Deliver has the peer send msg and processes it synchronously.
// rule: DESTROY-BUSY
func (q *qp) Deliver(ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
	if err := ctx.Err(); err != nil {
		return peerErr, fmt.Errorf("emu: Deliver: %w", err)
	}
	s := q.s
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if q.dead() {
		return peerErr, fmt.Errorf("emu: Deliver on QP %d of a closed or destroyed SRQ, or destroyed: %w", q.idx, drivers.ErrCallFailed)
	}
	if err := q.checkMsg("Deliver", msg); err != nil {
		return peerErr, err
	}
	if q.filling != nil {
		return peerErr, fmt.Errorf("emu: Deliver on QP %d while a message is half delivered; want DeliverRest first: %w", q.idx, drivers.ErrCallFailed)
	}
	// rule: FETCH-FIFO
	return s.cfg.heard(q.deliver(msg)), nil
}

// dropped is what the peer hears when the QP drops a message: one it
// does not process (QP-NOFETCH-STATES), or one it failed (fail).
// rules: QP-NOFETCH-STATES, RECV-TOO-LARGE, RECV-BAD-KEY
func (q *qp) dropped() drivers.PeerStatus {
	if q.typ == drivers.RC {
		return peerErr
	}
	return peerOK
}

// deliver is the responder: it decides from the QP's state and the opcode
// whether to fetch, fetches the head WQE and completes it.
// rule: FETCH-FIFO
func (q *qp) deliver(msg drivers.Message) drivers.PeerStatus {
	s := q.s
	c := s.cfg
	// rule: QP-NOFETCH-STATES
	if !q.fetching() {
		if c.has(BufferBeforeRTR) && (q.state == drivers.Reset || q.state == drivers.Init) {
			q.buffered = append(q.buffered, msg)
			return peerOK
		}
		if q.state == drivers.Err && c.has(LastWQEPerPacket) && !c.has(NoLastWQE) {
			packets := 1
			if q.typ == drivers.RC {
				packets = 2 // the peer sends once and retries once
			}
			for range packets {
				s.events = append(s.events, drivers.Event{Type: evLastWQE, QP: q.idx})
			}
		}
		return q.dropped()
	}
	// rule: FETCH-OPCODES
	switch msg.Opcode {
	case drivers.Write:
		if !c.has(WriteConsumes) {
			return peerOK
		}
	case drivers.Read, drivers.CmpSwap, drivers.FetchAdd:
		return peerOK
	case drivers.WriteImm:
		if c.has(WriteImmNoConsume) {
			return peerOK
		}
	}
	// rule: SRQ-ERR-NOFETCH
	if s.errored && !c.has(SRQErrorFetches) {
		if q.typ == drivers.RC {
			return peerRNR
		}
		return peerOK
	}
	// rule: RECV-RNR
	if s.outstanding() == 0 {
		if q.typ == drivers.RC && c.has(EmptyTerminates) {
			q.enterErr()
			return peerErr
		}
		if q.typ == drivers.RC && !c.has(RNRSilent) {
			return peerRNR
		}
		return peerOK
	}
	return q.complete(s.fetch(), msg)
}

// complete checks the fetched WQE against msg, scatters and writes the
// completion; it returns what the peer hears.
// rule: RECV-COMPLETION
func (q *qp) complete(w wqe, msg drivers.Message) drivers.PeerStatus {
	s := q.s
	c := s.cfg
	rc := q.typ == drivers.RC
	base := drivers.Completion{WRID: w.id, QP: q.idx}
	sends := msg.Opcode == drivers.Send || msg.Opcode == drivers.SendImm
	// rule: RECV-WRITE-IMM
	if !sends && !(msg.Opcode == drivers.WriteImm && c.has(WriteImmScatters)) {
		// RDMA Write with immediate (or a consuming Write): no scatter.
		ok := base
		ok.Opcode, ok.ByteLen = wcRecvRDMAImm, msg.Len
		if msg.Opcode == drivers.WriteImm {
			ok.HasImm, ok.Imm = true, msg.Imm
		}
		s.pushCQE(ok, w.holds)
		return peerOK
	}
	var grh uint64
	// rule: UD-GRH
	if !rc && sends && !c.has(UDNoGRH) {
		grh = grhBytes
	}
	// rule: RECV-FIT
	need := grh + uint64(msg.Len)
	capacity := s.wqeCapacity(w)
	if c.has(NumSGE0FitsOne) && len(w.sges) == 0 {
		capacity = 1
	}
	// rule: RECV-FIT
	fits := need <= capacity
	if c.has(FitStrict) {
		fits = need < capacity
	}
	success := base
	success.ByteLen = uint32(need)
	switch msg.Opcode {
	// rule: RECV-IMM
	case drivers.SendImm:
		if !c.has(ImmDropped) {
			success.HasImm, success.Imm = true, msg.Imm
		}
	// rule: RECV-WRITE-IMM
	case drivers.WriteImm:
		success.Opcode, success.HasImm, success.Imm = wcRecvRDMAImm, true, msg.Imm
	}
	if c.has(WrongByteLen) {
		success.ByteLen = uint32(min(capacity, 1<<32-1))
	}
	// rule: RECV-TOO-LARGE
	if !fits {
		if c.has(OversizeTruncates) {
			success.ByteLen = uint32(min(capacity, 1<<32-1))
			s.pushCQE(success, w.holds)
			return peerOK
		}
		st := wcLocLenErr
		if rc {
			st = drivers.WCStatus(c.value(OversizeRCStatus, int(wcLocLenErr)))
		} else {
			st = drivers.WCStatus(c.value(OversizeUDStatus, int(wcLocLenErr)))
		}
		return q.fail(base, st, w.holds, rc && !c.has(OversizeRCSurvives) || !rc && c.has(OversizeUDKills), evQPFatal)
	}
	// rule: RECV-WRITE-IMM
	if !sends {
		s.pushCQE(success, w.holds) // write-imm-scatters: fitted, nothing to scatter
		return peerOK
	}
	// rule: RECV-BAD-KEY
	if !c.has(BadKeyIgnored) && s.badKey(w, need) {
		st := drivers.WCStatus(c.value(KeyErrorStatus, int(wcLocProtErr)))
		return q.fail(base, st, w.holds, rc || c.has(KeyErrorUDKills), evQPAccess)
	}
	success.PayloadErr = s.scatter(w, msg, grh)
	if msg.Len > 0 {
		success.Pattern, success.HasPattern = msg.Pattern, true
	}
	s.pushCQE(success, w.holds)
	return peerOK
}

// fail writes an error completion, moves the QP to ERR if kill, raising
// ev on an RC QP where the device raises error events, and returns what
// the peer hears.
// rules: RECV-TOO-LARGE, RECV-BAD-KEY
func (q *qp) fail(c drivers.Completion, st drivers.WCStatus, holds, kill bool, ev drivers.EventType) drivers.PeerStatus {
	c.Status = st
	q.s.pushCQE(c, holds)
	if kill && q.state != drivers.Err {
		if q.typ == drivers.RC && q.s.cfg.has(ErrorEvents) {
			q.s.events = append(q.s.events, drivers.Event{Type: ev, QP: q.idx})
		}
		q.enterErr()
	}
	return q.dropped()
}

// DeliverFirstPacket sends the first packet of a Send on an RC QP: the
// responder fetches the head WQE and holds it while the rest is in flight.
// A QP that takes no WQE for it (its state, the SRQ in error or empty)
// refuses it as a whole message, and DeliverRest reports that answer.
// rule: QP-FLUSH-INPROGRESS
func (q *qp) DeliverFirstPacket(ctx context.Context, msg drivers.Message) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("emu: DeliverFirstPacket: %w", err)
	}
	s := q.s
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	switch {
	case q.dead():
		return fmt.Errorf("emu: DeliverFirstPacket on QP %d of a closed or destroyed SRQ, or destroyed: %w", q.idx, drivers.ErrCallFailed)
	case msg.Opcode != drivers.Send && msg.Opcode != drivers.SendImm:
		return fmt.Errorf("emu: DeliverFirstPacket(opcode %d) on QP %d: only Send and SendImm are delivered in parts", msg.Opcode, q.idx)
	case q.typ != drivers.RC:
		return fmt.Errorf("emu: DeliverFirstPacket on UD QP %d: only RC messages are delivered in parts", q.idx)
	case q.partial:
		return fmt.Errorf("emu: DeliverFirstPacket on QP %d: a message is already half delivered; want DeliverRest first: %w", q.idx, drivers.ErrCallFailed)
	}
	if err := q.checkMsg("DeliverFirstPacket", msg); err != nil {
		return err
	}
	q.partial = true
	q.restHeard = peerErr // the rest of a message whose WQE is flushed fails
	// rule: QP-NOFETCH-STATES
	if !q.fetching() || s.errored && !s.cfg.has(SRQErrorFetches) || s.outstanding() == 0 {
		// The QP takes no WQE for it (its state, the SRQ in error, an
		// empty SRQ): the message is refused as a whole one would be,
		// and the rest hears so.
		q.restHeard = s.cfg.heard(q.deliver(msg))
		return nil
	}
	// rule: FETCH-FIFO
	q.filling = &fill{w: s.fetch(), msg: msg}
	return nil
}

// DeliverRest sends the rest of the message DeliverFirstPacket started and
// completes the WQE it fills. If the WQE was flushed meanwhile (ERR or
// RESET), the peer's send fails.
// rule: QP-FLUSH-INPROGRESS
func (q *qp) DeliverRest(ctx context.Context) (drivers.PeerStatus, error) {
	if err := ctx.Err(); err != nil {
		return peerErr, fmt.Errorf("emu: DeliverRest: %w", err)
	}
	s := q.s
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if q.dead() {
		return peerErr, fmt.Errorf("emu: DeliverRest on QP %d of a closed or destroyed SRQ, or destroyed: %w", q.idx, drivers.ErrCallFailed)
	}
	if !q.partial {
		// Packets of a message the QP never saw start: out of sequence.
		return q.dropped(), nil
	}
	q.partial = false
	f := q.filling
	q.filling = nil
	if f == nil {
		return q.restHeard, nil
	}
	return q.complete(f.w, f.msg), nil
}

// InjectSQE moves the QP from RTS to SQE.
// rule: QP-TRANSITIONS
func (q *qp) InjectSQE() error {
	s := q.s
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if q.dead() {
		return fmt.Errorf("emu: InjectSQE on a destroyed QP or a closed or destroyed SRQ: %w", drivers.ErrCallFailed)
	}
	if q.state != drivers.RTS {
		return nil // a send error moves only a QP in RTS
	}
	q.state = drivers.SQE
	return nil
}

// DeliverRacingErr delivers msgs with the QP entering ERR among them. The
// emulator takes a message in one step, so the modify lands between two:
// after the first k, k being spin in microseconds modulo len(msgs)+1.
// Under err-reexecutes the modify overtakes the k-th message, which is
// then completed again on every WR left in the SRQ.
// rule: QP-NOFETCH-STATES
func (q *qp) DeliverRacingErr(ctx context.Context, msgs []drivers.Message, spin time.Duration) ([]drivers.PeerStatus, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("emu: DeliverRacingErr: %w", err)
	}
	if q.typ != drivers.UD {
		return nil, 0, drivers.ErrUnsupported
	}
	if len(msgs) == 0 || len(msgs) > drivers.MaxRacingMessages {
		return nil, 0, fmt.Errorf("emu: DeliverRacingErr with %d messages, want 1 to %d", len(msgs), drivers.MaxRacingMessages)
	}
	s := q.s
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if q.dead() {
		return nil, 0, fmt.Errorf("emu: DeliverRacingErr on QP %d of a closed or destroyed SRQ, or destroyed: %w", q.idx, drivers.ErrCallFailed)
	}
	if q.filling != nil {
		return nil, 0, fmt.Errorf("emu: DeliverRacingErr on QP %d while a message is half delivered; want DeliverRest first: %w", q.idx, drivers.ErrCallFailed)
	}
	for _, m := range msgs {
		if err := q.checkMsg("DeliverRacingErr", m); err != nil {
			return nil, 0, err
		}
	}
	k := int(spin/time.Microsecond) % (len(msgs) + 1)
	peers := make([]drivers.PeerStatus, len(msgs))
	took := false // the k-th message took a WR
	for i, m := range msgs[:k] {
		before := s.outstanding()
		peers[i] = s.cfg.heard(q.deliver(m))
		took = s.outstanding() < before
	}
	r := q.modify(drivers.Err)
	// rule: FETCH-ONCE
	if r == 0 && took && s.cfg.has(ErrReexecutes) {
		for s.outstanding() > 0 && !s.errored {
			q.complete(s.fetch(), msgs[k-1])
		}
	}
	for i, m := range msgs[k:] {
		peers[k+i] = s.cfg.heard(q.deliver(m))
	}
	return peers, r, nil
}
