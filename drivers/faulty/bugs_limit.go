package faulty

import (
	"context"

	"github.com/srqconform/srqconform/drivers"
)

// shownLimit is a limit the driver's shadow shows while the emulator is
// armed with another value (or not at all).
type shownLimit struct{ l uint32 }

// query reads the emulator, showing the shadow's limit while it is set and
// the emulator is armed (or, with always, whenever it is set).
func (sh *shownLimit) query(s *srq, always bool) (drivers.SRQAttr, int) {
	a, e := s.in.Query()
	if e == 0 && sh.l != 0 && (always || a.SRQLimit != 0) {
		a.SRQLimit = sh.l
	}
	return a, e
}

// arm arms the emulator with as and shows l when fake, else arms it with l.
func (sh *shownLimit) arm(s *srq, l uint32, fake bool, as uint32) int {
	sh.l = 0
	if fake {
		sh.l = l
		return s.in.ModifyLimit(as)
	}
	return s.in.ModifyLimit(l)
}

// limitBugs are bugs of the SRQ limit.
var limitBugs = []Bug{
	bug("arm-ignored-while-empty", "LIMIT-ARM",
		"arming writes the watermark through a doorbell the device ignores while the queue is empty: a limit armed on an empty SRQ returns 0 and query shows it, but the SRQ is not armed and no event ever comes",
		func(s *Script) {
			s.Create(8)
			q := s.Up(drivers.RC)
			s.Limit(2)
			s.Post(Ids(1, 2)...)
			s.Send(q, drivers.Send, 8)
			s.Events()
		},
		func() *hooks {
			sh := &shownLimit{}
			return &hooks{
				limit: func(s *srq, l uint32) int {
					return sh.arm(s, l, l != 0 && s.outstanding() == 0 && l <= s.capacity, 0)
				},
				query: func(s *srq) (drivers.SRQAttr, int) { return sh.query(s, true) },
			}
		}),

	bug("disarm-lost-after-resize", "LIMIT-DISARM",
		"after a resize the disarm goes to the context the resize replaced: a limit of 0 returns 0 and query reads 0, but the old arming stays live and the event still comes",
		func(s *Script) {
			q := s.Ready(drivers.RC, 3)
			s.Limit(2)
			s.Resize(8)
			s.Limit(0)
			s.Send(q, drivers.Send, 8)
			s.Send(q, drivers.Send, 8)
			s.Events()
		},
		func() *hooks {
			hidden := false
			return &hooks{
				limit: func(s *srq, l uint32) int {
					hidden = false
					if l == 0 && s.resizes > 0 {
						hidden = true
						return 0
					}
					return s.in.ModifyLimit(l)
				},
				query: func(s *srq) (drivers.SRQAttr, int) {
					a, e := s.in.Query()
					if e == 0 && hidden {
						a.SRQLimit = 0
					}
					return a, e
				},
			}
		}),

	bug("limit-bound-stale-after-resize", "LIMIT-BOUND",
		"the limit's bound check uses max_wr as created, not as resized: after a resize down, a limit above the new max_wr is accepted where it must fail with EINVAL",
		func(s *Script) {
			s.Create(8)
			s.Resize(4)
			s.Limit(6)
			s.Query()
		},
		func() *hooks {
			sh := &shownLimit{}
			return &hooks{
				limit: func(s *srq, l uint32) int {
					return sh.arm(s, l, s.resizes > 0 && l > s.capacity && l <= s.attr.MaxWR, s.capacity)
				},
				query: func(s *srq) (drivers.SRQAttr, int) { return sh.query(s, false) },
			}
		}),

	bug("limit-late-after-wrap", "LIMIT-FIRE",
		"once the producer index has wrapped, the watermark is compared with a count one too high: the event comes one fetch late, when the count is two below the limit instead of one",
		func(s *Script) {
			q := s.Ready(drivers.RC, 4)
			for range 4 {
				s.Send(q, drivers.Send, 8)
			}
			s.Post(Ids(10, 3)...)
			s.Limit(2)
			s.Send(q, drivers.Send, 8)
			s.Events()
			s.Send(q, drivers.Send, 8)
			s.Events()
		},
		func() *hooks {
			sh := &shownLimit{}
			return &hooks{
				limit: func(s *srq, l uint32) int {
					return sh.arm(s, l, l >= 2 && s.posted >= uint64(s.capacity) && l <= s.capacity, l-1)
				},
				query: func(s *srq) (drivers.SRQAttr, int) { return sh.query(s, false) },
			}
		}),

	bug("limit-skipped-by-write-imm", "LIMIT-FIRE",
		"the watermark check sits in the Send path only: a WR consumed by an RDMA Write with Immediate that leaves fewer WRs than the limit raises no event (it comes at the next Send)",
		func(s *Script) {
			q := s.Ready(drivers.RC, 3)
			s.Limit(3)
			s.SendImm(q, drivers.WriteImm, 16, 5)
			s.Events()
		},
		func() *hooks {
			return &hooks{deliver: func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
				l := q.s.innerLimit()
				if msg.Opcode != drivers.WriteImm || l == 0 {
					return q.in.Deliver(ctx, msg)
				}
				q.s.in.ModifyLimit(0)
				st, err := q.in.Deliver(ctx, msg)
				q.s.in.ModifyLimit(l)
				return st, err
			}}
		}),

	bug("limit-refires-on-resize", "LIMIT-ONCE",
		"resize re-evaluates the watermark against the last limit without looking at the armed flag: a resize after the event, with the count still below that limit, raises the event a second time for one arming",
		func(s *Script) {
			s.FireLimit()
			s.Events()
			s.Resize(8)
			s.Events()
		},
		func() *hooks {
			var fired uint32
			return &hooks{
				limit: func(s *srq, l uint32) int {
					fired = 0
					return s.in.ModifyLimit(l)
				},
				event: func(s *srq, ev drivers.Event) bool {
					if ev.Type == evLimit {
						fired = s.limitSet
					}
					return true
				},
				resize: func(s *srq, n uint32) int {
					e := s.resize(n)
					if e == 0 && fired != 0 && s.outstanding() < fired && s.innerLimit() == 0 {
						s.events = append(s.events, drivers.Event{Type: evLimit, QP: -1})
					}
					return e
				},
			}
		}),

	bug("limit-fires-per-qp", "LIMIT-ONCE",
		"the armed flag is kept per QP context: after the event, the first fetch by each other QP below the limit raises it again, more than once per arming",
		func(s *Script) {
			s.Create(4)
			a := s.Up(drivers.RC)
			b := s.Up(drivers.RC)
			s.Post(Ids(1, 3)...)
			s.Limit(3)
			s.Send(a, drivers.Send, 8)
			s.Send(b, drivers.Send, 8)
			s.Events()
		},
		func() *hooks {
			var fired uint32
			done := map[int]bool{}
			return &hooks{
				limit: func(s *srq, l uint32) int {
					fired = 0
					clear(done)
					return s.in.ModifyLimit(l)
				},
				deliver: func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
					s := q.s
					n, f := len(s.events), s.fetched
					st, err := q.in.Deliver(ctx, msg)
					s.sync(q)
					for _, ev := range s.events[n:] {
						if ev.Type == evLimit {
							fired = s.limitSet
							done[q.idx] = true
						}
					}
					if fired != 0 && s.fetched > f && !done[q.idx] && s.outstanding() < fired && s.innerLimit() == 0 {
						done[q.idx] = true
						s.events = append(s.events, drivers.Event{Type: evLimit, QP: -1})
					}
					return st, err
				},
			}
		}),

	bug("limit-reads-armed-until-polled", "LIMIT-AFTER-FIRE",
		"the shadow srq_limit is cleared in the async event handler, which runs when the event is read: between the event and its read, query still shows the limit, where after the event it reads 0",
		func(s *Script) {
			s.FireLimit()
			s.Query()
		},
		func() *hooks {
			sh := &shownLimit{}
			return &hooks{
				limit: func(s *srq, l uint32) int {
					sh.l = 0
					return s.in.ModifyLimit(l)
				},
				event: func(s *srq, ev drivers.Event) bool {
					if ev.Type == evLimit {
						sh.l = s.limitSet
					}
					return true
				},
				events: func(s *srq) ([]drivers.Event, error) {
					sh.l = 0
					ev := s.events
					s.events = nil
					return ev, nil
				},
				query: func(s *srq) (drivers.SRQAttr, int) {
					s.sync(nil)
					return sh.query(s, true)
				},
			}
		}),
}
