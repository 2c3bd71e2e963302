package faulty

import (
	"context"
	"math/bits"

	"github.com/srqconform/srqconform/drivers"
)

// lenPatch delivers a message the emulator sees as another and gives the
// completion it writes the byte_len the bug reports.
type lenPatch map[int]uint32

// deliver delivers as to QP q and has its completion report byteLen.
func (p lenPatch) deliver(q *qp, ctx context.Context, as drivers.Message, byteLen uint32) (drivers.PeerStatus, error) {
	p[q.idx] = byteLen
	st, err := q.in.Deliver(ctx, as)
	q.s.sync(q)
	delete(p, q.idx)
	return st, err
}

// completion applies a pending byte_len.
func (p lenPatch) completion(_ *srq, q *qp, c *drivers.Completion, _ *entry) {
	if q == nil || c.Status != 0 {
		return
	}
	if l, ok := p[q.idx]; ok {
		c.ByteLen = l
	}
}

// sends says whether op scatters into the WR.
func sends(op drivers.Opcode) bool { return op == drivers.Send || op == drivers.SendImm }

// grhOf is the GRH area a message to a QP of type t takes.
func grhOf(t drivers.QPType) uint64 {
	if t == drivers.UD {
		return grh
	}
	return 0
}

// recvBugs are bugs of fetching and completions.
var recvBugs = []Bug{
	bug("ring-end-swap", "FETCH-FIFO",
		"the list copy that straddles the end of the ring writes the WR for the last slot and the one for slot 0 swapped: those two complete out of posting order",
		func(s *Script) {
			q := s.Ready(drivers.RC, 2)
			s.Send(q, drivers.Send, 8)
			s.Send(q, drivers.Send, 8)
			s.Post(Ids(10, 3)...)
			for range 3 {
				s.Send(q, drivers.Send, 8)
			}
			s.Poll(0)
		},
		func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				if len(wrs) < 2 || s.outstanding()+uint32(len(wrs)) > s.capacity {
					return s.post(wrs)
				}
				for _, w := range wrs {
					if sgeBad(w, s.maxSGE) {
						return s.post(wrs)
					}
				}
				out := append([]drivers.RecvWR(nil), wrs...)
				for i := 0; i+1 < len(out); i++ {
					if (s.posted+uint64(i))%uint64(s.capacity) == uint64(s.capacity-1) {
						out[i], out[i+1] = out[i+1], out[i]
						break
					}
				}
				return s.post(out)
			}}
		}),

	bug("write-after-write-imm-consumes", "FETCH-OPCODES",
		"the responder's 'immediate pending' flag is not cleared after an RDMA Write with Immediate: the next plain RDMA Write on that QP consumes a WR (completing with the stale immediate), though RDMA Write consumes none",
		func(s *Script) {
			q := s.Ready(drivers.RC, 2)
			s.SendImm(q, drivers.WriteImm, 8, 5)
			s.Send(q, drivers.Write, 8)
			s.Poll(0)
		},
		func() *hooks {
			type last struct {
				imm bool
				v   uint32
			}
			seen := map[int]last{}
			return &hooks{deliver: func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
				l := seen[q.idx]
				seen[q.idx] = last{msg.Opcode == drivers.WriteImm, msg.Imm}
				if msg.Opcode == drivers.Write && l.imm {
					msg.Opcode, msg.Imm = drivers.WriteImm, l.v
				}
				return q.in.Deliver(ctx, msg)
			}}
		}),

	bug("empty-send-imm-no-consume", "FETCH-OPCODES",
		"a Send with Immediate of 0 bytes is taken for a bare immediate and handled without a receive WR: it consumes nothing and completes nothing, though Send with Immediate consumes a WR",
		func(s *Script) {
			q := s.Ready(drivers.RC, 1)
			s.SendImm(q, drivers.SendImm, 0, 9)
			s.Poll(0)
		},
		func() *hooks {
			return &hooks{deliver: func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
				if msg.Opcode == drivers.SendImm && msg.Len == 0 && fetching(q.state) && q.s.outstanding() > 0 {
					return peerOK, nil
				}
				return q.in.Deliver(ctx, msg)
			}}
		}),

	bug("rnr-retry-fetches-twice", "FETCH-ONCE",
		"after an RNR NAK the responder replays its fetch for the retried message: the first message a QP takes after an RNR consumes two WRs (two completions), not exactly one",
		func(s *Script) {
			s.Create(4)
			q := s.Up(drivers.RC)
			s.Send(q, drivers.Send, 8)
			s.Post(Ids(1, 2)...)
			s.Send(q, drivers.Send, 8)
			s.Poll(0)
		},
		func() *hooks {
			rnr := map[int]bool{}
			return &hooks{deliver: func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
				f := q.s.fetched
				st, err := q.in.Deliver(ctx, msg)
				q.s.sync(q)
				switch {
				case err != nil:
				case q.typ == drivers.RC && st == peerRNR:
					rnr[q.idx] = true
				case rnr[q.idx] && st == peerOK && q.s.fetched > f:
					rnr[q.idx] = false
					if q.s.outstanding() > 0 {
						q.in.Deliver(ctx, msg)
					}
				}
				return st, err
			}}
		}),

	bug("poll-split-repeats", "FETCH-ONCE",
		"when a poll returns fewer completions than are waiting, the CQ consumer index is advanced one short: the last completion of that poll comes again at the next, so a WR completes twice",
		func(s *Script) {
			q := s.Ready(drivers.RC, 3)
			for range 3 {
				s.Send(q, drivers.Send, 8)
			}
			s.Poll(2)
			s.Poll(0)
		},
		func() *hooks {
			return &hooks{poll: func(s *srq, max int) ([]drivers.Completion, error) {
				out, err := s.poll(max)
				if len(out) > 0 && len(s.cq) > 0 {
					s.cq = append([]drivers.Completion{out[len(out)-1]}, s.cq...)
				}
				return out, err
			}}
		}),

	bug("stale-wrid-in-batch", "RECV-COMPLETION",
		"when one poll returns several completions, the second is written with the wr_id register of the first: it completes with another WR's wr_id",
		func(s *Script) {
			q := s.Ready(drivers.RC, 2)
			s.Send(q, drivers.Send, 8)
			s.Send(q, drivers.Send, 8)
			s.Poll(0)
		},
		func() *hooks {
			return &hooks{poll: func(s *srq, max int) ([]drivers.Completion, error) {
				out, err := s.poll(max)
				if len(out) >= 2 {
					out[1].WRID = out[0].WRID
				}
				return out, err
			}}
		}),

	bug("byte-len-last-sge", "RECV-COMPLETION",
		"on RC, byte_len is taken from the scatter loop's last chunk: a message spread over two SGEs completes with the bytes in the last SGE it reached, not the message length",
		func(s *Script) {
			s.Create(4)
			q := s.Up(drivers.RC)
			s.Post(WR(1, 16, 64))
			s.Send(q, drivers.Send, 40)
			s.Poll(0)
		},
		func() *hooks {
			return &hooks{completion: func(_ *srq, q *qp, c *drivers.Completion, e *entry) {
				if q == nil || e == nil || q.typ != drivers.RC || c.Status != 0 || c.Opcode != wcRecv || e.wr.NumSGE < 2 {
					return
				}
				rem, last := uint64(c.ByteLen), uint64(0)
				for _, g := range e.wr.SGEs[:min(e.wr.NumSGE, len(e.wr.SGEs))] {
					l := uint64(g.Length)
					if l == 0 {
						l = 1 << 31
					}
					if n := min(l, rem); n > 0 {
						last, rem = n, rem-n
					}
				}
				c.ByteLen = uint32(last)
			}}
		}),

	bug("qp-index-compacted", "RECV-COMPLETION",
		"the QP table is compacted when a QP is destroyed, but completions keep using the table slot: a QP created after a destroyed one completes naming the QP before it, not the receiving QP",
		func(s *Script) {
			s.Create(4)
			a := s.QP(drivers.RC)
			b := s.Up(drivers.RC)
			s.DestroyQP(a)
			s.Post(Ids(1, 1)...)
			s.Send(b, drivers.Send, 8)
			s.Poll(0)
		},
		func() *hooks {
			return &hooks{completion: func(s *srq, _ *qp, c *drivers.Completion, _ *entry) {
				if c.QP < 0 || c.QP > len(s.qps) {
					return
				}
				n := 0
				for _, x := range s.qps[:c.QP] {
					if x.gone {
						n++
					}
				}
				c.QP -= n
			}}
		}),

	bug("imm-unswapped-ud", "RECV-IMM",
		"the UD completion path copies imm_data without the byte swap the RC path does: a UD Send with Immediate completes with the sender's immediate byte-reversed",
		func(s *Script) {
			q := s.Ready(drivers.UD, 1)
			s.SendImm(q, drivers.SendImm, 8, 0x01020304)
			s.Poll(0)
		},
		func() *hooks {
			return &hooks{completion: func(_ *srq, q *qp, c *drivers.Completion, _ *entry) {
				if q != nil && q.typ == drivers.UD && c.HasImm {
					c.Imm = bits.ReverseBytes32(c.Imm)
				}
			}}
		}),

	bug("write-imm-len-last-packet", "RECV-WRITE-IMM",
		"byte_len of an RDMA Write with Immediate is set from the last packet (the one carrying the immediate): a write longer than the 4096-byte MTU completes with its last packet's length, not the write's",
		func(s *Script) {
			q := s.Ready(drivers.RC, 1)
			s.SendImm(q, drivers.WriteImm, 5000, 1)
			s.Poll(0)
		},
		func() *hooks {
			return &hooks{completion: func(_ *srq, _ *qp, c *drivers.Completion, _ *entry) {
				if c.Status == 0 && c.Opcode == wcRDMAImm && c.ByteLen > 4096 {
					if c.ByteLen %= 4096; c.ByteLen == 0 {
						c.ByteLen = 4096
					}
				}
			}}
		}),

	bug("fit-skips-last-sge", "RECV-FIT",
		"the length check sums the SGEs with a loop bound of num_sge-1 when num_sge equals max_sge: a message that fits only with the last SGE completes with an error, though it fits in the sum of the WR's SGE lengths",
		func(s *Script) {
			s.Create(4)
			q := s.Up(drivers.RC)
			s.Post(WR(1, 16, 16))
			s.Send(q, drivers.Send, 24)
			s.Poll(0)
			s.Events()
		},
		func() *hooks {
			return &hooks{deliver: func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
				e := q.s.head()
				if e == nil || !sends(msg.Opcode) || !fetching(q.state) || e.wr.NumSGE < 2 || e.wr.NumSGE != int(q.s.maxSGE) || e.wr.NumSGE > len(e.wr.SGEs) {
					return q.in.Deliver(ctx, msg)
				}
				total, plain := capacityOf(e.wr)
				butLast := total - uint64(e.wr.SGEs[e.wr.NumSGE-1].Length)
				need := grhOf(q.typ) + uint64(msg.Len)
				limit := uint64(q.s.info.MaxMessage)
				if q.typ == drivers.UD {
					limit = uint64(q.s.info.MaxUDMessage)
				}
				if plain && need > butLast && need <= total && total-grhOf(q.typ)+1 <= limit {
					msg.Len = uint32(total - grhOf(q.typ) + 1)
				}
				return q.in.Deliver(ctx, msg)
			}}
		}),

	bug("numsge0-inline-small", "RECV-NUMSGE0",
		"RC messages of up to 64 bytes are received into the WQE's inline area, which a WR with num_sge 0 still has: such a WR takes an 8-byte message successfully, though it holds only an empty message",
		func(s *Script) {
			s.Create(4)
			q := s.Up(drivers.RC)
			s.Post(drivers.RecvWR{ID: 1})
			s.Send(q, drivers.Send, 8)
			s.Poll(0)
		},
		func() *hooks {
			p := lenPatch{}
			return &hooks{
				completion: p.completion,
				deliver: func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
					e := q.s.head()
					if e != nil && q.typ == drivers.RC && sends(msg.Opcode) && e.wr.NumSGE == 0 && msg.Len > 0 && msg.Len <= 64 {
						as := msg
						as.Len = 0
						return p.deliver(q, ctx, as, msg.Len)
					}
					return q.in.Deliver(ctx, msg)
				},
			}
		}),

	bug("zero-length-after-first", "SGE-LEN0",
		"the 'length 0 means 2^31' conversion is applied to sg_list[0] only: a zero-length SGE after the first holds nothing, so a message that needs it completes with an error",
		func(s *Script) {
			s.Create(4)
			q := s.Up(drivers.RC)
			s.Post(WR(1, 16, 0))
			s.Send(q, drivers.Send, 100)
			s.Poll(0)
		},
		func() *hooks {
			return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
				out := append([]drivers.RecvWR(nil), wrs...)
				for i, w := range out {
					if w.NumSGE != len(w.SGEs) || w.NumSGE < 2 {
						continue
					}
					sges := []drivers.SGE{w.SGEs[0]}
					for _, g := range w.SGEs[1:] {
						if g.Length != 0 {
							sges = append(sges, g)
						}
					}
					out[i].SGEs, out[i].NumSGE = sges, len(sges)
				}
				return s.post(out)
			}}
		}),

	bug("ud-byte-len-no-grh-imm", "UD-GRH",
		"the UD completion path for Send with Immediate computes byte_len from the payload alone: it leaves out the 40 GRH bytes that byte_len counts",
		func(s *Script) {
			q := s.Ready(drivers.UD, 1)
			s.SendImm(q, drivers.SendImm, 8, 3)
			s.Poll(0)
		},
		func() *hooks {
			return &hooks{completion: func(_ *srq, q *qp, c *drivers.Completion, _ *entry) {
				if q != nil && q.typ == drivers.UD && c.Status == 0 && c.HasImm && c.Opcode == wcRecv && c.ByteLen >= grh {
					c.ByteLen -= grh
				}
			}}
		}),

	bug("ud-fit-no-grh-multi-sge", "UD-GRH",
		"for a WR with several SGEs the UD path checks the fit against the message alone, as if the GRH went elsewhere: a message with fewer than 40 bytes to spare completes successfully, though it fits only with 40 bytes to spare",
		func(s *Script) {
			s.Create(4)
			q := s.Up(drivers.UD)
			s.Post(WR(1, 32, 32))
			s.Send(q, drivers.Send, 40)
			s.Poll(0)
		},
		func() *hooks {
			p := lenPatch{}
			return &hooks{
				completion: p.completion,
				deliver: func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
					e := q.s.head()
					if e == nil || q.typ != drivers.UD || !sends(msg.Opcode) || e.wr.NumSGE < 2 {
						return q.in.Deliver(ctx, msg)
					}
					total, plain := capacityOf(e.wr)
					if plain && total >= grh && uint64(msg.Len)+grh > total && uint64(msg.Len) <= total {
						as := msg
						as.Len = uint32(total - grh)
						return p.deliver(q, ctx, as, msg.Len+grh)
					}
					return q.in.Deliver(ctx, msg)
				},
			}
		}),

	bug("oversize-single-sge-survives", "RECV-TOO-LARGE",
		"the single-SGE fast path reports a message too long with an error completion but never moves the RC QP to ERR: it stays in its state and goes on receiving, where the profile says ERR",
		func(s *Script) {
			s.Create(4)
			q := s.Up(drivers.RC)
			s.Post(WR(1, 16), WR(2, 64))
			s.Send(q, drivers.Send, 32)
			s.Send(q, drivers.Send, 8)
			s.Poll(0)
			s.Events()
		},
		func() *hooks {
			mute := false
			return &hooks{
				event: func(_ *srq, ev drivers.Event) bool { return !(mute && ev.Type == evLastWQE) },
				deliver: func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
					e, from := q.s.head(), q.state
					if e == nil || q.typ != drivers.RC || !sends(msg.Opcode) || e.wr.NumSGE != 1 || !fetching(from) || from == drivers.SQE {
						return q.in.Deliver(ctx, msg)
					}
					if total, plain := capacityOf(e.wr); !plain || uint64(msg.Len) <= total {
						return q.in.Deliver(ctx, msg)
					}
					mute = true
					st, err := q.in.Deliver(ctx, msg)
					q.s.sync(q)
					for _, to := range []drivers.QPState{drivers.Reset, drivers.Init, drivers.RTR, drivers.RTS, drivers.SQD} {
						if q.in.Modify(to) != 0 || to == from {
							break
						}
					}
					q.s.sync(q)
					mute = false
					q.state = from
					return st, err
				},
			}
		}),

	bug("bad-key-first-sge-only", "RECV-BAD-KEY",
		"the responder validates only the lkey of a WR's first SGE: bytes that land in a later SGE through a deregistered region complete successfully, where filling through an invalidated key completes with an error",
		func(s *Script) {
			s.Create(4)
			q := s.Up(drivers.RC)
			s.Invalidate(1)
			s.Post(drivers.RecvWR{ID: 1, NumSGE: 2, SGEs: []drivers.SGE{{Length: 16}, {Length: 64, Key: 1}}})
			s.Send(q, drivers.Send, 40)
			s.Poll(0)
		},
		func() *hooks {
			dead := map[int]bool{}
			return &hooks{
				invalidate: func(s *srq, key int) error {
					if key < 0 || key >= s.keys || dead[key] {
						return s.in.InvalidateKey(key)
					}
					dead[key] = true
					return nil
				},
				deliver: func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
					if e := q.s.head(); e != nil && e.wr.NumSGE > 0 && len(e.wr.SGEs) > 0 && dead[e.wr.SGEs[0].Key] {
						k := e.wr.SGEs[0].Key
						if err := q.s.in.InvalidateKey(k); err != nil {
							return peerErr, err
						}
						delete(dead, k)
					}
					return q.in.Deliver(ctx, msg)
				},
			}
		}),

	bug("rnr-silent-before-first-fetch", "RECV-RNR",
		"the RNR NAK is built from the QP's last receive context, which a QP that never took a WR lacks: its first message meeting an empty SRQ is acknowledged and dropped, the peer seeing success instead of receiver-not-ready",
		func(s *Script) {
			s.Create(4)
			q := s.Up(drivers.RC)
			s.Send(q, drivers.Send, 8)
		},
		func() *hooks {
			took := map[int]bool{}
			return &hooks{
				completion: func(_ *srq, q *qp, _ *drivers.Completion, _ *entry) {
					if q != nil {
						took[q.idx] = true
					}
				},
				deliver: func(q *qp, ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
					st, err := q.in.Deliver(ctx, msg)
					if err == nil && q.typ == drivers.RC && st == peerRNR && !took[q.idx] {
						return peerOK, nil
					}
					return st, err
				},
			}
		}),
}
