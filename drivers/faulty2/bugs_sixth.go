package faulty2

import (
	"context"

	"github.com/srqconform/srqconform/drivers"
)

// errno values only the sixth batch returns.
const (
	eNOSYS = 38
)

// sixthBugs are the sixth batch: held-out bugs written in session 24 by a
// helper from the rule statements of model/rules.go, the documented
// profile, the driver interface and the emulator alone, one a rule, most
// of them showing only after a particular history (a ring that wrapped, a
// resize, an SRQ made by ibv_create_srq_ex, a QP recycled through RESET, a
// second QP, one opcode or QP type, a list of several WRs, an arming
// followed by fetches), to measure blame on bugs nobody tuned the
// diagnosis to. Sixth returns them; All does not.
var sixthBugs = []Bug{
	// Posting.
	{
		Name: "list-error-skips-partial-doorbell", Rule: "POST-ORDER", Subtle: true,
		Description: "the list path writes WQEs in batches of four and rings the doorbell at the end of each batch, and its error exit returns without ringing it for the batch in progress, so the WRs of that batch before the failing WR are never posted: the WRs before the first failing WR must stay posted",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				full := func(i int) bool { return s.outstanding()+i >= int(s.maxWR) }
				k := firstWR(wrs, func(i int, w drivers.RecvWR) bool {
					return full(i) || w.NumSGE > int(s.maxSGE) || w.NumSGE < 0
				})
				if k >= len(wrs) {
					return s.innerPost(wrs)
				}
				errno := eINVAL
				if full(k) {
					errno = eNOMEM
				}
				if e, bad := s.innerPost(wrs[:k&^3]); e != 0 {
					return e, bad
				}
				return errno, k
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.Post(WR(1, 64), WR(2, 64), WR(3, 64, 64))
			s.Send(q, 8)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "badwr-next-on-negative-sge", Rule: "POST-BADWR", Subtle: true,
		Description: "a negative num_sge is caught inside the SGE copy loop, after the list cursor has moved on to wr->next, so bad_wr names the WR after the one with the negative count (NULL when it is the last): bad_wr must name the first WR that failed",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				e, bad := s.innerPost(wrs)
				if e == eINVAL && bad >= 0 && bad < len(wrs) && wrs[bad].NumSGE < 0 {
					if bad++; bad == len(wrs) {
						bad = -1
					}
				}
				return e, bad
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Post(WR(1, 8), drivers.RecvWR{ID: 2, NumSGE: -1}, WR(3, 8))
		},
	},
	{
		Name: "full-after-wrap-returns-negative", Rule: "POST-RETURN", Subtle: true,
		Description: "once the producer index has gone round the ring, the room check computes the free count as a signed difference and returns it negated with the errno, so a post to a full SRQ whose ring has wrapped returns -ENOMEM: the documented convention is the positive errno value",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				e, bad := s.innerPost(wrs)
				if e == eNOMEM && s.wrapped() {
					return -eNOMEM, bad
				}
				return e, bad
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(2, 1, drivers.RC)
			s.PostN(2, 1, 64)
			s.Send(q, 8)
			s.Send(q, 8)
			s.PostN(3, 3, 64)
		},
	},
	{
		Name: "full-counts-filling-wqe-twice", Rule: "POST-FULL", Subtle: true,
		Description: "the room check adds the WQEs that QPs are in the middle of filling to a count that already holds their slots, so while a message is half-delivered the SRQ reports full one WR early (two early if its slot freed at fetch): up to max_wr WRs must fit",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				filling := 0
				for _, q := range s.qps {
					if !q.gone && q.filling != nil {
						filling++
					}
				}
				if filling == 0 {
					return s.innerPost(wrs)
				}
				k := firstWR(wrs, func(i int, _ drivers.RecvWR) bool { return s.outstanding()+2*filling+i >= int(s.maxWR) })
				return postUntil(s, wrs, k, eNOMEM)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(3, 1, 64)
			s.First(q, 8)
			s.PostN(1, 4, 64)
			s.Rest(q)
			s.Poll()
		},
	},
	{
		Name: "ex-srq-refuses-full-sge-count", Rule: "POST-SGE", Subtle: true,
		Description: "an SRQ made by ibv_create_srq_ex reserves one scatter entry of each WQE for a header, and its post path checks num_sge against max_sge - 1, so a WR with exactly max_sge SGEs fails with EINVAL: only num_sge above max_sge (or negative) fails",
		hooks: func() *hooks {
			h, ex := sixthExTracker()
			h.post = func(s *srq, wrs []drivers.RecvWR) (int, int) {
				if !*ex {
					return s.innerPost(wrs)
				}
				k := firstWR(wrs, func(_ int, w drivers.RecvWR) bool { return w.NumSGE == int(s.maxSGE) })
				return sixthRefuseAt(s, wrs, k, eINVAL)
			}
			return h
		},
		Witness: func(s *Script) {
			sixthCreateEx(s, 4, 2)
			s.Post(WR(1, 8))
			s.Post(WR(2, 8, 8))
		},
	},
	{
		Name: "check-order-flips-after-resize", Rule: "POST-CHECK-ORDER", Subtle: true,
		Description: "a resize installs the generic post routine, which validates num_sge before it takes the queue lock and looks at the room, where the original routine checks the room first, so a WR with too many SGEs meeting a full queue fails with ENOMEM before any resize and with EINVAL after one: the errno must be that of the one check the profile runs first",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				if s.resizes == 0 {
					return s.innerPost(wrs)
				}
				k := firstWR(wrs, func(i int, w drivers.RecvWR) bool {
					return s.outstanding()+i >= int(s.maxWR) || w.NumSGE > int(s.maxSGE) || w.NumSGE < 0
				})
				if k < len(wrs) && (wrs[k].NumSGE > int(s.maxSGE) || wrs[k].NumSGE < 0) {
					return postUntil(s, wrs, k, eINVAL)
				}
				return s.innerPost(wrs)
			}}
		},
		Witness: func(s *Script) {
			s.Create(2, 1, 0)
			s.PostN(2, 1, 8)
			s.Post(WR(3, 8, 8))
			s.Resize(2)
			s.Post(WR(4, 8, 8))
		},
	},
	{
		Name: "post-refused-after-qp-recycled-from-err", Rule: "POST-ANY-STATE", Subtle: true,
		Description: "moving a QP from ERR to RESET leaves the SRQ's 'flushing' flag set until some QP reaches RTR again, and the post path refuses with EINVAL while it is set: posting works whatever state the attached QPs are in",
		hooks: func() *hooks {
			flushing := false
			return &hooks{
				modify: func(q *qp, st drivers.QPState) int {
					from := q.state
					e := q.innerModify(st)
					if e == 0 && st == drivers.Reset && from == drivers.Err {
						flushing = true
					}
					if e == 0 && st == drivers.RTR {
						flushing = false
					}
					return e
				},
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					if flushing && len(wrs) > 0 {
						return eINVAL, 0
					}
					return s.innerPost(wrs)
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Modify(q, drivers.Err)
			s.Modify(q, drivers.Reset)
			s.PostN(1, 1, 64)
			s.Modify(q, drivers.Init)
			s.PostN(1, 2, 64)
		},
	},
	{
		Name: "list-path-validates-lkeys", Rule: "POST-NO-KEY-CHECK", Subtle: true,
		Description: "the batched path for lists of several WRs looks every SGE's lkey up in the MR cache to prefetch its translation and fails the WR whose key is no longer registered with EINVAL: a post does not check lkeys, an invalid key shows only when the WR is filled",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				if len(wrs) < 2 {
					return s.innerPost(wrs)
				}
				k := firstWR(wrs, func(_ int, w drivers.RecvWR) bool {
					for _, g := range shadow(w).SGEs {
						if s.invalid[g.Key] {
							return true
						}
					}
					return false
				})
				return sixthRefuseAt(s, wrs, k, eINVAL)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Invalidate(1)
			s.Post(sixthKeyedWR(1, 1, 64))
			s.Post(sixthKeyedWR(2, 0, 64), sixthKeyedWR(3, 1, 64))
		},
	},
	{
		Name: "rq-built-from-ignored-caps", Rule: "POST-QP-RQ", Subtle: true,
		Description: "a QP created with the SRQ and a non-zero cap.max_recv_wr gets a receive queue of its own all the same, and ibv_post_recv on it is accepted: ibv_post_recv on a QP attached to an SRQ must be refused, with bad_wr on the first WR",
		hooks: func() *hooks {
			rq := map[int]int{}
			return &hooks{
				createQP: func(s *srq, _ drivers.QPType, c drivers.RecvCaps) int {
					if c != drivers.RecvCapsZero {
						rq[len(s.qps)] = 1
					}
					return 0
				},
				postRecv: func(q *qp, w drivers.RecvWR) (int, int) {
					if room, ok := rq[q.idx]; ok {
						if room == 0 {
							return eNOMEM, 0
						}
						rq[q.idx] = room - 1
						return 0, -1
					}
					return q.in.PostRecv(w)
				},
			}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			q := s.QPCaps(drivers.RC, drivers.RecvCapsAboveSGE)
			s.PostRecv(q, WR(1, 64))
		},
	},

	// Create, query, destroy.
	{
		Name: "create-writeback-minus-limit", Rule: "CREATE-ATTR", Subtle: true,
		Description: "when ibv_create_srq is given a non-zero srq_limit, the driver reserves that many WQEs as a watermark area and writes back max_wr less the limit, below what was asked for: create must write back max_wr at least as large as requested",
		hooks: func() *hooks {
			return &hooks{written: func(req, got drivers.SRQAttr) drivers.SRQAttr {
				if req.SRQLimit != 0 && got.MaxWR > req.SRQLimit {
					got.MaxWR -= req.SRQLimit
				}
				return got
			}}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 2)
			s.Query()
		},
	},
	{
		Name: "ex-create-skips-max-wr-check", Rule: "CREATE-MAX", Subtle: true,
		Description: "ibv_create_srq_ex's basic path skips the max_wr bound check ibv_create_srq makes and lets the ring allocator round the size up, so an SRQ with max_wr above the device's max_srq_wr is created: such a create must fail",
		hooks: func() *hooks {
			return &hooks{
				create: func(a drivers.SRQAttr, v drivers.CreateVariant) (drivers.SRQAttr, int) {
					if (v == drivers.CreateEx || v == drivers.CreateExCQ) && a.MaxWR > emuInfo.MaxSRQWR && a.MaxSGE >= 1 && a.MaxSGE <= emuInfo.MaxSRQSGE {
						a.MaxWR = emuInfo.MaxSRQWR
					}
					return a, 0
				},
				written: func(req, got drivers.SRQAttr) drivers.SRQAttr {
					if req.MaxWR > emuInfo.MaxSRQWR {
						got.MaxWR = req.MaxWR
					}
					return got
				},
			}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Other(emuInfo.MaxSRQWR+1, 1, drivers.CreatePlain)
			s.Other(emuInfo.MaxSRQWR+1, 1, drivers.CreateEx)
		},
	},
	{
		Name: "create-ex-cq-busy-when-shared", Rule: "CREATE-EX", Subtle: true,
		Description: "ibv_create_srq_ex with IBV_SRQ_INIT_ATTR_CQ refuses with EBUSY a CQ that an SRQ already uses, so a second SRQ made with this SRQ's CQ fails with EBUSY: adding the CQ succeeds or fails with EOPNOTSUPP",
		hooks: func() *hooks {
			made := false
			return &hooks{
				create: func(a drivers.SRQAttr, v drivers.CreateVariant) (drivers.SRQAttr, int) {
					if made && v == drivers.CreateExCQ {
						return a, eBUSY
					}
					return a, 0
				},
				made: func(*srq) { made = true },
			}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Other(4, 1, drivers.CreateEx)
			s.Other(4, 1, drivers.CreateExCQ)
		},
	},
	{
		Name: "create-limit-armed-at-first-post", Rule: "CREATE-LIMIT", Subtle: true,
		Description: "the srq_limit given at create is kept as a pending arming that the first doorbell writes to the SRQ context, so an SRQ created with a limit is armed by its first post and raises SRQ_LIMIT_REACHED: a limit given at create does not arm the SRQ",
		hooks: func() *hooks {
			var pending uint32
			return &hooks{
				made: func(s *srq) { pending = s.req.SRQLimit },
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					if pending != 0 && len(wrs) > 0 {
						s.innerLimit(pending)
						pending = 0
					}
					return s.innerPost(wrs)
				},
			}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 2)
			q := s.QP(drivers.RC)
			s.Up(q)
			s.PostN(2, 1, 64)
			s.Send(q, 8)
			s.Events()
		},
	},
	{
		Name: "query-sge-rounded-to-stride", Rule: "QUERY-ATTR", Subtle: true,
		Description: "query computes max_sge back from the WQE stride, a power of two, so an SRQ created with a max_sge that is not a power of two reads a larger max_sge than create wrote back: query returns max_sge as created",
		hooks: func() *hooks {
			return &hooks{query: editQuery(func(_ *srq, a *drivers.SRQAttr) { a.MaxSGE = sixthPow2(a.MaxSGE) })}
		},
		Witness: func(s *Script) {
			s.Create(4, 3, 0)
			s.Query()
		},
	},
	{
		Name: "query-limit-read-clears", Rule: "QUERY-LIMIT", Subtle: true,
		Description: "query reads the armed limit from a read-to-clear mailbox field, so the first query after an arming returns the limit and every later one returns 0 although the SRQ is still armed: query returns the armed limit",
		hooks: func() *hooks {
			read := false
			return &hooks{
				limit: func(s *srq, l uint32) int {
					e := s.innerLimit(l)
					if e == 0 {
						read = false
					}
					return e
				},
				query: editQuery(func(_ *srq, a *drivers.SRQAttr) {
					if read {
						a.SRQLimit = 0
					} else if a.SRQLimit != 0 {
						read = true
					}
				}),
			}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 0)
			s.Limit(2)
			s.Query()
			s.Query()
		},
	},
	{
		Name: "destroy-busy-after-ud-qp-destroyed", Rule: "DESTROY-BUSY", Subtle: true,
		Description: "destroying a UD QP does not drop the reference it took on the SRQ (only the RC teardown does), so once a UD QP has been attached and destroyed, ibv_destroy_srq fails with EBUSY with no QP left: once its QPs are destroyed the destroy succeeds",
		hooks: func() *hooks {
			return &hooks{destroy: func(s *srq) (int, error) {
				for _, q := range s.qps {
					if q.gone && q.typ == drivers.UD {
						return eBUSY, nil
					}
				}
				return s.in.Destroy()
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			q := s.QP(drivers.UD)
			s.DestroyQP(q)
			s.DestroySRQ()
		},
	},

	// The limit.
	{
		Name: "rearm-ignored-until-event-read", Rule: "LIMIT-ARM", Subtle: true,
		Description: "while an SRQ_LIMIT_REACHED event is queued and not yet read, the driver takes a new arming for a duplicate of the one that fired and returns 0 without arming, so a limit armed before the event is read never fires: modifying srq_limit within bounds arms the SRQ",
		hooks: func() *hooks {
			return &hooks{limit: func(s *srq, l uint32) int {
				if l != 0 {
					for _, e := range s.ev {
						if e.Type == drivers.EventSRQLimitReached {
							return 0
						}
					}
				}
				return s.innerLimit(l)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.PostN(4, 1, 64)
			s.Limit(4)
			s.Send(q, 8)
			s.Limit(2)
			s.Send(q, 8)
			s.Send(q, 8)
			s.Events()
			s.Query()
		},
	},
	{
		Name: "disarm-undone-by-qp-rtr", Rule: "LIMIT-DISARM", Subtle: true,
		Description: "moving a QP to RTR reloads the SRQ context from the driver's copy, which a disarm (limit 0) did not update, so the limit disarmed before a QP reached RTR is armed again and fires: no limit event comes until the SRQ is armed again",
		hooks: func() *hooks {
			var last uint32
			return &hooks{
				limit: func(s *srq, l uint32) int {
					prev := s.armed
					e := s.innerLimit(l)
					if e == 0 {
						last = 0
						if l == 0 {
							last = prev
						}
					}
					return e
				},
				modify: func(q *qp, st drivers.QPState) int {
					e := q.innerModify(st)
					if e == 0 && st == drivers.RTR && last != 0 {
						q.s.innerLimit(last)
						last = 0
					}
					return e
				},
			}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 0)
			q := s.QP(drivers.RC)
			s.Modify(q, drivers.Init)
			s.PostN(4, 1, 64)
			s.Limit(4)
			s.Limit(0)
			s.Modify(q, drivers.RTR)
			s.Modify(q, drivers.RTS)
			s.Send(q, 8)
			s.Events()
		},
	},
	{
		Name: "limit-bound-skipped-on-rearm", Rule: "LIMIT-BOUND", Subtle: true,
		Description: "the bound on srq_limit is checked only when the SRQ is not armed; re-arming an armed SRQ takes the update branch, which writes any value, so a limit above max_wr is accepted on an armed SRQ: it must fail with EINVAL and change nothing",
		hooks: func() *hooks {
			var over uint32
			return &hooks{
				limit: func(s *srq, l uint32) int {
					if l > s.maxWR && s.armed != 0 {
						e := s.innerLimit(s.maxWR)
						if e == 0 {
							over = l
						}
						return e
					}
					e := s.innerLimit(l)
					if e == 0 {
						over = 0
					}
					return e
				},
				query: editQuery(func(s *srq, a *drivers.SRQAttr) {
					if s.armed == 0 {
						over = 0
					}
					if over != 0 && a.SRQLimit != 0 {
						a.SRQLimit = over
					}
				}),
			}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Limit(9)
			s.Limit(2)
			s.Limit(9)
			s.Query()
		},
	},
	{
		Name: "limit-counts-unpolled-completions", Rule: "LIMIT-FIRE", Subtle: true,
		Description: "the limit check counts the WRs left as the ring's consumer index sees it, and that index advances only when completions are polled, so WRs whose completions still sit in the CQ count as left and the event comes late: it must be raised when a fetch leaves fewer WRs than the limit",
		hooks: func() *hooks {
			var armed uint32
			return &hooks{
				limit: func(s *srq, l uint32) int {
					e := s.in.ModifyLimit(l)
					if e != 0 {
						return e
					}
					if l != 0 {
						s.in.ModifyLimit(0)
					}
					armed, s.armed = l, l
					return 0
				},
				completion: func(s *srq, _ fetch, c drivers.Completion) []drivers.Completion {
					if armed != 0 && s.outstanding()+len(s.cq)+1 < int(armed) {
						armed, s.armed = 0, 0
						s.ev = append(s.ev, drivers.Event{Type: drivers.EventSRQLimitReached, QP: -1})
					}
					return []drivers.Completion{c}
				},
				query: editQuery(func(_ *srq, a *drivers.SRQAttr) { a.SRQLimit = armed }),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.PostN(4, 1, 64)
			s.Limit(3)
			s.Send(q, 8)
			s.Send(q, 8)
			s.Events()
			s.Poll()
			s.Send(q, 8)
			s.Events()
		},
	},
	{
		Name: "limit-rechecked-at-last-packet", Rule: "LIMIT-ONCE", Subtle: true,
		Description: "the limit is checked when the first packet of a message fetches the WQE and again when the last packet completes it, against a copy of the armed limit taken at the first packet, so a message delivered in several packets raises the event twice for one arming: the event fires at most once per arming",
		hooks: func() *hooks {
			again := map[int]bool{}
			return &hooks{
				event: func(s *srq, e drivers.Event) []drivers.Event {
					if e.Type == drivers.EventSRQLimitReached {
						for _, q := range s.qps {
							if !q.gone && q.filling != nil {
								again[q.idx] = true
							}
						}
					}
					return []drivers.Event{e}
				},
				completion: func(s *srq, f fetch, c drivers.Completion) []drivers.Completion {
					if f.q != nil && f.msg != nil && again[f.q.idx] {
						delete(again, f.q.idx)
						s.ev = append(s.ev, drivers.Event{Type: drivers.EventSRQLimitReached, QP: -1})
					}
					return []drivers.Completion{c}
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.PostN(3, 1, 64)
			s.Limit(3)
			s.First(q, 8)
			s.Rest(q)
			s.Poll()
			s.Events()
		},
	},
	{
		Name: "fired-limit-shows-after-resize", Rule: "LIMIT-AFTER-FIRE", Subtle: true,
		Description: "a resize moves the SRQ to a new context whose limit field the event path does not clear, so on an SRQ that was resized before it was armed, query still reads the limit after the event has fired: after the limit event srq_limit reads 0",
		hooks: func() *hooks {
			var last, stale uint32
			return &hooks{
				limit: func(s *srq, l uint32) int {
					e := s.innerLimit(l)
					if e == 0 {
						last, stale = l, 0
					}
					return e
				},
				event: func(s *srq, e drivers.Event) []drivers.Event {
					if e.Type == drivers.EventSRQLimitReached && s.resizes > 0 {
						stale = last
					}
					return []drivers.Event{e}
				},
				query: editQuery(func(_ *srq, a *drivers.SRQAttr) {
					if a.SRQLimit == 0 && stale != 0 {
						a.SRQLimit = stale
					}
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.Resize(6)
			s.PostN(3, 1, 64)
			s.Limit(3)
			s.Send(q, 8)
			s.Events()
			s.Query()
		},
	},

	// Resize.
	{
		Name: "ex-srq-resize-enosys", Rule: "RESIZE-OPTIONAL", Subtle: true,
		Description: "an SRQ made by ibv_create_srq_ex is a verbs-extension object whose modify has no IBV_SRQ_MAX_WR handler, so resizing it fails with ENOSYS although the device advertises IBV_DEVICE_SRQ_RESIZE: resize works where the device advertises it",
		hooks: func() *hooks {
			h, ex := sixthExTracker()
			h.resize = func(s *srq, n uint32) int {
				if *ex {
					return eNOSYS
				}
				return s.innerResize(n)
			}
			return h
		},
		Witness: func(s *Script) {
			s.Info()
			sixthCreateEx(s, 8, 1)
			s.Resize(6)
			s.Query()
		},
	},
	{
		Name: "resize-zero-ebusy-with-qp", Rule: "RESIZE-BOUNDS", Subtle: true,
		Description: "a resize to max_wr 0 is taken for a request to free the ring and refused with EBUSY while a QP is attached, before the bounds are checked: a resize to 0 must fail with EINVAL",
		hooks: func() *hooks {
			return &hooks{resize: func(s *srq, n uint32) int {
				if n == 0 {
					for _, q := range s.qps {
						if !q.gone {
							return eBUSY
						}
					}
				}
				return s.innerResize(n)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Resize(0)
			s.QP(drivers.RC)
			s.Resize(0)
		},
	},
	{
		Name: "shrink-check-misses-last-list", Rule: "RESIZE-BELOW-COUNT", Subtle: true,
		Description: "the count a shrink is checked against is the driver's software counter, which adds a post's WRs only at the next post or fetch, so right after a post a resize below the outstanding count is accepted (the ring keeps them all and query reports the smaller max_wr): it must fail with EINVAL",
		hooks: func() *hooks {
			last := 0
			var told uint32
			return &hooks{
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					before := s.outstanding()
					var e, bad int
					if told != 0 {
						k := firstWR(wrs, func(i int, _ drivers.RecvWR) bool { return s.outstanding()+i >= int(told) })
						e, bad = postUntil(s, wrs, k, eNOMEM)
					} else {
						e, bad = s.innerPost(wrs)
					}
					last = s.outstanding() - before
					return e, bad
				},
				completion: func(_ *srq, _ fetch, c drivers.Completion) []drivers.Completion {
					last = 0
					return []drivers.Completion{c}
				},
				resize: func(s *srq, n uint32) int {
					out := s.outstanding()
					if n > 0 && n <= emuInfo.MaxSRQWR && int(n) < out && int(n) >= out-last {
						if e := s.innerResize(uint32(out)); e != 0 {
							return e
						}
						s.maxWR, told = n, n
						return 0
					}
					e := s.innerResize(n)
					if e == 0 {
						told = 0
					}
					return e
				},
				query: editQuery(func(_ *srq, a *drivers.SRQAttr) {
					if told != 0 {
						a.MaxWR = told
					}
				}),
			}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 0)
			s.Post(WR(1, 64), WR(2, 64), WR(3, 64), WR(4, 64))
			s.Resize(2)
			s.Query()
		},
	},
	{
		Name: "below-limit-shrink-checked-only-when-empty", Rule: "RESIZE-BELOW-LIMIT", Subtle: true,
		Description: "the armed limit is compared with the new max_wr only on the path that reallocates an empty ring, not on the path that copies outstanding WRs, so a resize below the armed limit is refused on an empty SRQ and accepted on one holding WRs: the profile's one answer (accepted, or refused) must hold either way",
		hooks: func() *hooks {
			return &hooks{resize: func(s *srq, n uint32) int {
				if s.armed != 0 && n < s.armed && s.outstanding() == 0 {
					return eINVAL
				}
				return s.innerResize(n)
			}}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 0)
			s.Limit(4)
			s.Resize(3)
			s.PostN(1, 1, 64)
			s.Resize(3)
			s.Query()
		},
	},

	// QP state.
	{
		Name: "sqd-refused-mid-message", Rule: "QP-TRANSITIONS", Subtle: true,
		Description: "a modify to SQD while the responder is in the middle of a message returns EINVAL instead of draining, so the legal RTS to SQD transition is refused while a message is half-delivered: ibv_modify_qp accepts the legal transitions",
		hooks: func() *hooks {
			return &hooks{modify: func(q *qp, st drivers.QPState) int {
				if st == drivers.SQD && q.filling != nil {
					return eINVAL
				}
				return q.innerModify(st)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.First(q, 8)
			s.Modify(q, drivers.SQD)
			s.Rest(q)
			s.Poll()
		},
	},
	{
		Name: "ud-sqd-drops-datagrams", Rule: "QP-FETCH-STATES", Subtle: true,
		Description: "the UD receive path treats a QP in SQD as stopped and drops incoming datagrams without fetching, so a UD QP in SQD takes nothing: a QP in SQD takes a WR when a consuming message arrives",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				if q.typ == drivers.UD && q.state == drivers.SQD && consumes(msg) {
					return drivers.PeerOK, nil
				}
				return q.innerDeliver(ctx, msg)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.UD)
			s.PostN(1, 1, 128)
			s.Modify(q, drivers.SQD)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "init-write-imm-replayed-at-rtr", Rule: "QP-BEFORE-RTR", Subtle: true,
		Description: "an RDMA Write with Immediate reaching an RC QP in INIT is acknowledged and parked on the QP's pending-immediate list, which the move to RTR replays into the SRQ, so it is buffered and completed at RTR: the documented profile drops messages arriving before RTR",
		hooks: func() *hooks {
			parked := map[int][]drivers.Message{}
			return &hooks{
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					if q.typ == drivers.RC && q.state == drivers.Init && msg.Opcode == drivers.WriteImm {
						parked[q.idx] = append(parked[q.idx], msg)
						return drivers.PeerOK, nil
					}
					return q.innerDeliver(ctx, msg)
				},
				modify: func(q *qp, st drivers.QPState) int {
					e := q.innerModify(st)
					if e != 0 {
						return e
					}
					switch st {
					case drivers.RTR:
						msgs := parked[q.idx]
						delete(parked, q.idx)
						for _, m := range msgs {
							q.innerDeliver(context.Background(), m)
						}
					case drivers.Reset, drivers.Err:
						delete(parked, q.idx)
					}
					return e
				},
			}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 0)
			q := s.QP(drivers.RC)
			s.Modify(q, drivers.Init)
			s.PostN(2, 1, 64)
			s.Deliver(q, drivers.Message{Opcode: drivers.WriteImm, Len: 16, Imm: 7})
			s.Modify(q, drivers.RTR)
			s.Modify(q, drivers.RTS)
			s.Poll()
		},
	},
	{
		Name: "last-wqe-dropped-behind-limit-event", Rule: "QP-LAST-WQE", Subtle: true,
		Description: "the SRQ's async event slot holds one event, and a LAST_WQE_REACHED raised while an SRQ_LIMIT_REACHED is still unread is dropped, so a QP entering ERR after the limit fired gets no event: an SRQ-attached QP entering ERR raises IBV_EVENT_QP_LAST_WQE_REACHED once",
		hooks: func() *hooks {
			return &hooks{event: dropEvents(func(s *srq, e drivers.Event) bool {
				if e.Type != drivers.EventQPLastWQEReached {
					return false
				}
				for _, p := range s.ev {
					if p.Type == drivers.EventSRQLimitReached {
						return true
					}
				}
				return false
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.PostN(2, 1, 64)
			s.Limit(2)
			s.Send(q, 8)
			s.Modify(q, drivers.Err)
			s.Events()
		},
	},
	{
		Name: "fatal-event-on-srq-error-rnr", Rule: "QP-ERROR-EVENT", Subtle: true,
		Description: "a Send meeting an SRQ in error is answered receiver-not-ready and also reported to the RC QP as IBV_EVENT_QP_FATAL, though no error completion moved the QP to ERR: an affiliated QP error event comes only for an RC QP an error completion moved to ERR",
		hooks: func() *hooks {
			told := map[int]bool{}
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				ps, err := q.innerDeliver(ctx, msg)
				if err == nil && q.typ == drivers.RC && q.s.errored && consumes(msg) && q.fetches() && !told[q.idx] {
					told[q.idx] = true
					q.s.ev = append(q.s.ev, drivers.Event{Type: drivers.EventQPFatal, QP: q.idx})
				}
				return ps, err
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.InjectSRQError()
			s.Send(q, 8)
			s.Events()
		},
	},
	{
		Name: "flush-lost-on-second-qp", Rule: "QP-FLUSH-INPROGRESS", Subtle: true,
		Description: "the ERR path finds the WQE in progress through the SRQ's first attached QP only, so a WQE that a later QP was filling when it entered ERR gets no WR_FLUSH_ERR completion: under the documented profile it must complete with WR_FLUSH_ERR",
		hooks: func() *hooks {
			return &hooks{completion: func(_ *srq, f fetch, c drivers.Completion) []drivers.Completion {
				if c.Status == drivers.WCWRFlushErr && f.q != nil && f.q.idx > 0 {
					return nil
				}
				return []drivers.Completion{c}
			}}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 0)
			s.QP(drivers.RC)
			q := s.QP(drivers.RC)
			s.Up(q)
			s.PostN(2, 1, 64)
			s.First(q, 8)
			s.Modify(q, drivers.Err)
			s.Poll()
			s.Events()
		},
	},

	// SRQ error.
	{
		Name: "srq-err-event-lost-with-cqes-pending", Rule: "SRQ-ERR-EVENT", Subtle: true,
		Description: "when the SRQ enters its error state while the CQ holds unpolled completions, the driver reports the error through the CQ's error path only and raises no IBV_EVENT_SRQ_ERR: an SRQ entering its error state raises the event",
		hooks: func() *hooks {
			return &hooks{event: dropEvents(func(s *srq, e drivers.Event) bool {
				return e.Type == drivers.EventSRQErr && len(s.cq) > 0
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(2, 1, 64)
			s.Send(q, 8)
			s.InjectSRQError()
			s.Events()
			s.Poll()
		},
	},

	// Fetching and completions.
	{
		Name: "write-imm-pops-tail", Rule: "FETCH-FIFO", Subtle: true,
		Description: "the RDMA Write with Immediate path shares the buffer-less fast path, which pops the WQE at the producer end, so a Write with Immediate takes the newest WR instead of the head and completions come out of posting order: WRs are fetched from the head",
		hooks: func() *hooks {
			swap := map[uint64]uint64{}
			return &hooks{
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					if n := len(q.s.fifo); msg.Opcode == drivers.WriteImm && q.fetches() && !q.s.errored && n >= 2 && len(swap) == 0 {
						if h, t := q.s.fifo[0].ID, q.s.fifo[n-1].ID; h != t {
							swap[h], swap[t] = t, h
						}
					}
					return q.innerDeliver(ctx, msg)
				},
				completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
					if to, ok := swap[c.WRID]; ok && f.found {
						delete(swap, c.WRID)
						c.WRID = to
					}
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.PostN(3, 1, 64)
			s.Deliver(q, drivers.Message{Opcode: drivers.WriteImm, Len: 16, Imm: 9})
			s.Send(q, 8)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "atomic-consumes-after-recycle", Rule: "FETCH-OPCODES", Subtle: true,
		Description: "when an RC QP that reached RTS is moved to RESET and brought up again, its responder's opcode table is rebuilt with the atomic entries pointing at the Send handler, so a Fetch and Add or Compare and Swap consumes a WR and completes as a receive of 8 bytes: atomics do not consume WRs",
		hooks: func() *hooks {
			recycled := map[int]bool{}
			return &hooks{
				modify: func(q *qp, st drivers.QPState) int {
					up := q.state == drivers.RTS || q.been(drivers.RTS)
					e := q.innerModify(st)
					if e == 0 && st == drivers.Reset && up {
						recycled[q.idx] = true
					}
					return e
				},
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					if recycled[q.idx] && (msg.Opcode == drivers.FetchAdd || msg.Opcode == drivers.CmpSwap) && q.fetches() {
						return q.innerDeliver(ctx, drivers.Message{Opcode: drivers.Send, Len: 8, Pattern: msg.Pattern})
					}
					return q.innerDeliver(ctx, msg)
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.Modify(q, drivers.Reset)
			s.Up(q)
			s.PostN(2, 1, 64)
			s.Deliver(q, drivers.Message{Opcode: drivers.FetchAdd, Len: 8})
			s.Poll()
		},
	},
	{
		Name: "ud-bytelen-includes-pad", Rule: "RECV-COMPLETION", Subtle: true,
		Description: "on UD the receive completion's byte_len is taken from the packet's payload length with the pad bytes of the last packet still in it, so a datagram whose length is not a multiple of 4 completes with byte_len rounded up: it must complete with the message length (GRH area included)",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
				if f.q != nil && f.q.typ == drivers.UD && c.Status == drivers.WCSuccess && c.Opcode == drivers.WCRecv {
					c.ByteLen = (c.ByteLen + 3) &^ 3
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.UD)
			s.PostN(2, 1, 128)
			s.Send(q, 12)
			s.Send(q, 10)
			s.Poll()
		},
	},
	{
		Name: "numsge0-send-imm-drops-imm", Rule: "RECV-IMM", Subtle: true,
		Description: "the completion path for a WR with num_sge 0 takes the zero-length shortcut, which writes the completion before the immediate is copied from the header, so an empty Send with Immediate into such a WR completes without IBV_WC_WITH_IMM: a message with immediate data completes with the flag and the sender's immediate",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
				if f.found && len(f.w.SGEs) == 0 && f.msg != nil && f.msg.Opcode == drivers.SendImm && c.Status == drivers.WCSuccess {
					c.HasImm, c.Imm = false, 0
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Post(WR(1, 64))
			s.Post(drivers.RecvWR{ID: 2, NumSGE: 0})
			s.Deliver(q, drivers.Message{Opcode: drivers.SendImm, Len: 0, Imm: 0x1234})
			s.Deliver(q, drivers.Message{Opcode: drivers.SendImm, Len: 0, Imm: 0x5678})
			s.Poll()
		},
	},
	{
		Name: "write-imm-bytelen-minus-imm-header", Rule: "RECV-WRITE-IMM", Subtle: true,
		Description: "the RDMA Write with Immediate completion takes its byte_len from the payload length less the 4-byte immediate header, as the Send with Immediate path does for its own header, so a write of n bytes completes with byte_len n-4: it completes with the write's length",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
				if f.msg != nil && f.msg.Opcode == drivers.WriteImm && c.Status == drivers.WCSuccess && c.Opcode == drivers.WCRecvRDMAWithImm && c.ByteLen >= 4 {
					c.ByteLen -= 4
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.Deliver(q, drivers.Message{Opcode: drivers.WriteImm, Len: 100, Imm: 5})
			s.Poll()
		},
	},
	{
		Name: "exact-fit-refused-across-sges", Rule: "RECV-FIT", Subtle: true,
		Description: "the multi-SGE scatter loop checks that bytes remain after each SGE with a strict compare, so a message exactly as long as a WR of several SGEs is taken for too long and completes with LOC_LEN_ERR: a message fits when its length is at most the sum of the SGE lengths",
		hooks: func() *hooks {
			return &hooks{deliver: refuseFit(func(q *qp, w wr, msg drivers.Message) bool {
				return len(w.SGEs) > 1 && q.need(msg) == w.size()
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 2, drivers.RC)
			s.Post(WR(1, 16, 16))
			s.Send(q, 32)
			s.Poll()
		},
	},
	{
		Name: "zero-length-sge-dropped-in-lists", Rule: "SGE-LEN0", Subtle: true,
		Description: "the list path compacts each WR's scatter list and drops SGEs of length 0 as empty, so a WR posted in a list of several with an SGE of length 0 holds nothing there and a message it should hold completes with LOC_LEN_ERR: an SGE of length 0 stands for 2^31 bytes",
		hooks: func() *hooks {
			dropped := map[uint64]bool{}
			return &hooks{
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					before := s.posted
					e, bad := s.innerPost(wrs)
					if len(wrs) > 1 {
						for _, w := range wrs[:s.posted-before] {
							for _, g := range shadow(w).SGEs {
								if g.Length == 0 {
									dropped[w.ID] = true
								}
							}
						}
					}
					return e, bad
				},
				deliver: refuseFit(func(q *qp, w wr, msg drivers.Message) bool {
					if !dropped[w.ID] {
						return false
					}
					var n uint64
					for _, g := range w.SGEs {
						n += uint64(g.Length)
					}
					return q.need(msg) > n
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Post(WR(1, 0))
			s.Send(q, 100)
			s.Post(WR(2, 0), WR(3, 0))
			s.Send(q, 100)
			s.Poll()
		},
	},
	{
		Name: "ud-small-wr-skips-grh-reserve", Rule: "UD-GRH", Subtle: true,
		Description: "for a WR smaller than the 40-byte GRH area the UD fit check takes the WR for one whose owner does not want the GRH and skips the reservation, so a datagram no longer than such a WR completes successfully (byte_len counting the GRH) though it has not 40 bytes to spare: on UD a message fits only with 40 bytes to spare",
		hooks: func() *hooks {
			var fake *drivers.Message
			return &hooks{
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					if w, ok := q.s.head(); ok && q.typ == drivers.UD && sends(msg) && q.fetches() && w.size() < grhBytes && uint64(msg.Len) <= w.size() {
						fake = &msg
						defer func() { fake = nil }()
					}
					return q.innerDeliver(ctx, msg)
				},
				completion: func(_ *srq, f fetch, c drivers.Completion) []drivers.Completion {
					if fake != nil && f.q != nil && c.Status != drivers.WCSuccess {
						c = sixthReceived(f.q, c.WRID, *fake)
					}
					return []drivers.Completion{c}
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.UD)
			s.PostN(1, 1, 16)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "send-imm-oversize-keeps-rc-qp", Rule: "RECV-TOO-LARGE", Subtle: true,
		Description: "a Send with Immediate longer than its WR is completed with LOC_LEN_ERR by the immediate path, which returns before the transition to the error state, so the RC QP stays in RTS and goes on taking WRs: on RC the QP's fate is ERR",
		hooks: func() *hooks {
			oversize := false
			return &hooks{
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					w, ok := q.s.head()
					if !ok || q.typ != drivers.RC || msg.Opcode != drivers.SendImm || !q.fetches() || w.size() >= uint64(msg.Len) {
						return q.innerDeliver(ctx, msg)
					}
					oversize = true
					_, err := q.innerDeliver(ctx, drivers.Message{Opcode: drivers.WriteImm, Imm: msg.Imm})
					oversize = false
					return drivers.PeerError, err
				},
				completion: func(_ *srq, _ fetch, c drivers.Completion) []drivers.Completion {
					if oversize {
						c = drivers.Completion{WRID: c.WRID, Status: drivers.WCLocLenErr, QP: c.QP}
					}
					return []drivers.Completion{c}
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(2, 1, 16)
			s.Deliver(q, drivers.Message{Opcode: drivers.SendImm, Len: 64, Imm: 1})
			s.Send(q, 8)
			s.Poll()
			s.Events()
		},
	},
	{
		Name: "key-validity-snapshotted-at-post", Rule: "RECV-BAD-KEY", Subtle: true,
		Description: "the driver resolves each SGE's lkey to a DMA address when the WR is posted and never looks at the key again, so a region deregistered after the WR was posted is still written and the receive completes successfully: filling a WR through an invalidated key completes with an error status",
		hooks: func() *hooks {
			resolved := map[uint64]bool{}
			var fake *drivers.Message
			return &hooks{
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					before := s.posted
					e, bad := s.innerPost(wrs)
					for _, w := range wrs[:s.posted-before] {
						ok := true
						for _, g := range shadow(w).SGEs {
							if g.Key < 0 || s.invalid[g.Key] {
								ok = false
							}
						}
						resolved[w.ID] = ok
					}
					return e, bad
				},
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					w, ok := q.s.head()
					if !ok || !sends(msg) || !q.fetches() || !resolved[w.ID] || q.need(msg) > w.size() {
						return q.innerDeliver(ctx, msg)
					}
					stale := false
					for _, g := range w.SGEs {
						stale = stale || q.s.invalid[g.Key]
					}
					if !stale {
						return q.innerDeliver(ctx, msg)
					}
					fake = &msg
					defer func() { fake = nil }()
					return q.innerDeliver(ctx, drivers.Message{Opcode: drivers.WriteImm, Len: msg.Len, Imm: msg.Imm})
				},
				completion: func(_ *srq, f fetch, c drivers.Completion) []drivers.Completion {
					if fake != nil && f.q != nil && c.Status == drivers.WCSuccess {
						c = sixthReceived(f.q, c.WRID, *fake)
					}
					return []drivers.Completion{c}
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Post(sixthKeyedWR(1, 1, 64))
			s.Invalidate(1)
			s.Send(q, 8)
			s.Poll()
			s.Events()
		},
	},
	{
		Name: "empty-srq-send-imm-fatal-nak", Rule: "RECV-RNR", Subtle: true,
		Description: "the RC responder parses the immediate header before it looks for a WQE, and when the SRQ is empty that path answers with a fatal NAK and moves the QP to ERR instead of receiver-not-ready: a consuming message meeting an empty SRQ on RC gets RNR and the QP stays up",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				if q.typ == drivers.RC && msg.Opcode == drivers.SendImm && q.fetches() && !q.s.errored && q.s.outstanding() == 0 {
					q.innerModify(drivers.Err)
					return drivers.PeerError, nil
				}
				return q.innerDeliver(ctx, msg)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Send(q, 8)
			s.Deliver(q, drivers.Message{Opcode: drivers.SendImm, Len: 8, Imm: 3})
			s.PostN(1, 1, 64)
			s.Send(q, 8)
			s.Poll()
			s.Events()
		},
	},
	{
		Name: "recv-caps-checked-after-qp-destroy", Rule: "QP-SRQ-CAPS", Subtle: true,
		Description: "destroying a QP clears the 'has SRQ' bit in the QP creation template the library caches for the SRQ, so a QP created after an earlier one was destroyed has its max_recv_wr and max_recv_sge checked against the device and refused with EINVAL: with an SRQ they are ignored",
		hooks: func() *hooks {
			return &hooks{createQP: func(s *srq, _ drivers.QPType, c drivers.RecvCaps) int {
				if c == drivers.RecvCapsZero {
					return 0
				}
				for _, q := range s.qps {
					if q.gone {
						return eINVAL
					}
				}
				return 0
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.QPCaps(drivers.RC, drivers.RecvCapsAboveWR)
			s.DestroyQP(0)
			s.QPCaps(drivers.RC, drivers.RecvCapsAboveWR)
		},
	},
}

// sixthExTracker returns hooks whose create and made record whether the
// SRQ was made by ibv_create_srq_ex, and the flag they set. CreateOther
// runs create but not made, so a second SRQ does not change the flag.
func sixthExTracker() (*hooks, *bool) {
	ex, pending := new(bool), false
	return &hooks{
		create: func(a drivers.SRQAttr, v drivers.CreateVariant) (drivers.SRQAttr, int) {
			pending = v != drivers.CreatePlain
			return a, 0
		},
		made: func(*srq) { *ex = pending },
	}, ex
}

// sixthRefuseAt posts wrs[:k] and, when that succeeds, fails WR k: with
// ENOMEM when the queue is full (the emulator checks the room first), else
// with errno. k past the list posts it all.
func sixthRefuseAt(s *srq, wrs []drivers.RecvWR, k, errno int) (int, int) {
	if k >= len(wrs) {
		return s.innerPost(wrs)
	}
	if e, bad := s.innerPost(wrs[:k]); e != 0 {
		return e, bad
	}
	if s.outstanding() >= int(s.maxWR) {
		return eNOMEM, k
	}
	return errno, k
}

// sixthKeyedWR is a WR of one SGE of length bytes in region key.
func sixthKeyedWR(id uint64, key int, length uint32) drivers.RecvWR {
	return drivers.RecvWR{ID: id, NumSGE: 1, SGEs: []drivers.SGE{{Length: length, Key: key}}}
}

// sixthCreateEx creates the script's SRQ with ibv_create_srq_ex (basic,
// no CQ) and records it as Create does.
func sixthCreateEx(s *Script, maxWR, maxSGE uint32) {
	srq, got, err := s.dev.CreateSRQEx(s.ctx, drivers.SRQAttr{MaxWR: maxWR, MaxSGE: maxSGE}, Keys, drivers.CreateEx)
	s.srq = srq
	s.say("create_srq_ex(%d, %d): %+v %v", maxWR, maxSGE, got, err)
}

// sixthPow2 returns the smallest power of two >= x (x itself for 0).
func sixthPow2(x uint32) uint32 {
	if x == 0 {
		return 0
	}
	p := uint32(1)
	for p < x {
		p <<= 1
	}
	return p
}

// sixthReceived is the successful completion of msg on q into WR id as
// the emulator writes a Send's: the GRH area counted on UD, the immediate
// of a Send with Immediate, the first byte of a non-empty payload.
func sixthReceived(q *qp, id uint64, msg drivers.Message) drivers.Completion {
	c := drivers.Completion{WRID: id, Status: drivers.WCSuccess, Opcode: drivers.WCRecv, ByteLen: uint32(q.need(msg)), QP: q.idx}
	if msg.Opcode == drivers.SendImm {
		c.HasImm, c.Imm = true, msg.Imm
	}
	if msg.Len > 0 {
		c.Pattern, c.HasPattern = msg.Pattern, true
	}
	return c
}
