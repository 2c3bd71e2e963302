package faulty2

import (
	"context"

	"github.com/srqconform/srqconform/drivers"
)

// fifthBugs are the fifth batch: held-out bugs written from the rule
// statements of model/rules.go and the documented profile alone, one a
// rule over 51 rules, most of them showing only after a particular
// history (a ring that wrapped, a resize, a refused modify, a QP an error
// completion moved to ERR, a half-delivered message), to measure blame on
// bugs nobody tuned the diagnosis to. Fifth returns them; All does not.
var fifthBugs = []Bug{
	// Posting.
	{
		Name: "list-einval-publishes-failing-wr", Rule: "POST-ORDER", Subtle: true,
		Description: "when a WR after the first of a list has too many SGEs, the list path's error exit rings the doorbell with the count of WQEs started, which includes the failing WR's (written with its first max_sge SGEs), so the WR bad_wr names is posted all the same: it and those after it must not be posted",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				k := firstWR(wrs, func(_ int, w drivers.RecvWR) bool { return w.NumSGE > int(s.maxSGE) })
				full := firstWR(wrs, func(i int, _ drivers.RecvWR) bool { return s.outstanding()+i >= int(s.maxWR) })
				if k == 0 || k >= len(wrs) || full <= k {
					return s.innerPost(wrs)
				}
				if e, bad := s.innerPost(wrs[:k]); e != 0 {
					return e, bad
				}
				w := wrs[k]
				n := min(int(s.maxSGE), len(w.SGEs))
				s.innerPost([]drivers.RecvWR{{ID: w.ID, NumSGE: n, SGEs: append([]drivers.SGE(nil), w.SGEs[:n]...)}})
				return eINVAL, k
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Post(WR(1, 64), WR(2, 64, 64))
			s.Send(q, 8)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "badwr-null-when-last-wr-fails", Rule: "POST-BADWR", Subtle: true,
		Description: "the list loop advances its cursor to wr->next before the checks and sets bad_wr from the cursor, so when the WR that fails is the last of a list of several, bad_wr is left NULL: it must name the first WR that failed",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				e, bad := s.innerPost(wrs)
				if e != 0 && len(wrs) > 1 && bad == len(wrs)-1 {
					return e, -1
				}
				return e, bad
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Post(WR(1, 8), WR(2, 8, 8))
		},
	},
	{
		Name: "pow2-full-ring-reads-empty", Rule: "POST-FULL", Subtle: true,
		Description: "the outstanding count is (prod - cons) masked by the ring's index mask, and on an SRQ whose max_wr is a power of two the ring has exactly max_wr slots, so with max_wr WRs outstanding the count reads 0: the next post returns 0 and its WQE overwrites the oldest WR, where a WR posted while max_wr are outstanding must fail with ENOMEM",
		hooks: func() *hooks {
			over := 0
			swap := map[uint64]uint64{}
			return &hooks{
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					if s.maxWR == 0 || s.maxWR&(s.maxWR-1) != 0 {
						return s.innerPost(wrs)
					}
					for i, w := range wrs {
						if s.outstanding() < int(s.maxWR) || len(s.fifo) == 0 {
							over = 0
							if e, _ := s.innerPost(wrs[i : i+1]); e != 0 {
								return e, i
							}
							continue
						}
						if w.NumSGE < 0 || w.NumSGE > int(s.maxSGE) {
							return eINVAL, i
						}
						victim := s.fifo[over%len(s.fifo)]
						over++
						swap[victim.ID] = w.ID
					}
					return 0, -1
				},
				completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
					if id, ok := swap[c.WRID]; ok && f.found {
						delete(swap, c.WRID)
						c.WRID = id
					}
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(5, 1, 64)
			for range 4 {
				s.Send(q, 8)
			}
			s.Poll()
		},
	},
	{
		Name: "empty-wr-refused-with-ud-qp", Rule: "POST-SGE", Subtle: true,
		Description: "once a UD QP is attached, the post path insists that every WR can hold the 40-byte GRH area and refuses a WR with num_sge 0 with EINVAL: num_sge 0 is a valid WR, whatever QPs are attached",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				ud := false
				for _, q := range s.qps {
					if !q.gone && q.typ == drivers.UD {
						ud = true
					}
				}
				if !ud {
					return s.innerPost(wrs)
				}
				k := firstWR(wrs, func(_ int, w drivers.RecvWR) bool { return w.NumSGE == 0 })
				full := firstWR(wrs, func(i int, _ drivers.RecvWR) bool { return s.outstanding()+i >= int(s.maxWR) })
				if full <= k {
					return s.innerPost(wrs)
				}
				return postUntil(s, wrs, k, eINVAL)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Post(drivers.RecvWR{ID: 1, NumSGE: 0})
			s.QP(drivers.UD)
			s.Post(drivers.RecvWR{ID: 2, NumSGE: 0})
		},
	},
	{
		Name: "post-returns-minus-one-after-resize", Rule: "POST-RETURN", Subtle: true,
		Description: "a resize switches the SRQ to the kernel-command post path, which returns -1 with errno set, so after a successful resize a failing post returns -1 instead of the positive errno value",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				e, bad := s.innerPost(wrs)
				if e != 0 && s.resizes > 0 {
					return -1, bad
				}
				return e, bad
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Resize(2)
			s.PostN(3, 1, 8)
		},
	},
	{
		Name: "single-wr-checks-sge-first", Rule: "POST-CHECK-ORDER", Subtle: true,
		Description: "a post of one WR goes down a fast path that checks num_sge before the ring's room, while a list checks the room first, so a WR with too many SGEs meeting a full queue fails with EINVAL alone and with ENOMEM in a list: the errno must be that of the one check the profile runs first",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				if len(wrs) == 1 && s.outstanding() >= int(s.maxWR) && (wrs[0].NumSGE > int(s.maxSGE) || wrs[0].NumSGE < 0) {
					return eINVAL, 0
				}
				return s.innerPost(wrs)
			}}
		},
		Witness: func(s *Script) {
			s.Create(2, 1, 0)
			s.PostN(2, 1, 8)
			s.Post(WR(3, 8, 8))
			s.Post(WR(4, 8, 8), WR(5, 8))
		},
	},
	{
		Name: "post-refused-after-last-qp-destroyed", Rule: "POST-ANY-STATE", Subtle: true,
		Description: "the SRQ's doorbell page is reference-counted by the attached QPs and unmapped when the last of them is destroyed, so once every QP the SRQ had is destroyed a post fails with EINVAL: posting works with no QP attached",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				if len(s.qps) == 0 || len(wrs) == 0 {
					return s.innerPost(wrs)
				}
				for _, q := range s.qps {
					if !q.gone {
						return s.innerPost(wrs)
					}
				}
				return eINVAL, 0
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.DestroyQP(q)
			s.PostN(1, 1, 64)
		},
	},
	{
		Name: "key-check-turned-on-by-prot-error", Rule: "POST-NO-KEY-CHECK", Subtle: true,
		Description: "after the first receive that completes with a local protection error, the driver turns on lkey validation in its post path to catch the application's mistake early, so from then on a post naming an invalidated key fails with EINVAL: a post does not check lkeys",
		hooks: func() *hooks {
			poisoned := false
			return &hooks{
				completion: editCompletion(func(_ *srq, _ fetch, c *drivers.Completion) {
					if c.Status == drivers.WCLocProtErr {
						poisoned = true
					}
				}),
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					if !poisoned {
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
					full := firstWR(wrs, func(i int, _ drivers.RecvWR) bool { return s.outstanding()+i >= int(s.maxWR) })
					if full <= k {
						return s.innerPost(wrs)
					}
					return postUntil(s, wrs, k, eINVAL)
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Post(drivers.RecvWR{ID: 1, NumSGE: 1, SGEs: []drivers.SGE{{Length: 64, Key: 1}}})
			s.Invalidate(1)
			s.Send(q, 8)
			s.Post(drivers.RecvWR{ID: 2, NumSGE: 1, SGEs: []drivers.SGE{{Length: 64, Key: 1}}})
			s.Poll()
		},
	},
	{
		Name: "single-sge-lkey-read-at-fetch", Rule: "POST-COPY", Subtle: true,
		Description: "for a WR of one SGE the driver copies address and length into the WQE but keeps a pointer to the caller's SGE and translates its lkey when a message fetches the WR, so a caller that reuses its SGE for another region after the post changes where (and whether) the WR can be filled: the SRQ must keep its own copy",
		hooks: func() *hooks {
			refs := map[uint64]*drivers.SGE{}
			return &hooks{
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					e, bad := s.innerPost(wrs)
					n := len(wrs)
					if e != 0 {
						n = max(0, min(bad, len(wrs)))
					}
					for i := range wrs[:n] {
						if wrs[i].NumSGE == 1 && len(wrs[i].SGEs) >= 1 {
							refs[wrs[i].ID] = &wrs[i].SGEs[0]
						}
					}
					return e, bad
				},
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					s := q.s
					w, ok := s.head()
					if !ok || !sends(msg) || !q.fetches() || len(w.SGEs) != 1 || q.need(msg) > w.size() {
						return q.innerDeliver(ctx, msg)
					}
					p := refs[w.ID]
					if p == nil || p.Key == w.SGEs[0].Key || !s.invalid[p.Key] {
						return q.innerDeliver(ctx, msg)
					}
					return q.failDelivered(ctx, msg, drivers.WCLocProtErr)
				},
				completion: editCompletion(func(_ *srq, _ fetch, c *drivers.Completion) {
					delete(refs, c.WRID)
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			if !s.ready("post") {
				return
			}
			wrs := []drivers.RecvWR{WR(1, 64)}
			e, bad := s.srq.Post(wrs)
			s.say("post_srq_recv(1 WR): %d bad %d", e, bad)
			wrs[0].SGEs[0].Key = 1 // the caller reuses its SGE for another region
			s.Invalidate(1)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "post-recv-flushed-in-err", Rule: "POST-QP-RQ", Subtle: true,
		Description: "in ERR the QP's post_recv path completes every WR it is given with WR_FLUSH_ERR and returns 0 (the flush-on-post of a QP with a receive queue of its own), without first checking that the QP uses an SRQ: ibv_post_recv on an SRQ-attached QP must be refused, with bad_wr on the first WR",
		hooks: func() *hooks {
			return &hooks{postRecv: func(q *qp, w drivers.RecvWR) (int, int) {
				if q.state == drivers.Err && !q.gone {
					q.s.cq = append(q.s.cq, drivers.Completion{WRID: w.ID, Status: drivers.WCWRFlushErr, QP: q.idx})
					return 0, -1
				}
				return q.in.PostRecv(w)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostRecv(q, WR(1, 64))
			s.Modify(q, drivers.Err)
			s.PostRecv(q, WR(2, 64))
			s.Poll()
		},
	},

	// Create, query, modify, destroy.
	{
		Name: "pow2-request-ring-keeps-sentinel", Rule: "CREATE-ATTR",
		Description: "the ring is sized roundup_pow2(max_wr) with one slot kept empty to tell full from empty, so for a max_wr that is a power of two create writes back (and the SRQ holds) max_wr-1 WRs: max_wr written back must be at least the request",
		hooks: func() *hooks {
			less := func(n uint32) uint32 {
				if n > 1 && n&(n-1) == 0 {
					return n - 1
				}
				return n
			}
			return &hooks{
				written: func(req, got drivers.SRQAttr) drivers.SRQAttr {
					got.MaxWR = less(got.MaxWR)
					return got
				},
				resize: func(s *srq, n uint32) int {
					e := s.innerResize(n)
					if e == 0 {
						s.maxWR = less(n)
					}
					return e
				},
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					k := firstWR(wrs, func(i int, _ drivers.RecvWR) bool { return s.outstanding()+i >= int(s.maxWR) })
					return postUntil(s, wrs, k, eNOMEM)
				},
				limit: func(s *srq, l uint32) int {
					if l > s.maxWR {
						return eINVAL
					}
					return s.innerLimit(l)
				},
				query: editQuery(func(s *srq, a *drivers.SRQAttr) { a.MaxWR = s.maxWR }),
			}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.PostN(4, 1, 8)
		},
	},
	{
		Name: "create-ex-basic-one-sge", Rule: "CREATE-EX", Subtle: true,
		Description: "ibv_create_srq_ex reads max_sge from the wrong offset of the extended attributes (a field that is 0, raised to 1), so a BASIC SRQ made with comp_mask PD | TYPE writes back and reports the requested max_sge but holds WRs of one SGE, and a WR of two SGEs fails with EINVAL: it must make the same SRQ as ibv_create_srq",
		hooks: func() *hooks {
			var last drivers.CreateVariant
			one := false
			return &hooks{
				create: func(attr drivers.SRQAttr, v drivers.CreateVariant) (drivers.SRQAttr, int) {
					last = v
					if v == drivers.CreateEx && attr.MaxSGE > 1 {
						attr.MaxSGE = 1
					}
					return attr, 0
				},
				written: func(req, got drivers.SRQAttr) drivers.SRQAttr {
					if last == drivers.CreateEx && req.MaxSGE > 1 {
						got.MaxSGE, one = req.MaxSGE, true
					}
					return got
				},
				query: editQuery(func(s *srq, a *drivers.SRQAttr) {
					if one {
						a.MaxSGE = s.req.MaxSGE
					}
				}),
			}
		},
		Witness: func(s *Script) {
			s.createEx(4, 2, 0, drivers.CreateEx)
			q := s.QP(drivers.RC)
			s.Up(q)
			s.Query()
			s.Post(WR(1, 32, 32))
			s.Send(q, 48)
			s.Poll()
		},
	},
	{
		Name: "create-limit-armed-by-resize", Rule: "CREATE-LIMIT", Subtle: true,
		Description: "a resize writes the whole SRQ context from the driver's copy of the create attributes, srq_limit included, so on an SRQ whose limit was never modified the first resize arms the srq_limit given at create: a limit given at create must not arm the SRQ",
		hooks: func() *hooks {
			modified := false
			return &hooks{
				limit: func(s *srq, l uint32) int {
					e := s.innerLimit(l)
					if e == 0 {
						modified = true
					}
					return e
				},
				resize: func(s *srq, n uint32) int {
					e := s.innerResize(n)
					if e == 0 && !modified && s.req.SRQLimit != 0 && s.armed == 0 {
						if s.innerLimit(s.req.SRQLimit) == 0 {
							modified = true
						}
					}
					return e
				},
			}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 2)
			q := s.QP(drivers.RC)
			s.Up(q)
			s.PostN(3, 1, 64)
			s.Resize(16)
			s.Send(q, 8)
			s.Send(q, 8)
			s.Events()
		},
	},
	{
		Name: "query-zeroed-in-srq-error", Rule: "QUERY-ATTR", Subtle: true,
		Description: "the SRQ error handler frees the driver's copy of the SRQ context, and query then reports max_wr and max_sge as 0: they read as created or resized and change only on resize",
		hooks: func() *hooks {
			return &hooks{query: editQuery(func(s *srq, a *drivers.SRQAttr) {
				if s.errored {
					a.MaxWR, a.MaxSGE = 0, 0
				}
			})}
		},
		Witness: func(s *Script) {
			s.Create(8, 2, 0)
			s.Query()
			s.InjectSRQError()
			s.Query()
		},
	},
	{
		Name: "query-limit-raw-watermark", Rule: "QUERY-LIMIT", Subtle: true,
		Description: "the device stores the watermark as the last count that does not fire (srq_limit - 1) and query returns the raw register, so an SRQ armed at l reads l-1 (an SRQ armed at 1 reads as disarmed): query must return the armed limit",
		hooks: func() *hooks {
			return &hooks{query: editQuery(func(_ *srq, a *drivers.SRQAttr) {
				if a.SRQLimit > 0 {
					a.SRQLimit--
				}
			})}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 0)
			s.Limit(4)
			s.Query()
		},
	},
	{
		Name: "destroy-ignores-reset-qps", Rule: "DESTROY-BUSY", Subtle: true,
		Description: "the SRQ's use count is taken when an attached QP first moves to INIT, so while every attached QP is still in RESET ibv_destroy_srq succeeds (tearing the QPs' hold down with it): it must fail with EBUSY while any QP is attached",
		hooks: func() *hooks {
			return &hooks{destroy: func(s *srq) (int, error) {
				live, reset := 0, true
				for _, q := range s.qps {
					if !q.gone {
						live++
						if q.state != drivers.Reset {
							reset = false
						}
					}
				}
				if live > 0 && reset {
					for _, q := range s.qps {
						if !q.gone {
							if e, err := q.in.Destroy(); e == 0 && err == nil {
								q.gone = true
							}
						}
					}
				}
				return s.in.Destroy()
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.QP(drivers.RC)
			s.DestroySRQ()
			s.PostN(1, 1, 64)
		},
	},
	{
		Name: "refused-shrink-keeps-post-bound", Rule: "MODIFY-ONLY-MASKED", Subtle: true,
		Description: "resize stores the new max_wr in the post path's ring bound before it sends the command and does not restore it when the command fails, so after a shrink refused with EINVAL (below the outstanding count) posts fail with ENOMEM at the refused size while query still reads the old max_wr: a modify that fails must change nothing",
		hooks: func() *hooks {
			var bound uint32
			return &hooks{
				resize: func(s *srq, n uint32) int {
					e := s.innerResize(n)
					switch {
					case e == 0:
						bound = 0
					case n > 0 && n < s.maxWR:
						bound = n
					}
					return e
				},
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					if bound == 0 {
						return s.innerPost(wrs)
					}
					k := firstWR(wrs, func(i int, _ drivers.RecvWR) bool { return s.outstanding()+i >= int(bound) })
					return postUntil(s, wrs, k, eNOMEM)
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.PostN(4, 1, 64)
			s.Resize(2)
			s.Query()
			for range 3 {
				s.Send(q, 8)
			}
			s.PostN(2, 5, 64)
		},
	},

	// The limit.
	{
		Name: "arm-dropped-while-filling", Rule: "LIMIT-ARM", Subtle: true,
		Description: "the arm command needs the SRQ context's lock, which the responder holds while a QP is filling a WR with a multi-packet message; the driver then records the limit for query but drops the arm, so a limit set from disarmed during a half-delivered message never fires: a non-zero limit within bounds must arm",
		hooks: func() *hooks {
			var shown uint32
			return &hooks{
				limit: func(s *srq, l uint32) int {
					if l != 0 && l <= s.maxWR && s.armed == 0 && fifthFilling(s) {
						shown = l
						return 0
					}
					e := s.innerLimit(l)
					if e == 0 {
						shown = 0
					}
					return e
				},
				query: editQuery(func(_ *srq, a *drivers.SRQAttr) {
					if shown != 0 {
						a.SRQLimit = shown
					}
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.PostN(4, 1, 64)
			s.First(q, 48)
			s.Limit(3)
			s.Rest(q)
			s.Send(q, 8)
			s.Events()
		},
	},
	{
		Name: "disarm-undone-by-next-post", Rule: "LIMIT-DISARM", Subtle: true,
		Description: "the post path writes the driver's cached watermark, the last non-zero limit, into the doorbell record, so after a limit of 0 the next post arms the SRQ again (query still reads 0) and a limit event comes: a limit of 0 disarms until the SRQ is armed again",
		hooks: func() *hooks {
			var last uint32
			pending, ghost := false, false
			return &hooks{
				limit: func(s *srq, l uint32) int {
					e := s.innerLimit(l)
					if e == 0 {
						ghost = false
						if l != 0 {
							last, pending = l, false
						} else {
							pending = last != 0
						}
					}
					return e
				},
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					e, bad := s.innerPost(wrs)
					if pending && (e == 0 && len(wrs) > 0 || e != 0 && bad > 0) && s.armed == 0 {
						pending = false
						if s.in.ModifyLimit(last) == 0 {
							ghost = true
						}
					}
					return e, bad
				},
				event: onLimitEvent(func() { ghost = false }),
				query: editQuery(func(_ *srq, a *drivers.SRQAttr) {
					if ghost {
						a.SRQLimit = 0
					}
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.PostN(3, 1, 64)
			s.Limit(2)
			s.Limit(0)
			s.PostN(1, 4, 64)
			s.Query()
			for range 3 {
				s.Send(q, 8)
			}
			s.Events()
		},
	},
	{
		Name: "limit-bound-kept-after-shrink", Rule: "LIMIT-BOUND", Subtle: true,
		Description: "a resize down keeps the larger ring allocated and the limit is checked against the allocated ring's size, so after a shrink a limit above the new max_wr (but within the old) is accepted and armed: a limit above the bound must fail with EINVAL and change nothing",
		hooks: func() *hooks {
			var alloc, shown uint32
			return &hooks{
				made: func(s *srq) { alloc = s.maxWR },
				resize: func(s *srq, n uint32) int {
					e := s.innerResize(n)
					if e == 0 && n > alloc {
						alloc = n
					}
					return e
				},
				limit: func(s *srq, l uint32) int {
					if l > s.maxWR && l <= alloc {
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
			s.Create(16, 1, 0)
			s.Resize(4)
			s.Limit(8)
			s.Query()
		},
	},
	{
		Name: "limit-counts-wr-in-flight", Rule: "LIMIT-FIRE", Subtle: true,
		Description: "the watermark is compared with the WRs not yet completed, which counts a WR a QP is still filling with a multi-packet message, so the limit event for a fetch made by a message's first packet comes only when that message completes: the event is due at the fetch that leaves fewer WRs than the limit",
		hooks: func() *hooks {
			var armed uint32
			held := false
			inFlight := func(s *srq) int {
				n := s.outstanding()
				for _, q := range s.qps {
					if !q.gone && q.filling != nil {
						n++
					}
				}
				return n
			}
			return &hooks{
				limit: func(s *srq, l uint32) int {
					e := s.innerLimit(l)
					if e == 0 {
						armed, held = l, false
					}
					return e
				},
				event: func(s *srq, e drivers.Event) []drivers.Event {
					if e.Type == drivers.EventSRQLimitReached && armed != 0 && inFlight(s) >= int(armed) {
						held = true
						return nil
					}
					return []drivers.Event{e}
				},
				completion: func(s *srq, _ fetch, c drivers.Completion) []drivers.Completion {
					if held && inFlight(s) < int(armed) {
						held = false
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
			s.First(q, 48)
			s.Events()
			s.Rest(q)
			s.Events()
		},
	},
	{
		Name: "limit-refired-by-qp-flush", Rule: "LIMIT-ONCE", Subtle: true,
		Description: "firing clears the SRQ's armed bit but not its threshold register, and the flush that runs when an attached QP enters ERR calls the watermark check with that register, so each QP moved to ERR while fewer WRs than the old limit are outstanding raises another limit event: it fires at most once per arming",
		hooks: func() *hooks {
			var lastArmed, fired uint32
			return &hooks{
				limit: func(s *srq, l uint32) int {
					e := s.innerLimit(l)
					if e == 0 {
						lastArmed, fired = l, 0
					}
					return e
				},
				event: onLimitEvent(func() { fired = lastArmed }),
				modify: func(q *qp, st drivers.QPState) int {
					e := q.innerModify(st)
					s := q.s
					if e == 0 && st == drivers.Err && fired != 0 && s.armed == 0 && s.outstanding() < int(fired) {
						s.ev = append(s.ev, drivers.Event{Type: drivers.EventSRQLimitReached, QP: -1})
					}
					return e
				},
			}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 0)
			a := s.QP(drivers.RC)
			b := s.QP(drivers.RC)
			s.Up(a)
			s.Up(b)
			s.PostN(3, 1, 64)
			s.Limit(3)
			s.Send(a, 8)
			s.Events()
			s.Modify(b, drivers.Err)
			s.Events()
		},
	},
	{
		Name: "limit-cleared-when-event-read", Rule: "LIMIT-AFTER-FIRE", Subtle: true,
		Description: "the driver clears its srq_limit shadow in the async event handler, which runs when the application reads the event, so between the fetch that fires the limit and the reading of the event query still returns the fired limit: after the limit event srq_limit reads 0",
		hooks: func() *hooks {
			var lastArmed, fired uint32
			return &hooks{
				limit: func(s *srq, l uint32) int {
					e := s.innerLimit(l)
					if e == 0 {
						lastArmed = l
					}
					return e
				},
				event: onLimitEvent(func() { fired = lastArmed }),
				query: editQuery(func(s *srq, a *drivers.SRQAttr) {
					for _, e := range s.ev {
						if e.Type == drivers.EventSRQLimitReached && fired != 0 && a.SRQLimit == 0 {
							a.SRQLimit = fired
						}
					}
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.PostN(3, 1, 64)
			s.Limit(3)
			s.Send(q, 8)
			s.Query()
			s.Events()
			s.Query()
		},
	},

	// Resize.
	{
		Name: "resize-eopnotsupp-after-wrap", Rule: "RESIZE-OPTIONAL", Subtle: true,
		Description: "the resize path can only move a ring whose WQEs lie in one piece, and once the producer index has gone round the ring it returns EOPNOTSUPP, though the device advertises IBV_DEVICE_SRQ_RESIZE: where resize is advertised it must work",
		hooks: func() *hooks {
			return &hooks{resize: func(s *srq, n uint32) int {
				if s.wrapped() {
					return eOPNOTSUPP
				}
				return s.innerResize(n)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(2, 1, drivers.RC)
			s.PostN(2, 1, 64)
			s.Send(q, 8)
			s.Send(q, 8)
			s.PostN(1, 3, 64)
			s.Resize(4)
			s.Query()
		},
	},
	{
		Name: "resize-bound-checked-first-time-only", Rule: "RESIZE-BOUNDS", Subtle: true,
		Description: "the bound check on the new max_wr sits in the path that allocates the SRQ's resize context, which runs only on the first resize; later resizes clamp the request at max_srq_wr and return 0, where a resize above max_srq_wr must fail with EINVAL",
		hooks: func() *hooks {
			return &hooks{resize: func(s *srq, n uint32) int {
				if s.resizes > 0 && n > emuInfo.MaxSRQWR {
					return s.innerResize(emuInfo.MaxSRQWR)
				}
				return s.innerResize(n)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Resize(8)
			s.Resize(emuInfo.MaxSRQWR + 1)
			s.Query()
		},
	},
	{
		Name: "armed-shrink-checked-against-limit", Rule: "RESIZE-BELOW-COUNT", Subtle: true,
		Description: "on an armed SRQ the resize path compares the new max_wr with the armed limit instead of the outstanding count, so a shrink below the number of outstanding WRs but not below the limit returns 0 (and the SRQ then takes no post until the count is below the new max_wr): a capacity that cannot hold the outstanding WRs must fail with EINVAL",
		hooks: func() *hooks {
			var fake uint32
			return &hooks{
				resize: func(s *srq, n uint32) int {
					if s.armed != 0 && n > 0 && n >= s.armed && int(n) < s.outstanding() {
						fake = n
						return 0
					}
					e := s.innerResize(n)
					if e == 0 {
						fake = 0
					}
					return e
				},
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					if fake == 0 {
						return s.innerPost(wrs)
					}
					k := firstWR(wrs, func(i int, _ drivers.RecvWR) bool { return s.outstanding()+i >= int(fake) })
					return postUntil(s, wrs, k, eNOMEM)
				},
				query: editQuery(func(_ *srq, a *drivers.SRQAttr) {
					if fake != 0 {
						a.MaxWR = fake
					}
				}),
			}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 0)
			s.PostN(6, 1, 64)
			s.Limit(2)
			s.Resize(4)
			s.Query()
		},
	},
	{
		Name: "resize-reports-ring-size", Rule: "RESIZE-CAPACITY", Subtle: true,
		Description: "after a resize the driver reports as max_wr the new ring's size, roundup_pow2(max_wr+1)-1, while its post path still holds to the requested max_wr, so query reports more WRs than fit: after a resize exactly the max_wr query reports must fit",
		hooks: func() *hooks {
			var reported uint32
			return &hooks{
				resize: func(s *srq, n uint32) int {
					e := s.innerResize(n)
					if e == 0 {
						reported = uint32(pow2Above(n))
					}
					return e
				},
				query: editQuery(func(_ *srq, a *drivers.SRQAttr) {
					if reported != 0 {
						a.MaxWR = reported
					}
				}),
			}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Resize(5)
			s.Query()
			s.PostN(7, 1, 8)
		},
	},

	// QP state.
	{
		Name: "rts-to-sqe-accepted", Rule: "QP-TRANSITIONS", Subtle: true,
		Description: "the driver's state table lets ibv_modify_qp move a QP from RTS to SQE (the state its own send-error path uses), and the modify returns 0: no modify enters SQE",
		hooks: func() *hooks {
			return &hooks{modify: func(q *qp, st drivers.QPState) int {
				if st == drivers.SQE && q.state == drivers.RTS {
					if q.in.InjectSQE() == nil {
						q.enter(drivers.SQE)
						return 0
					}
				}
				return q.innerModify(st)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Modify(q, drivers.SQE)
			s.Modify(q, drivers.RTS)
		},
	},
	{
		Name: "fetch-lock-held-across-packets", Rule: "QP-FETCH-STATES", Subtle: true,
		Description: "a QP filling a WR with a multi-packet message keeps the SRQ's fetch lock until its last packet, and another QP's consuming message meeting the held lock is answered RNR (dropped on UD) without taking a WR, though it is in RTS and WRs are outstanding: a QP in RTR, RTS, SQD or SQE takes a WR",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				s := q.s
				held := false
				for _, o := range q.others() {
					if o.filling != nil {
						held = true
					}
				}
				if !held || !consumes(msg) || !q.fetches() || s.errored || s.outstanding() == 0 {
					return q.innerDeliver(ctx, msg)
				}
				if q.typ == drivers.RC {
					return drivers.PeerRNR, nil
				}
				return drivers.PeerOK, nil
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			a := s.QP(drivers.RC)
			b := s.QP(drivers.RC)
			s.Up(a)
			s.Up(b)
			s.PostN(2, 1, 64)
			s.First(a, 48)
			s.Send(b, 8)
			s.Rest(a)
			s.Poll()
		},
	},
	{
		Name: "error-cqe-err-keeps-fetching", Rule: "QP-NOFETCH-STATES", Subtle: true,
		Description: "the responder tests the state cached at the QP's last ibv_modify_qp, so an RC QP that an error completion (a message too long) moved to ERR goes on taking WRs from the SRQ and completing messages until it is next modified: a QP in ERR takes nothing",
		hooks: func() *hooks {
			byCQE := map[int]bool{}
			hush := -1
			return &hooks{
				completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
					if f.q != nil && f.q.typ == drivers.RC && c.Status != drivers.WCSuccess && c.Status != drivers.WCWRFlushErr {
						byCQE[f.q.idx] = true
					}
				}),
				modify: func(q *qp, st drivers.QPState) int {
					e := q.innerModify(st)
					if e == 0 {
						delete(byCQE, q.idx)
					}
					return e
				},
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					s := q.s
					if q.typ != drivers.RC || q.state != drivers.Err || !byCQE[q.idx] || !consumes(msg) || s.errored || s.outstanding() == 0 {
						return q.innerDeliver(ctx, msg)
					}
					for _, st := range []drivers.QPState{drivers.Reset, drivers.Init, drivers.RTR, drivers.RTS} {
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
			s.PostN(1, 1, 16)
			s.PostN(2, 2, 64)
			s.Send(q, 64)
			s.Send(q, 8)
			s.Poll()
			s.Events()
		},
	},
	{
		Name: "last-wqe-twice-on-receive-error", Rule: "QP-LAST-WQE", Subtle: true,
		Description: "when a receive error moves an RC QP to ERR, the completion error path raises IBV_EVENT_QP_LAST_WQE_REACHED and the state change it triggers raises it again: a QP entering ERR raises it once",
		hooks: func() *hooks {
			errCQE := map[int]bool{}
			return &hooks{
				completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
					if f.q != nil && f.q.typ == drivers.RC && c.Status != drivers.WCSuccess && c.Status != drivers.WCWRFlushErr {
						errCQE[f.q.idx] = true
					}
				}),
				event: func(_ *srq, e drivers.Event) []drivers.Event {
					if e.Type == drivers.EventQPLastWQEReached && errCQE[e.QP] {
						delete(errCQE, e.QP)
						return []drivers.Event{e, e}
					}
					return []drivers.Event{e}
				},
			}
		},
		Witness: tooLong(drivers.RC),
	},
	{
		Name: "fatal-event-per-later-packet", Rule: "QP-ERROR-EVENT", Subtle: true,
		Description: "after a message too long moves an RC QP to ERR with IBV_EVENT_QP_FATAL, the responder runs its error handler again for every later packet reaching the QP and raises QP_FATAL each time: an affiliated error event comes once",
		hooks: func() *hooks {
			fatal := map[int]bool{}
			return &hooks{
				completion: func(s *srq, f fetch, c drivers.Completion) []drivers.Completion {
					if f.q != nil && f.q.typ == drivers.RC && c.Status == drivers.WCLocLenErr {
						fatal[f.q.idx] = true
						s.ev = append(s.ev, drivers.Event{Type: drivers.EventQPFatal, QP: f.q.idx})
					}
					return []drivers.Completion{c}
				},
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					again := fatal[q.idx] && q.state == drivers.Err
					st, err := q.innerDeliver(ctx, msg)
					if again && err == nil {
						q.s.ev = append(q.s.ev, drivers.Event{Type: drivers.EventQPFatal, QP: q.idx})
					}
					return st, err
				},
				modify: func(q *qp, st drivers.QPState) int {
					e := q.innerModify(st)
					if e == 0 && st == drivers.Reset {
						delete(fatal, q.idx)
					}
					return e
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 16)
			s.PostN(1, 2, 64)
			s.Send(q, 64)
			s.Send(q, 8)
			s.Poll()
			s.Events()
		},
	},
	{
		Name: "interrupted-wr-reposted", Rule: "QP-FLUSH-INPROGRESS", Subtle: true,
		Description: "the WR a QP was filling when it entered ERR is handed back to the SRQ (re-posted at its tail) instead of being flushed, so it gets no WR_FLUSH_ERR completion and is later filled by another QP's message: it must complete with WR_FLUSH_ERR (or vanish, as the profile says)",
		hooks: func() *hooks {
			return &hooks{completion: func(s *srq, f fetch, c drivers.Completion) []drivers.Completion {
				if c.Status == drivers.WCWRFlushErr && f.found {
					w := drivers.RecvWR{ID: f.w.ID, NumSGE: len(f.w.SGEs), SGEs: append([]drivers.SGE(nil), f.w.SGEs...)}
					if e, _ := s.innerPost([]drivers.RecvWR{w}); e == 0 {
						return nil
					}
				}
				return []drivers.Completion{c}
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			a := s.QP(drivers.RC)
			b := s.QP(drivers.RC)
			s.Up(a)
			s.Up(b)
			s.Post(WR(1, 64))
			s.First(a, 48)
			s.Modify(a, drivers.Err)
			s.Poll()
			s.Send(b, 8)
			s.Poll()
		},
	},

	// SRQ error.
	{
		Name: "srq-err-event-raised-lazily", Rule: "SRQ-ERR-EVENT", Subtle: true,
		Description: "the driver learns of the SRQ's error state only when a responder next tries to fetch from it, and raises IBV_EVENT_SRQ_ERR then, so an SRQ that enters its error state raises nothing until a consuming message arrives (and nothing at all if none does): entering the error state raises IBV_EVENT_SRQ_ERR",
		hooks: func() *hooks {
			held := false
			return &hooks{
				event: func(_ *srq, e drivers.Event) []drivers.Event {
					if e.Type == drivers.EventSRQErr {
						held = true
						return nil
					}
					return []drivers.Event{e}
				},
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					st, err := q.innerDeliver(ctx, msg)
					if held && err == nil && consumes(msg) && q.fetches() {
						held = false
						q.s.ev = append(q.s.ev, drivers.Event{Type: drivers.EventSRQErr, QP: -1})
					}
					return st, err
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.InjectSRQError()
			s.Events()
			s.Send(q, 8)
			s.Events()
		},
	},
	{
		Name: "srq-state-cached-at-rtr", Rule: "SRQ-ERR-NOFETCH", Subtle: true,
		Description: "each QP caches the SRQ's state when it is brought up, and a QP that was already up when the SRQ entered its error state goes on taking WRs from it and completing messages: nothing is fetched from an SRQ in error",
		hooks: func() *hooks {
			cached := map[int]bool{}
			return &hooks{
				event: func(s *srq, e drivers.Event) []drivers.Event {
					if e.Type == drivers.EventSRQErr {
						for _, q := range s.qps {
							if !q.gone && q.fetches() {
								cached[q.idx] = true
							}
						}
					}
					return []drivers.Event{e}
				},
				modify: func(q *qp, st drivers.QPState) int {
					e := q.innerModify(st)
					if e == 0 && st == drivers.Reset {
						delete(cached, q.idx)
					}
					return e
				},
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					s := q.s
					if !s.errored || !cached[q.idx] || !consumes(msg) || !q.fetches() || len(s.fifo) == 0 {
						return q.innerDeliver(ctx, msg)
					}
					w := s.fifo[0]
					if sends(msg) && q.need(msg) > w.size() {
						return q.innerDeliver(ctx, msg)
					}
					s.fifo = s.fifo[1:]
					s.fetched++
					s.cq = append(s.cq, fifthSuccess(q, w, msg))
					return drivers.PeerOK, nil
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(2, 1, 64)
			s.InjectSRQError()
			s.Send(q, 8)
			s.Poll()
		},
	},

	// Fetching and completions.
	{
		Name: "zero-length-send-jumps-queue", Rule: "FETCH-FIFO", Subtle: true,
		Description: "the driver keeps WRs posted with num_sge 0 on a side list so that a zero-length Send can be matched without touching the ring, and serves such a Send from that list first, so on RC an empty Send takes the oldest empty WR ahead of older WRs at the head: WRs are fetched from the head, completions in posting order",
		hooks: func() *hooks {
			active := false
			var target uint64
			var pend []uint64
			return &hooks{
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					s := q.s
					if !active && sends(msg) && q.need(msg) == 0 && q.fetches() && !s.errored && len(s.fifo) >= 2 && len(s.fifo[0].SGEs) > 0 {
						for _, w := range s.fifo[1:] {
							if len(w.SGEs) == 0 && w.ID != s.fifo[0].ID {
								active, target, pend = true, w.ID, []uint64{w.ID}
								break
							}
						}
					}
					return q.innerDeliver(ctx, msg)
				},
				completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
					if !active || !f.found || len(pend) == 0 {
						return
					}
					out := pend[0]
					pend = pend[1:]
					if c.WRID == target {
						active = false
					} else {
						pend = append(pend, c.WRID)
					}
					c.WRID = out
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.Post(drivers.RecvWR{ID: 2, NumSGE: 0})
			s.Send(q, 0)
			s.Send(q, 0)
			s.Poll()
		},
	},
	{
		Name: "zero-length-write-taken-as-send", Rule: "FETCH-OPCODES", Subtle: true,
		Description: "an RDMA Write of length 0 carries no RETH payload and the responder's packet classifier takes the bare packet for a Send, so it consumes a WR and completes as IBV_WC_RECV with byte_len 0: RDMA Write does not consume a WR",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				if msg.Opcode == drivers.Write && msg.Len == 0 && q.typ == drivers.RC && q.fetches() {
					return q.innerDeliver(ctx, drivers.Message{Opcode: drivers.Send, Pattern: msg.Pattern})
				}
				return q.innerDeliver(ctx, msg)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.Deliver(q, drivers.Message{Opcode: drivers.Write, Len: 0})
			s.Poll()
		},
	},
	{
		Name: "resize-copies-last-fetched", Rule: "FETCH-ONCE", Subtle: true,
		Description: "resize copies the outstanding WQEs starting one slot before the consumer index, so the new ring begins with the WR fetched last; the first message after the resize completes that WR a second time and every later WR comes one message late: no WR completes twice",
		hooks: func() *hooks {
			var last uint64
			have := false
			var pend []uint64
			return &hooks{
				resize: func(s *srq, n uint32) int {
					e := s.innerResize(n)
					if e == 0 && have && len(s.fifo) > 0 {
						pend = append([]uint64{last}, pend...)
						have = false
					}
					return e
				},
				completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
					if !f.found {
						return
					}
					if len(pend) > 0 {
						out := pend[0]
						pend = append(pend[1:], c.WRID)
						c.WRID = out
					}
					last, have = c.WRID, true
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(3, 1, 64)
			s.Send(q, 8)
			s.Resize(8)
			s.Send(q, 8)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "bytelen-16-bit", Rule: "RECV-COMPLETION", Subtle: true,
		Description: "the driver copies byte_len out of a 16-bit field of its CQE, so a message of 64 KiB or more completes with byte_len modulo 65536: a message that fits completes with its length",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(_ *srq, _ fetch, c *drivers.Completion) {
				if c.Status == drivers.WCSuccess && c.ByteLen >= 1<<16 {
					c.ByteLen &= 0xffff
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 100000)
			s.Send(q, 70000)
			s.Poll()
		},
	},
	{
		Name: "send-imm-reports-write-imm", Rule: "RECV-IMM", Subtle: true,
		Description: "the responder keeps the immediate of an RDMA Write with Immediate in the QP's context and the Send with Immediate path copies it from there only when the context holds none, so the next Send with Immediate on that QP reports the write's immediate: it must carry the sender's",
		hooks: func() *hooks {
			held := map[int]uint32{}
			return &hooks{completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
				if f.msg == nil || f.q == nil || c.Status != drivers.WCSuccess {
					return
				}
				switch f.msg.Opcode {
				case drivers.WriteImm:
					held[f.q.idx] = f.msg.Imm
				case drivers.SendImm:
					if imm, ok := held[f.q.idx]; ok {
						delete(held, f.q.idx)
						c.Imm = imm
					}
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(2, 1, 64)
			s.Deliver(q, drivers.Message{Opcode: drivers.WriteImm, Len: 8, Imm: 5})
			s.Deliver(q, drivers.Message{Opcode: drivers.SendImm, Len: 8, Imm: 9, Pattern: 3})
			s.Poll()
		},
	},
	{
		Name: "write-imm-bytelen-from-last-send", Rule: "RECV-WRITE-IMM", Subtle: true,
		Description: "the RDMA Write with Immediate path takes byte_len from the QP's receive context, which only the Send path updates, so after a Send on that QP a Write with Immediate completes with that Send's length: it must complete with the write's length",
		hooks: func() *hooks {
			lens := map[int]uint32{}
			return &hooks{completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
				if f.msg == nil || f.q == nil || c.Status != drivers.WCSuccess {
					return
				}
				switch {
				case sends(*f.msg):
					lens[f.q.idx] = f.msg.Len
				case f.msg.Opcode == drivers.WriteImm:
					if n, ok := lens[f.q.idx]; ok {
						c.ByteLen = n
					}
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(2, 1, 64)
			s.Send(q, 10)
			s.Deliver(q, drivers.Message{Opcode: drivers.WriteImm, Len: 100, Imm: 1})
			s.Poll()
		},
	},
	{
		Name: "fit-against-previous-wqe", Rule: "RECV-FIT", Subtle: true,
		Description: "the length check reads the WQE size from the QP's cached copy of the WQE it fetched last, so a message longer than the QP's previous WR but within its own WR's SGEs completes with LOC_LEN_ERR: a message fits when its length is at most the sum of its WR's SGE lengths",
		hooks: func() *hooks {
			last := map[int]uint64{}
			return &hooks{
				deliver: refuseFit(func(q *qp, w wr, msg drivers.Message) bool {
					prev, ok := last[q.idx]
					need := q.need(msg)
					return ok && need > prev && need <= w.size()
				}),
				completion: editCompletion(func(_ *srq, f fetch, _ *drivers.Completion) {
					if f.found && f.q != nil {
						last[f.q.idx] = f.w.size()
					}
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 16)
			s.PostN(1, 2, 128)
			s.Send(q, 8)
			s.Send(q, 64)
			s.Poll()
		},
	},
	{
		Name: "numsge0-takes-payload", Rule: "RECV-NUMSGE0", Subtle: true,
		Description: "on RC the scatter loop over a WR with num_sge 0 runs no times and the length check is made inside it, so a non-empty Send into such a WR completes successfully with the message's byte_len (its bytes dropped): a WR with num_sge 0 holds only an empty message",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				s := q.s
				w, ok := s.head()
				if !ok || q.typ != drivers.RC || !sends(msg) || !q.fetches() || len(w.SGEs) != 0 || msg.Len == 0 {
					return q.innerDeliver(ctx, msg)
				}
				n := len(s.cq)
				st, err := q.innerDeliver(ctx, drivers.Message{Opcode: msg.Opcode, Imm: msg.Imm, Pattern: msg.Pattern})
				if err == nil && len(s.cq) == n+1 && s.cq[n].Status == drivers.WCSuccess {
					s.cq[n].ByteLen = msg.Len
				}
				return st, err
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Post(drivers.RecvWR{ID: 1, NumSGE: 0})
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "zero-length-sge-lost-in-resize", Rule: "SGE-LEN0", Subtle: true,
		Description: "resize copies the outstanding WQEs into the new ring field by field and writes an SGE of length 0 as a plain 0 instead of the 2^31 marker, so after a resize such an SGE of a carried-over WR holds nothing and a message that needs it completes with LOC_LEN_ERR: an SGE of length 0 stands for 2^31 bytes",
		hooks: func() *hooks {
			carried := map[uint64]bool{}
			return &hooks{
				resize: func(s *srq, n uint32) int {
					e := s.innerResize(n)
					if e == 0 {
						for _, w := range s.fifo {
							for _, g := range w.SGEs {
								if g.Length == 0 {
									carried[w.ID] = true
								}
							}
						}
					}
					return e
				},
				deliver: refuseFit(func(q *qp, w wr, msg drivers.Message) bool {
					if !carried[w.ID] {
						return false
					}
					var size uint64
					for _, g := range w.SGEs {
						size += uint64(g.Length)
					}
					need := q.need(msg)
					return need > size && need <= w.size()
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Post(WR(1, 0))
			s.Resize(8)
			s.Send(q, 64)
			s.Poll()
		},
	},
	{
		Name: "ud-multi-sge-grh-not-reserved", Rule: "UD-GRH", Subtle: true,
		Description: "on UD the fit check for a WR of several SGEs compares the payload alone with the WR's size (only the one-SGE path reserves the 40-byte GRH area), so a datagram that fits only without the GRH area completes successfully, truncated, with byte_len the payload plus 40: a message fits only with 40 bytes to spare",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				s := q.s
				w, ok := s.head()
				if !ok || q.typ != drivers.UD || !sends(msg) || !q.fetches() || len(w.SGEs) < 2 {
					return q.innerDeliver(ctx, msg)
				}
				size := w.size()
				if size < grhBytes || uint64(msg.Len) > size || uint64(msg.Len)+grhBytes <= size {
					return q.innerDeliver(ctx, msg)
				}
				n := len(s.cq)
				short := drivers.Message{Opcode: msg.Opcode, Len: uint32(size - grhBytes), Imm: msg.Imm, Pattern: msg.Pattern}
				st, err := q.innerDeliver(ctx, short)
				if err == nil && len(s.cq) == n+1 && s.cq[n].Status == drivers.WCSuccess {
					c := &s.cq[n]
					c.ByteLen = msg.Len + grhBytes
					c.Pattern, c.HasPattern = msg.Pattern, msg.Len > 0
				}
				return st, err
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 2, drivers.UD)
			s.Post(WR(1, 32, 32))
			s.Send(q, 40)
			s.Poll()
		},
	},
	{
		Name: "ud-oversize-error-latched", Rule: "RECV-TOO-LARGE", Subtle: true,
		Description: "a UD QP latches its first receive error for the error CQE and the latch is cleared only when the QP is reset, so after one datagram too long for its WR later ones still consume a WR but write no completion: a message larger than the WR completes with an error status",
		hooks: func() *hooks {
			latched := map[int]bool{}
			return &hooks{
				completion: func(_ *srq, f fetch, c drivers.Completion) []drivers.Completion {
					if f.q != nil && f.q.typ == drivers.UD && c.Status != drivers.WCSuccess && c.Status != drivers.WCWRFlushErr {
						if latched[f.q.idx] {
							return nil
						}
						latched[f.q.idx] = true
					}
					return []drivers.Completion{c}
				},
				modify: func(q *qp, st drivers.QPState) int {
					e := q.innerModify(st)
					if e == 0 && st == drivers.Reset {
						delete(latched, q.idx)
					}
					return e
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.UD)
			s.PostN(2, 1, 16)
			s.Send(q, 64)
			s.Send(q, 64)
			s.Poll()
		},
	},
	{
		Name: "only-first-sge-key-checked", Rule: "RECV-BAD-KEY", Subtle: true,
		Description: "the responder validates the lkey of a WR's first SGE and trusts the rest, so a message that reaches a later SGE whose region was deregistered completes successfully: filling a WR through an invalidated key completes with an error status",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				s := q.s
				w, ok := s.head()
				if !ok || !sends(msg) || !q.fetches() || len(w.SGEs) < 2 || s.invalid[w.SGEs[0].Key] || q.need(msg) > w.size() {
					return q.innerDeliver(ctx, msg)
				}
				rem := q.need(msg) - min(sgeBytes(w.SGEs[0]), q.need(msg))
				touched := false
				for _, g := range w.SGEs[1:] {
					if rem == 0 {
						break
					}
					if s.invalid[g.Key] {
						touched = true
					}
					rem -= min(sgeBytes(g), rem)
				}
				if !touched {
					return q.innerDeliver(ctx, msg)
				}
				n := len(s.cq)
				st, err := q.innerDeliver(ctx, drivers.Message{Opcode: drivers.WriteImm, Len: msg.Len, Imm: msg.Imm})
				if err == nil && len(s.cq) == n+1 && s.cq[n].Status == drivers.WCSuccess {
					s.cq[n] = fifthSuccess(q, w, msg)
				}
				return st, err
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 2, drivers.RC)
			s.Post(drivers.RecvWR{ID: 1, NumSGE: 2, SGEs: []drivers.SGE{{Length: 16, Key: 0}, {Length: 64, Key: 1}}})
			s.Invalidate(1)
			s.Send(q, 40)
			s.Poll()
		},
	},
	{
		Name: "ud-empty-srq-datagram-held", Rule: "RECV-RNR", Subtle: true,
		Description: "a UD datagram meeting an empty SRQ is parked in the QP's receive context (up to four of them) and scattered into the next WR posted, so it completes later instead of being dropped: on UD a consuming message meeting an empty SRQ is dropped",
		hooks: func() *hooks {
			type parked struct {
				q   *qp
				msg drivers.Message
			}
			var held []parked
			return &hooks{
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					s := q.s
					if q.typ == drivers.UD && consumes(msg) && q.fetches() && !s.errored && s.outstanding() == 0 {
						if len(held) < 4 {
							held = append(held, parked{q, msg})
						}
						return drivers.PeerOK, nil
					}
					return q.innerDeliver(ctx, msg)
				},
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					e, bad := s.innerPost(wrs)
					for len(held) > 0 && s.outstanding() > 0 && !s.errored {
						p := held[0]
						held = held[1:]
						if !p.q.gone && p.q.fetches() {
							p.q.innerDeliver(context.Background(), p.msg)
						}
					}
					return e, bad
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.UD)
			s.Send(q, 8)
			s.PostN(1, 1, 64)
			s.Poll()
		},
	},
	{
		Name: "flushed-wr-slot-leaked", Rule: "SLOT-FREE", Subtle: true,
		Description: "a WR flushed with WR_FLUSH_ERR (the one a QP was filling when it entered ERR) is completed from the flush path, which never returns its ring slot, so after each such flush one WR fewer fits: a fetched WR's slot frees at fetch or when its completion is polled",
		hooks: func() *hooks {
			leaked := 0
			return &hooks{
				completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
					if c.Status == drivers.WCWRFlushErr && f.found {
						leaked++
					}
				}),
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					if leaked == 0 {
						return s.innerPost(wrs)
					}
					k := firstWR(wrs, func(i int, _ drivers.RecvWR) bool { return s.outstanding()+leaked+i >= int(s.maxWR) })
					return postUntil(s, wrs, k, eNOMEM)
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(2, 1, drivers.RC)
			s.PostN(2, 1, 64)
			s.First(q, 48)
			s.Modify(q, drivers.Err)
			s.Poll()
			s.PostN(1, 3, 64)
		},
	},
	{
		Name: "ud-qp-after-destroyed-ud-refused", Rule: "QP-CREATE", Subtle: true,
		Description: "the SRQ's UD demultiplexing entry is released only with the SRQ, so once a UD QP attached to it was destroyed, creating another UD QP with the SRQ fails with EBUSY: QPs of each type can be created attached to the SRQ",
		hooks: func() *hooks {
			return &hooks{createQP: func(s *srq, t drivers.QPType, _ drivers.RecvCaps) int {
				if t != drivers.UD {
					return 0
				}
				for _, q := range s.qps {
					if q.typ == drivers.UD && q.gone {
						return eBUSY
					}
				}
				return 0
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			u := s.QP(drivers.UD)
			s.DestroyQP(u)
			s.QP(drivers.UD)
		},
	},
	{
		Name: "ud-recv-sge-checked", Rule: "QP-SRQ-CAPS", Subtle: true,
		Description: "the UD create path validates cap.max_recv_sge against the device's max_sge before it looks for the SRQ, so a UD QP created with the SRQ and max_recv_sge above max_sge fails with EINVAL: with an SRQ the receive caps are ignored",
		hooks: func() *hooks {
			return &hooks{createQP: func(_ *srq, t drivers.QPType, c drivers.RecvCaps) int {
				if t == drivers.UD && c == drivers.RecvCapsAboveSGE {
					return eINVAL
				}
				return 0
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.QPCaps(drivers.RC, drivers.RecvCapsAboveSGE)
			s.QPCaps(drivers.UD, drivers.RecvCapsAboveSGE)
		},
	},
}

// fifthFilling says whether a QP of s holds a WR it is filling with a
// half-delivered message.
func fifthFilling(s *srq) bool {
	for _, q := range s.qps {
		if !q.gone && q.filling != nil {
			return true
		}
	}
	return false
}

// fifthSuccess is the successful completion of msg on q in w, as the
// emulator writes it: a Send fills the WR (the GRH area counted on UD), a
// Write with Immediate completes without scattering.
func fifthSuccess(q *qp, w wr, msg drivers.Message) drivers.Completion {
	c := drivers.Completion{WRID: w.ID, Status: drivers.WCSuccess, QP: q.idx}
	if !sends(msg) {
		c.Opcode, c.ByteLen, c.HasImm, c.Imm = drivers.WCRecvRDMAWithImm, msg.Len, true, msg.Imm
		return c
	}
	c.Opcode, c.ByteLen = drivers.WCRecv, uint32(q.need(msg))
	if msg.Opcode == drivers.SendImm {
		c.HasImm, c.Imm = true, msg.Imm
	}
	if msg.Len > 0 {
		c.Pattern, c.HasPattern = msg.Pattern, true
	}
	return c
}
