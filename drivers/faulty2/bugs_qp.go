package faulty2

import (
	"context"

	"github.com/srqconform/srqconform/drivers"
)

// lastWQE is IBV_EVENT_QP_LAST_WQE_REACHED on QP i.
func lastWQE(i int) drivers.Event {
	return drivers.Event{Type: drivers.EventQPLastWQEReached, QP: i}
}

// qpBugs break the rules of QPs attached to the SRQ: creation, states,
// and their events.
var qpBugs = []Bug{
	{
		Name: "sqd-to-rts-refused-on-ud", Rule: "QP-TRANSITIONS", Subtle: true,
		Description: "the UD modify path has no SQD -> RTS entry in its attribute table and refuses it with EINVAL; the transition is legal",
		hooks: func() *hooks {
			return &hooks{modify: func(q *qp, st drivers.QPState) int {
				if q.typ == drivers.UD && q.state == drivers.SQD && st == drivers.RTS {
					return eINVAL
				}
				return q.innerModify(st)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.UD)
			s.Modify(q, drivers.SQD)
			s.Modify(q, drivers.RTS)
		},
	},
	{
		Name: "rtr-to-rts-refused-after-reset", Rule: "QP-TRANSITIONS", Subtle: true,
		Description: "a QP brought back through RESET keeps a stale attribute mask, and its RTR -> RTS is refused with EINVAL the second time round; the transition is legal",
		hooks: func() *hooks {
			return &hooks{modify: func(q *qp, st drivers.QPState) int {
				if q.state == drivers.RTR && st == drivers.RTS && q.been(drivers.RTS) {
					return eINVAL
				}
				return q.innerModify(st)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Modify(q, drivers.Reset)
			s.Up(q)
		},
	},
	{
		Name: "rtr-deaf-before-first-rts", Rule: "QP-FETCH-STATES", Subtle: true,
		Description: "the responder of an RC QP is enabled only when the QP first reaches RTS, so a QP in RTR that has never been in RTS drops consuming messages instead of taking a WR",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				if q.typ == drivers.RC && q.state == drivers.RTR && !q.been(drivers.RTS) && consumes(msg) {
					return q.dropped(), nil
				}
				return q.innerDeliver(ctx, msg)
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			q := s.QP(drivers.RC)
			s.Modify(q, drivers.Init)
			s.Modify(q, drivers.RTR)
			s.PostN(1, 1, 64)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "dead-qp-served-by-sibling", Rule: "QP-NOFETCH-STATES", Subtle: true,
		Description: "the responder finds the QP context through a per-type cache that still points at another QP of the same type, so a message to a QP in RESET, INIT or ERR is taken by a live sibling's context and completes on the dead QP's number",
		hooks: func() *hooks {
			return &hooks{
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					if q.fetches() || !consumes(msg) {
						return q.innerDeliver(ctx, msg)
					}
					for _, o := range q.others() {
						if o.typ == q.typ && (o.state == drivers.RTR || o.state == drivers.RTS) && o.partial == nil {
							n := len(q.s.cq)
							st, err := o.innerDeliver(ctx, msg)
							for i := n; i < len(q.s.cq); i++ {
								q.s.cq[i].QP = q.idx
							}
							return st, err
						}
					}
					return q.innerDeliver(ctx, msg)
				},
			}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			a := s.QP(drivers.RC)
			b := s.QP(drivers.RC)
			s.Up(a)
			s.Modify(b, drivers.Init)
			s.PostN(2, 1, 64)
			s.Send(b, 8)
			s.Poll()
		},
	},
	{
		Name: "rc-init-buffers-first-message", Rule: "QP-BEFORE-RTR", Subtle: true,
		Description: "an RC QP in INIT keeps the first message that arrives in a one-entry staging buffer and processes it at RTR (later ones are dropped); the documented semantics drop messages arriving before RTR",
		hooks: func() *hooks {
			staged := map[*qp]drivers.Message{}
			return &hooks{
				deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
					if _, full := staged[q]; q.typ == drivers.RC && q.state == drivers.Init && consumes(msg) && !full {
						staged[q] = msg
						return drivers.PeerOK, nil
					}
					return q.innerDeliver(ctx, msg)
				},
				modify: func(q *qp, st drivers.QPState) int {
					e := q.innerModify(st)
					msg, ok := staged[q]
					if e != 0 || !ok || st == drivers.Init {
						return e
					}
					delete(staged, q)
					if st == drivers.RTR {
						q.innerDeliver(context.Background(), msg)
					}
					return e
				},
			}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			q := s.QP(drivers.RC)
			s.PostN(2, 1, 64)
			s.Modify(q, drivers.Init)
			s.Send(q, 8)
			s.Modify(q, drivers.RTR)
			s.Poll()
		},
	},
	{
		Name: "last-wqe-lost-from-sqd", Rule: "QP-LAST-WQE", Subtle: true,
		Description: "the SQD -> ERR path goes through the drain completion handler, which does not call the SRQ notifier: a QP entering ERR from SQD raises no IBV_EVENT_QP_LAST_WQE_REACHED",
		hooks: func() *hooks {
			from := map[*qp]bool{}
			return &hooks{
				modify: func(q *qp, st drivers.QPState) int {
					if q.state == drivers.SQD && st == drivers.Err {
						from[q] = true
						defer delete(from, q)
					}
					return q.innerModify(st)
				},
				event: dropEvents(func(s *srq, e drivers.Event) bool {
					q := s.qp(e.QP)
					return e.Type == drivers.EventQPLastWQEReached && q != nil && from[q]
				}),
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Modify(q, drivers.SQD)
			s.Modify(q, drivers.Err)
			s.Events()
		},
	},
	{
		Name: "last-wqe-names-first-qp", Rule: "QP-LAST-WQE", Subtle: true,
		Description: "the LAST_WQE_REACHED event is raised on the SRQ's first attached QP (the list head the notifier walks from) instead of the QP that entered ERR",
		hooks: func() *hooks {
			return &hooks{event: func(s *srq, e drivers.Event) []drivers.Event {
				if e.Type == drivers.EventQPLastWQEReached && len(s.qps) > 0 {
					e.QP = s.qps[0].idx
				}
				return []drivers.Event{e}
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.QP(drivers.RC)
			q := s.QP(drivers.RC)
			s.Up(q)
			s.Modify(q, drivers.Err)
			s.Events()
		},
	},
	{
		Name: "last-wqe-again-on-reset", Rule: "QP-LAST-WQE", Subtle: true,
		Description: "moving a QP from ERR to RESET runs the flush again and raises a second LAST_WQE_REACHED for the same entry into ERR; it comes once",
		hooks: func() *hooks {
			return &hooks{modify: func(q *qp, st drivers.QPState) int {
				from := q.state
				e := q.innerModify(st)
				if e == 0 && from == drivers.Err && st == drivers.Reset {
					q.s.ev = append(q.s.ev, lastWQE(q.idx))
				}
				return e
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Modify(q, drivers.Err)
			s.Modify(q, drivers.Reset)
			s.Events()
		},
	},
	{
		Name: "fatal-event-on-flush", Rule: "QP-ERROR-EVENT", Subtle: true,
		Description: "the flush of the WR a QP was filling when a modify moved it to ERR goes through the receive error handler, which raises IBV_EVENT_QP_FATAL: an affiliated error event comes only for a QP an error completion moved to ERR",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(s *srq, f fetch, c *drivers.Completion) {
				if f.q != nil && c.Status == drivers.WCWRFlushErr {
					s.ev = append(s.ev, drivers.Event{Type: drivers.EventQPFatal, QP: f.q.idx})
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 8192)
			s.First(q, 6000)
			s.Modify(q, drivers.Err)
			s.Poll()
			s.Events()
		},
	},
	{
		Name: "access-event-for-too-long", Rule: "QP-ERROR-EVENT", Subtle: true,
		Description: "a too-long message on RC is reported through the protection-check path and raises IBV_EVENT_QP_ACCESS_ERR; a message too long may raise QP_FATAL only",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(s *srq, f fetch, c *drivers.Completion) {
				if f.q != nil && f.q.typ == drivers.RC && c.Status == drivers.WCLocLenErr {
					s.ev = append(s.ev, drivers.Event{Type: drivers.EventQPAccessErr, QP: f.q.idx})
				}
			})}
		},
		Witness: tooLong(drivers.RC),
	},
	{
		Name: "flush-names-srq-head", Rule: "QP-FLUSH-INPROGRESS", Subtle: true,
		Description: "the flush of the WR a QP was filling when it entered ERR takes wr_id from the SRQ's head instead of the QP's WQE, so the flush completion names a WR still outstanding",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(s *srq, _ fetch, c *drivers.Completion) {
				if c.Status == drivers.WCWRFlushErr && len(s.fifo) > 0 {
					c.WRID = s.fifo[0].ID
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(2, 1, 8192)
			s.First(q, 6000)
			s.Modify(q, drivers.Err)
			s.Poll()
		},
	},
	{
		Name: "srq-error-ud-still-fetches", Rule: "SRQ-ERR-NOFETCH", Subtle: true,
		Description: "the UD receive path does not test the SRQ's error state and keeps taking WRs from an SRQ in error",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				s := q.s
				if !s.errored || q.typ != drivers.UD || !sends(msg) || !q.fetches() || len(s.fifo) == 0 {
					return q.innerDeliver(ctx, msg)
				}
				w := s.fifo[0]
				s.fifo = s.fifo[1:]
				s.fetched++
				c := drivers.Completion{WRID: w.ID, QP: q.idx, Status: drivers.WCLocLenErr}
				if q.need(msg) <= w.size() {
					c.Status, c.Opcode, c.ByteLen = drivers.WCSuccess, drivers.WCRecv, uint32(q.need(msg))
					c.HasImm, c.Imm = msg.Opcode == drivers.SendImm, msg.Imm
					if msg.Opcode != drivers.SendImm {
						c.Imm = 0
					}
					c.Pattern, c.HasPattern = msg.Pattern, msg.Len > 0
				}
				s.cq = append(s.cq, c)
				return drivers.PeerOK, nil
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.UD)
			s.PostN(1, 1, 64)
			s.InjectSRQError()
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "ud-create-after-rc-refused", Rule: "QP-CREATE",
		Subtle:      true,
		Description: "the SRQ records the transport of its first QP and refuses (EINVAL) a UD QP once an RC QP was attached; QPs of each type can be created attached to the SRQ",
		hooks: func() *hooks {
			return &hooks{createQP: func(s *srq, t drivers.QPType, _ drivers.RecvCaps) int {
				if t != drivers.UD {
					return 0
				}
				for _, q := range s.qps {
					if q.typ == drivers.RC {
						return eINVAL
					}
				}
				return 0
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.QP(drivers.RC)
			s.QP(drivers.UD)
		},
	},
	{
		Name: "recv-caps-checked-after-resize", Rule: "QP-SRQ-CAPS", Subtle: true,
		Description: "a resize copies the SRQ's new size into the QP-creation template, and from then on a QP created with the SRQ has its cap.max_recv_wr checked against max_qp_wr (EINVAL above it): with an SRQ the receive caps are ignored",
		hooks: func() *hooks {
			return &hooks{createQP: func(s *srq, _ drivers.QPType, c drivers.RecvCaps) int {
				if s.resizes > 0 && c == drivers.RecvCapsAboveWR {
					return eINVAL
				}
				return 0
			}}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.Resize(8)
			s.QPCaps(drivers.RC, drivers.RecvCapsAboveWR)
		},
	},
}
