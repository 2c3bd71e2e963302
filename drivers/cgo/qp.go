//go:build linux && cgo && rdma

package cgo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"

	"github.com/srqconform/srqconform/drivers"
)

// Connection parameters.
const (
	qkey  = 0x11111111
	rqPSN = 0 // the receiver's first expected PSN
	// ackTimeout and retryCount bound how long an RC peer sends to a
	// receiver that takes nothing (RESET, INIT, ERR) before it gives up:
	// that wait is the proof nothing was processed, and it was the largest
	// cost of a device run (timeout 14 and 1 retry: about 130 ms a
	// refusal, 27% of a 50-case run on rxe under TCG, reports/rxe-speed.md).
	// Timeout 13 is 4.096 us * 2^13 = 33.5 ms (8 jiffies at HZ 250): a
	// refusal costs about 66 ms, and a live receiver is refused only if it
	// answers nothing for 33 ms, against 10 ms, the slowest receiver
	// processing measured under TCG (udSettle). The retries stay at 1:
	// each retransmission that reaches a QP in ERR makes rxe 6.5 and later
	// raise LAST_WQE_REACHED again, which the model cannot count (6
	// retries made 7 events for one message, and the cgo suite failed
	// QP-LAST-WQE). Not 7 in any case: rxe takes 7 as "for ever".
	ackTimeout = 13
	// longAckTimeout is the ACK timer of the re-check of a message the
	// peer heard nothing back for (qp.recheck): 4.096 us * 2^17 = 537 ms
	// a try, 16 times ackTimeout, about 1.07 s with the retry. Only a
	// silence pays it, so a quiet run keeps the fast timer.
	longAckTimeout = 17
	retryCount     = 1
	rnrRetry       = 0
	minRNRTimer    = 1
	sendTimeout    = 5 * time.Second // longest wait for a peer's send completion
	// udSettle bounds how long Deliver waits, after a UD send completed,
	// for the receiver to write a completion. rxe completes a UD send when
	// the packet is handed to the loopback path; the responder runs later
	// in its own task. TestUDProcessingDelay measures the gap from the send
	// completion to the receive completion: on rxe in QEMU TCG guests it
	// had a median of 9 us but a tail of 8 ms (p99) to 10 ms (max) over
	// 200 sends on 6.12 (TCG scheduling of the responder's work item). A
	// receive completion, seen on the completion channel, ends the wait at
	// once, so only messages the receiver drops pay the full bound.
	udSettle = 50 * time.Millisecond
)

// qp is a receiver QP attached to the SRQ and its peer. Fields are
// guarded by s.dev.mu.
type qp struct {
	s   *srq
	idx int
	typ drivers.QPType
	// caps is what the receiver asks for in its receive caps; createErrno
	// is the errno of a receiver ibv_create_qp that failed.
	caps        drivers.RecvCaps
	createErrno int

	qp, peer   *_C_struct_ibv_qp
	scq, pcq   *_C_struct_ibv_cq // the receiver's and the peer's send CQs
	ah         *_C_struct_ibv_ah // UD: the peer's address handle to the receiver
	qpn, pqpn  uint32
	peerReady  bool          // the peer is in RTS and (RC) connected to the receiver
	peerFailed bool          // the peer's last send failed: reconnect before the next
	lastDrain  time.Duration // how long the last Modify(SQD) waited (tests)
	// rdma_cm mode: the connection's ids (receiver, peer), the state
	// Modify took the QP to, and the last connection failure.
	rid, pid *_C_struct_rdma_cm_id
	vstate   drivers.QPState
	cmErr    error
	// lastWQEs counts the QP's LAST_WQE_REACHED events read, and
	// lastWQEsAtModify that count at its last Modify (rdma_cm mode: a
	// RESET destroys the QP, see awaitLastWQE).
	lastWQEs, lastWQEsAtModify int
	// nextPSN is the peer's next send PSN where psnKnown (the peer was
	// connected by connectPeer, not by rdma_cm, and sent only one-PSN
	// messages since); slowTimers gives the
	// peer longAckTimeout while a silence is re-checked; rechecks counts
	// those re-checks (tests).
	nextPSN              uint32
	psnKnown, slowTimers bool
	rechecks             int
}

// The statuses peerOutcome reads are libibverbs' own: these fail to
// compile otherwise.
var (
	_ = [1]int{}[_C_IBV_WC_SUCCESS-wcSuccess]
	_ = [1]int{}[_C_IBV_WC_RETRY_EXC_ERR-wcRetryExceeded]
	_ = [1]int{}[_C_IBV_WC_RNR_RETRY_EXC_ERR-wcRNRExceeded]
)

var _ drivers.QP = (*qp)(nil)

// CreateQP creates a receiver QP attached to the SRQ (in RESET) and its
// peer on the same device.
func (s *srq) CreateQP(ctx context.Context, t drivers.QPType) (drivers.QP, error) {
	q, e, err := s.CreateQPCaps(ctx, t, drivers.RecvCapsZero)
	if err == nil && e != 0 {
		return nil, fmt.Errorf("cgo: ibv_create_qp(receiver %d, %s, with SRQ): errno %d, want a QP", len(s.qps), typeName(t), e)
	}
	return q, err
}

// CreateQPCaps is CreateQP with the receiver asking for the receive caps c.
func (s *srq) CreateQPCaps(ctx context.Context, t drivers.QPType, c drivers.RecvCaps) (drivers.QP, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("cgo: CreateQP: %w", err)
	}
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if s.dead() {
		return nil, 0, fmt.Errorf("cgo: CreateQP on a closed or destroyed SRQ: %w", drivers.ErrCallFailed)
	}
	if t != drivers.RC && t != drivers.UD {
		return nil, 0, fmt.Errorf("cgo: CreateQP(type %d): want RC (0) or UD (1)", t)
	}
	if c > drivers.RecvCapsAboveSGE {
		return nil, 0, fmt.Errorf("cgo: CreateQP(receive caps %d): want 0 to %d", c, drivers.RecvCapsAboveSGE)
	}
	q := &qp{s: s, idx: len(s.qps), typ: t, caps: c}
	if s.cm != nil {
		if t != drivers.RC {
			return nil, 0, fmt.Errorf("cgo: CreateQP(%s) in rdma_cm mode: only RC connects through rdma_cm here", typeName(t))
		}
		if c != drivers.RecvCapsZero {
			return nil, 0, fmt.Errorf("cgo: CreateQP(receive caps %d) in rdma_cm mode: %w", c, drivers.ErrUnsupported)
		}
		// The QP is made when Modify(RTR) connects it.
		s.qps = append(s.qps, q)
		return q, 0, nil
	}
	if err := q.create(); err != nil || q.createErrno != 0 {
		return nil, q.createErrno, errors.Join(err, q.destroy())
	}
	s.qps = append(s.qps, q)
	s.byQPN[q.qpn] = q.idx
	return q, 0, nil
}

func (q *qp) create() error {
	s := q.s
	ctx := s.dev.ctx
	qt := _C_enum_ibv_qp_type(_C_IBV_QPT_RC)
	if q.typ == drivers.UD {
		qt = _C_IBV_QPT_UD
	}
	var err error
	if q.scq = s.kit.takeSendCQ(); q.scq == nil {
		if q.scq, err = _C2_ibv_create_cq(ctx, 16, nil, nil, 0); q.scq == nil {
			return nullErr(fmt.Sprintf("ibv_create_cq(send CQ of QP %d)", q.idx), err)
		}
	}
	var ia _C_struct_ibv_qp_init_attr
	ia.send_cq, ia.recv_cq, ia.srq = q.scq, s.cq, s.srq
	ia.qp_type = qt
	ia.cap.max_send_wr, ia.cap.max_send_sge = 1, 1
	switch q.caps {
	case drivers.RecvCapsAboveWR:
		ia.cap.max_recv_wr, ia.cap.max_recv_sge = _C_uint32_t(s.dev.info.MaxQPWR+1), 1
	case drivers.RecvCapsAboveSGE:
		ia.cap.max_recv_wr, ia.cap.max_recv_sge = 1, _C_uint32_t(s.dev.info.MaxSGE+1)
	}
	if q.qp, err = _C2_ibv_create_qp(s.pd, &ia); q.qp == nil {
		var e syscall.Errno
		if errors.As(err, &e) && e != 0 {
			q.createErrno = int(e) // the verb's own answer, not the harness failing
			return nil
		}
		return nullErr(fmt.Sprintf("ibv_create_qp(receiver %d, %s, with SRQ)", q.idx, typeName(q.typ)), err)
	}
	q.qpn = uint32(q.qp.qp_num)
	if p, ok := s.kit.takePeer(q.typ); ok {
		q.peer, q.pcq, q.ah = p.qp, p.cq, p.ah
		q.pqpn = uint32(q.peer.qp_num)
		if q.typ == drivers.UD {
			return q.connectPeer(0)
		}
		return nil
	}
	if q.pcq, err = _C2_ibv_create_cq(ctx, 16, nil, nil, 0); q.pcq == nil {
		return nullErr(fmt.Sprintf("ibv_create_cq(CQ of peer %d)", q.idx), err)
	}
	var pa _C_struct_ibv_qp_init_attr
	pa.send_cq, pa.recv_cq = q.pcq, q.pcq
	pa.qp_type = qt
	// Room for a burst of DeliverRacingErr.
	pa.cap.max_send_wr, pa.cap.max_send_sge = drivers.MaxRacingMessages, 1
	pa.cap.max_recv_wr, pa.cap.max_recv_sge = 1, 1
	if q.peer, err = _C2_ibv_create_qp(s.pd, &pa); q.peer == nil {
		return nullErr(fmt.Sprintf("ibv_create_qp(peer %d, %s)", q.idx, typeName(q.typ)), err)
	}
	q.pqpn = uint32(q.peer.qp_num)
	if q.typ == drivers.UD {
		var ah _C_struct_ibv_ah_attr
		q.av(&ah)
		if q.ah, err = _C2_ibv_create_ah(s.pd, &ah); q.ah == nil {
			return nullErr(fmt.Sprintf("ibv_create_ah(peer %d to the port's GID index %d)", q.idx, s.dev.gidIndex), err)
		}
		return q.connectPeer(0)
	}
	return nil
}

// destroy releases the peer and the receiver, newest first; the caller
// holds dev.mu.
func (q *qp) destroy() error {
	if q.s.cm != nil {
		return q.dropCM()
	}
	var errs []error
	if q.qp != nil {
		if r := _C_ibv_destroy_qp(q.qp); r != 0 {
			errs = append(errs, verbErr(fmt.Sprintf("ibv_destroy_qp(receiver %d)", q.idx), int(r)))
		}
		q.qp = nil
	}
	if q.scq != nil {
		if errors.Join(errs...) == nil {
			errs = append(errs, q.s.kit.putSendCQ(q.scq))
		} else if r := _C_ibv_destroy_cq(q.scq); r != 0 {
			errs = append(errs, verbErr(fmt.Sprintf("ibv_destroy_cq(send CQ of receiver %d)", q.idx), int(r)))
		}
		q.scq = nil
	}
	// The peer is kept for a later QP, whole or not at all, and in RESET:
	// nothing it had in flight can reach a later receiver (which may get
	// this one's QP number), and its next connection starts from there
	// (qp.connectPeer).
	p := peer{qp: q.peer, cq: q.pcq, ah: q.ah}
	q.peer, q.pcq, q.ah = nil, nil, nil
	if p.qp != nil && p.cq != nil && (q.typ == drivers.RC || p.ah != nil) && errors.Join(errs...) == nil && q.resetPeer(p.qp) {
		q.s.kit.putPeer(q.typ, p)
	} else {
		errs = append(errs, p.destroy())
	}
	return errors.Join(errs...)
}

// dead says the QP takes no verb: destroyed by Destroy, or its SRQ closed.
// A QP outlives a destroyed SRQ (only a device breaking DESTROY-BUSY lets
// that happen), so the receiver QP is still there to call.
// dead says the QP was destroyed or its SRQ closed. In rdma_cm mode a QP
// has no ibv_qp until Modify(RTR) connects it (and none again after
// RESET): that is not death, and QPs there are never destroyed alone.
func (q *qp) dead() bool { return q.s.closed || q.qp == nil && q.s.cm == nil }

// Destroy destroys the peer, then the receiver with ibv_destroy_qp, after
// reading and acknowledging pending async events. The receiver's number
// stays in byQPN so that completions left in the CQ still name it. A
// failing ibv_destroy_qp is reported as an error: the harness cannot go on
// with a QP half destroyed.
func (q *qp) Destroy() (int, error) {
	s := q.s
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if q.dead() {
		return 0, fmt.Errorf("cgo: Destroy of QP %d, destroyed or of a closed SRQ: %w", q.idx, drivers.ErrCallFailed)
	}
	if s.cm != nil {
		// rdma_cm owns the QP with its connection: not yet done here.
		return 0, fmt.Errorf("cgo: Destroy of QP %d in rdma_cm mode: %w", q.idx, drivers.ErrUnsupported)
	}
	if err := s.dev.drainEvents(); err != nil {
		return 0, err
	}
	return 0, q.destroy()
}

func typeName(t drivers.QPType) string {
	if t == drivers.UD {
		return "UD"
	}
	return "RC"
}

// av fills a RoCE address vector to the port's own GID: peer and
// receiver reach each other through the device's loopback.
func (q *qp) av(ah *_C_struct_ibv_ah_attr) {
	d := q.s.dev
	_C_srqc_set_av(ah, (*_C_uint8_t)(unsafe.Pointer(&d.gid[0])), _C_int(d.gidIndex), _C_int(d.port))
}

// Attribute masks (enum ibv_qp_attr_mask).
const (
	mState       = _C_IBV_QP_STATE
	mAccess      = _C_IBV_QP_ACCESS_FLAGS
	mPkey        = _C_IBV_QP_PKEY_INDEX
	mPort        = _C_IBV_QP_PORT
	mQkey        = _C_IBV_QP_QKEY
	mAV          = _C_IBV_QP_AV
	mMTU         = _C_IBV_QP_PATH_MTU
	mTimeout     = _C_IBV_QP_TIMEOUT
	mRetry       = _C_IBV_QP_RETRY_CNT
	mRNRRetry    = _C_IBV_QP_RNR_RETRY
	mRQPSN       = _C_IBV_QP_RQ_PSN
	mMaxRdAtomic = _C_IBV_QP_MAX_QP_RD_ATOMIC
	mMinRNR      = _C_IBV_QP_MIN_RNR_TIMER
	mSQPSN       = _C_IBV_QP_SQ_PSN
	mMaxDestRd   = _C_IBV_QP_MAX_DEST_RD_ATOMIC
	mDestQPN     = _C_IBV_QP_DEST_QPN
)

// attrs returns the attributes and mask for moving a QP of type t from
// cur to to, remote being the QP it connects to (RC) and psn its send
// PSN. Standard transitions get what they need; an illegal one gets the
// mask of the standard transition into the same state, and the kernel
// decides.
func (q *qp) attrs(cur, to drivers.QPState, remote, psn uint32) (_C_struct_ibv_qp_attr, _C_int) {
	var a _C_struct_ibv_qp_attr
	a.qp_state = _C_enum_ibv_qp_state(to)
	mask := _C_int(mState)
	rc := q.typ == drivers.RC
	switch to {
	case drivers.Init:
		a.pkey_index, a.port_num = 0, _C_uint8_t(q.s.dev.port)
		mask |= mPkey | mPort
		if rc {
			a.qp_access_flags = _C_IBV_ACCESS_REMOTE_WRITE | _C_IBV_ACCESS_REMOTE_READ | _C_IBV_ACCESS_REMOTE_ATOMIC
			mask |= mAccess
		} else {
			a.qkey = qkey
			mask |= mQkey
		}
	case drivers.RTR:
		if rc {
			a.path_mtu = _C_enum_ibv_mtu(q.s.dev.mtu)
			a.dest_qp_num = _C_uint32_t(remote)
			a.rq_psn = rqPSN
			a.max_dest_rd_atomic = 1
			a.min_rnr_timer = minRNRTimer
			q.av(&a.ah_attr)
			mask |= mAV | mMTU | mDestQPN | mRQPSN | mMaxDestRd | mMinRNR
		}
	case drivers.RTS:
		if cur == drivers.SQD || cur == drivers.SQE || cur == drivers.RTS {
			break
		}
		a.sq_psn = _C_uint32_t(psn)
		mask |= mSQPSN
		if rc {
			a.timeout, a.retry_cnt, a.rnr_retry, a.max_rd_atomic = q.ackTimer(), retryCount, rnrRetry, 1
			mask |= mTimeout | mRetry | mRNRRetry | mMaxRdAtomic
		}
	}
	return a, mask
}

// state is the receiver's state as ibv_query_qp reads it.
func (q *qp) state(which *_C_struct_ibv_qp) (drivers.QPState, uint32, error) {
	var a _C_struct_ibv_qp_attr
	var ia _C_struct_ibv_qp_init_attr
	if r := _C_ibv_query_qp(which, &a, _C_IBV_QP_STATE|_C_IBV_QP_RQ_PSN, &ia); r != 0 {
		return 0, 0, verbErr(fmt.Sprintf("ibv_query_qp(QP %d, STATE|RQ_PSN)", q.idx), int(r))
	}
	return drivers.QPState(a.qp_state), uint32(a.rq_psn), nil
}

// Modify is ibv_modify_qp on the receiver. When an RC receiver enters
// RTR its peer is (re)connected to it.
func (q *qp) Modify(to drivers.QPState) int {
	s := q.s
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if q.dead() {
		return int(_C_EINVAL)
	}
	if s.cm != nil {
		return q.modifyCM(to)
	}
	cur, _, err := q.state(q.qp)
	if err != nil {
		cur = drivers.Reset // the masks for an unknown state: those from RESET
	}
	a, mask := q.attrs(cur, to, q.pqpn, 0)
	r := int(_C_ibv_modify_qp(q.qp, &a, mask))
	if r == 0 && to == drivers.SQD {
		q.lastDrain, _ = q.waitDrained()
	}
	if r == 0 && to == drivers.RTR && q.typ == drivers.RC {
		q.peerReady = false // connect before the next Deliver, at rqPSN
		q.peerFailed = false
	}
	return r
}

// drainWait bounds how long Modify(SQD) waits for the send queue to
// drain. The receiver never sends, so its SQ drains as soon as the
// kernel's send task runs; until then rxe refuses SQD -> RTS with EINVAL
// (rxe_qp_chk_attr: leaving SQD while sq_draining). Waiting makes the
// modify synchronous, as drivers.Driver asks.
const drainWait = time.Second

// waitDrained polls ibv_query_qp until sq_draining reads 0 or drainWait
// passed, and returns how long it took.
func (q *qp) waitDrained() (time.Duration, error) {
	start := time.Now()
	for {
		var a _C_struct_ibv_qp_attr
		var ia _C_struct_ibv_qp_init_attr
		if r := _C_ibv_query_qp(q.qp, &a, _C_IBV_QP_STATE, &ia); r != 0 {
			return time.Since(start), verbErr(fmt.Sprintf("ibv_query_qp(QP %d, STATE)", q.idx), int(r))
		}
		if a.sq_draining == 0 || a.qp_state != _C_IBV_QPS_SQD {
			return time.Since(start), nil
		}
		if time.Since(start) > drainWait {
			return time.Since(start), fmt.Errorf("cgo: QP %d still draining its send queue after %v", q.idx, drainWait)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// connectPeer moves the peer RESET -> INIT -> RTR -> RTS with send PSN
// psn (RC: connected to the receiver).
func (q *qp) connectPeer(psn uint32) error {
	q.peerReady = false
	// The peer is the harness's, not the device under test: rxe on 7.2
	// can refuse RESET->INIT just after a reset of a QP whose send failed
	// (a task overwrites RESET with ERR; reports/rxe-findings.md), so the
	// peer tries again from RESET a few times before that is an error.
	var err error
	for try := 0; try < peerConnectTries; try++ {
		if try > 0 {
			time.Sleep(time.Duration(try) * 10 * time.Millisecond)
		}
		up := q.peerUp
		if q.s.cm != nil {
			up = q.peerUpCM
		}
		if err = up(psn); err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("%w (%d tries)", err, peerConnectTries)
	}
	// Flushed completions of the old connection, if any.
	for {
		var wc _C_struct_ibv_wc
		if _C_ibv_poll_cq(q.pcq, 1, &wc) <= 0 {
			break
		}
	}
	q.peerReady, q.peerFailed = true, false
	q.nextPSN, q.psnKnown = psn&psnMask, true
	return nil
}

// ackTimer is the peer's local ACK timeout: longAckTimeout while a
// silence is re-checked, else ackTimeout.
func (q *qp) ackTimer() _C_uint8_t {
	if q.slowTimers {
		return longAckTimeout
	}
	return ackTimeout
}

// peerConnectTries bounds connectPeer's attempts.
const peerConnectTries = 5

// peerUp takes the peer RESET -> INIT -> RTR -> RTS.
func (q *qp) peerUp(psn uint32) error {
	from := drivers.Reset
	for _, to := range []drivers.QPState{drivers.Reset, drivers.Init, drivers.RTR, drivers.RTS} {
		a, mask := q.attrs(from, to, q.qpn, psn)
		if to == drivers.Init && q.typ == drivers.RC {
			a.qp_access_flags = 0
		}
		if r := int(_C_ibv_modify_qp(q.peer, &a, mask)); r != 0 {
			return verbErr(fmt.Sprintf("ibv_modify_qp(peer %d, %s->%s, mask %#x)", q.idx, from, to, int(mask)), r)
		}
		from = to
	}
	return nil
}

// resetPeer moves a peer QP to RESET and reports whether it went.
func (q *qp) resetPeer(p *_C_struct_ibv_qp) bool {
	a, mask := q.attrs(drivers.RTS, drivers.Reset, 0, 0)
	return _C_ibv_modify_qp(p, &a, mask) == 0
}

// PostRecv is ibv_post_recv on the receiver's own receive queue.
func (q *qp) PostRecv(wr drivers.RecvWR) (int, int) {
	s := q.s
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if q.dead() {
		return int(_C_EINVAL), 0
	}
	if s.dev.info.PostRecvUnsafe != "" {
		// Made in a child process, on a QP made there the same way.
		r, bad, err := postRecvInChild(s.dev.info.Name, wr.ID)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return drivers.ProbeFailed, 0
		}
		return r, bad
	}
	if q.qp == nil {
		return int(_C_EINVAL), 0 // rdma_cm mode, not connected: no QP to post to
	}
	s.postMu.Lock() // the list memory and the regions
	defer s.postMu.Unlock()
	l, err := s.build([]drivers.RecvWR{wr})
	if err != nil {
		panic(err)
	}
	defer s.putList(l)
	var bad _C_int
	r := _C_srqc_post_recv(q.qp, l.first(), 1, &bad)
	return int(r), int(bad)
}

// Peer statuses.
const (
	peerOK  = drivers.PeerOK
	peerErr = drivers.PeerError
)

// Send opcodes (enum ibv_wr_opcode) by drivers.Opcode.
var wrOpcodes = map[drivers.Opcode]_C_int{
	drivers.Send:     _C_IBV_WR_SEND,
	drivers.SendImm:  _C_IBV_WR_SEND_WITH_IMM,
	drivers.WriteImm: _C_IBV_WR_RDMA_WRITE_WITH_IMM,
	drivers.Write:    _C_IBV_WR_RDMA_WRITE,
	drivers.Read:     _C_IBV_WR_RDMA_READ,
	drivers.CmpSwap:  _C_IBV_WR_ATOMIC_CMP_AND_SWP,
	drivers.FetchAdd: _C_IBV_WR_ATOMIC_FETCH_AND_ADD,
}

// Deliver has the peer send msg with one signaled WR and waits for its
// completion; on UD it then waits until the receiver wrote a completion or
// udSettle passed. An RC peer that heard nothing back (its transport gave
// up) sends the message once more with a 16 times longer ACK timer where
// the receiver sees that as a retransmission (recheck); if nothing comes
// back then either, the outcome is drivers.PeerSilent.
//
// The UD wait is not re-checked: it decides no outcome. A completion that
// comes after it is collected by the next poll, which waits
// conformance.Options.Wait for every completion the model expects; the
// wait only spares that poll the time.
func (q *qp) Deliver(ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
	if err := ctx.Err(); err != nil {
		return peerErr, fmt.Errorf("cgo: Deliver: %w", err)
	}
	s := q.s
	s.dev.delivering.Add(1)
	defer s.dev.delivering.Add(-1)
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	op, err := q.checkMessage(msg)
	if err != nil {
		return peerErr, err
	}
	ud := q.typ == drivers.UD
	// In rdma_cm mode on InfiniBand transports (rxe) a peer whose send
	// failed (receiver-not-ready, a refusal) is brought back by hand, as
	// in verbs mode: the connection's receiver stays as it is, and rdma_cm
	// has no way to reconnect one end alone. On iWARP a failed send ends
	// the connection (deliverCM).
	byHand := s.cm != nil && !s.dev.iwarp && q.qp != nil && q.peer != nil
	if (!q.peerReady || q.peerFailed) && (s.cm == nil || byHand) {
		psn := uint32(rqPSN)
		if q.typ == drivers.RC {
			if _, p, err := q.state(q.qp); err == nil {
				psn = p
			}
		}
		if err := q.connectPeer(psn); err != nil {
			return peerErr, err
		}
	}
	sd, err := q.sendWR(msg, op)
	if err != nil {
		return peerErr, err
	}
	send, viaCM := q.send, false
	if s.cm != nil && (s.dev.iwarp || !q.peerReady || q.peer == nil) {
		// iWARP needs the witness Read; with no connection the message
		// cannot leave (deliverCM says so). On InfiniBand transports a
		// connected peer's Send completes only once the receiver
		// acknowledged it, as in verbs mode, and a witness Read would be
		// one more packet for a receiver in ERR (rxe raises LAST_WQE
		// again for each).
		send, viaCM = q.deliverCM, true
	}
	// The peer's PSN is followed through messages of one PSN only, whose
	// count no provider can read otherwise; after a longer one it is
	// known again at the next connection (connectPeer).
	n := psnCount(msg.Opcode, msg.Len, mtuBytes(s.dev.mtu))
	first, known := q.nextPSN, q.psnKnown && !viaCM && n == 1
	st, err := send(ctx, &sd)
	if err != nil {
		return peerErr, err
	}
	q.nextPSN, q.psnKnown = (first+n)&psnMask, known && st == _C_IBV_WC_SUCCESS
	out := peerOutcome(int(st))
	if dropAnswer != nil && out != drivers.PeerSilent && dropAnswer() {
		out = drivers.PeerSilent // a test's busy machine: the answer came too late
	}
	if out == drivers.PeerSilent && q.typ == drivers.RC && !viaCM {
		return q.recheck(ctx, &sd, first, n, known)
	}
	if ud {
		r := _C_srqc_get_cq_event(s.ch, _C_int(udSettle/time.Millisecond))
		if r < 0 {
			return peerErr, fmt.Errorf("cgo: ibv_get_cq_event(receive CQ) returned %d, want 0 or an event", int(r))
		}
		if r == 0 {
			if err := q.noteLate(); err != nil {
				return peerErr, err
			}
		}
	}
	return out, nil
}

// noteLate marks q's SRQ after a UD message whose receive completion did
// not show within udSettle, where the receiver may yet take a WR for it:
// it receives and, once the completions the CQ holds are read (into the
// stash, which PollCQ returns first), WRs are still outstanding. A post
// that then finds the SRQ full tries again (srq.Post). The caller holds
// dev.mu.
func (q *qp) noteLate() error {
	if q.qp == nil {
		return nil
	}
	if st, _, err := q.state(q.qp); err != nil || !receives(st) {
		return nil
	}
	s := q.s
	s.postMu.Lock()
	defer s.postMu.Unlock()
	if err := s.drainCQ(&s.stash, 0); err != nil {
		return err
	}
	if len(s.posted) > 0 {
		s.lateUD++
	}
	return nil
}

// checkMessage checks that msg can be sent to q, and returns its work
// request opcode.
func (q *qp) checkMessage(msg drivers.Message) (_C_int, error) {
	if q.dead() {
		return 0, fmt.Errorf("cgo: Deliver on QP %d, destroyed or of a closed SRQ: %w", q.idx, drivers.ErrCallFailed)
	}
	op, ok := wrOpcodes[msg.Opcode]
	if !ok {
		return 0, fmt.Errorf("cgo: Deliver(opcode %d): unknown opcode, want 0..%d", msg.Opcode, drivers.FetchAdd)
	}
	ud := q.typ == drivers.UD
	if ud && msg.Opcode != drivers.Send && msg.Opcode != drivers.SendImm {
		return 0, fmt.Errorf("cgo: Deliver(opcode %d) on UD QP %d: UD carries only Send and SendImm", msg.Opcode, q.idx)
	}
	limit := uint32(maxMessage)
	if ud {
		limit = q.s.dev.info.MaxUDMessage
	}
	if msg.Len > limit {
		return 0, fmt.Errorf("cgo: Deliver(len %d) on %s QP %d: above the largest message %d", msg.Len, typeName(q.typ), q.idx, limit)
	}
	atomic := msg.Opcode == drivers.CmpSwap || msg.Opcode == drivers.FetchAdd
	if atomic && msg.Len != 8 {
		return 0, fmt.Errorf("cgo: Deliver(len %d) of an atomic on QP %d: want 8", msg.Len, q.idx)
	}
	return op, nil
}

// sendWR fills the peers' buffer with msg's pattern and returns the work
// request that sends msg with opcode op; on UD it also arms the receive
// CQ afresh, so that an event after the send means a new completion.
func (q *qp) sendWR(msg drivers.Message, op _C_int) (_C_struct_srqc_send, error) {
	s := q.s
	buf := cbytes(s.peer.buf, 0, uint64(max(msg.Len, 8)))
	for i := range buf {
		buf[i] = msg.Pattern + byte(i)
	}
	sd := _C_struct_srqc_send{
		opcode: op,
		addr:   _C_uint64_t(s.peer.addr(0)),
		length: _C_uint32_t(msg.Len),
		lkey:   _C_uint32_t(s.peer.lkey),
		imm:    _C_uint32_t(msg.Imm),
		raddr:  _C_uint64_t(s.target.addr(0)),
		rkey:   _C_uint32_t(s.target.rkey),
		swap:   1,
	}
	if q.typ == drivers.UD {
		sd.ah, sd.remote_qpn, sd.remote_qkey = q.ah, _C_uint32_t(q.qpn), qkey
		for _C_srqc_get_cq_event(s.ch, 0) > 0 {
		}
		if r := _C_srqc_req_notify_cq(s.cq); r != 0 {
			return sd, verbErr("ibv_req_notify_cq(receive CQ)", int(r))
		}
	}
	return sd, nil
}

// dropAnswer, when a test sets it, is asked after every send whether the
// device's answer is to be taken as having come too late: the send is
// then silent, as on a machine too busy for the fast ACK timer.
var dropAnswer func() bool

// recheck sends sd, which the peer heard nothing back for, once more at
// its first PSN first (n PSNs long) with the peer's ACK timer at
// longAckTimeout, where canResend says the receiver sees that as the
// transport's own retransmission: a late RNR NAK or ACK then arrives in
// time. It returns what the second send's completion said, or PeerSilent
// where no resend is sound. The peer is left to be reconnected with the
// fast timers at the next Deliver. The caller holds dev.mu.
func (q *qp) recheck(ctx context.Context, sd *_C_struct_srqc_send, first, n uint32, known bool) (drivers.PeerStatus, error) {
	st, rq, err := q.state(q.qp)
	if err != nil {
		return peerErr, err
	}
	if !canResend(known, receives(st), first, n, rq) {
		return drivers.PeerSilent, nil
	}
	q.rechecks++
	q.s.dev.rechecked++
	q.slowTimers = true
	defer func() { q.slowTimers, q.peerReady = false, false }()
	if err := q.connectPeer(first); err != nil {
		return peerErr, err
	}
	wc, err := q.send(ctx, sd)
	if err != nil {
		return peerErr, err
	}
	out := peerOutcome(int(wc))
	if out == drivers.PeerSilent {
		q.s.dev.stillSilent++
	}
	return out, nil
}

// send posts sd on the peer and waits for its completion; a failure
// marks the peer for reconnection. The caller holds dev.mu.
func (q *qp) send(ctx context.Context, sd *_C_struct_srqc_send) (_C_enum_ibv_wc_status, error) {
	q.s.sends++
	if r := _C_srqc_post_send(q.peer, _C_uint64_t(q.s.sends), sd); r != 0 {
		q.peerFailed = true
		return 0, verbErr(fmt.Sprintf("ibv_post_send(peer %d, opcode %d, len %d)", q.idx, int(sd.opcode), int(sd.length)), int(r))
	}
	st, err := q.waitSend(ctx)
	if err != nil || st != _C_IBV_WC_SUCCESS {
		q.peerFailed = true
	}
	return st, err
}

// sendOnly sends a Send of msg.Len bytes on a UD peer without waiting for
// the receiver (for measuring how long the receiver takes).
func (q *qp) sendOnly(ctx context.Context, msg drivers.Message) (int, error) {
	s := q.s
	sd := _C_struct_srqc_send{opcode: _C_IBV_WR_SEND, addr: _C_uint64_t(s.peer.addr(0)), length: _C_uint32_t(msg.Len),
		lkey: _C_uint32_t(s.peer.lkey), ah: q.ah, remote_qpn: _C_uint32_t(q.qpn), remote_qkey: qkey}
	st, err := q.send(ctx, &sd)
	return int(st), err
}

// waitSend polls the peer's send CQ for one completion until sendTimeout.
func (q *qp) waitSend(ctx context.Context) (_C_enum_ibv_wc_status, error) {
	st, ok, err := q.pollPeer(ctx, sendTimeout, "the peer's send completion")
	if err == nil && !ok {
		err = fmt.Errorf("cgo: Deliver on QP %d: no send completion from the peer within %v (ibv_poll_cq returned 0 throughout), want one", q.idx, sendTimeout)
	}
	return st, err
}

// pollPeer polls the peer's send CQ for one completion for up to bound;
// ok is false when none came.
func (q *qp) pollPeer(ctx context.Context, bound time.Duration, what string) (st _C_enum_ibv_wc_status, ok bool, err error) {
	deadline := time.Now().Add(bound)
	var wc _C_struct_ibv_wc
	for spins := 0; ; spins++ {
		r := _C_ibv_poll_cq(q.pcq, 1, &wc)
		if r < 0 {
			return 0, false, fmt.Errorf("cgo: ibv_poll_cq(CQ of peer %d) returned %d, want >= 0", q.idx, int(r))
		}
		if r == 1 {
			return wc.status, true, nil
		}
		if err := ctx.Err(); err != nil {
			return 0, false, fmt.Errorf("cgo: Deliver on QP %d: waiting for %s: %w", q.idx, what, err)
		}
		if time.Now().After(deadline) {
			return 0, false, nil
		}
		if spins > 100 {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// DeliverFirstPacket cannot be done through verbs.
func (q *qp) DeliverFirstPacket(context.Context, drivers.Message) error {
	return drivers.ErrUnsupported
}

// DeliverRest cannot be done through verbs.
func (q *qp) DeliverRest(context.Context) (drivers.PeerStatus, error) {
	return peerErr, drivers.ErrUnsupported
}

// InjectSQE cannot be done through verbs.
func (q *qp) InjectSQE() error { return drivers.ErrUnsupported }

// burstStride is how far apart in the peer's buffer the messages of one
// DeliverRacingErr lie, each with its own pattern.
const burstStride = 64

// DeliverRacingErr has the UD peer post msgs back to back, spins for spin,
// moves the QP to ERR with ibv_modify_qp while the device may still be
// taking them, and waits for every send's completion. The receive
// completions are left in the CQ for PollCQ. RC QPs and rdma_cm mode
// return ErrUnsupported.
func (q *qp) DeliverRacingErr(ctx context.Context, msgs []drivers.Message, spin time.Duration) ([]drivers.PeerStatus, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("cgo: DeliverRacingErr: %w", err)
	}
	s := q.s
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if q.typ != drivers.UD || s.cm != nil {
		return nil, 0, drivers.ErrUnsupported
	}
	if len(msgs) == 0 || len(msgs) > drivers.MaxRacingMessages || len(msgs)*burstStride > peerBufSize {
		return nil, 0, fmt.Errorf("cgo: DeliverRacingErr with %d messages, want 1 to %d", len(msgs), drivers.MaxRacingMessages)
	}
	sds := make([]_C_struct_srqc_send, len(msgs))
	for i, msg := range msgs {
		op, err := q.checkMessage(msg)
		if err != nil {
			return nil, 0, err
		}
		if msg.Len > burstStride {
			return nil, 0, fmt.Errorf("cgo: DeliverRacingErr(message %d of len %d): above %d bytes", i, msg.Len, burstStride)
		}
		if sds[i], err = q.sendWR(msg, op); err != nil {
			return nil, 0, err
		}
	}
	// sendWR wrote each pattern at the buffer's start: each message gets
	// its own place, written once every sendWR is done.
	for i, msg := range msgs {
		off := uint64(i * burstStride)
		buf := cbytes(s.peer.buf, off, uint64(msg.Len))
		for k := range buf {
			buf[k] = msg.Pattern + byte(k)
		}
		sds[i].addr = _C_uint64_t(s.peer.addr(off))
	}
	if !q.peerReady || q.peerFailed {
		if err := q.connectPeer(uint32(rqPSN)); err != nil {
			return nil, 0, err
		}
	}
	// The QP's state before the move, for the move's attribute mask.
	cur, _, qerr := q.state(q.qp)
	if qerr != nil {
		cur = drivers.Reset // as Modify does
	}
	a, mask := q.attrs(cur, drivers.Err, q.pqpn, 0)
	var err error // the first post that failed
	posted := 0
	for i := range sds {
		s.sends++
		if r := _C_srqc_post_send(q.peer, _C_uint64_t(s.sends), &sds[i]); r != 0 {
			q.peerFailed = true
			err = verbErr(fmt.Sprintf("ibv_post_send(peer %d, message %d of %d, len %d)", q.idx, i+1, len(sds), int(sds[i].length)), int(r))
			break
		}
		posted++
	}
	for start := time.Now(); time.Since(start) < spin; {
	}
	r := int(_C_ibv_modify_qp(q.qp, &a, mask))
	peers := make([]drivers.PeerStatus, len(msgs))
	for i := range posted {
		st, werr := q.waitSend(ctx)
		if werr != nil {
			q.peerFailed = true
			return nil, r, werr
		}
		if st != _C_IBV_WC_SUCCESS {
			q.peerFailed = true
		}
		peers[i] = peerOutcome(int(st))
	}
	if err != nil {
		return nil, r, err
	}
	return peers, r, nil
}
