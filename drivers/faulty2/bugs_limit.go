package faulty2

import (
	"context"

	"github.com/srqconform/srqconform/drivers"
)

// limitEvent is IBV_EVENT_SRQ_LIMIT_REACHED.
var limitEvent = drivers.Event{Type: drivers.EventSRQLimitReached, QP: -1}

// limitBugs break the rules of the SRQ limit.
var limitBugs = []Bug{
	{
		Name: "limit-bound-stale-after-grow", Rule: "LIMIT-ARM", Subtle: true,
		Description: "after a resize up, arming checks the limit against the max_wr of create and refuses a limit between the old and the new max_wr with EINVAL, though it is within bounds and must arm",
		hooks: func() *hooks {
			var created uint32
			return &hooks{
				made: func(s *srq) { created = s.maxWR },
				limit: func(s *srq, l uint32) int {
					if l > created {
						return eINVAL
					}
					return s.innerLimit(l)
				},
			}
		},
		Witness: func(s *Script) {
			s.Create(2, 1, 0)
			s.Resize(8)
			s.Limit(6)
			s.Query()
		},
	},
	{
		Name: "arm-deferred-to-next-post", Rule: "LIMIT-ARM", Subtle: true,
		Description: "the new limit is written to the device with the next post's doorbell, so a fetch between the modify and the next post finds the SRQ unarmed and no event comes (query reads the cached value): a successful modify must arm at once",
		hooks: func() *hooks {
			var pending uint32
			return &hooks{
				limit: func(s *srq, l uint32) int {
					if l == 0 {
						pending = 0
						return s.innerLimit(0)
					}
					if l > s.maxWR {
						return eINVAL
					}
					pending = l
					return 0
				},
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					if pending != 0 {
						s.innerLimit(pending)
						pending = 0
					}
					return s.innerPost(wrs)
				},
				query: editQuery(func(s *srq, a *drivers.SRQAttr) {
					if pending != 0 {
						a.SRQLimit = pending
					}
				}),
			}
		},
		Witness: armThenFetch(drivers.RC),
	},
	{
		Name: "first-arm-bound-unchecked", Rule: "LIMIT-BOUND", Subtle: true,
		Description: "the bound is checked on the re-arm path only: the first arming of an SRQ accepts a limit above max_wr and arms it at max_wr, where arming above the bound must fail with EINVAL and change nothing",
		hooks: func() *hooks {
			armedOnce := false
			return &hooks{limit: func(s *srq, l uint32) int {
				first := !armedOnce && l != 0
				armedOnce = armedOnce || l != 0
				if first && l > s.maxWR {
					return s.innerLimit(s.maxWR)
				}
				return s.innerLimit(l)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Limit(9)
			s.Query()
		},
	},
	{
		Name: "limit-event-one-fetch-late", Rule: "LIMIT-FIRE", Subtle: true,
		Description: "the limit is compared with the count read before the dequeue, so the event comes one fetch after the one that left fewer WRs than the limit (and not at all if no other fetch follows)",
		hooks: func() *hooks {
			held := false
			return &hooks{
				event: dropEvents(func(_ *srq, e drivers.Event) bool {
					held = held || e.Type == drivers.EventSRQLimitReached
					return e.Type == drivers.EventSRQLimitReached
				}),
				completion: editCompletion(func(s *srq, _ fetch, c *drivers.Completion) {
					if held {
						held = false
						s.ev = append(s.ev, limitEvent)
					}
				}),
			}
		},
		Witness: armThenFetch(drivers.RC),
	},
	{
		Name: "limit-unchecked-on-ud-fetch", Rule: "LIMIT-FIRE", Subtle: true,
		Description: "the UD receive path dequeues without calling the limit check, so a UD message that leaves fewer WRs than the armed limit raises no event (the SRQ is still disarmed by the dequeue helper)",
		hooks: func() *hooks {
			ud := false
			return &hooks{
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					ud = q.typ == drivers.UD
					defer func() { ud = false }()
					return q.innerDeliver(ctx, msg)
				},
				event: dropEvents(func(_ *srq, e drivers.Event) bool {
					return ud && e.Type == drivers.EventSRQLimitReached
				}),
			}
		},
		Witness: armThenFetch(drivers.UD),
	},
	{
		Name: "limit-event-again-on-rnr", Rule: "LIMIT-ONCE", Subtle: true,
		Description: "the RNR path of an RC QP calls the limit notifier without testing whether the SRQ is still armed, so after the limit fired the next receiver-not-ready raises a second event without a new arming",
		hooks: func() *hooks {
			fired := false
			return &hooks{
				limit: func(s *srq, l uint32) int {
					fired = false
					return s.innerLimit(l)
				},
				event: onLimitEvent(func() { fired = true }),
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					st, err := q.innerDeliver(ctx, msg)
					if st == drivers.PeerRNR && fired {
						fired = false
						q.s.ev = append(q.s.ev, limitEvent)
					}
					return st, err
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.Limit(1)
			s.Send(q, 8)
			s.Events()
			s.Send(q, 8)
			s.Events()
		},
	},
	{
		Name: "limit-kept-after-ud-fire", Rule: "LIMIT-AFTER-FIRE", Subtle: true,
		Description: "when the limit fires on a UD QP's fetch, the UD path disarms the SRQ but does not clear the value query reads, so srq_limit keeps the fired limit until the next modify: after the event it must read 0",
		hooks: func() *hooks {
			ud := false
			var shown, armed uint32
			return &hooks{
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					ud = q.typ == drivers.UD
					defer func() { ud = false }()
					return q.innerDeliver(ctx, msg)
				},
				limit: func(s *srq, l uint32) int {
					shown, armed = 0, l
					return s.innerLimit(l)
				},
				event: onLimitEvent(func() {
					if ud {
						shown = armed
					}
				}),
				query: editQuery(func(_ *srq, a *drivers.SRQAttr) {
					if shown != 0 {
						a.SRQLimit = shown
					}
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.UD)
			s.PostN(3, 1, 64)
			s.Limit(3)
			s.Send(q, 8)
			s.Events()
			s.Query()
		},
	},
	{
		Name: "disarm-ignored-when-event-due", Rule: "LIMIT-DISARM", Subtle: true,
		Description: "a limit of 0 is dropped when fewer WRs are outstanding than the armed limit (the driver will not lose an event it thinks is due), though query then reads 0; the next fetch raises the limit event after the SRQ was disarmed",
		hooks: func() *hooks {
			hidden := false
			return &hooks{
				limit: func(s *srq, l uint32) int {
					if l == 0 && s.armed != 0 && s.outstanding() < int(s.armed) {
						hidden = true
						return 0
					}
					hidden = false
					return s.innerLimit(l)
				},
				query: editQuery(func(s *srq, a *drivers.SRQAttr) {
					if hidden {
						a.SRQLimit = 0
					}
				}),
				event: onLimitEvent(func() { hidden = false }),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(8, 1, drivers.RC)
			s.PostN(2, 1, 64)
			s.Limit(4)
			s.Limit(0)
			s.Query()
			s.Send(q, 8)
			s.Events()
		},
	},
	{
		Name: "srq-error-event-lost-when-armed", Rule: "SRQ-ERR-EVENT", Subtle: true,
		Description: "the SRQ's event slot is shared by the limit and the error event, and while the SRQ is armed the error event is taken for a pending limit event and dropped: an SRQ entering error must raise IBV_EVENT_SRQ_ERR",
		hooks: func() *hooks {
			return &hooks{event: dropEvents(func(s *srq, e drivers.Event) bool {
				return e.Type == drivers.EventSRQErr && s.armed != 0
			})}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Limit(2)
			s.InjectSRQError()
			s.Events()
		},
	},
}
