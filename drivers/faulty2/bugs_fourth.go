package faulty2

import (
	"context"

	"github.com/srqconform/srqconform/drivers"
)

// fourthBugs are the fourth batch: held-out bugs written in session 21
// from the rule statements of model/rules.go alone, one a rule, to measure
// blame on bugs nobody tuned the diagnosis to. Fourth returns them; All
// does not.
var fourthBugs = []Bug{
	// Posting.
	{
		Name: "list-einval-drops-last-good", Rule: "POST-ORDER", Subtle: true,
		Description: "when a WR with a bad num_sge fails a list after its first WR, the error path rewinds the producer index one WQE too far, so the WR just before the failing one is not posted: the WRs before the first failing WR must stay posted",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				full := firstWR(wrs, func(i int, _ drivers.RecvWR) bool { return s.outstanding()+i >= int(s.maxWR) })
				k := firstWR(wrs, func(_ int, w drivers.RecvWR) bool { return w.NumSGE < 0 || w.NumSGE > int(s.maxSGE) })
				if k == 0 || k >= len(wrs) || full <= k {
					return s.innerPost(wrs)
				}
				if e, bad := s.innerPost(wrs[:k-1]); e != 0 {
					return e, bad
				}
				return eINVAL, k
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Post(WR(1, 64), WR(2, 64), WR(3, 64, 64))
			s.Send(q, 8)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "badwr-counts-wqes-not-wrs", Rule: "POST-BADWR", Subtle: true,
		Description: "bad_wr is worked out from the number of WQE descriptors written, and a WR with num_sge 0 writes none, so when a list fails after such WRs bad_wr names an earlier WR than the first that failed",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				e, bad := s.innerPost(wrs)
				if e == 0 || bad <= 0 || bad > len(wrs) {
					return e, bad
				}
				empty := 0
				for _, w := range wrs[:bad] {
					if w.NumSGE == 0 {
						empty++
					}
				}
				return e, bad - empty
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Post(drivers.RecvWR{ID: 1, NumSGE: 0}, WR(2, 8, 8))
		},
	},
	{
		Name: "list-cannot-fill-ring", Rule: "POST-FULL", Subtle: true,
		Description: "the batch path for a list of several WRs keeps one ring slot back for its doorbell record, so a list that would bring the SRQ to exactly max_wr outstanding fails with ENOMEM on its last WR: up to max_wr WRs can be outstanding",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				if len(wrs) < 2 {
					return s.innerPost(wrs)
				}
				return postOneShort(s, wrs, s.maxWR)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Post(WR(1, 8), WR(2, 8), WR(3, 8), WR(4, 8))
		},
	},
	{
		Name: "sge-checked-against-wqe-stride", Rule: "POST-SGE", Subtle: true,
		Description: "the WQE stride holds SGEs in pairs and num_sge is checked against the stride's room, so on an SRQ created with an odd max_sge a WR with max_sge+1 SGEs is accepted (and its last SGE ignored): a WR with num_sge above max_sge must fail with EINVAL",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				if s.maxSGE%2 == 0 {
					return s.innerPost(wrs)
				}
				out := append([]drivers.RecvWR(nil), wrs...)
				for i, w := range out {
					if w.NumSGE == int(s.maxSGE)+1 && len(w.SGEs) >= w.NumSGE {
						out[i].NumSGE = int(s.maxSGE)
						out[i].SGEs = append([]drivers.SGE(nil), w.SGEs[:s.maxSGE]...)
					}
				}
				return s.innerPost(out)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 3, drivers.RC)
			s.Post(WR(1, 8, 8, 8, 8))
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "zero-length-sge-key-checked", Rule: "POST-NO-KEY-CHECK", Subtle: true,
		Description: "an SGE of length 0 stands for 2 GiB, and the post path looks its lkey up to bounds-check that span, failing the post with EINVAL when the region was deregistered: a post must not check lkeys",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				k := firstWR(wrs, func(_ int, w drivers.RecvWR) bool {
					for _, g := range shadow(w).SGEs {
						if g.Length == 0 && s.invalid[g.Key] {
							return true
						}
					}
					return false
				})
				return postUntil(s, wrs, k, eINVAL)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Invalidate(1)
			s.Post(drivers.RecvWR{ID: 1, NumSGE: 1, SGEs: []drivers.SGE{{Length: 0, Key: 1}}})
		},
	},

	// Create, query, modify, destroy.
	{
		Name: "create-at-max-wr-refused", Rule: "CREATE-MAX", Subtle: true,
		Description: "the ring needs max_wr+1 slots for its sentinel and the provider checks max_wr+1 against max_srq_wr, so creating an SRQ with max_wr exactly the device's max_srq_wr fails with EINVAL: creating one at the limit succeeds (or fails with ENOMEM)",
		hooks: func() *hooks {
			return &hooks{create: func(attr drivers.SRQAttr, _ drivers.CreateVariant) (drivers.SRQAttr, int) {
				if attr.MaxWR == emuInfo.MaxSRQWR {
					return attr, eINVAL
				}
				return attr, 0
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Other(emuInfo.MaxSRQWR, 1, drivers.CreatePlain)
		},
	},
	{
		Name: "create-ex-basic-second-srq-refused", Rule: "CREATE-EX", Subtle: true,
		Description: "the provider's create_srq_ex keeps one extended-ops slot per context, so once an SRQ exists a BASIC ibv_create_srq_ex (comp_mask PD | TYPE) fails with EOPNOTSUPP where ibv_create_srq succeeds: it must make the same SRQ as ibv_create_srq",
		hooks: func() *hooks {
			made := false
			return &hooks{
				create: func(attr drivers.SRQAttr, v drivers.CreateVariant) (drivers.SRQAttr, int) {
					if made && v == drivers.CreateEx {
						return attr, eOPNOTSUPP
					}
					return attr, 0
				},
				made: func(*srq) { made = true },
			}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Other(4, 1, drivers.CreatePlain)
			s.Other(4, 1, drivers.CreateEx)
		},
	},
	{
		Name: "query-attr-from-pd-cache", Rule: "QUERY-ATTR", Subtle: true,
		Description: "query answers max_wr and max_sge from a per-PD copy of the last create's attributes, which creating another SRQ on the PD overwrites, so after a second SRQ is created query reports its sizes: max_wr and max_sge must read as created or resized",
		hooks: func() *hooks {
			made := false
			var last *drivers.SRQAttr
			return &hooks{
				create: func(attr drivers.SRQAttr, _ drivers.CreateVariant) (drivers.SRQAttr, int) {
					if made {
						a := attr
						last = &a
					}
					return attr, 0
				},
				made: func(*srq) { made = true },
				resize: func(s *srq, n uint32) int {
					e := s.innerResize(n)
					if e == 0 {
						last = nil
					}
					return e
				},
				query: editQuery(func(_ *srq, a *drivers.SRQAttr) {
					if last != nil {
						a.MaxWR, a.MaxSGE = last.MaxWR, last.MaxSGE
					}
				}),
			}
		},
		Witness: func(s *Script) {
			s.Create(8, 2, 0)
			s.Other(4, 1, drivers.CreatePlain)
			s.Query()
		},
	},
	{
		Name: "query-limit-zero-after-resize", Rule: "QUERY-LIMIT", Subtle: true,
		Description: "a resize rebuilds the driver's shadow of the SRQ context with srq_limit 0 while the device stays armed, so query reads 0 on an SRQ that is armed (its limit event still comes): query must return the armed limit",
		hooks: func() *hooks {
			stale := false
			return &hooks{
				resize: func(s *srq, n uint32) int {
					e := s.innerResize(n)
					if e == 0 && s.armed != 0 {
						stale = true
					}
					return e
				},
				limit: func(s *srq, l uint32) int {
					e := s.innerLimit(l)
					if e == 0 {
						stale = false
					}
					return e
				},
				query: editQuery(func(_ *srq, a *drivers.SRQAttr) {
					if stale {
						a.SRQLimit = 0
					}
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.PostN(3, 1, 64)
			s.Limit(2)
			s.Resize(16)
			s.Query()
			s.Send(q, 8)
			s.Send(q, 8)
			s.Events()
		},
	},
	{
		Name: "busy-destroy-leaves-srq-dying", Rule: "DESTROY-BUSY", Subtle: true,
		Description: "ibv_destroy_srq marks the SRQ as being destroyed before the kernel refuses with EBUSY and never clears the mark, so every later post fails with EINVAL: after a refused destroy the SRQ must keep working as before",
		hooks: func() *hooks {
			dying := false
			return &hooks{
				destroy: func(s *srq) (int, error) {
					e, err := s.in.Destroy()
					if err == nil && e == eBUSY {
						dying = true
					}
					return e, err
				},
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					if dying && len(wrs) > 0 {
						return eINVAL, 0
					}
					return s.innerPost(wrs)
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.DestroySRQ()
			s.PostN(1, 1, 64)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "limit-modify-resets-max-sge", Rule: "MODIFY-ONLY-MASKED", Subtle: true,
		Description: "a modify of srq_limit writes the whole SRQ context from a template whose max_sge is 1, so afterwards query reads max_sge 1 and WRs with two or more SGEs fail with EINVAL: a modify with only IBV_SRQ_LIMIT must leave max_sge as it was",
		hooks: func() *hooks {
			reset := false
			return &hooks{
				limit: func(s *srq, l uint32) int {
					e := s.innerLimit(l)
					if e == 0 {
						reset = true
					}
					return e
				},
				query: editQuery(func(_ *srq, a *drivers.SRQAttr) {
					if reset && a.MaxSGE > 1 {
						a.MaxSGE = 1
					}
				}),
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					if !reset {
						return s.innerPost(wrs)
					}
					full := firstWR(wrs, func(i int, _ drivers.RecvWR) bool { return s.outstanding()+i >= int(s.maxWR) })
					k := firstWR(wrs, func(_ int, w drivers.RecvWR) bool { return w.NumSGE > 1 })
					if full <= k {
						return s.innerPost(wrs)
					}
					return postUntil(s, wrs, k, eINVAL)
				},
			}
		},
		Witness: func(s *Script) {
			s.Create(8, 2, 0)
			s.Limit(2)
			s.Query()
			s.Post(WR(1, 8, 8))
		},
	},

	// The limit.
	{
		Name: "rearm-while-armed-keeps-old", Rule: "LIMIT-ARM", Subtle: true,
		Description: "the driver writes the watermark to the device only on the disarmed-to-armed transition, so a new limit set while the SRQ is still armed updates only the value query reads and the old watermark stays: a non-zero limit within bounds must arm",
		hooks: func() *hooks {
			var shown uint32
			return &hooks{
				limit: func(s *srq, l uint32) int {
					if l != 0 && l <= s.maxWR && s.armed != 0 && l != s.armed {
						shown = l
						return 0
					}
					e := s.innerLimit(l)
					if e == 0 {
						shown = 0
					}
					return e
				},
				event: onLimitEvent(func() { shown = 0 }),
				query: editQuery(func(_ *srq, a *drivers.SRQAttr) {
					if shown != 0 && a.SRQLimit != 0 {
						a.SRQLimit = shown
					}
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.PostN(4, 1, 64)
			s.Limit(1)
			s.Limit(4)
			s.Query()
			s.Send(q, 8)
			s.Events()
		},
	},
	{
		Name: "disarm-lost-without-qp", Rule: "LIMIT-DISARM", Subtle: true,
		Description: "a limit of 0 is sent through the event context of an attached QP, and with no QP attached the disarm is dropped (modify returns 0 and query reads 0) while the device stays armed, so the limit event still comes: a limit of 0 disarms",
		hooks: func() *hooks {
			hidden := false
			return &hooks{
				limit: func(s *srq, l uint32) int {
					live := 0
					for _, q := range s.qps {
						if !q.gone {
							live++
						}
					}
					if l == 0 && live == 0 && s.armed != 0 {
						hidden = true
						return 0
					}
					e := s.innerLimit(l)
					if e == 0 {
						hidden = false
					}
					return e
				},
				event: onLimitEvent(func() { hidden = false }),
				query: editQuery(func(_ *srq, a *drivers.SRQAttr) {
					if hidden {
						a.SRQLimit = 0
					}
				}),
			}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 0)
			s.PostN(3, 1, 64)
			s.Limit(2)
			s.Limit(0)
			q := s.QP(drivers.RC)
			s.Up(q)
			s.Send(q, 8)
			s.Send(q, 8)
			s.Events()
		},
	},
	{
		Name: "limit-bound-counts-sentinel", Rule: "LIMIT-BOUND", Subtle: true,
		Description: "srq_limit is checked against the ring's slot count, max_wr+1 with its sentinel, so a limit of max_wr+1 is accepted (and armed at max_wr) where a limit above the bound must fail with EINVAL and change nothing",
		hooks: func() *hooks {
			var shown uint32
			return &hooks{
				limit: func(s *srq, l uint32) int {
					if s.maxWR > 0 && l == s.maxWR+1 {
						e := s.innerLimit(s.maxWR)
						if e == 0 {
							shown = l
						}
						return e
					}
					e := s.innerLimit(l)
					if e == 0 {
						shown = 0
					}
					return e
				},
				event: onLimitEvent(func() { shown = 0 }),
				query: editQuery(func(_ *srq, a *drivers.SRQAttr) {
					if shown != 0 && a.SRQLimit != 0 {
						a.SRQLimit = shown
					}
				}),
			}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Limit(5)
			s.Query()
		},
	},
	{
		Name: "limit-skipped-when-fetch-empties", Rule: "LIMIT-FIRE", Subtle: true,
		Description: "the watermark check sits after the early return the responder takes when a fetch empties the SRQ, so the fetch that takes the last WR raises no limit event though it leaves fewer WRs (none) than the armed limit",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				s := q.s
				armed := s.armed
				if armed == 0 || s.errored || !q.fetches() || !consumes(msg) || s.outstanding() != 1 {
					return q.innerDeliver(ctx, msg)
				}
				s.innerLimit(0)
				st, err := q.innerDeliver(ctx, msg)
				s.innerLimit(armed)
				return st, err
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.Limit(1)
			s.Send(q, 8)
			s.Events()
		},
	},
	{
		Name: "limit-event-replayed-to-new-qp", Rule: "LIMIT-ONCE", Subtle: true,
		Description: "the SRQ's 'limit event pending' flag is never cleared after the event is delivered, and attaching a new QP copies the SRQ's event state into it and delivers the pending event again: the limit event fires at most once per arming",
		hooks: func() *hooks {
			pending := false
			return &hooks{
				event: onLimitEvent(func() { pending = true }),
				limit: func(s *srq, l uint32) int {
					e := s.innerLimit(l)
					if e == 0 {
						pending = false
					}
					return e
				},
				createQP: func(s *srq, _ drivers.QPType, _ drivers.RecvCaps) int {
					if pending {
						s.ev = append(s.ev, drivers.Event{Type: drivers.EventSRQLimitReached, QP: -1})
					}
					return 0
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.PostN(3, 1, 64)
			s.Limit(3)
			s.Send(q, 8)
			s.Events()
			s.QP(drivers.RC)
			s.Events()
		},
	},
	{
		Name: "limit-reads-level-after-fire", Rule: "LIMIT-AFTER-FIRE", Subtle: true,
		Description: "when the limit event fires the driver refreshes its srq_limit shadow from the device's watermark register, which then holds the current WR count, so query reads the count left at the event instead of 0",
		hooks: func() *hooks {
			var level uint32
			return &hooks{
				event: func(s *srq, e drivers.Event) []drivers.Event {
					if e.Type == drivers.EventSRQLimitReached {
						level = uint32(s.outstanding())
					}
					return []drivers.Event{e}
				},
				limit: func(s *srq, l uint32) int {
					e := s.innerLimit(l)
					if e == 0 {
						level = 0
					}
					return e
				},
				query: editQuery(func(_ *srq, a *drivers.SRQAttr) {
					if a.SRQLimit == 0 && level != 0 {
						a.SRQLimit = level
					}
				}),
			}
		},
		Witness: func(s *Script) {
			armThenFetch(drivers.RC)(s)
			s.Query()
		},
	},

	// Resize.
	{
		Name: "resize-cap-bit-dropped", Rule: "RESIZE-OPTIONAL", Subtle: true,
		Description: "the provider copies device_cap_flags from the extended query with a mask that drops IBV_DEVICE_SRQ_RESIZE, yet modify with IBV_SRQ_MAX_WR resizes: resize must work only where the device advertises it, and fail elsewhere",
		info: func(i drivers.Info) drivers.Info {
			i.SRQResize = false
			return i
		},
		Witness: func(s *Script) {
			s.Info()
			s.Create(4, 1, 0)
			s.Resize(8)
			s.Query()
		},
	},
	{
		Name: "resize-bound-rounded-pow2", Rule: "RESIZE-BOUNDS", Subtle: true,
		Description: "resize rounds the request up to a power of two minus one before comparing it with max_srq_wr rounded the same way, so a resize a little above max_srq_wr returns 0 (the ring clamped at max_srq_wr): above max_srq_wr it must fail with EINVAL",
		hooks: func() *hooks {
			return &hooks{resize: func(s *srq, n uint32) int {
				top := emuInfo.MaxSRQWR
				if n > top && pow2Above(n) == pow2Above(top) {
					return s.innerResize(top)
				}
				return s.innerResize(n)
			}}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 0)
			s.Resize(emuInfo.MaxSRQWR + 1)
			s.Query()
		},
	},

	// QP state.
	{
		Name: "err-to-err-refused", Rule: "QP-TRANSITIONS", Subtle: true,
		Description: "the modify path has no entry for a move to the state the QP is already in when that state is ERR and refuses ERR -> ERR with EINVAL: the transition is legal",
		hooks: func() *hooks {
			return &hooks{modify: func(q *qp, st drivers.QPState) int {
				if q.state == drivers.Err && st == drivers.Err {
					return eINVAL
				}
				return q.innerModify(st)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Modify(q, drivers.Err)
			s.Modify(q, drivers.Err)
		},
	},
	{
		Name: "sqd-rnr-on-send-imm", Rule: "QP-FETCH-STATES", Subtle: true,
		Description: "in SQD the responder hands a Send with Immediate to the immediate handler of the draining send queue, which is paused: it answers RNR on RC (drops it on UD) and takes no WR, though a QP in SQD takes a WR for a consuming message",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				s := q.s
				if q.state == drivers.SQD && msg.Opcode == drivers.SendImm && !s.errored && s.outstanding() > 0 {
					if q.typ == drivers.RC {
						return drivers.PeerRNR, nil
					}
					return drivers.PeerOK, nil
				}
				return q.innerDeliver(ctx, msg)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.Modify(q, drivers.SQD)
			s.Deliver(q, drivers.Message{Opcode: drivers.SendImm, Len: 8, Imm: 4})
			s.Poll()
		},
	},
	{
		Name: "err-write-imm-still-fetches", Rule: "QP-NOFETCH-STATES", Subtle: true,
		Description: "the RDMA Write with Immediate handler checks only the QP's remote-write permission, not its state, so an RC QP in ERR still takes a WR from the SRQ for one and completes it: a QP in ERR takes nothing",
		hooks: func() *hooks {
			hush := -1
			return &hooks{
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					s := q.s
					if q.typ != drivers.RC || q.state != drivers.Err || msg.Opcode != drivers.WriteImm || s.errored || s.outstanding() == 0 {
						return q.innerDeliver(ctx, msg)
					}
					for _, st := range []drivers.QPState{drivers.Reset, drivers.Init, drivers.RTR} {
						q.in.Modify(st)
					}
					st, err := q.innerDeliver(ctx, msg)
					q.in.Modify(drivers.Err)
					hush = q.idx
					s.drain(nil, nil)
					hush = -1
					return st, err
				},
				event: dropEvents(func(_ *srq, e drivers.Event) bool {
					return e.Type == drivers.EventQPLastWQEReached && e.QP == hush
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.Modify(q, drivers.Err)
			s.Events()
			s.Deliver(q, drivers.Message{Opcode: drivers.WriteImm, Len: 8, Imm: 3})
			s.Poll()
			s.Events()
		},
	},
	{
		Name: "last-wqe-missing-on-ud", Rule: "QP-LAST-WQE", Subtle: true,
		Description: "the UD QP's move to ERR goes through the datagram teardown path, which never calls the SRQ notifier, so a UD QP entering ERR raises no IBV_EVENT_QP_LAST_WQE_REACHED: an SRQ-attached QP entering ERR raises it once",
		hooks: func() *hooks {
			return &hooks{event: dropEvents(func(s *srq, e drivers.Event) bool {
				q := s.qp(e.QP)
				return e.Type == drivers.EventQPLastWQEReached && q != nil && q.typ == drivers.UD
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.UD)
			s.Modify(q, drivers.Err)
			s.Events()
		},
	},
	{
		Name: "req-err-on-rnr", Rule: "QP-ERROR-EVENT", Subtle: true,
		Description: "the responder's RNR NAK path calls the QP error notifier with IBV_EVENT_QP_REQ_ERR, so an RC message meeting an empty SRQ raises an affiliated error event though the QP stays up: such an event comes only for an RC QP an error completion moved to ERR",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				st, err := q.innerDeliver(ctx, msg)
				if err == nil && st == drivers.PeerRNR && q.typ == drivers.RC {
					q.s.ev = append(q.s.ev, drivers.Event{Type: drivers.EventQPReqErr, QP: q.idx})
				}
				return st, err
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Send(q, 8)
			s.Events()
		},
	},
	{
		Name: "flush-deferred-to-reset", Rule: "QP-FLUSH-INPROGRESS", Subtle: true,
		Description: "the WR a QP was filling when it entered ERR is completed with WR_FLUSH_ERR only by the QP cleanup that runs when the QP is moved to RESET, so while the QP sits in ERR its completion is missing: the profile completes it on entering ERR",
		hooks: func() *hooks {
			held := map[int][]drivers.Completion{}
			return &hooks{
				completion: func(_ *srq, f fetch, c drivers.Completion) []drivers.Completion {
					if c.Status == drivers.WCWRFlushErr && f.q != nil {
						held[f.q.idx] = append(held[f.q.idx], c)
						return nil
					}
					return []drivers.Completion{c}
				},
				modify: func(q *qp, st drivers.QPState) int {
					e := q.innerModify(st)
					if e == 0 && st == drivers.Reset {
						q.s.cq = append(q.s.cq, held[q.idx]...)
						delete(held, q.idx)
					}
					return e
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Post(WR(1, 64))
			s.First(q, 48)
			s.Modify(q, drivers.Err)
			s.Poll()
			s.Modify(q, drivers.Reset)
			s.Poll()
		},
	},

	// SRQ error.
	{
		Name: "srq-error-write-imm-fetches", Rule: "SRQ-ERR-NOFETCH", Subtle: true,
		Description: "the RDMA Write with Immediate path dequeues from the SRQ without testing its error state, so an SRQ in error still gives up a WR for one, which completes successfully: nothing is fetched from an SRQ in error",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				s := q.s
				if !s.errored || msg.Opcode != drivers.WriteImm || !q.fetches() || len(s.fifo) == 0 {
					return q.innerDeliver(ctx, msg)
				}
				w := s.fifo[0]
				s.fifo = s.fifo[1:]
				s.fetched++
				s.cq = append(s.cq, drivers.Completion{WRID: w.ID, Status: drivers.WCSuccess, Opcode: drivers.WCRecvRDMAWithImm,
					ByteLen: msg.Len, HasImm: true, Imm: msg.Imm, QP: q.idx})
				return drivers.PeerOK, nil
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.InjectSRQError()
			s.Deliver(q, drivers.Message{Opcode: drivers.WriteImm, Len: 8, Imm: 2})
			s.Poll()
		},
	},

	// Fetching and completions.
	{
		Name: "per-qp-prefetch-reorders", Rule: "FETCH-FIFO", Subtle: true,
		Description: "with two or more QPs attached, a QP's fetch also prefetches the next WR into that QP's private cache, so another QP's message takes the WR after it and the cached one completes later: completions must come in posting order",
		hooks: func() *hooks {
			type cached struct {
				qp int
				id uint64
			}
			var pend []uint64
			var cache []cached
			return &hooks{
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					e, bad := s.innerPost(wrs)
					n := len(wrs)
					if e != 0 {
						n = max(0, min(bad, len(wrs)))
					}
					for _, w := range wrs[:n] {
						pend = append(pend, w.ID)
					}
					return e, bad
				},
				completion: editCompletion(func(s *srq, f fetch, c *drivers.Completion) {
					if f.q == nil {
						return
					}
					var id uint64
					took := false
					for i, k := range cache {
						if k.qp == f.q.idx {
							id, took = k.id, true
							cache = append(cache[:i:i], cache[i+1:]...)
							break
						}
					}
					switch {
					case took:
					case len(pend) > 0:
						id, pend, took = pend[0], pend[1:], true
					case len(cache) > 0:
						id, cache, took = cache[0].id, cache[1:], true
					}
					if !took {
						return
					}
					if len(pend) > 0 && len(f.q.others()) > 0 {
						cache = append(cache, cached{f.q.idx, pend[0]})
						pend = pend[1:]
					}
					c.WRID = id
				}),
			}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 0)
			a := s.QP(drivers.RC)
			b := s.QP(drivers.RC)
			s.Up(a)
			s.Up(b)
			s.PostN(3, 1, 64)
			s.Send(a, 8)
			s.Send(b, 8)
			s.Send(a, 8)
			s.Poll()
		},
	},
	{
		Name: "sqe-resume-replays-last-wqe", Rule: "FETCH-ONCE", Subtle: true,
		Description: "moving a QP from SQE back to RTS restores the responder's WQE pointer from the copy saved at the send error, so the first message after the resume completes on the WR the QP last completed, a second time (and the WR it took is lost): no WR completes twice",
		hooks: func() *hooks {
			last := map[int]uint64{}
			replay := map[int]bool{}
			return &hooks{
				completion: editCompletion(func(_ *srq, _ fetch, c *drivers.Completion) {
					if c.Status != drivers.WCSuccess {
						return
					}
					if id, ok := last[c.QP]; ok && replay[c.QP] {
						delete(replay, c.QP)
						c.WRID = id
						return
					}
					last[c.QP] = c.WRID
				}),
				modify: func(q *qp, st drivers.QPState) int {
					from := q.state
					e := q.innerModify(st)
					if e == 0 && from == drivers.SQE && st == drivers.RTS {
						replay[q.idx] = true
					}
					return e
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(2, 1, 64)
			s.Send(q, 8)
			s.InjectSQE(q)
			s.Modify(q, drivers.RTS)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "mixed-region-sges-prot-err", Rule: "RECV-COMPLETION", Subtle: true,
		Description: "the scatter loop looks up the memory region of a WR's first SGE once and checks the later SGEs against it, so a message reaching an SGE in another (valid) region completes with LOC_PROT_ERR: a message that fits must complete successfully",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				w, ok := q.s.head()
				if !ok || !sends(msg) || !q.fetches() || len(w.SGEs) < 2 {
					return q.innerDeliver(ctx, msg)
				}
				rem, other := q.need(msg), false
				for _, g := range w.SGEs {
					if rem == 0 {
						break
					}
					if g.Key != w.SGEs[0].Key {
						other = true
						break
					}
					rem -= min(sgeBytes(g), rem)
				}
				if !other {
					return q.innerDeliver(ctx, msg)
				}
				return q.failDelivered(ctx, msg, drivers.WCLocProtErr)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 2, drivers.RC)
			s.Post(drivers.RecvWR{ID: 1, NumSGE: 2, SGEs: []drivers.SGE{{Length: 16, Key: 0}, {Length: 64, Key: 1}}})
			s.Send(q, 40)
			s.Poll()
		},
	},
	{
		Name: "long-send-imm-loses-imm", Rule: "RECV-IMM", Subtle: true,
		Description: "for a Send with Immediate longer than one MTU the completion takes imm_data from the first packet's header, which carries none, so it completes with IBV_WC_WITH_IMM and an immediate of 0: it must carry the sender's immediate",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
				if f.msg != nil && f.msg.Opcode == drivers.SendImm && f.msg.Len > mtu && c.Status == drivers.WCSuccess {
					c.Imm = 0
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 8192)
			s.Deliver(q, drivers.Message{Opcode: drivers.SendImm, Len: 5000, Imm: 7, Pattern: 1})
			s.Poll()
		},
	},
	{
		Name: "write-imm-checked-against-wr", Rule: "RECV-WRITE-IMM", Subtle: true,
		Description: "the RDMA Write with Immediate path runs the Send path's length check against the receive WR, so a write longer than the WR's buffers completes with LOC_LEN_ERR (and the RC QP enters ERR), though it scatters nothing into the WR and must complete as RECV_RDMA_WITH_IMM",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				if w, ok := q.s.head(); ok && msg.Opcode == drivers.WriteImm && q.fetches() && uint64(msg.Len) > w.size() {
					return q.failDelivered(ctx, msg, drivers.WCLocLenErr)
				}
				return q.innerDeliver(ctx, msg)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 16)
			s.Deliver(q, drivers.Message{Opcode: drivers.WriteImm, Len: 64, Imm: 1})
			s.Poll()
		},
	},
	{
		Name: "fit-sum-16-bit", Rule: "RECV-FIT", Subtle: true,
		Description: "for a WR of several SGEs the fit check adds the SGE lengths in a 16-bit accumulator, so a WR whose SGEs add up to 64 KiB or more looks smaller and a message that fits completes with LOC_LEN_ERR: it fits when its length is at most the sum of the SGE lengths",
		hooks: func() *hooks {
			return &hooks{deliver: refuseFit(func(q *qp, w wr, msg drivers.Message) bool {
				if len(w.SGEs) < 2 {
					return false
				}
				var sum uint16
				for _, g := range w.SGEs {
					if g.Length == 0 {
						return false
					}
					sum += uint16(g.Length)
				}
				need := q.need(msg)
				return need > uint64(sum) && need <= w.size()
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 2, drivers.RC)
			s.Post(WR(1, 40000, 40000))
			s.Send(q, 70000)
			s.Poll()
		},
	},
	{
		Name: "numsge0-inherits-prev-sges", Rule: "RECV-NUMSGE0", Subtle: true,
		Description: "in a list the provider builds each WQE in one staging descriptor and copies SGEs only when num_sge is non-zero, so a WR with num_sge 0 after another takes that WR's SGEs and holds a non-empty message: a WR with num_sge 0 holds only an empty message",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				out := append([]drivers.RecvWR(nil), wrs...)
				for i := 1; i < len(out); i++ {
					prev := out[i-1]
					if out[i].NumSGE == 0 && prev.NumSGE > 0 && prev.NumSGE <= len(prev.SGEs) {
						out[i].NumSGE = prev.NumSGE
						out[i].SGEs = append([]drivers.SGE(nil), prev.SGEs[:prev.NumSGE]...)
					}
				}
				return s.innerPost(out)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Post(WR(1, 64), drivers.RecvWR{ID: 2, NumSGE: 0})
			s.Send(q, 8)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "send-imm-zero-length-sge-empty", Rule: "SGE-LEN0", Subtle: true,
		Description: "the Send with Immediate path sizes the WR with its own loop, which counts an SGE of length 0 as 0 bytes (the Send path counts 2^31), so a Send with Immediate that needs such an SGE completes with LOC_LEN_ERR: an SGE of length 0 stands for 2^31 bytes",
		hooks: func() *hooks {
			return &hooks{deliver: refuseFit(func(q *qp, w wr, msg drivers.Message) bool {
				if msg.Opcode != drivers.SendImm {
					return false
				}
				var size uint64
				zero := false
				for _, g := range w.SGEs {
					if g.Length == 0 {
						zero = true
					}
					size += uint64(g.Length)
				}
				need := q.need(msg)
				return zero && need > size && need <= w.size()
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Post(WR(1, 0))
			s.Deliver(q, drivers.Message{Opcode: drivers.SendImm, Len: 64, Imm: 6, Pattern: 2})
			s.Poll()
		},
	},
	{
		Name: "ud-recycled-bytelen-no-grh", Rule: "UD-GRH", Subtle: true,
		Description: "moving a UD QP to RESET clears its 'GRH present' flag and INIT does not set it again, so once a UD QP was brought back up its completions report byte_len without the 40 GRH bytes: on UD byte_len counts them",
		hooks: func() *hooks {
			recycled := map[int]bool{}
			return &hooks{
				modify: func(q *qp, st drivers.QPState) int {
					e := q.innerModify(st)
					if e == 0 && st == drivers.Reset && q.typ == drivers.UD && q.been(drivers.RTR) {
						recycled[q.idx] = true
					}
					return e
				},
				completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
					if f.q != nil && recycled[f.q.idx] && f.msg != nil && sends(*f.msg) && c.Status == drivers.WCSuccess && c.ByteLen >= grhBytes {
						c.ByteLen -= grhBytes
					}
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.UD)
			s.Modify(q, drivers.Reset)
			s.Up(q)
			s.PostN(1, 1, 128)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "oversize-rc-qp-to-sqe", Rule: "RECV-TOO-LARGE", Subtle: true,
		Description: "on RC a message too long completes with an error, but the responder's error path writes the send-queue error state, so the QP lands in SQE instead of ERR, raises no LAST_WQE and goes on taking WRs: the profile moves an RC QP to ERR",
		hooks: func() *hooks {
			hush := -1
			return &hooks{
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					w, ok := q.s.head()
					if !ok || q.typ != drivers.RC || !sends(msg) || !q.fetches() || q.need(msg) <= w.size() {
						return q.innerDeliver(ctx, msg)
					}
					hush = q.idx
					st, err := q.innerDeliver(ctx, msg)
					hush = -1
					if q.state == drivers.Err {
						for _, s := range []drivers.QPState{drivers.Reset, drivers.Init, drivers.RTR, drivers.RTS} {
							q.in.Modify(s)
						}
						if q.in.InjectSQE() == nil {
							q.enter(drivers.SQE)
						}
					}
					return st, err
				},
				event: dropEvents(func(_ *srq, e drivers.Event) bool {
					return e.Type == drivers.EventQPLastWQEReached && e.QP == hush
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(2, 1, 16)
			s.Send(q, 64)
			s.Send(q, 8)
			s.Poll()
			s.Events()
		},
	},
	{
		Name: "inline-recv-skips-key", Rule: "RECV-BAD-KEY", Subtle: true,
		Description: "on RC, Sends of up to 32 bytes are received through the inline path, which copies into the WR's first SGE without looking its lkey up, so a short message filling a WR through an invalidated key completes successfully: it must complete with an error status",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				s := q.s
				w, ok := s.head()
				if !ok || q.typ != drivers.RC || !sends(msg) || !q.fetches() || msg.Len == 0 || msg.Len > 32 ||
					len(w.SGEs) == 0 || !s.invalid[w.SGEs[0].Key] || uint64(msg.Len) > w.size() {
					return q.innerDeliver(ctx, msg)
				}
				n := len(s.cq)
				st, err := q.innerDeliver(ctx, drivers.Message{Opcode: drivers.WriteImm, Len: msg.Len, Imm: msg.Imm})
				if err == nil && len(s.cq) == n+1 && s.cq[n].Status == drivers.WCSuccess {
					c := &s.cq[n]
					c.Opcode, c.ByteLen = drivers.WCRecv, msg.Len
					c.HasImm, c.Imm = msg.Opcode == drivers.SendImm, 0
					if c.HasImm {
						c.Imm = msg.Imm
					}
					c.Pattern, c.HasPattern = msg.Pattern, true
				}
				return st, err
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Post(drivers.RecvWR{ID: 1, NumSGE: 1, SGEs: []drivers.SGE{{Length: 128, Key: 1}}})
			s.Invalidate(1)
			s.Send(q, 8)
			s.Poll()
		},
	},
}

// pow2Above returns the smallest power of two above n, minus one: the
// largest index of a ring of that size.
func pow2Above(n uint32) uint64 {
	p := uint64(1)
	for p <= uint64(n) {
		p <<= 1
	}
	return p - 1
}
