package faulty

import (
	"context"

	"github.com/srqconform/srqconform/drivers"
)

// qpBugs are bugs of QP states, QP events and the SRQ error state.
var qpBugs = []Bug{
	bug("recycled-init-to-rts", "QP-TRANSITIONS",
		"the driver keeps the RTR attributes of a QP's first connection after RESET and fills them in itself: a recycled QP's INIT -> RTS is accepted, an illegal transition that must be refused",
		func(s *Script) {
			s.Create(4)
			q := s.Up(drivers.RC)
			s.Modify(q, drivers.Reset, drivers.Init, drivers.RTS)
		},
		func() *hooks {
			return &hooks{modify: func(q *qp, st drivers.QPState) int {
				if st == drivers.RTS && q.state == drivers.Init && q.been[drivers.RTS] > 0 {
					if e := q.modify(drivers.RTR); e != 0 {
						return e
					}
				}
				return q.modify(st)
			}}
		}),

	bug("no-fetch-after-sqd-resume", "QP-FETCH-STATES",
		"SQD -> RTS restarts the send queue but leaves the responder's 'draining' flag set: a resumed QP in RTS answers every consuming message with RNR (drops it on UD) and takes no WR",
		func(s *Script) {
			q := s.Ready(drivers.RC, 1)
			s.Modify(q, drivers.SQD, drivers.RTS)
			s.Send(q, drivers.Send, 8)
			s.Poll(0)
		},
		func() *hooks {
			resumed := map[int]bool{}
			return &hooks{
				modify: func(q *qp, st drivers.QPState) int {
					from := q.state
					e := q.modify(st)
					switch {
					case e != 0:
					case from == drivers.SQD && st == drivers.RTS:
						resumed[q.idx] = true
					case st == drivers.Reset:
						resumed[q.idx] = false
					}
					return e
				},
				deliver: func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
					if resumed[q.idx] && q.state == drivers.RTS && consumes(msg.Opcode) {
						return noFetch(q.typ), nil
					}
					return q.in.Deliver(ctx, msg)
				},
			}
		}),

	bug("recycled-rtr-no-fetch", "QP-FETCH-STATES",
		"a QP brought back through RESET enables its receive path only at RTS: in RTR again it answers consuming messages with RNR (drops them on UD), though a QP in RTR takes a WR",
		func(s *Script) {
			s.Create(4)
			q := s.Up(drivers.RC)
			s.Modify(q, drivers.Reset, drivers.Init, drivers.RTR)
			s.Post(Ids(1, 1)...)
			s.Send(q, drivers.Send, 8)
			s.Poll(0)
		},
		func() *hooks {
			return &hooks{deliver: func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
				if q.state == drivers.RTR && q.been[drivers.Reset] > 0 && q.been[drivers.RTS] > 0 && consumes(msg.Opcode) {
					return noFetch(q.typ), nil
				}
				return q.in.Deliver(ctx, msg)
			}}
		}),

	bug("err-deferred-one-message", "QP-NOFETCH-STATES",
		"a modify to ERR is queued to the responder and applied after its next packet: with WRs outstanding, the first message after the modify still takes a WR and completes, though a QP in ERR takes nothing",
		func(s *Script) {
			q := s.Ready(drivers.RC, 2)
			s.Modify(q, drivers.Err)
			s.Events()
			s.Send(q, drivers.Send, 8)
			s.Poll(0)
		},
		func() *hooks {
			deferred := map[int]bool{}
			mute := map[int]bool{}
			apply := func(q *qp) {
				if deferred[q.idx] {
					deferred[q.idx] = false
					mute[q.idx] = true
					q.in.Modify(drivers.Err)
					q.s.sync(q)
					mute[q.idx] = false
				}
			}
			return &hooks{
				modify: func(q *qp, st drivers.QPState) int {
					if st == drivers.Err && fetching(q.state) && q.s.outstanding() > 0 && !deferred[q.idx] {
						deferred[q.idx] = true
						q.enter(drivers.Err)
						q.s.events = append(q.s.events, drivers.Event{Type: evLastWQE, QP: q.idx})
						return 0
					}
					apply(q)
					return q.modify(st)
				},
				event: func(_ *srq, ev drivers.Event) bool {
					return !(ev.Type == evLastWQE && ev.QP >= 0 && mute[ev.QP])
				},
				deliver: func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
					if !deferred[q.idx] {
						return q.in.Deliver(ctx, msg)
					}
					st, err := q.in.Deliver(ctx, msg)
					q.s.sync(q)
					apply(q)
					q.state = drivers.Err
					return st, err
				},
			}
		}),

	bug("ud-buffers-when-recycled", "QP-BEFORE-RTR",
		"a UD QP brought back through RESET keeps its old receive context: messages arriving in RESET or INIT are held and processed at RTR, where the documented profile drops them",
		func(s *Script) {
			s.Create(4)
			q := s.Up(drivers.UD)
			s.Modify(q, drivers.Reset, drivers.Init)
			s.Post(Ids(1, 1)...)
			s.Send(q, drivers.Send, 8)
			s.Modify(q, drivers.RTR)
			s.Poll(0)
		},
		func() *hooks {
			held := map[int][]drivers.Message{}
			return &hooks{
				deliver: func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
					if q.typ == drivers.UD && q.been[drivers.RTS] > 0 && (q.state == drivers.Reset || q.state == drivers.Init) {
						held[q.idx] = append(held[q.idx], msg)
						return peerOK, nil
					}
					return q.in.Deliver(ctx, msg)
				},
				modify: func(q *qp, st drivers.QPState) int {
					e := q.modify(st)
					if e != 0 {
						return e
					}
					switch st {
					case drivers.RTR:
						for _, m := range held[q.idx] {
							q.in.Deliver(context.Background(), m)
						}
						fallthrough
					case drivers.Err:
						held[q.idx] = nil
					}
					return e
				},
			}
		}),

	bug("last-wqe-missing-on-error-completion", "QP-LAST-WQE",
		"QP_LAST_WQE_REACHED is raised from the modify path only: a QP that an error completion moves to ERR (a message too long on RC) enters ERR without the event",
		func(s *Script) {
			s.Create(4)
			q := s.Up(drivers.RC)
			s.Post(WR(1, 16))
			s.Send(q, drivers.Send, 64)
			s.Events()
		},
		func() *hooks {
			in := false
			return &hooks{
				deliver: func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
					in = true
					st, err := q.in.Deliver(ctx, msg)
					q.s.sync(q)
					in = false
					return st, err
				},
				event: func(_ *srq, ev drivers.Event) bool { return !(in && ev.Type == evLastWQE) },
			}
		}),

	bug("fatal-on-ud-oversize", "QP-ERROR-EVENT",
		"the UD receive path shares the RC error handler: a UD message too long raises QP_FATAL, where an error event comes only on an RC QP that an error completion moved to ERR",
		func(s *Script) {
			s.Create(4)
			q := s.Up(drivers.UD)
			s.Post(WR(1, 64))
			s.Send(q, drivers.Send, 100)
			s.Events()
		},
		func() *hooks {
			return &hooks{completion: func(s *srq, q *qp, c *drivers.Completion, _ *entry) {
				if q != nil && q.typ == drivers.UD && c.Status == wcLocLenErr {
					s.events = append(s.events, drivers.Event{Type: evFatal, QP: q.idx})
				}
			}}
		}),

	bug("flush-wrid-zero", "QP-FLUSH-INPROGRESS",
		"the flush completion of the WR being filled reads wr_id from the ring slot the fetch already cleared: it completes with WR_FLUSH_ERR but wr_id 0, not that WR's",
		func(s *Script) {
			q := s.Ready(drivers.RC, 1)
			s.First(q, 100)
			s.Modify(q, drivers.Err)
			s.Poll(0)
		},
		func() *hooks {
			return &hooks{completion: func(_ *srq, _ *qp, c *drivers.Completion, _ *entry) {
				if c.Status == wcFlushErr {
					c.WRID = 0
				}
			}}
		}),

	bug("srq-err-silent-without-active-qp", "SRQ-ERR-EVENT",
		"the SRQ error event is dispatched through the handler of the first QP able to receive: with no QP in RTR, RTS, SQD or SQE, the SRQ enters error and no IBV_EVENT_SRQ_ERR is raised",
		func(s *Script) {
			s.Create(4)
			s.QP(drivers.RC)
			s.InjectError()
			s.Events()
		},
		func() *hooks {
			return &hooks{event: func(s *srq, ev drivers.Event) bool {
				if ev.Type != evSRQErr {
					return true
				}
				for _, q := range s.live() {
					if fetching(q.state) {
						return true
					}
				}
				return false
			}}
		}),

	bug("srq-err-missed-by-late-qp", "SRQ-ERR-NOFETCH",
		"the SRQ's error state is latched into the contexts of the QPs able to receive when it happens; a QP brought up to RTR afterwards never sees it and keeps fetching from the SRQ in error",
		func(s *Script) {
			s.Create(4)
			s.Up(drivers.RC)
			b := s.QP(drivers.RC)
			s.Post(Ids(1, 2)...)
			s.InjectError()
			s.Events()
			s.Modify(b, drivers.Init, drivers.RTR, drivers.RTS)
			s.Send(b, drivers.Send, 8)
			s.Poll(0)
		},
		func() *hooks {
			errored := false
			latched := map[int]bool{}
			return &hooks{
				inject: func(s *srq) error {
					if !errored {
						errored = true
						s.events = append(s.events, drivers.Event{Type: evSRQErr, QP: -1})
						for _, q := range s.live() {
							latched[q.idx] = fetching(q.state)
						}
					}
					return nil
				},
				deliver: func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
					if latched[q.idx] && fetching(q.state) && consumes(msg.Opcode) {
						return noFetch(q.typ), nil
					}
					return q.in.Deliver(ctx, msg)
				},
			}
		}),

	bug("ud-recv-sge-checked", "QP-SRQ-CAPS",
		"the UD create path validates cap.max_recv_sge against the device even with an SRQ: a UD QP asking for more than max_sge fails with EINVAL, where the caps must be ignored",
		func(s *Script) {
			s.Create(4)
			s.QPCaps(drivers.UD, drivers.RecvCapsAboveSGE)
		},
		func() *hooks {
			return &hooks{createQP: func(s *srq, ctx context.Context, t drivers.QPType, c drivers.RecvCaps) (drivers.QP, int, error) {
				if t == drivers.UD && c == drivers.RecvCapsAboveSGE {
					return nil, eINVAL, nil
				}
				return s.createQP(ctx, t, c)
			}}
		}),
}
