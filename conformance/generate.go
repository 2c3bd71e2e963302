package conformance

import (
	"pgregory.net/rapid"

	"github.com/srqconform/srqconform/model"
)

// The random case generator: operation sequences valid for the current
// state, biased to the edges (a full queue, a bad WR mid-list, SGE lengths
// of 0, 1 and near 2^31, the limit around the count, every QP state, every
// opcode, sizes at the fit boundary).

var (
	genMaxWR  = rapid.SampledFrom([]uint32{1, 2, 3, 4, 5, 7, 8, 15, 16, 31})
	genSGELen = rapid.SampledFrom([]uint32{0, 1, 8, 40, 64, 104, 1000, 4096, 1<<31 - 1, 1 << 30})
)

// genCase draws and runs one random case on s.
func genCase(t *rapid.T, s *session, maxSteps int) {
	info := s.x.info
	// wr_ids from 1, or from a base with high bits set: a driver that
	// truncates wr_id to 32 bits, or sign-extends it, shows.
	s.idBase = rapid.SampledFrom([]uint64{0, 0, 1 << 32, 0xffffffff00000000, 0x7fffffffffff0000}).Draw(t, "wr_id base")
	maxWR := genMaxWR.Draw(t, "max_wr")
	if maxWR > info.MaxSRQWR {
		maxWR = info.MaxSRQWR
	}
	maxSGE := rapid.Uint32Range(1, min(3, info.MaxSRQSGE)).Draw(t, "max_sge")
	var limit uint32
	if rapid.IntRange(0, 4).Draw(t, "create_limit?") == 0 {
		limit = rapid.Uint32Range(1, maxWR).Draw(t, "create_limit")
	}
	s.do(model.CreateSRQ{MaxWR: maxWR, MaxSGE: maxSGE, Limit: limit})
	nqp := rapid.IntRange(1, 4).Draw(t, "qps")
	for i := range nqp {
		typ := model.RC
		if info.UD && rapid.Bool().Draw(t, "ud") {
			typ = model.UD
		}
		s.do(model.CreateQP{Type: typ})
		// Most QPs start ready; some stay behind to exercise the states.
		if rapid.IntRange(0, 3).Draw(t, "ready") > 0 {
			s.to(i, model.Init, model.RTR, model.RTS)
		}
	}
	steps := rapid.IntRange(1, maxSteps).Draw(t, "steps")
	for range steps {
		genStep(t, s)
	}
	s.do(model.Poll{})
}

func genStep(t *rapid.T, s *session) {
	v := s.view()
	info := s.x.info
	qp := rapid.IntRange(0, len(v.QPTypes)-1).Draw(t, "qp")
	switch rapid.IntRange(0, 19).Draw(t, "kind") {
	case 0, 1, 2, 3, 4:
		n := rapid.IntRange(1, 4).Draw(t, "list")
		if rapid.IntRange(0, 5).Draw(t, "flood?") == 0 {
			n = int(v.Capacity) - v.Occupied + rapid.IntRange(0, 2).Draw(t, "over")
		}
		ws := make([]model.WR, max(n, 1))
		for i := range ws {
			ws[i] = genWR(t, s, v)
		}
		s.post(ws...)
	case 5, 6, 7, 8, 9:
		genArrival(t, s, v, qp)
	case 10, 11:
		s.do(model.Poll{Max: rapid.IntRange(0, 2).Draw(t, "poll_max")})
	case 12:
		s.do(model.Query{})
	case 13:
		c := uint32(v.Outstanding)
		s.do(model.Arm{Limit: rapid.SampledFrom([]uint32{0, max(c, 1) - 1, c, c + 1, v.Capacity, v.Capacity + 1}).Draw(t, "limit")})
	case 14, 15:
		if v.FillingAny[qp] {
			s.do(model.ModifyQP{QP: qp, State: model.Err}) // valid whether or not it is filling
			return
		}
		if info.CMStates {
			// Only what a connection manager can do: to ERR once
			// connected, or down to RESET and up again.
			if v.QPStateSure[qp] && cmTransition(v.QPStates[qp], true, model.Err) && rapid.Bool().Draw(t, "cm_err?") {
				s.do(model.ModifyQP{QP: qp, State: model.Err})
				return
			}
			s.to(qp, model.Reset, model.Init, model.RTR, model.RTS)
			return
		}
		if rapid.IntRange(0, 3).Draw(t, "revive?") == 0 {
			// Bring the QP back up through RESET: drivers keep state across
			// a reset that they should not (issue 8: never reached before).
			s.to(qp, model.Reset, model.Init, model.RTR, model.RTS)
			return
		}
		s.do(model.ModifyQP{QP: qp, State: rapid.SampledFrom(model.QPStates).Draw(t, "state")})
	case 16:
		c := uint32(v.Occupied)
		s.do(model.Resize{MaxWR: rapid.SampledFrom([]uint32{0, max(c, 1) - 1, c, c + 1, v.Capacity * 2, 1}).Draw(t, "resize")})
		s.do(model.Query{})
	case 17:
		s.do(model.Invalidate{Key: 1})
	case 18:
		switch {
		case info.InjectSQE && v.QPStateSure[qp] && v.QPStates[qp] == model.RTS && !v.FillingAny[qp] && rapid.Bool().Draw(t, "sqe"):
			s.do(model.InjectSQE{QP: qp})
		case info.InjectSRQError && !v.SRQError && rapid.IntRange(0, 5).Draw(t, "srq_err") == 0:
			s.do(model.InjectSRQError{})
		case info.PostRecvUnsafe == "":
			s.do(model.PostRecv{QP: qp, WR: s.wr(8)})
		default:
			s.do(model.Poll{})
		}
	default:
		s.do(model.Poll{})
	}
}

func genWR(t *rapid.T, s *session, v model.View) model.WR {
	n := rapid.IntRange(0, int(v.MaxSGE)+1).Draw(t, "num_sge")
	lens := make([]uint32, n)
	for i := range lens {
		lens[i] = genSGELen.Draw(t, "sge_len")
		if m := s.x.info.MaxSGELength; m > 0 && lens[i] > m {
			lens[i] = m // an SGE must describe memory the driver registered
		}
	}
	w := s.wr(lens...)
	for i := range w.SGEs {
		if rapid.IntRange(0, 9).Draw(t, "key1?") == 0 {
			w.SGEs[i].Key = 1
		}
	}
	if negativeSafe(s) && rapid.IntRange(0, 19).Draw(t, "negative?") == 0 {
		w.NumSGE, w.SGEs = -1, nil
	}
	return w
}

func genArrival(t *rapid.T, s *session, v model.View, qp int) {
	info := s.x.info
	switch {
	case v.FillingAll[qp]:
		s.do(model.ArriveRest{QP: qp})
		return
	case v.FillingAny[qp]:
		// Some candidates are filling a WR on this QP, some not: only ERR
		// is valid in both.
		s.do(model.ModifyQP{QP: qp, State: model.Err})
		return
	}
	typ := v.QPTypes[qp]
	op := rapid.SampledFrom(model.Opcodes).Draw(t, "opcode")
	if !op.ValidOn(typ) {
		op = rapid.SampledFrom([]model.Opcode{model.Send, model.SendImm}).Draw(t, "ud_opcode")
	}
	if !opcodeOK(info, op) {
		op = model.Send
	}
	limit := info.MaxMessage
	grh := uint64(0)
	if typ == model.UD {
		limit, grh = info.MaxUDMessage, model.UDHeader
	}
	// Lengths around the head WR's fit boundary, and some fixed ones.
	head := v.HeadBytes
	cands := []uint64{0, 1, 64, 4096}
	for _, d := range []int64{-1, 0, 1} {
		if n := int64(head) - int64(grh) + d; n >= 0 {
			cands = append(cands, uint64(n))
		}
	}
	n := rapid.SampledFrom(cands).Draw(t, "len")
	if n > uint64(limit) {
		n = uint64(limit)
	}
	if op == model.CmpSwap || op == model.FetchAdd {
		n = 8
	}
	// An RC write-with-immediate that meets an empty SRQ is refused (RNR)
	// on its last packet, after the responder took the others; the responder
	// then waits for that packet's retry, and the peer, reset instead, can
	// send nothing new (IBTA: RNR NAKs a send's first or a write's last
	// packet). Such a message stays within one packet (the path MTU).
	if typ == model.RC && op == model.WriteImm && (v.Outstanding == 0 || v.SRQError) && info.MaxUDMessage > 0 {
		n = min(n, uint64(info.MaxUDMessage))
	}
	msg := model.Message{Opcode: op, Len: uint32(n), Imm: rapid.Uint32().Draw(t, "imm")}
	partial := info.PartialDelivery && typ == model.RC && op == model.Send && v.QPStateSure[qp] && v.QPStates[qp].Fetches() &&
		v.MinOutstanding > 0 && !v.SRQErrorAny && rapid.IntRange(0, 7).Draw(t, "partial?") == 0
	s.do(model.Arrive{QP: qp, Msg: msg, FirstPacketOnly: partial})
}
