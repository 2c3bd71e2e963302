package conformance

import (
	"slices"
	"time"

	"pgregory.net/rapid"

	"github.com/srqconform/srqconform/drivers"
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

// Step kinds, for swarm testing: each case enables a random subset of
// them (posts, arrivals and polls always), so that one case floods and
// drains the queue while another arms the limit over and over, instead of
// every case mixing every kind thinly (Groce et al., "Swarm Testing",
// ISSTA 2012). The directed kinds drive the device into the states real
// driver bugs live in and then send to them.
const (
	kindPost = iota
	kindArrive
	kindPoll
	kindQuery
	kindArm
	kindModify
	kindResize
	kindInvalidate
	kindSpecial
	kindRevive    // a QP through RESET back to RTS, then traffic on it
	kindLimit     // arm, fire, re-arm with the same value, fire again
	kindWrap      // fill to full, drain, refill: the ring wraps
	kindAllQPs    // every QP up and taking a WR, in turn
	kindSQDResume // RTS -> SQD -> RTS, then traffic
	kindLifecycle // destroy while QPs are attached, create beside it, a QP with receive caps
	numKinds
)

// kindWeights are the kinds' base weights when enabled.
var kindWeights = [numKinds]int{
	kindPost: 5, kindArrive: 5, kindPoll: 3, kindQuery: 1, kindArm: 1, kindModify: 2,
	kindResize: 1, kindInvalidate: 1, kindSpecial: 1,
	kindRevive: 1, kindLimit: 1, kindWrap: 1, kindAllQPs: 1, kindSQDResume: 1, kindLifecycle: 1,
}

// swarm is one case's enabled step kinds.
type swarm struct {
	kinds  []int
	weight []int
}

func drawSwarm(t *rapid.T) swarm {
	var w swarm
	for k := range numKinds {
		if k == kindPost || k == kindArrive || k == kindPoll || rapid.Bool().Draw(t, "enable") {
			w.kinds = append(w.kinds, k)
			w.weight = append(w.weight, kindWeights[k])
		}
	}
	return w
}

// pick draws an enabled kind by weight.
func (w swarm) pick(t *rapid.T) int {
	total := 0
	for _, n := range w.weight {
		total += n
	}
	r := intRange(0, total-1).Draw(t, "kind")
	for i, n := range w.weight {
		if r < n {
			return w.kinds[i]
		}
		r -= n
	}
	return kindPoll
}

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
	if intRange(0, 4).Draw(t, "create_limit?") == 0 {
		limit = rapid.Uint32Range(1, maxWR).Draw(t, "create_limit")
	}
	// Some through ibv_create_srq_ex, which must make the same SRQ: a
	// driver's other path may copy what the plain one leaves (the limit).
	variant := model.CreatePlain
	if intRange(0, 3).Draw(t, "create_ex?") == 0 {
		variant = model.CreateEx
	}
	s.do(model.CreateSRQ{MaxWR: maxWR, MaxSGE: maxSGE, Limit: limit, Variant: variant})
	if intRange(0, 3).Draw(t, "srq_first?") == 0 {
		// Applications post to an SRQ, and arm it, before they make its
		// QPs: a driver may route an SRQ verb through a QP's context,
		// and lose it while none is attached.
		for range intRange(1, 4).Draw(t, "srq_first") {
			v := s.view()
			switch intRange(0, 2).Draw(t, "srq_first_kind") {
			case 0:
				genPost(t, s, v)
			case 1:
				genArm(t, s, v)
			default:
				s.do(model.Query{})
			}
		}
	}
	nqp := intRange(1, 4).Draw(t, "qps")
	for i := range nqp {
		s.do(model.CreateQP{Type: drawQPType(t, info, "ud")})
		// Most QPs start ready; some stay behind to exercise the states.
		if intRange(0, 3).Draw(t, "ready") > 0 {
			s.to(i, model.Init, model.RTR, model.RTS)
		}
	}
	w := drawSwarm(t)
	steps := intRange(1, maxSteps).Draw(t, "steps")
	for range steps {
		if !s.stopAt.IsZero() && time.Now().After(s.stopAt) {
			break
		}
		genStep(t, s, w.pick(t))
	}
	s.do(model.Poll{})
}

func genStep(t *rapid.T, s *session, kind int) {
	v := s.view()
	info := s.x.info
	live := liveQPs(v)
	qp := live[intRange(0, len(live)-1).Draw(t, "qp")]
	switch kind {
	case kindPost:
		genPost(t, s, v)
	case kindArrive:
		genArrival(t, s, v, qp)
	case kindPoll:
		s.do(model.Poll{Max: intRange(0, 2).Draw(t, "poll_max")})
	case kindQuery:
		s.do(model.Query{})
	case kindArm:
		genArm(t, s, v)
	case kindModify:
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
		s.do(model.ModifyQP{QP: qp, State: rapid.SampledFrom(model.QPStates).Draw(t, "state")})
	case kindResize:
		c := uint32(v.Occupied)
		// Around the count, and past the device's max_srq_wr: a bound a
		// device may check at one resize and not at the next.
		sizes := []uint32{0, max(c, 1) - 1, c, c + 1, v.Capacity * 2, 1, info.MaxSRQWR + 1}
		if v.Armed && v.Limit > 1 {
			sizes = append(sizes, v.Limit-1) // below the armed limit
		}
		s.do(model.Resize{MaxWR: rapid.SampledFrom(sizes).Draw(t, "resize")})
		s.do(model.Query{})
	case kindInvalidate:
		s.do(model.Invalidate{Key: 1})
	case kindSpecial:
		switch {
		case info.InjectSQE && v.QPStateSure[qp] && v.QPStates[qp] == model.RTS && !v.FillingAny[qp] && rapid.Bool().Draw(t, "sqe"):
			s.do(model.InjectSQE{QP: qp})
		case info.InjectSRQError && !v.SRQError && intRange(0, 5).Draw(t, "srq_err") == 0:
			s.do(model.InjectSRQError{})
		case info.PostRecvUnsafe == "" && unmadeQP(info, v, qp) == "":
			s.do(model.PostRecv{QP: qp, WR: s.wr(8)})
		default:
			s.do(model.Poll{})
		}
	case kindRevive:
		if up(s, qp) {
			// Drivers keep state across a reset that they should not,
			// and one brought back may take messages only from RTS.
			s.to(qp, model.Reset, model.Init)
			if !info.CMStates && intRange(0, 3).Draw(t, "revive_skip?") == 0 {
				// A state INIT cannot reach: a driver that kept the
				// QP's old connection may let it skip RTR.
				s.do(model.ModifyQP{QP: qp, State: rapid.SampledFrom([]model.QPState{model.RTS, model.SQD}).Draw(t, "revive_skip")})
			}
			s.to(qp, model.RTR)
			if intRange(0, 2).Draw(t, "revive_rtr?") > 0 {
				s.to(qp, model.RTS)
			}
			traffic(t, s, qp)
		}
	case kindSQDResume:
		if info.CMStates {
			return // a connection manager makes no SQD
		}
		// Drain and resume, once or more, with traffic in SQD and after.
		for range intRange(1, 3).Draw(t, "resumes") {
			if !up(s, qp) {
				return
			}
			s.to(qp, model.SQD)
			if settled(s.view(), qp) && s.view().QPStates[qp] == model.SQD {
				traffic(t, s, qp)
			}
			if up(s, qp) {
				traffic(t, s, qp)
			}
		}
	case kindLimit:
		limitCycle(t, s, qp)
	case kindLifecycle:
		lifecycle(t, s, v)
	case kindWrap:
		wrap(t, s, qp)
	case kindAllQPs:
		for _, q := range live {
			if up(s, q) {
				traffic(t, s, q)
			}
		}
	}
}

// lifecycle tries what the middle of an SRQ's life allows besides traffic:
// a destroy while QPs are attached (refused, and the SRQ must go on
// working), another SRQ created beside it (above the device's limits, or
// through ibv_create_srq_ex), one more QP asking for receive caps the
// SRQ makes it ignore, or a QP destroyed and another made in its place
// (recycleQP).
func lifecycle(t *rapid.T, s *session, v model.View) {
	info := s.x.info
	switch intRange(0, 3).Draw(t, "lifecycle") {
	case 3:
		recycleQP(t, s)
	case 0:
		if len(v.QPTypes) > 0 && !slices.Contains(s.relaxed, model.RuleDestroyBusy) && unmadeQPs(info, v) == "" {
			s.do(model.DestroySRQ{})
		}
	case 1:
		o := model.CreateOther{MaxWR: 4, MaxSGE: 1, Variant: rapid.SampledFrom(model.CreateVariants).Draw(t, "variant")}
		switch intRange(0, 2).Draw(t, "other") {
		case 1:
			o.MaxWR = info.MaxSRQWR + 1 // refused before anything is allocated
		case 2:
			o.MaxSGE = info.MaxSRQSGE + 1
		}
		s.do(o)
	default:
		if len(v.QPTypes) < 6 {
			// UD too: a create path of its own.
			s.do(model.CreateQP{Type: drawQPType(t, info, "caps_ud"), RecvCaps: rapid.SampledFrom([]model.RecvCaps{model.RecvCapsAboveWR, model.RecvCapsAboveSGE}).Draw(t, "caps")})
		}
	}
}

// settled says every candidate has the QP, not destroyed, in one known
// state and none is filling a WR on it, so directed steps may plan around
// it.
func settled(v model.View, qp int) bool {
	return qp < len(v.QPStates) && !v.QPGone[qp] && v.QPStateSure[qp] && !v.FillingAny[qp] && !v.SRQErrorAny
}

// drawQPType draws RC, or UD half the time where the device has UD.
func drawQPType(t *rapid.T, info drivers.Info, label string) model.QPType {
	if info.UD && rapid.Bool().Draw(t, label) {
		return model.UD
	}
	return model.RC
}

// genPost posts a list of random WRs, some long enough to meet a full
// queue.
func genPost(t *rapid.T, s *session, v model.View) {
	n := intRange(1, 4).Draw(t, "list")
	if intRange(0, 5).Draw(t, "flood?") == 0 {
		n = int(v.Capacity) - v.Occupied + intRange(0, 2).Draw(t, "over")
	}
	ws := make([]model.WR, max(n, 1))
	for i := range ws {
		ws[i] = genWR(t, s, v)
	}
	s.post(ws...)
}

// genArm arms the SRQ at a limit around the outstanding count or the
// capacity, or disarms it (limit 0).
func genArm(t *rapid.T, s *session, v model.View) {
	c := uint32(v.Outstanding)
	s.do(model.Arm{Limit: rapid.SampledFrom([]uint32{0, max(c, 1) - 1, c, c + 1, v.Capacity, v.Capacity + 1}).Draw(t, "limit")})
}

// liveQPs lists the QPs of v not destroyed, in order.
func liveQPs(v model.View) []int {
	live := make([]int, 0, len(v.QPTypes))
	for q := range v.QPTypes {
		if !v.QPGone[q] {
			live = append(live, q)
		}
	}
	return live
}

// recycleQP destroys a settled QP, or every QP, after a poll has read
// their completions and events, and makes another in its place, brought to
// RTR or RTS, with a message: drivers keep per-QP tables that a destroy can
// leave wrong (a slot reused, a table compacted, a count of attached QPs
// off) for the QPs made after. With no QP attached it posts, which must
// work, and may put the SRQ in error, whose event must come all the same,
// and which the QP made after must see. It makes at most 8 QPs in a case,
// and leaves QPs a connection manager made alone.
func recycleQP(t *rapid.T, s *session) {
	info := s.x.info
	if info.CMStates {
		return
	}
	if len(s.view().QPTypes) >= 8 {
		return
	}
	s.do(model.Poll{})
	v := s.view()
	live := liveQPs(v)
	gone := []int{live[intRange(0, len(live)-1).Draw(t, "destroy_qp")]}
	if rapid.Bool().Draw(t, "destroy_all") {
		gone = live
	}
	for _, q := range gone {
		// Not one in RESET or INIT, which may hold messages buffered
		// until RTR (QP-BEFORE-RTR): the model has no destroy for them.
		if !settled(v, q) || v.Filling[q] || !v.QPStates[q].Fetches() && v.QPStates[q] != model.Err {
			return
		}
	}
	for _, q := range gone {
		s.do(model.DestroyQP{QP: q})
	}
	if len(gone) == len(live) {
		s.post(directedWR(s))
		if info.InjectSRQError && rapid.Bool().Draw(t, "srq_err_alone") {
			s.do(model.InjectSRQError{})
			s.do(model.Poll{})
		}
	}
	n := len(v.QPTypes)
	s.do(model.CreateQP{Type: drawQPType(t, info, "ud")})
	s.to(n, model.Init, model.RTR)
	if rapid.Bool().Draw(t, "recycled_rts") {
		s.to(n, model.RTS)
	}
	if v := s.view(); v.Occupied < int(v.Capacity) {
		s.post(directedWR(s))
	}
	genArrival(t, s, s.view(), n)
	s.do(model.Poll{})
}

// up brings the QP to RTS from wherever it is and reports whether it got
// there (a device whose departures the run adopted may refuse).
func up(s *session, qp int) bool {
	v := s.view()
	if !settled(v, qp) {
		return false
	}
	var path []model.QPState
	switch v.QPStates[qp] {
	case model.RTS:
		return true
	case model.Reset:
		path = []model.QPState{model.Init, model.RTR, model.RTS}
	case model.Init:
		path = []model.QPState{model.RTR, model.RTS}
	case model.RTR, model.SQD, model.SQE:
		path = []model.QPState{model.RTS}
	default:
		path = []model.QPState{model.Reset, model.Init, model.RTR, model.RTS}
	}
	for _, st := range path {
		if s.do(model.ModifyQP{QP: qp, State: st}).Errno != 0 {
			return false
		}
	}
	return settled(s.view(), qp) && s.view().QPStates[qp] == model.RTS
}

// directedLen is the length of the one-SGE WRs the directed steps post:
// every message they send fits it.
const directedLen = 64

// directedWR is such a WR.
func directedWR(s *session) model.WR { return s.wr(directedLen) }

// traffic posts a WR unless the queue is full and sends a message that
// fits it to the QP: a consuming send, or now and then another opcode.
func traffic(t *rapid.T, s *session, qp int) {
	if v := s.view(); v.Occupied < int(v.Capacity) {
		s.post(directedWR(s))
	}
	if !settled(s.view(), qp) {
		return
	}
	op := model.Send
	if intRange(0, 3).Draw(t, "traffic_op?") == 0 {
		op = rapid.SampledFrom([]model.Opcode{model.SendImm, model.Write}).Draw(t, "traffic_op")
		if !op.ValidOn(s.view().QPTypes[qp]) {
			op = model.SendImm
		}
		if !opcodeOK(s.x.info, op) {
			op = model.Send
		}
	}
	s.do(model.Arrive{QP: qp, Msg: model.Message{Opcode: op, Len: rapid.SampledFrom([]uint32{0, 1, 24}).Draw(t, "traffic_len")}})
}

// drain sends n consuming messages to the QP while it takes them.
func drain(s *session, qp, n int) {
	for range n {
		v := s.view()
		if !settled(v, qp) || !v.QPStates[qp].Fetches() || v.Outstanding == 0 {
			return
		}
		s.do(model.Arrive{QP: qp, Msg: model.Message{Opcode: model.Send, Len: 1}})
	}
}

// limitCycle arms the limit, drains until it fires, collects the event and
// arms it again with the same value, then drains to the second firing.
func limitCycle(t *rapid.T, s *session, qp int) {
	if !up(s, qp) {
		return
	}
	v := s.view()
	if v.Capacity < 2 {
		return
	}
	limit := rapid.Uint32Range(1, min(v.Capacity-1, 4)).Draw(t, "cycle_limit")
	for range 2 {
		for v := s.view(); v.Outstanding <= int(limit) && v.Occupied < int(v.Capacity); v = s.view() {
			if s.post(directedWR(s)).Errno != 0 {
				return
			}
		}
		if s.x.info.SRQResize && rapid.Bool().Draw(t, "cycle_resize?") {
			// A resize that carries the WRs over: the count the limit is
			// compared with must carry over too.
			v := s.view()
			s.do(model.Resize{MaxWR: v.Capacity + rapid.Uint32Range(0, 3).Draw(t, "cycle_grow")})
		}
		if s.do(model.Arm{Limit: limit}).Errno != 0 {
			return
		}
		drain(s, qp, s.view().Outstanding-int(limit)+1)
		s.do(model.Poll{})
	}
}

// wrap fills the SRQ until a post is refused, drains part of it through
// the QP and fills it again, so that the ring's indices wrap.
func wrap(t *rapid.T, s *session, qp int) {
	if !up(s, qp) {
		return
	}
	s.fill(directedLen)
	s.post(directedWR(s)) // refused at full
	drain(s, qp, intRange(1, int(s.view().Capacity)).Draw(t, "drain"))
	s.do(model.Poll{})
	s.fill(directedLen)
}

func genWR(t *rapid.T, s *session, v model.View) model.WR {
	n := intRange(0, int(v.MaxSGE)+1).Draw(t, "num_sge")
	lens := make([]uint32, n)
	for i := range lens {
		lens[i] = genSGELen.Draw(t, "sge_len")
		if m := s.x.info.MaxSGELength; m > 0 && lens[i] > m {
			lens[i] = m // an SGE must describe memory the driver registered
		}
	}
	w := s.wr(lens...)
	for i := range w.SGEs {
		if intRange(0, 9).Draw(t, "key1?") == 0 {
			w.SGEs[i].Key = 1
		}
	}
	// A negative num_sge the driver must post in a child process
	// (Info.NegativeSGEUnsafe) is left to the scenarios: a process per post.
	if negativeSafe(s) && s.x.info.NegativeSGEUnsafe == "" && intRange(0, 19).Draw(t, "negative?") == 0 {
		w.NumSGE, w.SGEs = -1, nil
	}
	return w
}

func genArrival(t *rapid.T, s *session, v model.View, qp int) {
	info := s.x.info
	switch {
	case v.FillingAll[qp]:
		if intRange(0, 2).Draw(t, "flush?") == 0 {
			// The QP goes to ERR with the WR half filled: whether the
			// swarm enabled modifies or not.
			s.do(model.ModifyQP{QP: qp, State: model.Err})
			return
		}
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
	msg := model.Message{Opcode: op, Len: uint32(n), Imm: rapid.Uint32().Draw(t, "imm")}
	if stallsResponder(info, v, qp, msg) {
		msg.Len = info.MaxUDMessage // one packet: see stallsResponder
	}
	// (In RTR or RTS only: a device whose departure from QP-FETCH-STATES
	// the run adopted may not fetch in SQD or SQE.)
	st := v.QPStates[qp]
	partial := info.PartialDelivery && typ == model.RC && op == model.Send && v.QPStateSure[qp] && (st == model.RTR || st == model.RTS) &&
		v.MinOutstanding > 0 && !v.SRQErrorAny && intRange(0, 7).Draw(t, "partial?") == 0
	s.do(model.Arrive{QP: qp, Msg: msg, FirstPacketOnly: partial})
}
