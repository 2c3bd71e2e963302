package faulty2

import (
	"context"
	"fmt"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
)

// Script drives one device through hand-written steps and records one line
// per call: the call and what came back. Steps after a failed create or on
// a QP that does not exist record that and do nothing.
type Script struct {
	ctx   context.Context
	dev   drivers.Device
	srq   drivers.SRQ
	qps   []drivers.QP
	lines []string
}

// Keys is the number of memory regions a script's SRQ registers.
const Keys = 3

// Transcript runs script on drv and returns its lines.
func Transcript(drv drivers.Driver, script func(*Script)) []string {
	s := &Script{ctx: context.Background()}
	dev, err := drv.Open(s.ctx, drivers.Config{})
	if err != nil {
		return []string{fmt.Sprintf("open: %v", err)}
	}
	s.dev = dev
	script(s)
	if s.srq != nil {
		s.say("close srq: %v", s.srq.Close())
	}
	s.say("close device: %v", dev.Close())
	return s.lines
}

// Differs runs script on the plain emulator and on b's driver and returns
// the index of the first line that differs (-1 for none) and both
// transcripts.
func Differs(b Bug, script func(*Script)) (at int, plain, buggy []string) {
	plain = Transcript(emu.New(), script)
	buggy = Transcript(b.Driver(), script)
	for i := range min(len(plain), len(buggy)) {
		if plain[i] != buggy[i] {
			return i, plain, buggy
		}
	}
	if len(plain) != len(buggy) {
		return min(len(plain), len(buggy)), plain, buggy
	}
	return -1, plain, buggy
}

// Trivial is a plain run: an SRQ of 8 WRs and 2 SGEs, one RC QP brought to
// RTS, three WRs posted one at a time, two Sends of 10 bytes, then a poll,
// the events and a query. A subtle bug does not show on it.
func Trivial(s *Script) {
	q := s.Ready(8, 2, drivers.RC)
	for id := uint64(1); id <= 3; id++ {
		s.Post(WR(id, 64))
	}
	s.Send(q, 10)
	s.Send(q, 10)
	s.Poll()
	s.Events()
	s.Query()
}

func (s *Script) say(format string, a ...any) {
	s.lines = append(s.lines, fmt.Sprintf(format, a...))
}

// WR is a WR with one SGE per length, all in region 0.
func WR(id uint64, lens ...uint32) drivers.RecvWR {
	w := drivers.RecvWR{ID: id, NumSGE: len(lens)}
	for _, l := range lens {
		w.SGEs = append(w.SGEs, drivers.SGE{Length: l})
	}
	return w
}

// Create creates the SRQ with ibv_create_srq.
func (s *Script) Create(maxWR, maxSGE, limit uint32) {
	srq, got, err := s.dev.CreateSRQ(s.ctx, drivers.SRQAttr{MaxWR: maxWR, MaxSGE: maxSGE, SRQLimit: limit}, Keys)
	s.srq = srq
	s.say("create_srq(%d, %d, %d): %+v %v", maxWR, maxSGE, limit, got, err)
}

// ready says whether there is an SRQ to act on, and records it when not.
func (s *Script) ready(call string) bool {
	if s.srq == nil {
		s.say("%s: no SRQ", call)
	}
	return s.srq != nil
}

// QP creates a QP of type t and returns its number in the script.
func (s *Script) QP(t drivers.QPType) int {
	if !s.ready("create_qp") {
		return -1
	}
	q, err := s.srq.CreateQP(s.ctx, t)
	s.say("create_qp(%d): %v", t, err)
	if err != nil {
		return -1
	}
	s.qps = append(s.qps, q)
	return len(s.qps) - 1
}

// QPCaps creates a QP of type t with receive caps c.
func (s *Script) QPCaps(t drivers.QPType, c drivers.RecvCaps) int {
	if !s.ready("create_qp_caps") {
		return -1
	}
	q, e, err := s.srq.CreateQPCaps(s.ctx, t, c)
	s.say("create_qp_caps(%d, %d): errno %d %v", t, c, e, err)
	if q == nil {
		return -1
	}
	s.qps = append(s.qps, q)
	return len(s.qps) - 1
}

// qp returns script QP i, or nil after recording that there is none.
func (s *Script) qp(call string, i int) drivers.QP {
	if i < 0 || i >= len(s.qps) {
		s.say("%s: no QP %d", call, i)
		return nil
	}
	return s.qps[i]
}

// Ready creates the SRQ with maxWR WRs of maxSGE SGEs and no limit, and a
// QP of type t brought to RTS; it returns the QP's number.
func (s *Script) Ready(maxWR, maxSGE uint32, t drivers.QPType) int {
	s.Create(maxWR, maxSGE, 0)
	q := s.QP(t)
	s.Up(q)
	return q
}

// Modify moves QP i to st.
func (s *Script) Modify(i int, st drivers.QPState) {
	if q := s.qp("modify_qp", i); q != nil {
		s.say("modify_qp(%d, %s): %d", i, st, q.Modify(st))
	}
}

// Up takes QP i from RESET to RTS.
func (s *Script) Up(i int) {
	for _, st := range []drivers.QPState{drivers.Init, drivers.RTR, drivers.RTS} {
		s.Modify(i, st)
	}
}

// Post posts wrs as one list.
func (s *Script) Post(wrs ...drivers.RecvWR) {
	if s.ready("post_srq_recv") {
		e, bad := s.srq.Post(wrs)
		s.say("post_srq_recv(%d WRs): %d bad %d", len(wrs), e, bad)
	}
}

// PostN posts n WRs of one SGE of length bytes, ids first, first+1, ...,
// one call each.
func (s *Script) PostN(n int, first uint64, length uint32) {
	for i := range n {
		s.Post(WR(first+uint64(i), length))
	}
}

// PostRecv is ibv_post_recv of w on QP i.
func (s *Script) PostRecv(i int, w drivers.RecvWR) {
	if q := s.qp("post_recv", i); q != nil {
		e, bad := q.PostRecv(w)
		s.say("post_recv(%d): %d bad %d", i, e, bad)
	}
}

// Deliver has QP i's peer send msg.
func (s *Script) Deliver(i int, msg drivers.Message) {
	if q := s.qp("deliver", i); q != nil {
		st, err := q.Deliver(s.ctx, msg)
		s.say("deliver(%d, %+v): %d %v", i, msg, st, err)
	}
}

// Send has QP i's peer send a Send of n bytes.
func (s *Script) Send(i int, n uint32) {
	s.Deliver(i, drivers.Message{Opcode: drivers.Send, Len: n, Pattern: byte(n)})
}

// First sends the first packet of a Send of n bytes on QP i.
func (s *Script) First(i int, n uint32) {
	if q := s.qp("deliver_first", i); q != nil {
		s.say("deliver_first(%d, %d): %v", i, n, q.DeliverFirstPacket(s.ctx, drivers.Message{Opcode: drivers.Send, Len: n}))
	}
}

// Rest sends the rest of QP i's half-delivered message.
func (s *Script) Rest(i int) {
	if q := s.qp("deliver_rest", i); q != nil {
		st, err := q.DeliverRest(s.ctx)
		s.say("deliver_rest(%d): %d %v", i, st, err)
	}
}

// InjectSQE moves QP i from RTS to SQE.
func (s *Script) InjectSQE(i int) {
	if q := s.qp("inject_sqe", i); q != nil {
		s.say("inject_sqe(%d): %v", i, q.InjectSQE())
	}
}

// DestroyQP destroys QP i.
func (s *Script) DestroyQP(i int) {
	if q := s.qp("destroy_qp", i); q != nil {
		e, err := q.Destroy()
		s.say("destroy_qp(%d): %d %v", i, e, err)
	}
}

// Poll polls every completion.
func (s *Script) Poll() {
	if s.ready("poll_cq") {
		cs, err := s.srq.PollCQ(0)
		s.say("poll_cq: %+v %v", cs, err)
	}
}

// Events polls every async event.
func (s *Script) Events() {
	if s.ready("events") {
		ev, err := s.srq.PollEvents()
		s.say("events: %+v %v", ev, err)
	}
}

// Query is ibv_query_srq.
func (s *Script) Query() {
	if s.ready("query_srq") {
		a, e := s.srq.Query()
		s.say("query_srq: %+v %d", a, e)
	}
}

// Limit arms the limit at l (disarms for 0).
func (s *Script) Limit(l uint32) {
	if s.ready("modify_srq(limit)") {
		s.say("modify_srq(limit %d): %d", l, s.srq.ModifyLimit(l))
	}
}

// Resize resizes the SRQ to n WRs.
func (s *Script) Resize(n uint32) {
	if s.ready("modify_srq(max_wr)") {
		s.say("modify_srq(max_wr %d): %d", n, s.srq.Resize(n))
	}
}

// Invalidate deregisters region k.
func (s *Script) Invalidate(k int) {
	if s.ready("invalidate") {
		s.say("invalidate(%d): %v", k, s.srq.InvalidateKey(k))
	}
}

// InjectSRQError puts the SRQ in error.
func (s *Script) InjectSRQError() {
	if s.ready("inject_srq_error") {
		s.say("inject_srq_error: %v", s.srq.InjectSRQError())
	}
}

// Other creates and destroys a second SRQ with attr, the way v says.
func (s *Script) Other(maxWR, maxSGE uint32, v drivers.CreateVariant) {
	if s.ready("create_other") {
		e, err := s.srq.CreateOther(drivers.SRQAttr{MaxWR: maxWR, MaxSGE: maxSGE}, v)
		s.say("create_other(%d, %d, %d): %d %v", maxWR, maxSGE, v, e, err)
	}
}

// DestroySRQ is ibv_destroy_srq.
func (s *Script) DestroySRQ() {
	if s.ready("destroy_srq") {
		e, err := s.srq.Destroy()
		s.say("destroy_srq: %d %v", e, err)
	}
}

// Info records the device attributes.
func (s *Script) Info() {
	s.say("info: %+v", s.dev.Info())
}
