package faulty2

import (
	"github.com/srqconform/srqconform/drivers"
)

// postBugs break the rules of ibv_post_srq_recv and ibv_post_recv.
var postBugs = []Bug{
	{
		Name: "ring-wrap-loses-slot", Rule: "POST-FULL", Subtle: true,
		Description: "once the producer index has gone round the ring, the full check compares against the wrapped index and refuses the WR that would fill the last slot with ENOMEM: only max_wr-1 fit, where up to max_wr can be outstanding",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				if !s.wrapped() {
					return s.innerPost(wrs)
				}
				return postOneShort(s, wrs, s.maxWR)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(4, 1, 64)
			for range 4 {
				s.Send(q, 8)
			}
			s.PostN(4, 5, 64)
			s.Poll()
		},
	},
	{
		Name: "full-mid-list-eagain", Rule: "POST-FULL", Subtle: true,
		Description: "a list that meets a full queue after its first WR fails with EAGAIN (the batch path's 'try again'), where a WR posted while max_wr are outstanding fails with ENOMEM",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				e, bad := s.innerPost(wrs)
				if e == eNOMEM && bad > 0 {
					return eAGAIN, bad
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
		Name: "enomem-negated", Rule: "POST-RETURN", Subtle: true,
		Description: "the ring-full path returns -ENOMEM (a kernel-style return leaking into the provider) while EINVAL is returned positive: the documented convention is a positive errno",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				e, bad := s.innerPost(wrs)
				if e == eNOMEM {
					return -e, bad
				}
				return e, bad
			}}
		},
		Witness: func(s *Script) {
			s.Create(1, 1, 0)
			s.Post(WR(1, 8))
			s.Post(WR(2, 8))
		},
	},
	{
		Name: "list-returns-count", Rule: "POST-RETURN", Subtle: true,
		Description: "a post of several WRs that all succeed returns the number of WRs posted instead of 0",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				e, bad := s.innerPost(wrs)
				if e == 0 && len(wrs) > 1 {
					return len(wrs), bad
				}
				return e, bad
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Post(WR(1, 8), WR(2, 8))
		},
	},
	{
		Name: "badwr-last-on-full", Rule: "POST-BADWR", Subtle: true,
		Description: "when a list meets a full queue, bad_wr is left on the last WR of the list (the loop's cursor after it gave up) instead of the first WR that failed",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				e, bad := s.innerPost(wrs)
				if e == eNOMEM && bad >= 0 && bad < len(wrs)-1 {
					return e, len(wrs) - 1
				}
				return e, bad
			}}
		},
		Witness: func(s *Script) {
			s.Create(2, 1, 0)
			s.Post(WR(1, 8), WR(2, 8), WR(3, 8), WR(4, 8))
		},
	},
	{
		Name: "invalid-wr-skipped", Rule: "POST-ORDER", Subtle: true,
		Description: "a WR with too many SGEs in the middle of a list is skipped and the WRs after it are still posted, though the post returns EINVAL with bad_wr on it: those after the failing WR must not be posted",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				e, bad := s.innerPost(wrs)
				if e == eINVAL && bad >= 0 && bad < len(wrs)-1 {
					s.innerPost(wrs[bad+1:])
				}
				return e, bad
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Post(WR(1, 8), WR(2, 8, 8), WR(3, 8))
			s.Send(q, 4)
			s.Send(q, 4)
			s.Poll()
		},
	},
	{
		Name: "sge-limit-reset-by-resize", Rule: "POST-SGE", Subtle: true,
		Description: "a resize rebuilds the SRQ context with max_sge 1, so after it WRs with 2 SGEs (within the SRQ's max_sge) fail with EINVAL: only num_sge above max_sge may fail",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				if s.resizes == 0 {
					return s.innerPost(wrs)
				}
				return postUntil(s, wrs, firstWR(wrs, func(_ int, w drivers.RecvWR) bool { return w.NumSGE > 1 }), eINVAL)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 2, 0)
			s.Post(WR(1, 8, 8))
			s.Resize(8)
			s.Post(WR(2, 8, 8))
		},
	},
	{
		Name: "negative-sge-in-tail-accepted", Rule: "POST-SGE", Subtle: true,
		Description: "the negative num_sge check runs on the first WR of a list only; a later WR with num_sge -1 is posted as an empty WR, where a negative num_sge must fail with EINVAL",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				fixed := append([]drivers.RecvWR(nil), wrs...)
				for i := 1; i < len(fixed); i++ {
					if fixed[i].NumSGE < 0 {
						fixed[i].NumSGE, fixed[i].SGEs = 0, nil
					}
				}
				return s.innerPost(fixed)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Post(WR(1, 8), drivers.RecvWR{ID: 2, NumSGE: -1})
		},
	},
	{
		Name: "post-busy-while-sqd", Rule: "POST-ANY-STATE", Subtle: true,
		Description: "while an attached QP is draining (SQD) the doorbell is blocked and a post fails with EBUSY, though posting works whatever state the attached QPs are in",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				for _, q := range s.qps {
					if !q.gone && q.state == drivers.SQD && len(wrs) > 0 {
						return eBUSY, 0
					}
				}
				return s.innerPost(wrs)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Modify(q, drivers.SQD)
			s.Post(WR(1, 8))
		},
	},
	{
		Name: "gather-list-keys-checked", Rule: "POST-NO-KEY-CHECK", Subtle: true,
		Description: "WRs with several SGEs go through a gather-list path that looks each lkey up and fails the post with EINVAL on an invalidated one; a post must not check lkeys",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				k := firstWR(wrs, func(_ int, w drivers.RecvWR) bool {
					if w.NumSGE < 2 {
						return false
					}
					for _, g := range shadow(w).SGEs {
						if s.invalid[g.Key] {
							return true
						}
					}
					return false
				})
				return postUntil(s, wrs, k, eINVAL)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 2, 0)
			s.Invalidate(1)
			s.Post(drivers.RecvWR{ID: 1, NumSGE: 2, SGEs: []drivers.SGE{{Length: 8}, {Length: 8, Key: 1}}})
		},
	},
	{
		Name: "list-wrid-read-at-completion", Rule: "POST-COPY", Subtle: true,
		Description: "for a list of several WRs the driver keeps a pointer to the caller's WR and reads wr_id from it when the WR completes, so a caller that reuses its WR array sees its new wr_id in the completion: the SRQ must keep its own copy",
		hooks: func() *hooks {
			type ref struct {
				wrs []drivers.RecvWR
				i   int
			}
			refs := map[uint64]ref{}
			next := uint64(0xfa17) << 48
			return &hooks{
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					if len(wrs) < 2 {
						return s.innerPost(wrs)
					}
					tagged := append([]drivers.RecvWR(nil), wrs...)
					for i := range tagged {
						next++
						tagged[i].ID = next
						refs[next] = ref{wrs, i}
					}
					return s.innerPost(tagged)
				},
				completion: editCompletion(func(_ *srq, _ fetch, c *drivers.Completion) {
					if r, ok := refs[c.WRID]; ok {
						delete(refs, c.WRID)
						c.WRID = r.wrs[r.i].ID
					}
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			if !s.ready("post") {
				return
			}
			wrs := []drivers.RecvWR{WR(1, 8), WR(2, 8)}
			e, bad := s.srq.Post(wrs)
			s.say("post_srq_recv(2 WRs): %d bad %d", e, bad)
			wrs[0].ID, wrs[1].ID = 71, 72 // the caller reuses its array
			s.Send(q, 4)
			s.Poll()
		},
	},
	{
		Name: "post-recv-accepted-in-reset", Rule: "POST-QP-RQ", Subtle: true,
		Description: "ibv_post_recv on an SRQ-attached QP still in RESET returns 0 (the QP has no receive queue check until INIT); it must be refused with bad_wr on the first WR",
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
			q := s.QP(drivers.UD)
			s.PostRecv(q, WR(1, 8))
		},
	},
	{
		Name: "slot-held-until-next-fetch", Rule: "SLOT-FREE", Subtle: true,
		Description: "the consumer index is published one fetch late, so once anything was fetched the last fetched WR's slot stays taken until the next fetch and only max_wr-1 WRs fit; a fetched slot must free at fetch or when its completion is polled",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				if s.fetched == 0 {
					return s.innerPost(wrs)
				}
				return postOneShort(s, wrs, s.maxWR)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(2, 1, drivers.RC)
			s.Post(WR(1, 8))
			s.Send(q, 4)
			s.Poll()
			s.Post(WR(2, 8))
			s.Post(WR(3, 8))
		},
	},
}
