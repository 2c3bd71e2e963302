package faulty2

import (
	"context"
	"math/bits"

	"github.com/srqconform/srqconform/drivers"
)

// recvBugs break the rules of fetching WRs and completing them.
var recvBugs = []Bug{
	{
		Name: "fetch-skips-head-after-wrap", Rule: "FETCH-FIFO", Subtle: true,
		Description: "once the producer index has wrapped, the consumer reads the slot after the head first, so completions come in pairs swapped (second, first, fourth, third, ...) instead of in posting order",
		hooks: func() *hooks {
			owe := map[uint64]uint64{}
			return &hooks{completion: editCompletion(func(s *srq, _ fetch, c *drivers.Completion) {
				if id, ok := owe[c.WRID]; ok {
					delete(owe, c.WRID)
					c.WRID = id
				} else if s.wrapped() && len(s.fifo) > 0 {
					next := s.fifo[0].ID
					owe[next] = c.WRID
					c.WRID = next
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(2, 1, drivers.RC)
			s.PostN(2, 1, 64)
			s.Send(q, 8)
			s.Send(q, 8)
			s.PostN(2, 3, 64)
			s.Send(q, 8)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "empty-write-imm-not-consumed", Rule: "FETCH-OPCODES", Subtle: true,
		Description: "an RDMA Write with Immediate of length 0 goes down the responder's no-payload fast path, which acknowledges it without fetching a WR: no WR is consumed and no completion comes, though Write with Immediate consumes a WR",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				if msg.Opcode == drivers.WriteImm && msg.Len == 0 && q.typ == drivers.RC && q.fetches() && len(q.s.fifo) > 0 {
					return drivers.PeerOK, nil
				}
				return q.innerDeliver(ctx, msg)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.Deliver(q, drivers.Message{Opcode: drivers.WriteImm, Imm: 3})
			s.Poll()
		},
	},
	{
		Name: "completion-repeated-after-rnr", Rule: "FETCH-ONCE", Subtle: true,
		Description: "after an RNR NAK the retried packet is matched against the WQE cached for the NAKed one, and the first message that succeeds afterwards writes its completion twice: no WR completes twice",
		hooks: func() *hooks {
			nak := map[*qp]bool{}
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				n := len(q.s.cq)
				st, err := q.innerDeliver(ctx, msg)
				switch {
				case st == drivers.PeerRNR:
					nak[q] = true
				case nak[q] && len(q.s.cq) == n+1 && q.s.cq[n].Status == drivers.WCSuccess:
					nak[q] = false
					q.s.cq = append(q.s.cq, q.s.cq[n])
				}
				return st, err
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Send(q, 8)
			s.PostN(1, 1, 64)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "send-imm-bytelen-counts-imm", Rule: "RECV-COMPLETION", Subtle: true,
		Description: "a Send with Immediate completes with byte_len 4 more than the message (the immediate header counted as payload): byte_len must be the message's length",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
				if c.Status == drivers.WCSuccess && c.Opcode == drivers.WCRecv && c.HasImm && f.msg != nil {
					c.ByteLen += 4
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.Deliver(q, drivers.Message{Opcode: drivers.SendImm, Len: 8, Imm: 5})
			s.Poll()
		},
	},
	{
		Name: "ud-completion-on-first-ud-qp", Rule: "RECV-COMPLETION", Subtle: true,
		Description: "UD completions take the QP from the SRQ's first UD QP (the UD path resolves the QP by type, not by QPN), so a message to a second UD QP completes on the first",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(s *srq, f fetch, c *drivers.Completion) {
				if f.q != nil && f.q.typ == drivers.UD {
					for _, q := range s.qps {
						if q.typ == drivers.UD {
							c.QP = q.idx
							break
						}
					}
				}
			})}
		},
		Witness: func(s *Script) {
			s.Create(4, 1, 0)
			s.QP(drivers.UD)
			q := s.QP(drivers.UD)
			s.Up(q)
			s.PostN(1, 1, 64)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "bytelen-short-on-multi-packet", Rule: "RECV-COMPLETION", Subtle: true,
		Description: "on RC, a Send longer than one MTU completes with byte_len one less than its length (the last packet's payload counted from the wrong offset)",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
				if c.Status == drivers.WCSuccess && c.Opcode == drivers.WCRecv && f.q != nil && f.q.typ == drivers.RC && c.ByteLen > mtu {
					c.ByteLen--
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 8192)
			s.Send(q, 5000)
			s.Poll()
		},
	},
	{
		Name: "send-imm-byte-swapped", Rule: "RECV-IMM", Subtle: true,
		Description: "the immediate of a Send with Immediate is returned in wire (big-endian) order, not converted like the RDMA Write with Immediate path: the completion must carry the sender's immediate",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(_ *srq, _ fetch, c *drivers.Completion) {
				if c.HasImm && c.Opcode == drivers.WCRecv {
					c.Imm = bits.ReverseBytes32(c.Imm)
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.Deliver(q, drivers.Message{Opcode: drivers.SendImm, Len: 8, Imm: 0x01020304})
			s.Poll()
		},
	},
	{
		Name: "write-imm-bytelen-from-wr", Rule: "RECV-WRITE-IMM", Subtle: true,
		Description: "an RDMA Write with Immediate completes with byte_len set to the WR's buffer size (the receive path's default) instead of the write's length",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
				if c.Status == drivers.WCSuccess && c.Opcode == drivers.WCRecvRDMAWithImm && f.found {
					c.ByteLen = uint32(min(f.w.size(), 1<<32-1))
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.Deliver(q, drivers.Message{Opcode: drivers.WriteImm, Len: 16, Imm: 9})
			s.Poll()
		},
	},
	{
		Name: "send-imm-fit-first-sge-only", Rule: "RECV-FIT", Subtle: true,
		Description: "the Send with Immediate path checks the message against the WR's first SGE only, so a Send with Immediate that needs the later SGEs of a WR completes with LOC_LEN_ERR though it fits",
		hooks: func() *hooks {
			return &hooks{deliver: refuseFit(func(q *qp, w wr, msg drivers.Message) bool {
				return msg.Opcode == drivers.SendImm && len(w.SGEs) > 1 && q.need(msg) > sgeBytes(w.SGEs[0])
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 2, drivers.RC)
			s.Post(WR(1, 16, 16))
			s.Deliver(q, drivers.Message{Opcode: drivers.SendImm, Len: 20, Imm: 1})
			s.Poll()
			s.Events()
		},
	},
	{
		Name: "numsge0-empty-send-refused", Rule: "RECV-NUMSGE0", Subtle: true,
		Description: "on RC, an empty Send into a WR posted with num_sge 0 completes with LOC_LEN_ERR (the scatter path treats 'no SGE' as 'no room'), though such a WR holds an empty message",
		hooks: func() *hooks {
			return &hooks{deliver: refuseFit(func(q *qp, w wr, msg drivers.Message) bool {
				return q.typ == drivers.RC && msg.Len == 0 && len(w.SGEs) == 0
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.Post(drivers.RecvWR{ID: 1})
			s.Send(q, 0)
			s.Poll()
		},
	},
	{
		Name: "ud-zero-length-sge-empty", Rule: "SGE-LEN0", Subtle: true,
		Description: "the UD receive path reads an SGE of length 0 as holding nothing (the RC path reads 2^31 bytes), so a UD message that needs such an SGE completes with LOC_LEN_ERR",
		hooks: func() *hooks {
			return &hooks{deliver: refuseFit(func(q *qp, w wr, msg drivers.Message) bool {
				var room uint64
				for _, g := range w.SGEs {
					room += uint64(g.Length)
				}
				return q.typ == drivers.UD && room < w.size() && q.need(msg) > room
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 2, drivers.UD)
			s.Post(WR(1, 48, 0))
			s.Send(q, 64)
			s.Poll()
		},
	},
	{
		Name: "ud-short-first-sge-no-grh", Rule: "UD-GRH", Subtle: true,
		Description: "on UD, when the WR's first SGE is shorter than the 40-byte GRH area the driver puts the payload at its start and reports byte_len without the GRH; byte_len counts the GRH",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
				if c.Status == drivers.WCSuccess && c.Opcode == drivers.WCRecv && f.q != nil && f.q.typ == drivers.UD && f.found &&
					len(f.w.SGEs) > 0 && f.w.SGEs[0].Length > 0 && f.w.SGEs[0].Length < grhBytes && c.ByteLen >= grhBytes {
					c.ByteLen -= grhBytes
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 2, drivers.UD)
			s.Post(WR(1, 16, 64))
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "oversize-multi-sge-truncated", Rule: "RECV-TOO-LARGE", Subtle: true,
		Description: "on RC, a message longer than a WR of several SGEs is scattered until the SGEs run out and completes successfully with byte_len the WR's size, the QP staying up: a message larger than the WR must complete with an error and move an RC QP to ERR",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				w, ok := q.s.head()
				if ok && q.typ == drivers.RC && sends(msg) && q.fetches() && len(w.SGEs) > 1 && uint64(msg.Len) > w.size() {
					msg.Len = uint32(w.size())
				}
				return q.innerDeliver(ctx, msg)
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 2, drivers.RC)
			s.Post(WR(1, 16, 16))
			s.Send(q, 40)
			s.Poll()
			s.Events()
		},
	},
	{
		Name: "invalidate-deferred-to-post", Rule: "RECV-BAD-KEY", Subtle: true,
		Description: "deregistration is batched with the next post's doorbell, so until the next post the region stays valid and a message filling a WR through the invalidated key completes successfully instead of with an error status",
		hooks: func() *hooks {
			var pending []int
			return &hooks{
				invalidate: func(s *srq, key int) error {
					if key < 0 || key >= Keys {
						return s.innerInvalidate(key)
					}
					pending = append(pending, key)
					return nil
				},
				post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
					for _, k := range pending {
						s.innerInvalidate(k)
					}
					pending = nil
					return s.innerPost(wrs)
				},
			}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			s.PostN(1, 1, 64)
			s.Invalidate(0)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "bad-key-len-err-on-multi-sge", Rule: "RECV-BAD-KEY", Subtle: true,
		Description: "when the WR has several SGEs, a failed key lookup is reported as the scatter loop running out of room (LOC_LEN_ERR) instead of a protection error",
		hooks: func() *hooks {
			return &hooks{completion: editCompletion(func(_ *srq, f fetch, c *drivers.Completion) {
				if c.Status == drivers.WCLocProtErr && f.found && len(f.w.SGEs) > 1 {
					c.Status = drivers.WCLocLenErr
				}
			})}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 2, drivers.RC)
			s.Post(drivers.RecvWR{ID: 1, NumSGE: 2, SGEs: []drivers.SGE{{Length: 8}, {Length: 64, Key: 1}}})
			s.Invalidate(1)
			s.Send(q, 32)
			s.Poll()
		},
	},
	{
		Name: "ud-empty-srq-kills-qp", Rule: "RECV-RNR", Subtle: true,
		Description: "a UD message meeting an empty SRQ is treated as a fatal receive error and moves the UD QP to ERR; on UD it must just be dropped",
		hooks: func() *hooks {
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				empty := len(q.s.fifo) == 0 && !q.s.errored
				st, err := q.innerDeliver(ctx, msg)
				if err == nil && empty && q.typ == drivers.UD && consumes(msg) && (q.state == drivers.RTR || q.state == drivers.RTS) {
					q.innerModify(drivers.Err)
				}
				return st, err
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.UD)
			s.Send(q, 8)
			s.Events()
			s.PostN(1, 1, 64)
			s.Send(q, 8)
			s.Poll()
		},
	},
	{
		Name: "third-rnr-kills-rc-qp", Rule: "RECV-RNR", Subtle: true,
		Description: "the responder counts RNR NAKs per QP without resetting the count on success, and at the third it moves the RC QP to ERR and answers with an error: an empty SRQ on RC must get receiver-not-ready with the QP staying up",
		hooks: func() *hooks {
			naks := map[*qp]int{}
			return &hooks{deliver: func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
				st, err := q.innerDeliver(ctx, msg)
				if st != drivers.PeerRNR || q.typ != drivers.RC {
					return st, err
				}
				if naks[q]++; naks[q] < 3 {
					return st, err
				}
				q.innerModify(drivers.Err)
				return drivers.PeerError, err
			}}
		},
		Witness: func(s *Script) {
			q := s.Ready(4, 1, drivers.RC)
			for range 3 {
				s.Send(q, 8)
			}
			s.Events()
		},
	},
}
