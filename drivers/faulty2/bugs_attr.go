package faulty2

import (
	"github.com/srqconform/srqconform/drivers"
)

// attrBugs break the rules of create, query, resize and destroy.
var attrBugs = []Bug{
	{
		Name: "create-sge-writeback-capped", Rule: "CREATE-ATTR", Subtle: true,
		Description: "create writes back max_sge from a response field sized for 4 SGEs, so a request for 5 or 6 SGEs reads back 4 though the SRQ takes them: the written-back max_sge must be at least the request",
		hooks: func() *hooks {
			return &hooks{written: func(_, got drivers.SRQAttr) drivers.SRQAttr {
				got.MaxSGE = min(got.MaxSGE, 4)
				return got
			}}
		},
		Witness: func(s *Script) { s.Create(4, 5, 0) },
	},
	{
		Name: "create-max-sge-big-ring-refused", Rule: "CREATE-MAX", Subtle: true,
		Description: "the WQE-size times WR-count product is checked against a 32-bit buffer limit, so an SRQ at max_srq_sge with more than 4096 WRs (within max_srq_wr) fails with EINVAL: creating one at the device's limits must succeed or fail with ENOMEM",
		hooks: func() *hooks {
			return &hooks{create: func(a drivers.SRQAttr, _ drivers.CreateVariant) (drivers.SRQAttr, int) {
				if a.MaxSGE == emuInfo.MaxSRQSGE && a.MaxWR > 4096 && a.MaxWR <= emuInfo.MaxSRQWR {
					return a, eINVAL
				}
				return a, 0
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Other(emuInfo.MaxSRQWR, emuInfo.MaxSRQSGE, drivers.CreatePlain)
		},
	},
	{
		Name: "create-above-max-wr-single-sge", Rule: "CREATE-MAX", Subtle: true,
		Description: "the size check is on the ring's bytes, so with one SGE per WR a max_wr above max_srq_wr passes and the ring is silently capped at max_srq_wr: creating above the device's max_srq_wr must fail",
		hooks: func() *hooks {
			return &hooks{
				create: func(a drivers.SRQAttr, _ drivers.CreateVariant) (drivers.SRQAttr, int) {
					if a.MaxSGE == 1 && a.MaxWR > emuInfo.MaxSRQWR {
						a.MaxWR = emuInfo.MaxSRQWR
					}
					return a, 0
				},
				written: func(req, got drivers.SRQAttr) drivers.SRQAttr {
					got.MaxWR = max(got.MaxWR, req.MaxWR)
					return got
				},
			}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Other(emuInfo.MaxSRQWR+1, 1, drivers.CreatePlain)
		},
	},
	{
		Name: "create-ex-cq-enomem", Rule: "CREATE-EX", Subtle: true,
		Description: "ibv_create_srq_ex with IBV_SRQ_INIT_ATTR_CQ tries to take a reference on the XRC CQ path and fails with ENOMEM; adding the CQ must succeed or fail with EOPNOTSUPP",
		hooks: func() *hooks {
			return &hooks{create: func(a drivers.SRQAttr, v drivers.CreateVariant) (drivers.SRQAttr, int) {
				if v == drivers.CreateExCQ {
					return a, eNOMEM
				}
				return a, 0
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Other(4, 1, drivers.CreateExCQ)
		},
	},
	{
		Name: "create-limit-applied-at-first-qp", Rule: "CREATE-LIMIT", Subtle: true,
		Description: "the srq_limit given at create is kept in the SRQ context and copied into the hardware when the first QP is attached, arming the SRQ: a limit given at create must not arm it",
		hooks: func() *hooks {
			return &hooks{createQP: func(s *srq, _ drivers.QPType, _ drivers.RecvCaps) int {
				if len(s.qps) == 0 && s.req.SRQLimit != 0 {
					s.innerLimit(s.req.SRQLimit)
				}
				return 0
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 2)
			s.Query()
			q := s.QP(drivers.RC)
			s.Up(q)
			s.PostN(2, 1, 64)
			s.Send(q, 8)
			s.Events()
			s.Query()
		},
	},
	{
		Name: "query-maxwr-minus-outstanding", Rule: "QUERY-ATTR",
		Description: "query reports as max_wr the free slots (the capacity minus the outstanding WRs), a counter meant for the post path: max_wr must read as created or resized",
		hooks: func() *hooks {
			return &hooks{query: editQuery(func(s *srq, a *drivers.SRQAttr) {
				a.MaxWR -= uint32(min(s.outstanding(), int(a.MaxWR)))
			})}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Post(WR(1, 8))
			s.Query()
		},
	},
	{
		Name: "query-sge-of-last-wr", Rule: "QUERY-ATTR", Subtle: true,
		Description: "query reports as max_sge the num_sge of the last list posted with several WRs (a cached WQE size the batch path overwrites): max_sge must read as created",
		hooks: func() *hooks {
			last := -1
			return &hooks{
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					e, bad := s.innerPost(wrs)
					if e == 0 && len(wrs) > 1 {
						last = max(0, wrs[len(wrs)-1].NumSGE)
					}
					return e, bad
				},
				query: editQuery(func(s *srq, a *drivers.SRQAttr) {
					if last >= 0 {
						a.MaxSGE = uint32(last)
					}
				}),
			}
		},
		Witness: func(s *Script) {
			s.Create(4, 3, 0)
			s.Post(WR(1, 8), WR(2, 8))
			s.Query()
		},
	},
	{
		Name: "query-limit-from-create", Rule: "QUERY-LIMIT", Subtle: true,
		Description: "until the SRQ is first armed, query returns the srq_limit given at create from the driver's copy of the create attributes, though the SRQ is not armed: an unarmed SRQ must read 0",
		hooks: func() *hooks {
			armed := false
			return &hooks{
				limit: func(s *srq, l uint32) int {
					armed = true
					return s.innerLimit(l)
				},
				query: editQuery(func(s *srq, a *drivers.SRQAttr) {
					if !armed && a.SRQLimit == 0 {
						a.SRQLimit = s.req.SRQLimit
					}
				}),
			}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 3)
			s.Query()
		},
	},
	{
		Name: "destroy-busy-after-qp-error", Rule: "DESTROY-BUSY", Subtle: true,
		Description: "a QP that went through ERR leaks its reference on the SRQ, so once every QP is destroyed ibv_destroy_srq still fails with EBUSY; with no QP attached it must succeed",
		hooks: func() *hooks {
			return &hooks{destroy: func(s *srq) (int, error) {
				for _, q := range s.qps {
					if q.state == drivers.Err || q.been(drivers.Err) {
						return eBUSY, nil
					}
				}
				return s.in.Destroy()
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Modify(q, drivers.Err)
			s.DestroyQP(q)
			s.DestroySRQ()
		},
	},
	{
		Name: "destroy-ud-only-einval", Rule: "DESTROY-BUSY", Subtle: true,
		Description: "when only UD QPs hold the SRQ, the destroy path's usecnt test falls to a generic check and fails with EINVAL instead of EBUSY",
		hooks: func() *hooks {
			return &hooks{destroy: func(s *srq) (int, error) {
				e, err := s.in.Destroy()
				if e != eBUSY {
					return e, err
				}
				for _, q := range s.qps {
					if !q.gone && q.typ != drivers.UD {
						return e, err
					}
				}
				return eINVAL, err
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.QP(drivers.UD)
			s.DestroySRQ()
		},
	},
	{
		Name: "arming-restores-created-max-wr", Rule: "MODIFY-ONLY-MASKED", Subtle: true,
		Description: "arming the limit writes the whole SRQ context from the attributes kept at create, so after a resize a limit modify puts max_wr back to its created value: a modify of srq_limit alone must leave max_wr as resized",
		hooks: func() *hooks {
			var created uint32
			return &hooks{
				made: func(s *srq) { created = s.maxWR },
				limit: func(s *srq, l uint32) int {
					e := s.innerLimit(l)
					if e == 0 && s.maxWR != created {
						s.innerResize(created)
					}
					return e
				},
			}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Resize(8)
			s.Limit(2)
			s.Query()
		},
	},
	{
		Name: "same-size-resize-disarms", Rule: "MODIFY-ONLY-MASKED", Subtle: true,
		Description: "a resize to the current max_wr takes a shortcut that sends the modify with the limit bit set and a zeroed limit, disarming the SRQ: a resize must not change srq_limit",
		hooks: func() *hooks {
			return &hooks{resize: func(s *srq, n uint32) int {
				if n == s.maxWR && s.armed != 0 {
					s.innerLimit(0)
				}
				return s.innerResize(n)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Limit(2)
			s.Resize(4)
			s.Query()
		},
	},
	{
		Name: "resize-refused-with-ud-qp", Rule: "RESIZE-OPTIONAL", Subtle: true,
		Description: "the device advertises IBV_DEVICE_SRQ_RESIZE, but while a UD QP is attached resize fails with EOPNOTSUPP (the UD path cannot move its ring): where the capability is advertised resize must work",
		hooks: func() *hooks {
			return &hooks{resize: func(s *srq, n uint32) int {
				for _, q := range s.qps {
					if !q.gone && q.typ == drivers.UD {
						return eOPNOTSUPP
					}
				}
				return s.innerResize(n)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.QP(drivers.UD)
			s.Resize(8)
			s.Query()
		},
	},
	{
		Name: "resize-zero-accepted-when-empty", Rule: "RESIZE-BOUNDS", Subtle: true,
		Description: "a resize to 0 on an SRQ with nothing outstanding is taken as 'shrink to the count' and returns 0 without changing anything: a resize to 0 must fail with EINVAL",
		hooks: func() *hooks {
			return &hooks{resize: func(s *srq, n uint32) int {
				if n == 0 && s.outstanding() == 0 {
					return 0
				}
				return s.innerResize(n)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Resize(0)
		},
	},
	{
		Name: "resize-above-max-enomem", Rule: "RESIZE-BOUNDS", Subtle: true,
		Description: "a resize above max_srq_wr tries to allocate the new ring before it checks the bound and fails with ENOMEM instead of EINVAL",
		hooks: func() *hooks {
			return &hooks{resize: func(s *srq, n uint32) int {
				if n > s.info.MaxSRQWR {
					return eNOMEM
				}
				return s.innerResize(n)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Resize(emuInfo.MaxSRQWR + 1)
		},
	},
	{
		Name: "resize-below-count-enomem", Rule: "RESIZE-BELOW-COUNT", Subtle: true,
		Description: "a resize below the number of outstanding WRs fails with ENOMEM (the allocation of the copy is what fails first) instead of EINVAL",
		hooks: func() *hooks {
			return &hooks{resize: func(s *srq, n uint32) int {
				e := s.innerResize(n)
				if e == eINVAL && n != 0 && n <= s.info.MaxSRQWR && int(n) < s.outstanding() {
					return eNOMEM
				}
				return e
			}}
		},
		Witness: func(s *Script) {
			s.Create(8, 1, 0)
			s.PostN(4, 1, 8)
			s.Resize(2)
		},
	},
	{
		Name: "resize-grow-keeps-old-full-check", Rule: "RESIZE-CAPACITY", Subtle: true,
		Description: "after a resize up, the post path's full check still uses the max_wr of create, so WRs beyond the old capacity fail with ENOMEM: after a resize exactly the new max_wr WRs must fit",
		hooks: func() *hooks {
			var created uint32
			return &hooks{
				made: func(s *srq) { created = s.maxWR },
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					if s.resizes == 0 || s.maxWR <= created {
						return s.innerPost(wrs)
					}
					return postOneShort(s, wrs, created+1)
				},
			}
		},
		Witness: func(s *Script) {
			s.Create(2, 1, 0)
			s.Resize(4)
			s.PostN(4, 1, 8)
		},
	},
}
