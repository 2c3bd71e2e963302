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
		Name: "badwr-head-on-einval", Rule: "POST-BADWR", Subtle: true,
		Description: "when a WR after the first of a list has a bad num_sge, bad_wr is set to the list head (the error path restores the caller's pointer) instead of the WR that failed",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				e, bad := s.innerPost(wrs)
				if e == eINVAL && bad > 0 {
					return e, 0
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
		Name: "list-sge-checked-against-head-stride", Rule: "POST-SGE", Subtle: true,
		Description: "the batch path sizes every WQE of a list by the first WR's num_sge and refuses (EINVAL) a later WR with more SGEs than the first, though it is within max_sge: only num_sge above max_sge may fail",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				if len(wrs) < 2 || wrs[0].NumSGE < 0 {
					return s.innerPost(wrs)
				}
				stride := wrs[0].NumSGE
				k := firstWR(wrs, func(_ int, w drivers.RecvWR) bool { return w.NumSGE > stride && w.NumSGE <= int(s.maxSGE) })
				return postUntil(s, wrs, k, eINVAL)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 2, 0)
			s.Post(WR(1, 8), WR(2, 8, 8))
		},
	},
	{
		Name: "post-eagain-until-qp-init", Rule: "POST-ANY-STATE", Subtle: true,
		Description: "the doorbell page is mapped when the first attached QP reaches INIT, so while every attached QP is still in RESET a post fails with EAGAIN: posting works whatever state the attached QPs are in",
		hooks: func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				live := 0
				for _, q := range s.qps {
					if !q.gone && (q.state != drivers.Reset || len(q.was) > 0) {
						return s.innerPost(wrs)
					}
					if !q.gone {
						live++
					}
				}
				if live > 0 && len(wrs) > 0 {
					return eAGAIN, 0
				}
				return s.innerPost(wrs)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.QP(drivers.RC)
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
		Name: "sge-lengths-read-at-fetch", Rule: "POST-COPY", Subtle: true,
		Description: "for a WR of several SGEs the driver keeps a pointer to the caller's SGE array and reads the lengths when a message fetches the WR, so a caller that reuses its array after the post changes how much the WR holds: the SRQ must keep its own copy",
		hooks: func() *hooks {
			refs := map[uint64][]drivers.SGE{}
			return &hooks{
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					for _, w := range wrs {
						if w.NumSGE > 1 && w.NumSGE <= len(w.SGEs) {
							refs[w.ID] = w.SGEs[:w.NumSGE]
						}
					}
					return s.innerPost(wrs)
				},
				deliver: refuseFit(func(q *qp, w wr, msg drivers.Message) bool {
					sg, ok := refs[w.ID]
					return ok && q.need(msg) > (wr{SGEs: sg}).size()
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 2, drivers.RC)
			if !s.ready("post") {
				return
			}
			wrs := []drivers.RecvWR{WR(1, 32, 32)}
			e, bad := s.srq.Post(wrs)
			s.say("post_srq_recv(1 WR): %d bad %d", e, bad)
			wrs[0].SGEs[0].Length, wrs[0].SGEs[1].Length = 4, 4 // the caller reuses its array
			s.Send(q, 48)
			s.Poll()
		},
	},
	{
		Name: "ud-post-recv-badwr-unset", Rule: "POST-QP-RQ", Subtle: true,
		Description: "ibv_post_recv on an SRQ-attached UD QP is refused with EINVAL, but the UD path returns before it sets bad_wr: it must name the first WR",
		hooks: func() *hooks {
			return &hooks{postRecv: func(q *qp, w drivers.RecvWR) (int, int) {
				e, bad := q.in.PostRecv(w)
				if q.typ == drivers.UD && e != 0 {
					return e, -1
				}
				return e, bad
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.UD)
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
