package faulty2

import (
	"context"
	"sort"

	"github.com/srqconform/srqconform/drivers"
)

// thirdBugs are the third batch: held-out bugs written in session 14 from
// the rule statements of model/rules.go alone, one or two a rule, to
// measure blame on bugs nobody tuned the diagnosis to. Third returns them;
// All does not.
var thirdBugs = []Bug{
	// Posting.
	{
		Name: "list-rolled-back-on-full", Rule: "POST-ORDER", Subtle: true,
		Description: "a list that runs into a full queue is rolled back whole (the doorbell is rung only once every WR went in), so the WRs before the one that met the full queue are not posted either: they must stay posted",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				room := int(s.maxWR) - s.outstanding()
				if len(wrs) < 2 || room <= 0 || room >= len(wrs) {
					return s.innerPost(wrs)
				}
				for _, w := range wrs[:room] {
					if w.NumSGE < 0 || w.NumSGE > int(s.maxSGE) {
						return s.innerPost(wrs)
					}
				}
				return eNOMEM, room
			}}
		},
		Witness: func(s *Script) {
			s.Create(2, 1, 0)
			s.Post(WR(1, 8), WR(2, 8), WR(3, 8))
			s.Post(WR(4, 8))
		},
	},
	{
		Name: "badwr-last-posted-on-full", Rule: "POST-BADWR", Subtle: true,
		Description: "when a list meets a full queue after its first WR, bad_wr is taken from the pointer to the last WQE written, one before the WR that failed with ENOMEM: it must name the first WR that failed",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				e, bad := s.innerPost(wrs)
				if e == eNOMEM && bad > 0 {
					return e, bad - 1
				}
				return e, bad
			}}
		},
		Witness: func(s *Script) {
			s.Create(2, 1, 0)
			s.Post(WR(1, 8), WR(2, 8), WR(3, 8))
		},
	},
	{
		Name: "negative-sge-returns-negative-einval", Rule: "POST-RETURN", Subtle: true,
		Description: "a WR with a negative num_sge is refused by a signed check that returns -EINVAL, while every other failure returns the errno positive: the profile's convention is one sign for every failure",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				e, bad := s.innerPost(wrs)
				if e == eINVAL && bad >= 0 && bad < len(wrs) && wrs[bad].NumSGE < 0 {
					return -e, bad
				}
				return e, bad
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Post(drivers.RecvWR{ID: 1, NumSGE: -1})
		},
	},
	{
		Name: "check-order-flips-after-wrap", Rule: "POST-CHECK-ORDER", Subtle: true,
		Description: "once the producer index has gone round the ring the full check moves behind the WQE-size check, so a WR with too many SGEs meeting a full queue fails with EINVAL: it must fail with the errno of the check the profile runs first (ENOMEM)",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				if !s.wrapped() {
					return s.innerPost(wrs)
				}
				k := firstWR(wrs, func(i int, w drivers.RecvWR) bool {
					full := s.outstanding()+i >= int(s.maxWR)
					return full && (w.NumSGE > int(s.maxSGE) || w.NumSGE < 0)
				})
				return postUntil(s, wrs, k, eINVAL)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(2, 1, drivers.RC)
			s.PostN(2, 1, 8)
			s.Send(q, 4)
			s.Send(q, 4)
			s.PostN(2, 3, 8)
			s.Post(WR(5, 8, 8))
		},
	},
	{
		Name: "list-wrid-read-at-fetch", Rule: "POST-COPY", Subtle: true,
		Description: "for a list of several WRs the driver keeps a pointer into the caller's array and reads wr_id when it writes the completion, so a caller reusing its WRs after the post gets its new ids back: the SRQ must keep its own copy",
		hooks: func() *hooks {
			refs := map[uint64]*drivers.RecvWR{}
			return &hooks{
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					e, bad := s.innerPost(wrs)
					n := len(wrs)
					if e != 0 {
						n = max(0, min(bad, len(wrs)))
					}
					if len(wrs) > 1 {
						for i := range wrs[:n] {
							refs[wrs[i].ID] = &wrs[i]
						}
					}
					return e, bad
				},
				completion: editCompletion(func(_ *srq, _ fetch, c *drivers.Completion) {
					if p, ok := refs[c.WRID]; ok {
						delete(refs, c.WRID)
						c.WRID = p.ID
					}
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			if !s.ready("post") {
				return
			}
			wrs := []drivers.RecvWR{WR(1, 64), WR(2, 64)}
			e, bad := s.srq.Post(wrs)
			s.say("post_srq_recv(2 WRs): %d bad %d", e, bad)
			wrs[0].ID, wrs[1].ID = 7, 8 // the caller reuses its WRs
			s.Send(q, 8)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "post-recv-accepted-in-reset", Rule: "POST-QP-RQ", Subtle: true,
		Description: "ibv_post_recv on an SRQ-attached QP still in RESET returns 0 (the SRQ check reads the QP context, built only at INIT): it must be refused whatever the QP's state",
		hooks: func() *hooks {
			return &hooks{postRecv: func(q *qp, w drivers.RecvWR) (int, int) {
				if q.state == drivers.Reset {
					return 0, -1
				}
				return q.in.PostRecv(w)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			q := s.QP(drivers.RC)
			s.PostRecv(q, WR(1, 8))
		},
	},

	// Create, query, destroy.
	{
		Name: "create-odd-max-wr-rounded-down", Rule: "CREATE-ATTR", Subtle: true,
		Description: "create writes back an odd max_wr rounded down to even (the WQEs are counted in pairs), less than requested, though the SRQ holds the requested number: max_wr written back must be at least the request",
		hooks: func() *hooks {
			return &hooks{written: func(req, got drivers.SRQAttr) drivers.SRQAttr {
				if req.MaxWR > 1 && req.MaxWR%2 == 1 {
					got.MaxWR = req.MaxWR - 1
				}
				return got
			}}
		},
		Witness: func(s *Script) {
			s.Create(5, 1, 0)
		},
	},
	{
		Name: "create-ex-arms-given-limit", Rule: "CREATE-LIMIT", Subtle: true,
		Description: "ibv_create_srq_ex copies the whole ibv_srq_attr into the new context, so an srq_limit given at create arms the SRQ and its limit event fires: a srq_limit given at create does not arm it",
		hooks: func() *hooks {
			ex := false
			return &hooks{
				create: func(attr drivers.SRQAttr, v drivers.CreateVariant) (drivers.SRQAttr, int) {
					ex = v != drivers.CreatePlain
					return attr, 0
				},
				made: func(s *srq) {
					if ex && s.req.SRQLimit != 0 && s.req.SRQLimit <= s.maxWR {
						s.innerLimit(s.req.SRQLimit)
					}
				},
			}
		},
		Witness: func(s *Script) {
			s.createEx(8, 1, 3, drivers.CreateEx)
			q := s.QP(drivers.RC)
			s.Up(q)
			s.PostN(3, 1, 64)
			s.Send(q, 8)
			s.Events()
			s.Query()
		},
	},
	{
		Name: "query-limit-not-cleared-on-disarm", Rule: "QUERY-LIMIT", Subtle: true,
		Description: "disarming with a limit of 0 clears the responder's threshold but not the copy query reads, so query returns the old limit on a disarmed SRQ: it must return 0 when the SRQ is not armed",
		hooks: func() *hooks {
			var stale uint32
			return &hooks{
				limit: func(s *srq, l uint32) int {
					was := s.armed
					e := s.innerLimit(l)
					switch {
					case e == 0 && l == 0:
						stale = was
					case e == 0:
						stale = 0
					}
					return e
				},
				query: editQuery(func(_ *srq, a *drivers.SRQAttr) {
					if a.SRQLimit == 0 && stale != 0 {
						a.SRQLimit = stale
					}
				}),
			}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 0)
			s.Limit(2)
			s.Limit(0)
			s.Query()
		},
	},
	{
		Name: "busy-destroy-disarms-limit", Rule: "DESTROY-BUSY", Subtle: true,
		Description: "ibv_destroy_srq tears the limit down before it finds the attached QP, so the destroy that fails with EBUSY leaves the SRQ disarmed and no limit event comes: after a refused destroy the SRQ must keep working as before",
		hooks: func() *hooks {
			return &hooks{destroy: func(s *srq) (int, error) {
				armed := s.armed
				e, err := s.in.Destroy()
				if err == nil && e == eBUSY && armed != 0 {
					s.innerLimit(0)
				}
				return e, err
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.PostN(3, 1, 64)
			s.Limit(3)
			s.DestroySRQ()
			s.Send(q, 8)
			s.Events()
		},
	},

	// The limit.
	{
		Name: "arm-at-max-wr-ignored", Rule: "LIMIT-ARM", Subtle: true,
		Description: "a limit equal to max_wr, which is within bounds, is taken for 'no watermark': modify returns 0 and leaves the SRQ disarmed, so no limit event comes; a non-zero limit within bounds must arm",
		hooks: func() *hooks {
			return &hooks{limit: func(s *srq, l uint32) int {
				if l != 0 && l == s.maxWR {
					return s.innerLimit(0)
				}
				return s.innerLimit(l)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(4, 1, 64)
			s.Limit(4)
			s.Send(q, 8)
			s.Events()
		},
	},
	{
		Name: "disarm-lost-after-resize", Rule: "LIMIT-DISARM", Subtle: true,
		Description: "after a resize the driver writes a limit of 0 into the context the resize replaced, so the disarm returns 0 but the old threshold stays live and a limit event still comes: a limit of 0 must disarm",
		hooks: func() *hooks {
			return &hooks{limit: func(s *srq, l uint32) int {
				if l == 0 && s.resizes > 0 {
					return 0
				}
				return s.innerLimit(l)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.PostN(3, 1, 64)
			s.Limit(2)
			s.Resize(16)
			s.Limit(0)
			s.Send(q, 8)
			s.Send(q, 8)
			s.Events()
		},
	},
	{
		Name: "refused-arm-clears-old-limit", Rule: "LIMIT-BOUND", Subtle: true,
		Description: "an arm above the bound clears the armed threshold before it is validated, so the EINVAL leaves the SRQ disarmed and the earlier limit never fires: a refused arm must change nothing",
		hooks: func() *hooks {
			return &hooks{limit: func(s *srq, l uint32) int {
				e := s.innerLimit(l)
				if e != 0 && l != 0 && s.armed != 0 {
					s.innerLimit(0)
				}
				return e
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(3, 1, 64)
			s.Limit(2)
			s.Limit(9)
			s.Send(q, 8)
			s.Send(q, 8)
			s.Events()
		},
	},
	{
		Name: "write-imm-fetch-skips-limit-check", Rule: "LIMIT-FIRE", Subtle: true,
		Description: "the RDMA Write with Immediate path fetches a WR without the watermark check the Send path makes, so a fetch that leaves fewer WRs than the armed limit raises nothing until a later fetch: the event is due at that fetch",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				s := q.s
				armed := s.armed
				if msg.Opcode != drivers.WriteImm || !q.fetches() || armed == 0 || s.errored ||
					s.outstanding() == 0 || uint32(s.outstanding()-1) >= armed {
					return q.innerDeliver(ctx, msg)
				}
				s.innerLimit(0)
				st, err := q.innerDeliver(ctx, msg)
				s.innerLimit(armed)
				return st, err
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.PostN(3, 1, 64)
			s.Limit(3)
			s.Deliver(q, drivers.Message{Opcode: drivers.WriteImm, Len: 8, Imm: 5})
			s.Events()
		},
	},
	{
		Name: "limit-event-per-attached-qp", Rule: "LIMIT-ONCE", Subtle: true,
		Description: "the SRQ limit event is dispatched through each attached QP's affiliated-event path, so with two QPs attached one arming raises it twice: it fires at most once per arming",
		hooks: func() *hooks {
			return &hooks{event: func(s *srq, e drivers.Event) []drivers.Event {
				if e.Type != drivers.EventSRQLimitReached {
					return []drivers.Event{e}
				}
				var out []drivers.Event
				for _, q := range s.qps {
					if !q.gone {
						out = append(out, e)
					}
				}
				if len(out) == 0 {
					out = append(out, e)
				}
				return out
			}}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 0)
			a := s.QP(drivers.RC)
			s.QP(drivers.RC)
			s.Up(a)
			s.PostN(3, 1, 64)
			s.Limit(3)
			s.Send(a, 8)
			s.Events()
		},
	},

	// Resize.
	{
		Name: "wrapped-shrink-rounded-up-to-count", Rule: "RESIZE-BELOW-COUNT", Subtle: true,
		Description: "once the ring has wrapped, a resize below the outstanding count is not refused but silently rounded up to the count and returns 0: a capacity that cannot hold the outstanding WRs must fail with EINVAL",
		hooks: func() *hooks {
			return &hooks{resize: func(s *srq, n uint32) int {
				if s.wrapped() && n > 0 && int(n) < s.outstanding() {
					return s.innerResize(uint32(s.outstanding()))
				}
				return s.innerResize(n)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(3, 1, drivers.RC)
			s.PostN(3, 1, 64)
			s.Send(q, 8)
			s.Send(q, 8)
			s.PostN(2, 4, 64)
			s.Resize(2)
			s.Query()
		},
	},
	{
		Name: "resize-after-wrap-copies-by-slot", Rule: "RESIZE-CAPACITY", Subtle: true,
		Description: "a resize after the ring has wrapped copies the outstanding WQEs to the new ring in slot order rather than from the consumer index, so the WRs posted after the wrap are fetched before older ones: outstanding WRs must stay in order",
		hooks: func() *hooks {
			var emuQ, bugQ []uint64
			return &hooks{
				resize: func(s *srq, n uint32) int {
					old, wrapped, first := s.maxWR, s.wrapped(), s.resizes == 0
					ids := make([]uint64, len(s.fifo))
					for i, w := range s.fifo {
						ids[i] = w.ID
					}
					e := s.innerResize(n)
					if e != 0 || !wrapped || !first || len(ids) < 2 || len(emuQ) > 0 {
						return e
					}
					start := s.posted - len(ids)
					slot := func(i int) int { return (start + i) % int(old) }
					order := make([]int, len(ids))
					for i := range order {
						order[i] = i
					}
					sort.SliceStable(order, func(a, b int) bool { return slot(order[a]) < slot(order[b]) })
					emuQ = ids
					for _, i := range order {
						bugQ = append(bugQ, ids[i])
					}
					return e
				},
				completion: editCompletion(func(_ *srq, _ fetch, c *drivers.Completion) {
					if len(emuQ) > 0 && c.WRID == emuQ[0] {
						c.WRID = bugQ[0]
						emuQ, bugQ = emuQ[1:], bugQ[1:]
					}
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(3, 1, drivers.RC)
			s.PostN(3, 1, 64)
			s.Send(q, 8)
			s.Send(q, 8)
			s.PostN(2, 4, 64)
			s.Resize(8)
			for range 3 {
				s.Send(q, 8)
			}
			s.Poll()
		},
	},

	// QP state.
	{
		Name: "ud-err-to-reset-refused", Rule: "QP-TRANSITIONS", Subtle: true,
		Description: "a UD QP in ERR refuses the move to RESET with EINVAL (the UD path waits for a send queue drain that never comes): every state may move to RESET",
		hooks: func() *hooks {
			return &hooks{modify: func(q *qp, st drivers.QPState) int {
				if q.typ == drivers.UD && q.state == drivers.Err && st == drivers.Reset {
					return eINVAL
				}
				return q.innerModify(st)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.UD)
			s.Modify(q, drivers.Err)
			s.Modify(q, drivers.Reset)
		},
	},
	{
		Name: "sqe-rc-rnr-on-consuming", Rule: "QP-FETCH-STATES", Subtle: true,
		Description: "an RC QP in SQE answers a consuming message with RNR and takes no WR (the responder is gated on the send queue's state): a QP in SQE takes a WR from the SRQ",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				if q.typ == drivers.RC && q.state == drivers.SQE && consumes(msg) {
					return drivers.PeerRNR, nil
				}
				return q.innerDeliver(ctx, msg)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.InjectSQE(q)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "init-after-reset-still-fetches", Rule: "QP-NOFETCH-STATES", Subtle: true,
		Description: "a QP taken from RTS back to RESET and then INIT keeps its responder context, so it still takes WRs from the SRQ and completes messages: a QP in INIT takes nothing",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				s := q.s
				if q.state != drivers.Init || !q.been(drivers.RTS) || !consumes(msg) || s.outstanding() == 0 || s.errored {
					return q.innerDeliver(ctx, msg)
				}
				q.in.Modify(drivers.RTR)
				st, err := q.innerDeliver(ctx, msg)
				q.in.Modify(drivers.Reset)
				q.in.Modify(drivers.Init)
				return st, err
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.Modify(q, drivers.Reset)
			s.Modify(q, drivers.Init)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "ud-init-buffers-until-rtr", Rule: "QP-BEFORE-RTR", Subtle: true,
		Description: "a UD QP in INIT queues the datagrams that reach it and processes them when it enters RTR, taking WRs for them: the profile drops messages that arrive before RTR",
		hooks: func() *hooks {
			pending := map[*qp][]drivers.Message{}
			return &hooks{
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					if q.typ == drivers.UD && q.state == drivers.Init {
						pending[q] = append(pending[q], msg)
						return drivers.PeerOK, nil
					}
					return q.innerDeliver(ctx, msg)
				},
				modify: func(q *qp, st drivers.QPState) int {
					e := q.innerModify(st)
					if e != 0 {
						return e
					}
					msgs := pending[q]
					delete(pending, q)
					if st == drivers.RTR {
						for _, m := range msgs {
							q.innerDeliver(context.Background(), m)
						}
					}
					return e
				},
			}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			q := s.QP(drivers.UD)
			s.Modify(q, drivers.Init)
			s.PostN(1, 1, 128)
			s.Send(q, 8)
			s.Modify(q, drivers.RTR)
			s.Poll()
		},
	},
	{
		Name: "last-wqe-lost-when-srq-empty", Rule: "QP-LAST-WQE", Subtle: true,
		Description: "the last-WQE event is raised from the SRQ flush walk, which the driver skips when the SRQ holds no WR, so a QP entering ERR with the SRQ empty raises no IBV_EVENT_QP_LAST_WQE_REACHED: it must raise it once",
		hooks: func() *hooks {
			return &hooks{event: dropEvents(func(s *srq, e drivers.Event) bool {
				return e.Type == drivers.EventQPLastWQEReached && s.outstanding() == 0
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Modify(q, drivers.Err)
			s.Events()
		},
	},
	{
		Name: "req-err-on-ud-bad-key", Rule: "QP-ERROR-EVENT", Subtle: true,
		Description: "a receive through an invalidated key on a UD QP raises IBV_EVENT_QP_REQ_ERR beside its error completion, though the QP stays usable: an affiliated QP error event comes only as the profile says, never for a UD QP that did not enter ERR",
		hooks: func() *hooks {
			return &hooks{completion: func(s *srq, f fetch, c drivers.Completion) []drivers.Completion {
				if f.q != nil && f.q.typ == drivers.UD && c.Status == drivers.WCLocProtErr {
					s.ev = append(s.ev, drivers.Event{Type: drivers.EventQPReqErr, QP: c.QP})
				}
				return []drivers.Completion{c}
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.UD)
			s.Post(drivers.RecvWR{ID: 1, NumSGE: 1, SGEs: []drivers.SGE{{Length: 128, Key: 1}}})
			s.Invalidate(1)
			s.Send(q, 8)
			s.Poll()
			s.Events()
		},
	},
	{
		Name: "flush-general-err-on-multi-sge", Rule: "QP-FLUSH-INPROGRESS", Subtle: true,
		Description: "a WR of several SGEs that a QP was filling when it entered ERR completes with IBV_WC_GENERAL_ERR (the scatter state machine reports its own abort), where the profile completes it with WR_FLUSH_ERR",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
				if c.Status == drivers.WCWRFlushErr && f.found && len(f.w.SGEs) > 1 {
					c.Status = drivers.WCGeneralErr
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 2, drivers.RC)
			s.Post(WR(1, 32, 32))
			s.First(q, 48)
			s.Modify(q, drivers.Err)
			s.Poll()
		},
	},

	// SRQ error.
	{
		Name: "srq-err-event-needs-a-qp", Rule: "SRQ-ERR-EVENT", Subtle: true,
		Description: "the SRQ error event is raised through the event queue of an attached QP, so an SRQ with no QP attached enters its error state silently: entering the error state raises IBV_EVENT_SRQ_ERR",
		hooks: func() *hooks {
			return &hooks{event: dropEvents(func(s *srq, e drivers.Event) bool {
				if e.Type != drivers.EventSRQErr {
					return false
				}
				for _, q := range s.qps {
					if !q.gone {
						return false
					}
				}
				return true
			})}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.InjectSRQError()
			s.Events()
		},
	},

	// Fetching and completions.
	{
		Name: "list-linked-in-reverse", Rule: "FETCH-FIFO", Subtle: true,
		Description: "the WRs of one list are linked into the ring head-first, so a list's WRs are fetched last-first: WRs are fetched from the head, completions in posting order",
		hooks: func() *hooks {
			var emuQ, bugQ []uint64
			return &hooks{
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					e, bad := s.innerPost(wrs)
					n := len(wrs)
					if e != 0 {
						n = max(0, min(bad, len(wrs)))
					}
					for i := range wrs[:n] {
						emuQ = append(emuQ, wrs[i].ID)
					}
					for i := n - 1; i >= 0; i-- {
						bugQ = append(bugQ, wrs[i].ID)
					}
					return e, bad
				},
				completion: editCompletion(func(_ *srq, _ fetch, c *drivers.Completion) {
					if len(emuQ) > 0 && c.WRID == emuQ[0] {
						c.WRID = bugQ[0]
						emuQ, bugQ = emuQ[1:], bugQ[1:]
					}
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Post(WR(1, 64), WR(2, 64), WR(3, 64))
			for range 3 {
				s.Send(q, 8)
			}
			s.Poll()
		},
	},
	{
		Name: "write-after-write-imm-consumes", Rule: "FETCH-OPCODES", Subtle: true,
		Description: "the responder keeps the 'immediate' flag of a Write with Immediate for the next packet on that QP, so a plain RDMA Write right after one consumes a WR and completes as RECV_RDMA_WITH_IMM: RDMA Write does not consume",
		hooks: func() *hooks {
			last := map[*qp]drivers.Message{}
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				prev, stale := last[q]
				delete(last, q)
				switch {
				case msg.Opcode == drivers.WriteImm:
					last[q] = msg
				case msg.Opcode == drivers.Write && stale:
					msg.Opcode, msg.Imm = drivers.WriteImm, prev.Imm
				}
				return q.innerDeliver(ctx, msg)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(2, 1, 64)
			s.Deliver(q, drivers.Message{Opcode: drivers.WriteImm, Len: 8, Imm: 7})
			s.Deliver(q, drivers.Message{Opcode: drivers.Write, Len: 8})
			s.Poll()
		},
	},
	{
		Name: "cqe-replayed-on-qp-reset", Rule: "FETCH-ONCE", Subtle: true,
		Description: "moving a QP to RESET rewinds its CQ shadow consumer by one, so the QP's last successful completion is reported again: no WR completes twice",
		hooks: func() *hooks {
			last := map[int]drivers.Completion{}
			return &hooks{
				completion: func(_ *srq, _ fetch, c drivers.Completion) []drivers.Completion {
					if c.Status == drivers.WCSuccess {
						last[c.QP] = c
					}
					return []drivers.Completion{c}
				},
				modify: func(q *qp, st drivers.QPState) int {
					e := q.innerModify(st)
					if c, ok := last[q.idx]; ok && e == 0 && st == drivers.Reset {
						delete(last, q.idx)
						q.s.cq = append(q.s.cq, c)
					}
					return e
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.Send(q, 8)
			s.Poll()
			s.Modify(q, drivers.Reset)
			s.Poll()
		},
	},
	{
		Name: "qp-index-compacted-after-destroy", Rule: "RECV-COMPLETION", Subtle: true,
		Description: "the driver's QP table is compacted when a QP is destroyed but the completions are still looked up by table slot, so after one is destroyed completions of later QPs name the QP before them: a completion names the receiving QP",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(s *srq, _ fetch, c *drivers.Completion) {
				shift := 0
				for _, o := range s.qps {
					if o.gone && o.idx < c.QP {
						shift++
					}
				}
				c.QP -= shift
			})}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			a := s.QP(drivers.RC)
			b := s.QP(drivers.RC)
			s.Up(b)
			s.DestroyQP(a)
			s.PostN(1, 1, 64)
			s.Send(b, 8)
			s.Poll()
		},
	},
	{
		Name: "send-imm-zero-no-flag", Rule: "RECV-IMM", Subtle: true,
		Description: "the completion sets IBV_WC_WITH_IMM only when the immediate is non-zero, so a Send with Immediate carrying 0 completes without the flag: a message with immediate data completes with IBV_WC_WITH_IMM",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
				if f.msg != nil && f.msg.Opcode == drivers.SendImm && c.Status == drivers.WCSuccess && c.Imm == 0 {
					c.HasImm = false
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.Deliver(q, drivers.Message{Opcode: drivers.SendImm, Len: 8, Imm: 0})
			s.Poll()
		},
	},
	{
		Name: "empty-write-imm-as-recv", Rule: "RECV-WRITE-IMM", Subtle: true,
		Description: "a zero-length RDMA Write with Immediate travels as a single immediate-only packet that the driver completes with the Send opcode IBV_WC_RECV: it must complete as RECV_RDMA_WITH_IMM",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
				if f.msg != nil && f.msg.Opcode == drivers.WriteImm && f.msg.Len == 0 && c.Status == drivers.WCSuccess {
					c.Opcode = drivers.WCRecv
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.Deliver(q, drivers.Message{Opcode: drivers.WriteImm, Len: 0, Imm: 9})
			s.Poll()
		},
	},
	{
		Name: "fit-skips-last-of-three-sges", Rule: "RECV-FIT", Subtle: true,
		Description: "the fit check sums the SGE lengths with a loop that stops one short when a WR has three or more SGEs, so a message that needs the last SGE completes with LOC_LEN_ERR: it fits when its length is at most the sum of all the SGEs",
		hooks: func() *hooks {
			return &hooks{deliver: refuseFit(func(q *qp, w wr, msg drivers.Message) bool {
				n := len(w.SGEs)
				if n < 3 {
					return false
				}
				need := q.need(msg)
				return need > (wr{SGEs: w.SGEs[:n-1]}).size() && need <= w.size()
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 3, drivers.RC)
			s.Post(WR(1, 16, 16, 16))
			s.Send(q, 40)
			s.Poll()
		},
	},
	{
		Name: "zero-length-sge-only-first", Rule: "SGE-LEN0", Subtle: true,
		Description: "only the first SGE of a WR gets the length-0-means-2^31 treatment; a later SGE of length 0 counts as 0 bytes, so a message needing it completes with LOC_LEN_ERR: an SGE of length 0 stands for 2^31 bytes",
		hooks: func() *hooks {
			return &hooks{deliver: refuseFit(func(q *qp, w wr, msg drivers.Message) bool {
				var size uint64
				zero := false
				for i, g := range w.SGEs {
					if i > 0 && g.Length == 0 {
						zero = true
						continue
					}
					size += sgeBytes(g)
				}
				need := q.need(msg)
				return zero && need > size && need <= w.size()
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 2, drivers.RC)
			s.Post(WR(1, 8, 0))
			s.Send(q, 64)
			s.Poll()
		},
	},
	{
		Name: "empty-srq-error-nak-after-limit", Rule: "RECV-RNR", Subtle: true,
		Description: "once the limit event has fired, the driver's low-watermark state makes the responder answer a message meeting an empty SRQ on RC with an error NAK instead of receiver-not-ready",
		hooks: func() *hooks {
			fired := false
			return &hooks{
				event: onLimitEvent(func() { fired = true }),
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					st, err := q.innerDeliver(ctx, msg)
					if err == nil && fired && q.typ == drivers.RC && st == drivers.PeerRNR {
						return drivers.PeerError, nil
					}
					return st, err
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(2, 1, 64)
			s.Limit(2)
			for range 3 {
				s.Send(q, 8)
			}
			s.Events()
		},
	},
	{
		Name: "error-cqe-slot-held-until-poll", Rule: "SLOT-FREE", Subtle: true,
		Description: "a WR that completed with an error keeps its ring slot until its completion is polled (the error CQE goes through the slow path), while successful ones free at fetch: the slot frees at fetch or at poll as the profile says, the same for every completion",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				held := 0
				for _, c := range s.cq {
					if c.Status != drivers.WCSuccess {
						held++
					}
				}
				if held == 0 {
					return s.innerPost(wrs)
				}
				k := firstWR(wrs, func(i int, _ drivers.RecvWR) bool { return s.outstanding()+held+i >= int(s.maxWR) })
				return postUntil(s, wrs, k, eNOMEM)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(2, 1, drivers.UD)
			s.PostN(1, 1, 16)
			s.Send(q, 64)
			s.PostN(2, 2, 8)
			s.Poll()
		},
	},
}

// createEx creates the SRQ with ibv_create_srq_ex the way v says.
func (s *Script) createEx(maxWR, maxSGE, limit uint32, v drivers.CreateVariant) {
	srq, got, err := s.dev.CreateSRQEx(s.ctx, drivers.SRQAttr{MaxWR: maxWR, MaxSGE: maxSGE, SRQLimit: limit}, Keys, v)
	s.srq = srq
	s.say("create_srq_ex(%d, %d, %d, variant %d): %+v %v", maxWR, maxSGE, limit, v, got, err)
}
