package faulty

import (
	"github.com/srqconform/srqconform/drivers"
)

// postBugs are bugs of ibv_post_srq_recv and ibv_post_recv.
var postBugs = []Bug{
	bug("prefix-dropped-after-wrap", "POST-ORDER",
		"once the ring has wrapped, the post path validates num_sge of the whole list before writing any WQE: a list whose later WR has too many SGEs posts nothing, though the statement keeps the WRs before the failing one posted",
		func(s *Script) {
			s.Create(2)
			q := s.Up(drivers.RC)
			s.Post(Ids(1, 2)...)
			s.Send(q, drivers.Send, 8)
			s.Send(q, drivers.Send, 8)
			s.Post(WR(10, 64), WR(11, 64, 64, 64))
			s.Send(q, drivers.Send, 8)
			s.Poll(0)
		},
		func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				if s.posted < uint64(s.capacity) {
					return s.post(wrs)
				}
				for i, w := range wrs {
					if sgeBad(w, s.maxSGE) {
						if i > 0 && s.outstanding()+uint32(i) < s.capacity {
							return eINVAL, i
						}
						break
					}
				}
				return s.post(wrs)
			}}
		}),

	bug("badwr-chunk-relative", "POST-BADWR",
		"the provider rings the doorbell every 4 WRs and reports bad_wr relative to the current batch: a failure at WR 5 names WR 1, an earlier WR than the first that failed",
		func(s *Script) {
			s.Create(8)
			s.Post(append(Ids(1, 5), WR(9, 64, 64, 64))...)
		},
		editPost(func(s *srq, wrs []drivers.RecvWR, e, bad int) (int, int) {
			if e != 0 && bad >= 4 {
				bad %= 4
			}
			return e, bad
		})),

	bug("badwr-last-on-enomem", "POST-BADWR",
		"on a full queue the loop runs on to the end of the list before setting bad_wr, so ENOMEM names the last WR, a later one than the first that failed",
		func(s *Script) {
			s.Create(2)
			s.Post(Ids(1, 4)...)
		},
		editPost(func(s *srq, wrs []drivers.RecvWR, e, bad int) (int, int) {
			if e == eNOMEM && bad >= 0 {
				bad = len(wrs) - 1
			}
			return e, bad
		})),

	bug("errno-negative-long-list", "POST-RETURN",
		"a list longer than 3 WRs goes through the batched path, which returns the kernel's -errno: the sign is wrong for the documented profile (positive errno)",
		func(s *Script) {
			s.Create(2)
			s.Post(Ids(1, 4)...)
		},
		editPost(func(s *srq, wrs []drivers.RecvWR, e, bad int) (int, int) {
			if e > 0 && len(wrs) > 3 {
				e = -e
			}
			return e, bad
		})),

	bug("full-extra-after-two-laps", "POST-FULL",
		"once the consumer index has gone round the ring twice, the free-slot count computed from the wrapped indices is one too many: a WR posted with max_wr outstanding is accepted (and silently dropped) instead of failing with ENOMEM",
		func(s *Script) {
			s.Create(2)
			q := s.Up(drivers.RC)
			for range 2 {
				s.Post(Ids(1, 2)...)
				s.Send(q, drivers.Send, 8)
				s.Send(q, drivers.Send, 8)
			}
			s.Post(Ids(9, 3)...)
		},
		func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				room := int(s.capacity) - int(s.outstanding())
				if s.fetched >= 2*uint64(s.capacity) && len(wrs) == room+1 && !sgeBad(wrs[room], s.maxSGE) {
					if e, bad := s.post(wrs[:room]); e != 0 {
						return e, bad
					}
					return 0, -1
				}
				return s.post(wrs)
			}}
		}),

	bug("full-early-per-extra-qp", "POST-FULL",
		"the provider reserves one WQE slot of the SRQ for every attached QP after the first (for its flush marker): with two QPs attached, ENOMEM comes at max_wr-1 outstanding, fewer than max_wr",
		func(s *Script) {
			s.Create(3)
			s.Up(drivers.RC)
			s.Up(drivers.RC)
			s.Post(Ids(1, 3)...)
		},
		func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				room := int(s.capacity) - max(0, len(s.live())-1) - int(s.outstanding())
				if room < len(wrs) {
					return postUntil(s, wrs, room, eNOMEM)
				}
				return s.post(wrs)
			}}
		}),

	bug("sge-max-refused-at-ring-end", "POST-SGE",
		"a WQE written into the last slot of the ring has room for max_sge-1 SGEs (the wrap copy is one short), so a WR with num_sge == max_sge landing there fails with EINVAL although only num_sge above max_sge may",
		func(s *Script) {
			s.Create(2)
			s.Post(WR(1, 64, 64), WR(2, 64, 64))
		},
		func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				for i, w := range wrs {
					full := s.outstanding()+uint32(i) >= s.capacity
					if full || sgeBad(w, s.maxSGE) {
						break
					}
					if s.maxSGE >= 2 && w.NumSGE == int(s.maxSGE) && (s.posted+uint64(i))%uint64(s.capacity) == uint64(s.capacity-1) {
						return postUntil(s, wrs, i, eINVAL)
					}
				}
				return s.post(wrs)
			}}
		}),

	bug("negative-sge-accepted-after-head", "POST-SGE",
		"num_sge is range-checked only for the first WR of a list; a later WR with a negative num_sge is posted as an empty WR and the post returns 0, where the statement says it fails with EINVAL",
		func(s *Script) {
			s.Create(4)
			s.Post(WR(1, 64), drivers.RecvWR{ID: 2, NumSGE: -1})
		},
		func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				out := append([]drivers.RecvWR(nil), wrs...)
				for i := 1; i < len(out); i++ {
					if out[i].NumSGE < 0 {
						out[i].NumSGE, out[i].SGEs = 0, nil
					}
				}
				return s.post(out)
			}}
		}),

	bug("check-order-enospc", "POST-CHECK-ORDER",
		"a WR that meets a full queue and has too many SGEs gets ENOSPC from the SGE helper that runs after the full check, neither ENOMEM nor EINVAL, the errnos of the two checks",
		func(s *Script) {
			s.Create(1)
			s.Post(WR(1, 64))
			s.Post(WR(2, 64, 64, 64))
		},
		editPost(func(s *srq, wrs []drivers.RecvWR, e, bad int) (int, int) {
			if e == eNOMEM && bad >= 0 && bad < len(wrs) && sgeBad(wrs[bad], s.maxSGE) {
				e = eNOSPC
			}
			return e, bad
		})),

	bug("post-refused-while-sqd", "POST-ANY-STATE",
		"the post path takes the drain lock that a QP in SQD holds and gives up with EINVAL: posting fails while an attached QP is in SQD, though posting works whatever state the QPs are in",
		func(s *Script) {
			s.Create(4)
			q := s.Up(drivers.RC)
			s.Modify(q, drivers.SQD)
			s.Post(Ids(1, 1)...)
		},
		func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				for _, q := range s.live() {
					if q.state == drivers.SQD && len(wrs) > 0 {
						return eINVAL, 0
					}
				}
				return s.post(wrs)
			}}
		}),

	bug("post-refused-after-last-qp-destroyed", "POST-ANY-STATE",
		"destroying the last attached QP unmaps the SRQ's doorbell page, so every later post fails with EINVAL, though posting works with no QP attached",
		func(s *Script) {
			s.Create(4)
			q := s.QP(drivers.RC)
			s.DestroyQP(q)
			s.Post(Ids(1, 1)...)
		},
		func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				if len(s.qps) > 0 && len(s.live()) == 0 && len(wrs) > 0 {
					return eINVAL, 0
				}
				return s.post(wrs)
			}}
		}),

	bug("post-checks-first-key", "POST-NO-KEY-CHECK",
		"after any region was deregistered, the post path looks up the lkeys of a list's first WR in its MR cache and refuses one naming the dead region with EINVAL, where a post checks no lkey",
		func(s *Script) {
			s.Create(4)
			s.Invalidate(1)
			s.Post(drivers.RecvWR{ID: 1, NumSGE: 1, SGEs: []drivers.SGE{{Length: 64, Key: 1}}})
		},
		func() *hooks {
			dead := map[int]bool{}
			return &hooks{
				invalidate: func(s *srq, key int) error {
					err := s.in.InvalidateKey(key)
					if err == nil {
						dead[key] = true
					}
					return err
				},
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					if len(wrs) > 0 && wrs[0].NumSGE > 0 {
						for _, g := range wrs[0].SGEs[:min(wrs[0].NumSGE, len(wrs[0].SGEs))] {
							if dead[g.Key] {
								return eINVAL, 0
							}
						}
					}
					return s.post(wrs)
				},
			}
		}),

	bug("wrid-by-reference-in-lists", "POST-COPY",
		"for a list of several WRs the provider copies the SGEs but keeps a pointer to each later WR for its wr_id, read at completion: a caller reusing its WR array changes the wr_id that completes, though the SRQ must keep its own copy",
		func(s *Script) {
			s.Create(4)
			q := s.Up(drivers.RC)
			w := Ids(1, 2)
			s.Post(w...)
			w[1].ID = 99
			s.Send(q, drivers.Send, 8)
			s.Send(q, drivers.Send, 8)
			s.Poll(0)
		},
		func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				if len(wrs) < 2 {
					return s.post(wrs)
				}
				refs := make([]*drivers.RecvWR, len(wrs))
				for i := 1; i < len(wrs); i++ {
					refs[i] = &wrs[i]
				}
				return s.postRefs(wrs, refs)
			}}
		}),

	bug("post-recv-accepted-in-rts", "POST-QP-RQ",
		"ibv_post_recv checks for an SRQ only on the path for QPs not yet in RTS: on an SRQ-attached QP in RTS it returns 0, where it must be refused with bad_wr on the first WR",
		func(s *Script) {
			s.Create(2)
			q := s.Up(drivers.RC)
			s.PostRecv(q, WR(1, 64))
		},
		func() *hooks {
			return &hooks{postRecv: func(q *qp, wr drivers.RecvWR) (int, int) {
				if q.state == drivers.RTS {
					return 0, -1
				}
				return q.in.PostRecv(wr)
			}}
		}),

	bug("slot-leak-on-error", "SLOT-FREE",
		"a WR that completes with an error status (other than a flush) never gives its ring slot back: after a UD message too long, one WR fewer fits, so a slot freed neither at fetch nor at poll",
		func(s *Script) {
			s.Create(2)
			q := s.Up(drivers.UD)
			s.Post(WR(1, 16))
			s.Send(q, drivers.Send, 100)
			s.Poll(0)
			s.Post(Ids(2, 2)...)
		},
		func() *hooks {
			leaked := 0
			return &hooks{
				completion: func(_ *srq, _ *qp, c *drivers.Completion, _ *entry) {
					if c.Status != 0 && c.Status != wcFlushErr {
						leaked++
					}
				},
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					room := int(s.capacity) - leaked - int(s.outstanding())
					if room < len(wrs) {
						return postUntil(s, wrs, room, eNOMEM)
					}
					return s.post(wrs)
				},
			}
		}),
}
