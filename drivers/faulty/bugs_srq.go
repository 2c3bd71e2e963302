package faulty

import (
	"context"

	"github.com/srqconform/srqconform/drivers"
)

// createBugs are bugs of create, query, modify, resize and destroy.
var createBugs = []Bug{
	bug("create-rounds-down", "CREATE-ATTR",
		"create writes back max_wr rounded down to a power of two (the rounding helper truncates): a request of 5 reads back 4, less than requested",
		func(s *Script) { s.Create(5) },
		func() *hooks {
			return &hooks{create: func(d *device, ctx context.Context, attr drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQ, drivers.SRQAttr, error) {
				in, got, err := d.innerCreate(ctx, attr, keys, v)
				if err == nil && got.MaxWR&(got.MaxWR-1) != 0 {
					p := uint32(1)
					for p*2 <= got.MaxWR {
						p *= 2
					}
					got.MaxWR = p
				}
				return in, got, err
			}}
		}),

	bug("create-sge-above-max-small-queue", "CREATE-MAX",
		"the max_sge check sits on the path for large queues only: an SRQ of at most 64 WRs with max_sge above the device's max_srq_sge is created (clamped), where the statement says it fails",
		func(s *Script) {
			s.Create(4)
			s.Other(drivers.SRQAttr{MaxWR: 4, MaxSGE: 7}, drivers.CreatePlain)
		},
		func() *hooks {
			clamp := func(info drivers.Info, attr drivers.SRQAttr) drivers.SRQAttr {
				if attr.MaxSGE > info.MaxSRQSGE && attr.MaxWR <= 64 && attr.MaxWR <= info.MaxSRQWR {
					attr.MaxSGE = info.MaxSRQSGE
				}
				return attr
			}
			return &hooks{
				create: func(d *device, ctx context.Context, attr drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQ, drivers.SRQAttr, error) {
					in, got, err := d.innerCreate(ctx, clamp(d.Info(), attr), keys, v)
					if err == nil {
						got.MaxSGE = max(got.MaxSGE, attr.MaxSGE)
					}
					return in, got, err
				},
				createOther: func(s *srq, attr drivers.SRQAttr, v drivers.CreateVariant) (int, error) {
					return s.in.CreateOther(clamp(s.info, attr), v)
				},
			}
		}),

	bug("create-ex-cq-einval", "CREATE-EX",
		"with an SRQ already on the PD, ibv_create_srq_ex with IBV_SRQ_INIT_ATTR_CQ fails its CQ-ownership check with EINVAL; the statement allows success or EOPNOTSUPP only",
		func(s *Script) {
			s.Create(4)
			s.Other(drivers.SRQAttr{MaxWR: 4, MaxSGE: 1}, drivers.CreateExCQ)
		},
		func() *hooks {
			return &hooks{createOther: func(s *srq, attr drivers.SRQAttr, v drivers.CreateVariant) (int, error) {
				e, err := s.in.CreateOther(attr, v)
				if err == nil && e == 0 && v == drivers.CreateExCQ {
					e = eINVAL
				}
				return e, err
			}}
		}),

	bug("create-refuses-odd-depth", "CREATE-ATTR",
		"ibv_create_srq sizes its ring with a helper that wants a power of two and refuses any other max_wr with EINVAL, though the request is within the device's limits; the ibv_create_srq_ex path rounds up first and works",
		func(s *Script) { s.Create(5) },
		func() *hooks {
			return &hooks{create: func(d *device, ctx context.Context, attr drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQ, drivers.SRQAttr, error) {
				if v == drivers.CreatePlain && attr.MaxWR&(attr.MaxWR-1) != 0 {
					return nil, drivers.SRQAttr{}, &drivers.Refused{Call: "faulty: ibv_create_srq", Errno: eINVAL}
				}
				return d.innerCreate(ctx, attr, keys, v)
			}}
		}),

	bug("create-limit-arms", "CREATE-LIMIT",
		"the create path for queues of 4 WRs or more copies the whole ibv_srq_attr into the context, srq_limit included, so a limit given at create arms the SRQ",
		func(s *Script) {
			s.CreateAttr(drivers.SRQAttr{MaxWR: 8, MaxSGE: 1, SRQLimit: 2})
			s.Query()
		},
		func() *hooks {
			return &hooks{create: func(d *device, ctx context.Context, attr drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQ, drivers.SRQAttr, error) {
				in, got, err := d.innerCreate(ctx, attr, keys, v)
				if err == nil && attr.SRQLimit != 0 && attr.MaxWR >= 4 && attr.SRQLimit <= got.MaxWR {
					in.ModifyLimit(attr.SRQLimit)
				}
				return in, got, err
			}}
		}),

	bug("query-sge-from-qp", "QUERY-ATTR",
		"once a QP is attached, query fills max_sge from the QP's receive caps, the device maximum, not the SRQ's max_sge as created",
		func(s *Script) {
			s.Create(4)
			s.QP(drivers.RC)
			s.Query()
		},
		editQuery(func(s *srq, a *drivers.SRQAttr) {
			if len(s.live()) > 0 {
				a.MaxSGE = s.info.MaxSRQSGE
			}
		})),

	bug("query-limit-after-disarm", "QUERY-LIMIT",
		"a modify to srq_limit 0 disarms the hardware but leaves the shadow the query reads: query shows the old limit on a disarmed SRQ, where it must read 0",
		func(s *Script) {
			s.Create(8)
			s.Limit(3)
			s.Limit(0)
			s.Query()
		},
		func() *hooks {
			var shown uint32
			return &hooks{
				limit: func(s *srq, l uint32) int {
					prev := s.limitSet
					e := s.in.ModifyLimit(l)
					if e == 0 {
						shown = 0
						if l == 0 {
							shown = prev
						}
					}
					return e
				},
				query: func(s *srq) (drivers.SRQAttr, int) {
					a, e := s.in.Query()
					if e == 0 && a.SRQLimit == 0 && shown != 0 {
						a.SRQLimit = shown
					}
					return a, e
				},
			}
		}),

	bug("query-limit-countdown", "QUERY-LIMIT",
		"query reads the hardware's watermark countdown register: while armed it returns the limit minus the WRs fetched since arming, not the armed limit",
		func(s *Script) {
			s.Create(8)
			q := s.Up(drivers.RC)
			s.Post(Ids(1, 6)...)
			s.Limit(2)
			s.Send(q, drivers.Send, 8)
			s.Query()
		},
		func() *hooks {
			var at uint64
			return &hooks{
				limit: func(s *srq, l uint32) int {
					at = s.fetched
					return s.in.ModifyLimit(l)
				},
				query: func(s *srq) (drivers.SRQAttr, int) {
					a, e := s.in.Query()
					if e == 0 && a.SRQLimit != 0 {
						a.SRQLimit = uint32(max(1, int64(a.SRQLimit)-int64(s.fetched-at)))
					}
					return a, e
				},
			}
		}),

	bug("destroy-busy-disarms", "DESTROY-BUSY",
		"destroy disarms the limit before it checks the QP use count; when it then fails with EBUSY the SRQ is left disarmed, so it does not keep working as before",
		func(s *Script) {
			s.Create(8)
			s.Up(drivers.RC)
			s.Limit(2)
			s.Destroy()
			s.Query()
		},
		func() *hooks {
			return &hooks{destroy: func(s *srq) (int, error) {
				e, err := s.in.Destroy()
				if err == nil && e == eBUSY {
					s.in.ModifyLimit(0)
				}
				return e, err
			}}
		}),

	bug("destroy-ok-when-qps-reset", "DESTROY-BUSY",
		"the use count counts only QPs past INIT: with every attached QP in RESET, destroy returns 0 and the SRQ refuses verbs afterwards, where it must fail with EBUSY while a QP is attached",
		func(s *Script) {
			s.Create(4)
			s.QP(drivers.RC)
			s.Destroy()
			s.Post(Ids(1, 1)...)
		},
		func() *hooks {
			gone := false
			return &hooks{
				destroy: func(s *srq) (int, error) {
					live := s.live()
					reset := len(live) > 0
					for _, q := range live {
						reset = reset && q.state == drivers.Reset
					}
					if reset {
						gone = true
						return 0, nil
					}
					return s.in.Destroy()
				},
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					if gone {
						if len(wrs) == 0 {
							return eINVAL, -1
						}
						return eINVAL, 0
					}
					return s.post(wrs)
				},
				query: func(s *srq) (drivers.SRQAttr, int) {
					if gone {
						return drivers.SRQAttr{}, eINVAL
					}
					return s.in.Query()
				},
				limit: func(s *srq, l uint32) int {
					if gone {
						return eINVAL
					}
					return s.in.ModifyLimit(l)
				},
				resize: func(s *srq, n uint32) int {
					if gone {
						return eINVAL
					}
					return s.resize(n)
				},
			}
		}),

	bug("resize-rearms-last-limit", "MODIFY-ONLY-MASKED",
		"resize writes the driver's cached ibv_srq_attr to the device with the limit bit set too, re-arming the last limit even after it fired; a modify with only IBV_SRQ_MAX_WR must not change srq_limit",
		func(s *Script) {
			s.FireLimit()
			s.Events()
			s.Resize(8)
			s.Query()
		},
		func() *hooks {
			return &hooks{resize: func(s *srq, n uint32) int {
				e := s.resize(n)
				if e == 0 && s.limitSet != 0 && s.limitSet <= s.capacity {
					s.in.ModifyLimit(s.limitSet)
				}
				return e
			}}
		}),

	bug("failed-resize-disarms", "MODIFY-ONLY-MASKED",
		"a resize that fails its bound check has already cleared the limit in the context: the armed limit is gone although a failing modify must change nothing",
		func(s *Script) {
			s.Create(4)
			s.Limit(2)
			s.Resize(0)
			s.Query()
		},
		func() *hooks {
			return &hooks{resize: func(s *srq, n uint32) int {
				e := s.resize(n)
				if e != 0 {
					s.in.ModifyLimit(0)
				}
				return e
			}}
		}),

	bug("resize-above-max-truncated", "RESIZE-BOUNDS",
		"the new max_wr goes through a 14-bit field: a resize above max_srq_wr is taken modulo 16384 and succeeds, where it must fail with EINVAL",
		func(s *Script) {
			s.Create(4)
			s.Resize(16385)
			s.Query()
		},
		func() *hooks {
			return &hooks{resize: func(s *srq, n uint32) int {
				if n > s.info.MaxSRQWR {
					n &= s.info.MaxSRQWR - 1
				}
				return s.resize(n)
			}}
		}),

	bug("resize-below-count-by-one", "RESIZE-BELOW-COUNT",
		"the outstanding-count check of resize compares with <= against count-1: a resize to one fewer than the outstanding WRs returns 0 (and changes nothing), where it must fail with EINVAL",
		func(s *Script) {
			s.Create(4)
			s.Post(Ids(1, 3)...)
			s.Resize(2)
			s.Query()
		},
		func() *hooks {
			var fake uint32
			return &hooks{
				resize: func(s *srq, n uint32) int {
					if n > 0 && n+1 == s.outstanding() {
						fake = n
						return 0
					}
					e := s.resize(n)
					if e == 0 {
						fake = 0
					}
					return e
				},
				query: func(s *srq) (drivers.SRQAttr, int) {
					a, e := s.in.Query()
					if e == 0 && fake != 0 {
						a.MaxWR = fake
					}
					return a, e
				},
			}
		}),

	bug("resize-query-off-by-one", "RESIZE-CAPACITY",
		"after a resize the query reads max_wr from the new ring's index mask, one less than the new capacity: query reports less than the request",
		func(s *Script) {
			s.Create(4)
			s.Resize(8)
			s.Query()
		},
		editQuery(func(s *srq, a *drivers.SRQAttr) {
			if s.resizes > 0 && a.MaxWR > 1 {
				a.MaxWR--
			}
		})),
}
