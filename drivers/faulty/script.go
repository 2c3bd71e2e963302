package faulty

import (
	"context"
	"fmt"
	"strings"

	"github.com/srqconform/srqconform/drivers"
)

// Script drives one device through a witness and records a transcript: one
// line per call with what it returned. The first harness error stops the
// script (later calls do nothing) and is recorded.
type Script struct {
	ctx context.Context
	dev drivers.Device
	srq drivers.SRQ
	qps []drivers.QP
	log []string
	err error
}

// Run opens drv, runs w on it and returns the transcript and any harness
// error.
func Run(ctx context.Context, drv drivers.Driver, w func(*Script)) ([]string, error) {
	dev, err := drv.Open(ctx, drivers.Config{})
	if err != nil {
		return nil, err
	}
	defer dev.Close()
	s := &Script{ctx: ctx, dev: dev}
	w(s)
	if s.srq != nil {
		s.srq.Close()
	}
	return s.log, s.err
}

func (s *Script) logf(format string, args ...any) {
	s.log = append(s.log, fmt.Sprintf(format, args...))
}

func (s *Script) ok() bool { return s.err == nil }

func (s *Script) fail(err error) {
	if s.err == nil {
		s.err = err
		s.logf("harness error: %v", err)
	}
}

// Create creates the SRQ with max_wr, max_sge 2 and 4 memory regions.
func (s *Script) Create(maxWR uint32) { s.CreateAttr(drivers.SRQAttr{MaxWR: maxWR, MaxSGE: 2}) }

// CreateAttr creates the SRQ with attr and 4 memory regions.
func (s *Script) CreateAttr(attr drivers.SRQAttr) { s.CreateVia(attr, drivers.CreatePlain) }

// CreateVia creates the SRQ with attr the way v says.
func (s *Script) CreateVia(attr drivers.SRQAttr, v drivers.CreateVariant) {
	if !s.ok() {
		return
	}
	var (
		srq drivers.SRQ
		got drivers.SRQAttr
		err error
	)
	if v == drivers.CreatePlain {
		srq, got, err = s.dev.CreateSRQ(s.ctx, attr, 4)
	} else {
		srq, got, err = s.dev.CreateSRQEx(s.ctx, attr, 4, v)
	}
	if err != nil {
		s.logf("create %+v: %v", attr, err)
		return
	}
	s.srq = srq
	s.logf("create %+v -> %+v", attr, got)
}

// WR is a receive WR with id and one SGE of each length, all in region 0.
func WR(id uint64, lens ...uint32) drivers.RecvWR {
	w := drivers.RecvWR{ID: id, NumSGE: len(lens)}
	for _, l := range lens {
		w.SGEs = append(w.SGEs, drivers.SGE{Length: l})
	}
	return w
}

// Ids returns WRs with the ids from, from+1, ..., n of them, each with one
// SGE of 64 bytes.
func Ids(from uint64, n int) []drivers.RecvWR {
	out := make([]drivers.RecvWR, n)
	for i := range out {
		out[i] = WR(from+uint64(i), 64)
	}
	return out
}

// Post posts wrs.
func (s *Script) Post(wrs ...drivers.RecvWR) {
	if !s.ok() || s.srq == nil {
		return
	}
	e, bad := s.srq.Post(wrs)
	s.logf("post %d WRs -> errno %d bad %d", len(wrs), e, bad)
}

// Query queries the SRQ.
func (s *Script) Query() {
	if !s.ok() || s.srq == nil {
		return
	}
	a, e := s.srq.Query()
	s.logf("query -> %+v errno %d", a, e)
}

// Limit arms (or, for 0, disarms) the limit.
func (s *Script) Limit(l uint32) {
	if !s.ok() || s.srq == nil {
		return
	}
	s.logf("limit %d -> %d", l, s.srq.ModifyLimit(l))
}

// Resize resizes the SRQ.
func (s *Script) Resize(n uint32) {
	if !s.ok() || s.srq == nil {
		return
	}
	s.logf("resize %d -> %d", n, s.srq.Resize(n))
}

// Ready creates an SRQ of 4 WRs, brings a QP of type t up and posts n
// WRs with the ids 1 to n; it returns the QP's number.
func (s *Script) Ready(t drivers.QPType, n int) int {
	s.Create(4)
	q := s.Up(t)
	s.Post(Ids(1, n)...)
	return q
}

// FireLimit is Ready with an RC QP and 3 WRs, then arms the limit at 3 and
// has one message take a WR, which fires it; it returns the QP's number.
func (s *Script) FireLimit() int {
	q := s.Ready(drivers.RC, 3)
	s.Limit(3)
	s.Send(q, drivers.Send, 8)
	return q
}

// QP creates a QP of type t and returns its number.
func (s *Script) QP(t drivers.QPType) int {
	if !s.ok() || s.srq == nil {
		return -1
	}
	q, err := s.srq.CreateQP(s.ctx, t)
	if err != nil {
		s.fail(err)
		return -1
	}
	s.qps = append(s.qps, q)
	return len(s.qps) - 1
}

// QPCaps creates a QP with the receive caps c and records the errno.
func (s *Script) QPCaps(t drivers.QPType, c drivers.RecvCaps) {
	if !s.ok() || s.srq == nil {
		return
	}
	q, e, err := s.srq.CreateQPCaps(s.ctx, t, c)
	if err != nil {
		s.fail(err)
		return
	}
	if q != nil {
		s.qps = append(s.qps, q)
	}
	s.logf("create QP type %d caps %d -> errno %d", t, c, e)
}

// Up creates a QP of type t and moves it to RTS; it returns its number.
func (s *Script) Up(t drivers.QPType) int {
	i := s.QP(t)
	s.Modify(i, drivers.Init, drivers.RTR, drivers.RTS)
	return i
}

func (s *Script) qp(i int) drivers.QP {
	if !s.ok() || i < 0 || i >= len(s.qps) {
		return nil
	}
	return s.qps[i]
}

// Modify moves QP i through the states in turn.
func (s *Script) Modify(i int, states ...drivers.QPState) {
	for _, st := range states {
		if q := s.qp(i); q != nil {
			s.logf("QP %d to %s -> %d", i, st, q.Modify(st))
		}
	}
}

// Send has QP i's peer send a message of length n with opcode op.
func (s *Script) Send(i int, op drivers.Opcode, n uint32) { s.SendImm(i, op, n, 0) }

// SendImm is Send with immediate data imm.
func (s *Script) SendImm(i int, op drivers.Opcode, n, imm uint32) {
	q := s.qp(i)
	if q == nil {
		return
	}
	st, err := q.Deliver(s.ctx, drivers.Message{Opcode: op, Len: n, Imm: imm, Pattern: 7})
	if err != nil {
		s.fail(err)
		return
	}
	s.logf("QP %d op %d len %d -> peer %d", i, op, n, st)
}

// First sends the first packet of a Send of n bytes on QP i.
func (s *Script) First(i int, n uint32) {
	if q := s.qp(i); q != nil {
		if err := q.DeliverFirstPacket(s.ctx, drivers.Message{Opcode: drivers.Send, Len: n, Pattern: 7}); err != nil {
			s.fail(err)
		}
	}
}

// PostRecv posts wr to QP i's own receive queue.
func (s *Script) PostRecv(i int, wr drivers.RecvWR) {
	if q := s.qp(i); q != nil {
		e, bad := q.PostRecv(wr)
		s.logf("post_recv on QP %d -> errno %d bad %d", i, e, bad)
	}
}

// DestroyQP destroys QP i.
func (s *Script) DestroyQP(i int) {
	if q := s.qp(i); q != nil {
		e, err := q.Destroy()
		if err != nil {
			s.fail(err)
			return
		}
		s.logf("destroy QP %d -> %d", i, e)
	}
}

// Destroy destroys the SRQ.
func (s *Script) Destroy() {
	if !s.ok() || s.srq == nil {
		return
	}
	e, err := s.srq.Destroy()
	if err != nil {
		s.fail(err)
		return
	}
	s.logf("destroy SRQ -> %d", e)
}

// Invalidate deregisters region key.
func (s *Script) Invalidate(key int) {
	if !s.ok() || s.srq == nil {
		return
	}
	if err := s.srq.InvalidateKey(key); err != nil {
		s.fail(err)
	}
}

// InjectError puts the SRQ in error.
func (s *Script) InjectError() {
	if !s.ok() || s.srq == nil {
		return
	}
	if err := s.srq.InjectSRQError(); err != nil {
		s.fail(err)
	}
}

// Other creates and destroys a second SRQ with attr the way v says.
func (s *Script) Other(attr drivers.SRQAttr, v drivers.CreateVariant) {
	if !s.ok() || s.srq == nil {
		return
	}
	e, err := s.srq.CreateOther(attr, v)
	if err != nil {
		s.fail(err)
		return
	}
	s.logf("create other %+v variant %d -> %d", attr, v, e)
}

// Poll polls up to max completions.
func (s *Script) Poll(max int) {
	if !s.ok() || s.srq == nil {
		return
	}
	cs, err := s.srq.PollCQ(max)
	if err != nil {
		s.fail(err)
		return
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("{wr %d st %d op %d len %d imm %v/%d qp %d}", c.WRID, c.Status, c.Opcode, c.ByteLen, c.HasImm, c.Imm, c.QP)
	}
	s.logf("poll %d -> [%s]", max, strings.Join(parts, " "))
}

// Events polls the async events.
func (s *Script) Events() {
	if !s.ok() || s.srq == nil {
		return
	}
	evs, err := s.srq.PollEvents()
	if err != nil {
		s.fail(err)
		return
	}
	s.logf("events -> %v", evs)
}
