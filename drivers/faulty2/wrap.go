package faulty2

import (
	"context"
	"fmt"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
)

// hooks are one SRQ's overrides of the emulator; a nil hook passes the call
// through. A bug makes a fresh set for every SRQ, so that state it keeps in
// its closures is per SRQ.
type hooks struct {
	// create may change the attributes an SRQ is created with (CreateSRQ,
	// CreateSRQEx and CreateOther), or refuse with a non-zero errno.
	create func(attr drivers.SRQAttr, v drivers.CreateVariant) (drivers.SRQAttr, int)
	// written rewrites the attributes create writes back.
	written func(req, got drivers.SRQAttr) drivers.SRQAttr
	// made runs once the SRQ exists.
	made func(s *srq)

	post       func(s *srq, wrs []drivers.RecvWR) (int, int)
	query      func(s *srq) (drivers.SRQAttr, int)
	limit      func(s *srq, limit uint32) int
	resize     func(s *srq, maxWR uint32) int
	destroy    func(s *srq) (int, error)
	invalidate func(s *srq, key int) error
	// createQP refuses a QP with a non-zero errno before the emulator
	// creates it.
	createQP func(s *srq, t drivers.QPType, caps drivers.RecvCaps) int

	modify   func(q *qp, state drivers.QPState) int
	postRecv func(q *qp, wr drivers.RecvWR) (int, int)
	deliver  func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error)

	// completion rewrites one completion as it leaves the emulator's CQ:
	// what it returns takes the completion's place.
	completion func(s *srq, f fetch, c drivers.Completion) []drivers.Completion
	// event rewrites one async event as it leaves the emulator.
	event func(s *srq, e drivers.Event) []drivers.Event
}

// wr is the shadow of one posted WR: its id and the SGEs the device reads.
type wr struct {
	ID   uint64
	SGEs []drivers.SGE
}

// size is the number of bytes the WR holds.
func (w wr) size() uint64 {
	var n uint64
	for _, g := range w.SGEs {
		n += sgeBytes(g)
	}
	return n
}

// sgeBytes is the number of bytes an SGE holds, one of length 0 holding
// 2^31 as the documented semantics say.
func sgeBytes(g drivers.SGE) uint64 {
	if g.Length == 0 {
		return 1 << 31
	}
	return uint64(g.Length)
}

// fetch is what a completion came from: the QP, the message when the
// completion came out of a delivery to that QP (nil otherwise), and the
// shadow of the WR it completes (found says whether the shadow had it).
type fetch struct {
	q     *qp
	msg   *drivers.Message
	w     wr
	found bool
}

// driver wraps the emulator with one bug.
type driver struct {
	inner drivers.Driver
	bug   Bug
}

// Driver returns the bug's driver: the plain emulator with the bug's hooks.
func (b Bug) Driver() drivers.Driver { return &driver{inner: emu.New(), bug: b} }

// Name returns the bug's name prefixed with "faulty2:".
func (d *driver) Name() string { return "faulty2:" + d.bug.Name }

// Open opens the emulated device.
func (d *driver) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	in, err := d.inner.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &device{in: in, bug: d.bug}, nil
}

// device wraps an emulated device.
type device struct {
	in  drivers.Device
	bug Bug
}

// Info is the emulator's, as the bug changes it.
func (d *device) Info() drivers.Info {
	i := d.in.Info()
	if d.bug.info != nil {
		i = d.bug.info(i)
	}
	return i
}

// CreateSRQ creates an SRQ with ibv_create_srq.
func (d *device) CreateSRQ(ctx context.Context, attr drivers.SRQAttr, keys int) (drivers.SRQ, drivers.SRQAttr, error) {
	return d.create(ctx, attr, keys, drivers.CreatePlain, false)
}

// CreateSRQEx creates an SRQ with ibv_create_srq_ex.
func (d *device) CreateSRQEx(ctx context.Context, attr drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQ, drivers.SRQAttr, error) {
	return d.create(ctx, attr, keys, v, true)
}

func (d *device) create(ctx context.Context, attr drivers.SRQAttr, keys int, v drivers.CreateVariant, ex bool) (drivers.SRQ, drivers.SRQAttr, error) {
	h := &hooks{}
	if d.bug.hooks != nil {
		h = d.bug.hooks()
	}
	req := attr
	if h.create != nil {
		a, e := h.create(attr, v)
		if e != 0 {
			return nil, drivers.SRQAttr{}, fmt.Errorf("faulty2: create SRQ (max_wr=%d, max_sge=%d, variant %d): errno %d", attr.MaxWR, attr.MaxSGE, v, e)
		}
		attr = a
	}
	var in drivers.SRQ
	var got drivers.SRQAttr
	var err error
	if ex {
		in, got, err = d.in.CreateSRQEx(ctx, attr, keys, v)
	} else {
		in, got, err = d.in.CreateSRQ(ctx, attr, keys)
	}
	if err != nil {
		return nil, got, err
	}
	if h.written != nil {
		got = h.written(req, got)
	}
	s := &srq{in: in, h: h, info: d.Info(), req: req, maxWR: got.MaxWR, maxSGE: got.MaxSGE, invalid: map[int]bool{}}
	if h.made != nil {
		h.made(s)
	}
	return s, got, nil
}

// Close closes the emulated device.
func (d *device) Close() error { return d.in.Close() }

// srq wraps an emulated SRQ and keeps a shadow of it: the WRs posted and not
// yet fetched, in order, and what the caller has done to it.
type srq struct {
	in   drivers.SRQ
	h    *hooks
	info drivers.Info
	// req is what create was asked for; maxWR and maxSGE what the caller
	// was told (maxWR follows successful resizes).
	req           drivers.SRQAttr
	maxWR, maxSGE uint32
	qps           []*qp
	// fifo holds the WRs posted and not yet fetched, head first.
	fifo []wr
	// posted and fetched count WRs over the SRQ's life; resizes counts
	// successful resizes.
	posted, fetched, resizes int
	// cq and ev hold what was drained from the emulator and not yet
	// polled.
	cq []drivers.Completion
	ev []drivers.Event
	// armed is the limit armed and not yet fired or disarmed.
	armed   uint32
	invalid map[int]bool
	errored bool
}

// outstanding is the number of WRs posted and not yet fetched.
func (s *srq) outstanding() int { return len(s.fifo) }

// wrapped says the producer index has gone round the ring once.
func (s *srq) wrapped() bool { return s.maxWR > 0 && s.posted > int(s.maxWR) }

// shadow copies what the device reads of w.
func shadow(w drivers.RecvWR) wr {
	n := max(0, min(w.NumSGE, len(w.SGEs)))
	return wr{ID: w.ID, SGEs: append([]drivers.SGE(nil), w.SGEs[:n]...)}
}

// innerPost posts wrs to the emulator and records what it kept.
func (s *srq) innerPost(wrs []drivers.RecvWR) (int, int) {
	e, bad := s.in.Post(wrs)
	n := len(wrs)
	if e != 0 {
		n = max(0, min(bad, len(wrs)))
	}
	for _, w := range wrs[:n] {
		s.fifo = append(s.fifo, shadow(w))
	}
	s.posted += n
	return e, bad
}

// innerLimit arms or disarms the emulator's limit and records it.
func (s *srq) innerLimit(limit uint32) int {
	e := s.in.ModifyLimit(limit)
	if e == 0 {
		s.armed = limit
	}
	return e
}

// innerResize resizes the emulator's SRQ and records it.
func (s *srq) innerResize(maxWR uint32) int {
	e := s.in.Resize(maxWR)
	if e == 0 {
		s.maxWR = maxWR
		s.resizes++
	}
	return e
}

// qp returns the wrapper of QP i, or nil.
func (s *srq) qp(i int) *qp {
	if i < 0 || i >= len(s.qps) {
		return nil
	}
	return s.qps[i]
}

// take removes the shadow of the WR c completes: the one its QP was
// filling, or the first posted with its id.
func (s *srq) take(c drivers.Completion) (wr, bool) {
	if q := s.qp(c.QP); q != nil && q.filling != nil && q.filling.ID == c.WRID {
		w := *q.filling
		q.filling = nil
		return w, true
	}
	for i, w := range s.fifo {
		if w.ID == c.WRID {
			s.fifo = append(s.fifo[:i:i], s.fifo[i+1:]...)
			return w, true
		}
	}
	return wr{}, false
}

// drain moves the emulator's completions and events into the wrapper's
// queues through the bug's hooks; q and msg are the delivery that made
// them, if any. It returns the emulator's errors from polling its CQ and
// its events.
func (s *srq) drain(q *qp, msg *drivers.Message) (cqErr, evErr error) {
	cs, cqErr := s.in.PollCQ(0)
	if cqErr == nil {
		for _, c := range cs {
			f := fetch{q: s.qp(c.QP)}
			if q != nil && c.QP == q.idx {
				f.msg = msg
			}
			f.w, f.found = s.take(c)
			s.fetched++
			if f.q != nil && f.q.typ == drivers.RC && c.Status != drivers.WCSuccess && c.Status != drivers.WCWRFlushErr {
				f.q.state = drivers.Err
			}
			if s.h.completion != nil {
				s.cq = append(s.cq, s.h.completion(s, f, c)...)
			} else {
				s.cq = append(s.cq, c)
			}
		}
	}
	evs, evErr := s.in.PollEvents()
	for _, e := range evs {
		switch e.Type {
		case drivers.EventSRQLimitReached:
			s.armed = 0
		case drivers.EventQPLastWQEReached:
			if q := s.qp(e.QP); q != nil {
				q.state = drivers.Err
			}
		}
		if s.h.event != nil {
			s.ev = append(s.ev, s.h.event(s, e)...)
		} else {
			s.ev = append(s.ev, e)
		}
	}
	return cqErr, evErr
}

// Post is ibv_post_srq_recv.
func (s *srq) Post(wrs []drivers.RecvWR) (int, int) {
	if s.h.post != nil {
		return s.h.post(s, wrs)
	}
	return s.innerPost(wrs)
}

// Query is ibv_query_srq.
func (s *srq) Query() (drivers.SRQAttr, int) {
	if s.h.query != nil {
		return s.h.query(s)
	}
	return s.in.Query()
}

// ModifyLimit is ibv_modify_srq with IBV_SRQ_LIMIT.
func (s *srq) ModifyLimit(limit uint32) int {
	if s.h.limit != nil {
		return s.h.limit(s, limit)
	}
	return s.innerLimit(limit)
}

// Resize is ibv_modify_srq with IBV_SRQ_MAX_WR.
func (s *srq) Resize(maxWR uint32) int {
	if s.h.resize != nil {
		return s.h.resize(s, maxWR)
	}
	return s.innerResize(maxWR)
}

// CreateQP creates a QP attached to the SRQ.
func (s *srq) CreateQP(ctx context.Context, t drivers.QPType) (drivers.QP, error) {
	if s.h.createQP != nil {
		if e := s.h.createQP(s, t, drivers.RecvCapsZero); e != 0 {
			return nil, fmt.Errorf("faulty2: ibv_create_qp (type %d) with the SRQ: errno %d", t, e)
		}
	}
	in, err := s.in.CreateQP(ctx, t)
	if err != nil {
		return nil, err
	}
	return s.attach(in, t), nil
}

// CreateQPCaps creates a QP attached to the SRQ with the receive caps c.
func (s *srq) CreateQPCaps(ctx context.Context, t drivers.QPType, c drivers.RecvCaps) (drivers.QP, int, error) {
	if s.h.createQP != nil {
		if e := s.h.createQP(s, t, c); e != 0 {
			return nil, e, nil
		}
	}
	in, e, err := s.in.CreateQPCaps(ctx, t, c)
	if in == nil || e != 0 || err != nil {
		return in, e, err
	}
	return s.attach(in, t), 0, nil
}

// attach wraps a QP the emulator made; it takes the next number, as the
// emulator's did.
func (s *srq) attach(in drivers.QP, t drivers.QPType) *qp {
	q := &qp{s: s, in: in, idx: len(s.qps), typ: t}
	s.qps = append(s.qps, q)
	return q
}

// InvalidateKey deregisters memory region key.
func (s *srq) InvalidateKey(key int) error {
	if s.h.invalidate != nil {
		return s.h.invalidate(s, key)
	}
	return s.innerInvalidate(key)
}

// innerInvalidate deregisters key in the emulator and records it.
func (s *srq) innerInvalidate(key int) error {
	err := s.in.InvalidateKey(key)
	if err == nil {
		s.invalid[key] = true
	}
	return err
}

// PollCQ returns up to max completions.
func (s *srq) PollCQ(max int) ([]drivers.Completion, error) {
	if err, _ := s.drain(nil, nil); err != nil {
		return nil, err
	}
	n := len(s.cq)
	if max > 0 && max < n {
		n = max
	}
	out := append([]drivers.Completion(nil), s.cq[:n]...)
	s.cq = append(s.cq[:0], s.cq[n:]...)
	return out, nil
}

// PollEvents returns the pending async events.
func (s *srq) PollEvents() ([]drivers.Event, error) {
	if _, err := s.drain(nil, nil); err != nil {
		return nil, err
	}
	out := s.ev
	s.ev = nil
	return out, nil
}

// InjectSRQError puts the SRQ in error.
func (s *srq) InjectSRQError() error {
	err := s.in.InjectSRQError()
	if err == nil {
		s.errored = true
	}
	s.drain(nil, nil)
	return err
}

// CreateOther creates and destroys a second SRQ.
func (s *srq) CreateOther(attr drivers.SRQAttr, v drivers.CreateVariant) (int, error) {
	if s.h.create != nil {
		a, e := s.h.create(attr, v)
		if e != 0 {
			return e, nil
		}
		attr = a
	}
	return s.in.CreateOther(attr, v)
}

// Destroy is ibv_destroy_srq.
func (s *srq) Destroy() (int, error) {
	if s.h.destroy != nil {
		return s.h.destroy(s)
	}
	return s.in.Destroy()
}

// Close destroys everything.
func (s *srq) Close() error { return s.in.Close() }

// qp wraps an emulated QP and tracks its state as the caller and the
// events moved it.
type qp struct {
	s     *srq
	in    drivers.QP
	idx   int
	typ   drivers.QPType
	state drivers.QPState
	// was records every state the QP has been in.
	was map[drivers.QPState]bool
	// filling is the shadow of the WR a half-delivered message holds, and
	// partial that message.
	filling *wr
	partial *drivers.Message
	gone    bool
}

// been says whether the QP was ever in st.
func (q *qp) been(st drivers.QPState) bool { return q.was[st] }

// Modify is ibv_modify_qp.
func (q *qp) Modify(state drivers.QPState) int {
	if q.s.h.modify != nil {
		return q.s.h.modify(q, state)
	}
	return q.innerModify(state)
}

// innerModify moves the emulator's QP and records the new state.
func (q *qp) innerModify(state drivers.QPState) int {
	e := q.in.Modify(state)
	if e == 0 {
		q.enter(state)
	}
	q.s.drain(q, nil)
	return e
}

// enter records that the QP is now in state.
func (q *qp) enter(state drivers.QPState) {
	if q.was == nil {
		q.was = map[drivers.QPState]bool{}
	}
	q.was[q.state] = true
	q.state = state
	if state == drivers.Reset {
		q.filling, q.partial = nil, nil
	}
}

// PostRecv is ibv_post_recv on the QP.
func (q *qp) PostRecv(w drivers.RecvWR) (int, int) {
	if q.s.h.postRecv != nil {
		return q.s.h.postRecv(q, w)
	}
	return q.in.PostRecv(w)
}

// Deliver has the peer send msg.
func (q *qp) Deliver(ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
	if q.s.h.deliver != nil {
		return q.s.h.deliver(ctx, q, msg)
	}
	return q.innerDeliver(ctx, msg)
}

// innerDeliver has the emulator's peer send msg and drains what it made.
func (q *qp) innerDeliver(ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
	st, err := q.in.Deliver(ctx, msg)
	q.s.drain(q, &msg)
	return st, err
}

// DeliverFirstPacket sends the first packet of msg.
func (q *qp) DeliverFirstPacket(ctx context.Context, msg drivers.Message) error {
	err := q.in.DeliverFirstPacket(ctx, msg)
	if err == nil {
		q.partial = &msg
		if len(q.s.fifo) > 0 {
			w := q.s.fifo[0]
			q.s.fifo = q.s.fifo[1:]
			q.filling = &w
		}
	}
	q.s.drain(nil, nil)
	return err
}

// DeliverRest sends the rest of the half-delivered message.
func (q *qp) DeliverRest(ctx context.Context) (drivers.PeerStatus, error) {
	st, err := q.in.DeliverRest(ctx)
	msg := q.partial
	q.partial = nil
	q.s.drain(q, msg)
	return st, err
}

// InjectSQE moves the QP from RTS to SQE.
func (q *qp) InjectSQE() error {
	err := q.in.InjectSQE()
	if err == nil {
		q.enter(drivers.SQE)
	}
	return err
}

// Destroy is ibv_destroy_qp.
func (q *qp) Destroy() (int, error) {
	e, err := q.in.Destroy()
	if e == 0 && err == nil {
		q.gone, q.filling, q.partial = true, nil, nil
	}
	q.s.drain(nil, nil)
	return e, err
}

// others are the SRQ's QPs other than q that are not destroyed.
func (q *qp) others() []*qp {
	var out []*qp
	for _, o := range q.s.qps {
		if o != q && !o.gone {
			out = append(out, o)
		}
	}
	return out
}
