package faulty

import (
	"context"
	"fmt"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
)

// hooks are a bug's replacements for the wrapper's calls; a nil field
// passes the call through. A fresh set is made for every SRQ, so closures
// over local variables keep per-SRQ state.
type hooks struct {
	create      func(d *device, ctx context.Context, attr drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQ, drivers.SRQAttr, error)
	post        func(s *srq, wrs []drivers.RecvWR) (int, int)
	query       func(s *srq) (drivers.SRQAttr, int)
	limit       func(s *srq, l uint32) int
	resize      func(s *srq, n uint32) int
	destroy     func(s *srq) (int, error)
	poll        func(s *srq, max int) ([]drivers.Completion, error)
	events      func(s *srq) ([]drivers.Event, error)
	inject      func(s *srq) error
	createOther func(s *srq, attr drivers.SRQAttr, v drivers.CreateVariant) (int, error)
	createQP    func(s *srq, ctx context.Context, t drivers.QPType, c drivers.RecvCaps) (drivers.QP, int, error)
	invalidate  func(s *srq, key int) error
	modify      func(q *qp, st drivers.QPState) int
	deliver     func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error)
	postRecv    func(q *qp, wr drivers.RecvWR) (int, int)
	destroyQP   func(q *qp) (int, error)
	// completion edits a completion as it leaves the device (e is the WR
	// it completes, nil when unknown); event says whether to keep an event.
	completion func(s *srq, q *qp, c *drivers.Completion, e *entry)
	event      func(s *srq, ev drivers.Event) bool
}

// driver wraps emu.New with one bug.
type driver struct {
	inner drivers.Driver
	bug   Bug
}

// Driver returns the emulator with bug b in it.
func (b Bug) Driver() drivers.Driver { return &driver{inner: emu.New(), bug: b} }

// Name returns the bug's name prefixed with "faulty:".
func (d *driver) Name() string { return "faulty:" + d.bug.Name }

// Open opens the emulated device.
func (d *driver) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	in, err := d.inner.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("faulty %s: %w", d.bug.Name, err)
	}
	return &device{Device: in, bug: d.bug}, nil
}

// device wraps an emulated device.
type device struct {
	drivers.Device
	bug Bug
}

// CreateSRQ creates the SRQ with a fresh set of the bug's hooks.
func (d *device) CreateSRQ(ctx context.Context, attr drivers.SRQAttr, keys int) (drivers.SRQ, drivers.SRQAttr, error) {
	return d.create(ctx, attr, keys, drivers.CreatePlain)
}

// CreateSRQEx is CreateSRQ through ibv_create_srq_ex.
func (d *device) CreateSRQEx(ctx context.Context, attr drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQ, drivers.SRQAttr, error) {
	return d.create(ctx, attr, keys, v)
}

func (d *device) create(ctx context.Context, attr drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQ, drivers.SRQAttr, error) {
	h := d.bug.hooks()
	var (
		in  drivers.SRQ
		got drivers.SRQAttr
		err error
	)
	if h.create != nil {
		in, got, err = h.create(d, ctx, attr, keys, v)
	} else {
		in, got, err = d.innerCreate(ctx, attr, keys, v)
	}
	if err != nil {
		return nil, got, err
	}
	s := &srq{in: in, h: h, info: d.Info(), keys: keys, req: attr, attr: got, capacity: got.MaxWR, maxSGE: got.MaxSGE, entries: map[uint64]*entry{}}
	return s, got, nil
}

// innerCreate makes the emulator's SRQ.
func (d *device) innerCreate(ctx context.Context, attr drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQ, drivers.SRQAttr, error) {
	if v == drivers.CreatePlain {
		return d.Device.CreateSRQ(ctx, attr, keys)
	}
	return d.Device.CreateSRQEx(ctx, attr, keys, v)
}

// entry is one posted WR as the caller gave it (a copy), and a reference to
// the caller's WR for the bugs that keep one.
type entry struct {
	seq uint64
	wr  drivers.RecvWR
	ref *drivers.RecvWR
}

// srq wraps an emulated SRQ. It posts the emulator WRs under its own
// sequence numbers, so that it knows which WR every completion is for, and
// drains the emulator's CQ and event queue after every call, so that it
// knows what was fetched when.
type srq struct {
	in        drivers.SRQ
	h         *hooks
	info      drivers.Info
	keys      int // memory regions made with the SRQ
	req, attr drivers.SRQAttr
	capacity  uint32 // max_wr as last reported by create or resize
	maxSGE    uint32

	seq     uint64
	entries map[uint64]*entry
	pending []uint64 // posted, not yet fetched, in posting order

	posted, fetched uint64
	cq              []drivers.Completion
	events          []drivers.Event
	qps             []*qp
	limitSet        uint32 // the limit last armed by ModifyLimit, 0 after a disarm
	resizes         int
	destroyed       bool
}

// outstanding is the number of WRs posted and not yet fetched.
func (s *srq) outstanding() uint32 { return uint32(len(s.pending)) }

// Post is ibv_post_srq_recv.
func (s *srq) Post(wrs []drivers.RecvWR) (int, int) {
	if s.h.post != nil {
		return s.h.post(s, wrs)
	}
	return s.post(wrs)
}

// post posts wrs to the emulator under fresh sequence numbers.
func (s *srq) post(wrs []drivers.RecvWR) (int, int) {
	return s.postRefs(wrs, nil)
}

// postRefs is post, recording refs[i] (when given) as WR i's reference.
func (s *srq) postRefs(wrs []drivers.RecvWR, refs []*drivers.RecvWR) (int, int) {
	in := make([]drivers.RecvWR, len(wrs))
	es := make([]*entry, len(wrs))
	for i, w := range wrs {
		s.seq++
		e := &entry{seq: s.seq, wr: w}
		e.wr.SGEs = append([]drivers.SGE(nil), w.SGEs...)
		if refs != nil {
			e.ref = refs[i]
		}
		es[i] = e
		in[i] = drivers.RecvWR{ID: s.seq, NumSGE: w.NumSGE, SGEs: e.wr.SGEs}
	}
	errno, bad := s.in.Post(in)
	n := len(wrs)
	if errno != 0 {
		n = max(0, bad)
	}
	for _, e := range es[:min(n, len(es))] {
		s.entries[e.seq] = e
		s.pending = append(s.pending, e.seq)
		s.posted++
	}
	return errno, bad
}

// Query is ibv_query_srq.
func (s *srq) Query() (drivers.SRQAttr, int) {
	if s.h.query != nil {
		return s.h.query(s)
	}
	return s.in.Query()
}

// ModifyLimit is ibv_modify_srq with IBV_SRQ_LIMIT.
func (s *srq) ModifyLimit(l uint32) int {
	var e int
	if s.h.limit != nil {
		e = s.h.limit(s, l)
	} else {
		e = s.in.ModifyLimit(l)
	}
	if e == 0 {
		s.limitSet = l
	}
	s.sync(nil)
	return e
}

// Resize is ibv_modify_srq with IBV_SRQ_MAX_WR.
func (s *srq) Resize(n uint32) int {
	var e int
	if s.h.resize != nil {
		e = s.h.resize(s, n)
	} else {
		e = s.resize(n)
	}
	s.sync(nil)
	return e
}

// resize resizes the emulator's SRQ and reads the new capacity back.
func (s *srq) resize(n uint32) int {
	e := s.in.Resize(n)
	if e == 0 {
		s.resizes++
		if a, qe := s.in.Query(); qe == 0 {
			s.capacity = a.MaxWR
		}
	}
	return e
}

// CreateQP creates a QP of type t.
func (s *srq) CreateQP(ctx context.Context, t drivers.QPType) (drivers.QP, error) {
	q, e, err := s.CreateQPCaps(ctx, t, drivers.RecvCapsZero)
	if err == nil && e != 0 {
		return nil, fmt.Errorf("faulty: CreateQP(type %d): errno %d, want 0", t, e)
	}
	return q, err
}

// CreateQPCaps creates a QP with the receive caps c.
func (s *srq) CreateQPCaps(ctx context.Context, t drivers.QPType, c drivers.RecvCaps) (drivers.QP, int, error) {
	if s.h.createQP != nil {
		return s.h.createQP(s, ctx, t, c)
	}
	return s.createQP(ctx, t, c)
}

func (s *srq) createQP(ctx context.Context, t drivers.QPType, c drivers.RecvCaps) (drivers.QP, int, error) {
	in, e, err := s.in.CreateQPCaps(ctx, t, c)
	if err != nil || e != 0 || in == nil {
		return nil, e, err
	}
	q := &qp{in: in, s: s, idx: len(s.qps), typ: t, state: drivers.Reset}
	s.qps = append(s.qps, q)
	return q, 0, nil
}

// InvalidateKey deregisters region key.
func (s *srq) InvalidateKey(key int) error {
	if s.h.invalidate != nil {
		return s.h.invalidate(s, key)
	}
	return s.in.InvalidateKey(key)
}

// PollCQ returns up to max completions.
func (s *srq) PollCQ(max int) ([]drivers.Completion, error) {
	s.sync(nil)
	if s.h.poll != nil {
		return s.h.poll(s, max)
	}
	return s.poll(max)
}

// poll takes up to max completions off the wrapper's CQ.
func (s *srq) poll(max int) ([]drivers.Completion, error) {
	n := len(s.cq)
	if max > 0 && max < n {
		n = max
	}
	out := append([]drivers.Completion(nil), s.cq[:n]...)
	s.cq = append(s.cq[:0], s.cq[n:]...)
	return out, nil
}

// PollEvents returns the pending events.
func (s *srq) PollEvents() ([]drivers.Event, error) {
	s.sync(nil)
	if s.h.events != nil {
		return s.h.events(s)
	}
	ev := s.events
	s.events = nil
	return ev, nil
}

// InjectSRQError puts the SRQ in error.
func (s *srq) InjectSRQError() error {
	var err error
	if s.h.inject != nil {
		err = s.h.inject(s)
	} else {
		err = s.in.InjectSRQError()
	}
	s.sync(nil)
	return err
}

// CreateOther creates and destroys a second SRQ.
func (s *srq) CreateOther(attr drivers.SRQAttr, v drivers.CreateVariant) (int, error) {
	if s.h.createOther != nil {
		return s.h.createOther(s, attr, v)
	}
	return s.in.CreateOther(attr, v)
}

// Destroy is ibv_destroy_srq.
func (s *srq) Destroy() (int, error) {
	var (
		e   int
		err error
	)
	if s.h.destroy != nil {
		e, err = s.h.destroy(s)
	} else {
		e, err = s.in.Destroy()
	}
	if err == nil && e == 0 {
		s.destroyed = true
	}
	return e, err
}

// Close releases everything.
func (s *srq) Close() error { return s.in.Close() }

// sync drains the emulator's CQ and event queue into the wrapper's,
// translating wr_ids and accounting for fetched WRs; q is the QP whose call
// it follows, or nil.
func (s *srq) sync(q *qp) {
	cs, err := s.in.PollCQ(0)
	if err == nil {
		for _, c := range cs {
			s.take(q, c)
		}
	}
	evs, err := s.in.PollEvents()
	if err != nil {
		return
	}
	for _, ev := range evs {
		if ev.Type == 2 && ev.QP >= 0 && ev.QP < len(s.qps) {
			s.qps[ev.QP].state = drivers.Err // LAST_WQE: the QP entered ERR
		}
		if s.h.event == nil || s.h.event(s, ev) {
			s.events = append(s.events, ev)
		}
	}
}

// take translates one emulator completion and queues it.
func (s *srq) take(q *qp, c drivers.Completion) {
	e := s.entries[c.WRID]
	if e != nil {
		c.WRID = e.wr.ID
		if e.ref != nil {
			c.WRID = e.ref.ID
		}
		s.fetch(e.seq)
		delete(s.entries, e.seq)
	}
	if c.QP >= 0 && c.QP < len(s.qps) {
		q = s.qps[c.QP]
	}
	if s.h.completion != nil {
		s.h.completion(s, q, &c, e)
	}
	s.cq = append(s.cq, c)
}

// fetch marks WR seq fetched, if it was still pending.
func (s *srq) fetch(seq uint64) {
	for i, p := range s.pending {
		if p == seq {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			s.fetched++
			return
		}
	}
}

// head is the entry of the WR the next fetch takes, or nil.
func (s *srq) head() *entry {
	if len(s.pending) == 0 {
		return nil
	}
	return s.entries[s.pending[0]]
}

// qp wraps an emulated QP.
type qp struct {
	in    drivers.QP
	s     *srq
	idx   int
	typ   drivers.QPType
	state drivers.QPState
	// been counts the states the QP has entered (by modify or otherwise).
	been map[drivers.QPState]int
	gone bool
}

// Modify is ibv_modify_qp.
func (q *qp) Modify(st drivers.QPState) int {
	var e int
	if q.s.h.modify != nil {
		e = q.s.h.modify(q, st)
	} else {
		e = q.modify(st)
	}
	q.s.sync(q)
	return e
}

// modify moves the emulator's QP and records the state.
func (q *qp) modify(st drivers.QPState) int {
	e := q.in.Modify(st)
	if e == 0 {
		q.enter(st)
	}
	return e
}

// enter records that the QP entered st.
func (q *qp) enter(st drivers.QPState) {
	q.state = st
	if q.been == nil {
		q.been = map[drivers.QPState]int{}
	}
	q.been[st]++
}

// PostRecv is ibv_post_recv on the QP.
func (q *qp) PostRecv(wr drivers.RecvWR) (int, int) {
	if q.s.h.postRecv != nil {
		return q.s.h.postRecv(q, wr)
	}
	return q.in.PostRecv(wr)
}

// Deliver has the peer send msg.
func (q *qp) Deliver(ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
	var (
		st  drivers.PeerStatus
		err error
	)
	if q.s.h.deliver != nil {
		st, err = q.s.h.deliver(q, ctx, msg)
	} else {
		st, err = q.in.Deliver(ctx, msg)
	}
	q.s.sync(q)
	return st, err
}

// DeliverFirstPacket sends msg's first packet: the head WR is fetched.
func (q *qp) DeliverFirstPacket(ctx context.Context, msg drivers.Message) error {
	h := q.s.head()
	err := q.in.DeliverFirstPacket(ctx, msg)
	if err == nil && h != nil {
		q.s.fetch(h.seq)
	}
	q.s.sync(q)
	return err
}

// DeliverRest sends the rest of the message.
func (q *qp) DeliverRest(ctx context.Context) (drivers.PeerStatus, error) {
	st, err := q.in.DeliverRest(ctx)
	q.s.sync(q)
	return st, err
}

// InjectSQE moves the QP to SQE.
func (q *qp) InjectSQE() error {
	err := q.in.InjectSQE()
	if err == nil {
		q.enter(drivers.SQE)
	}
	q.s.sync(q)
	return err
}

// Destroy is ibv_destroy_qp.
func (q *qp) Destroy() (int, error) {
	var (
		e   int
		err error
	)
	if q.s.h.destroyQP != nil {
		e, err = q.s.h.destroyQP(q)
	} else {
		e, err = q.in.Destroy()
	}
	if err == nil && e == 0 {
		q.gone = true
	}
	q.s.sync(q)
	return e, err
}

// live lists the QPs not destroyed.
func (s *srq) live() []*qp {
	var out []*qp
	for _, q := range s.qps {
		if !q.gone {
			out = append(out, q)
		}
	}
	return out
}
