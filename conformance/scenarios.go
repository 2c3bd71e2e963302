package conformance

import (
	"github.com/srqconform/srqconform/model"
)

// Scenario is a deterministic script that exercises one rule.
type Scenario struct {
	Rule model.RuleID
	Name string
	// Anchor names the peer test it covers, where one exists.
	Anchor string
	Run    func(*session)
}

// helpers ----------------------------------------------------------------

func (s *session) view() model.View { return s.model.View() }

// wr is a WR with SGEs of the given lengths on key 0, with a fresh wr_id.
func (s *session) wr(lengths ...uint32) model.WR {
	s.ids++
	w := model.WR{ID: s.ids + s.idBase, NumSGE: len(lengths)}
	for _, l := range lengths {
		w.SGEs = append(w.SGEs, model.SGE{Length: l})
	}
	return w
}

// highWRID is a wr_id with bit b set, above the 32 bits a truncating
// device keeps, and low bits that are not 0: the low 32 bits (0x5C) then
// name no WR, where a bare 1<<b would come back as 0, the wr_id of an
// empty ring slot (a fetch from the wrong slot, FETCH-FIFO's).
func highWRID(b uint) uint64 { return 1<<b | 0x5C }

func (s *session) post(ws ...model.WR) model.Observation { return s.do(model.Post{WRs: ws}) }

// setup creates the SRQ and QPs of the given types and brings them to RTS.
func (s *session) setup(maxWR, maxSGE uint32, types ...model.QPType) {
	s.do(model.CreateSRQ{MaxWR: maxWR, MaxSGE: maxSGE})
	for i, t := range types {
		if t == model.UD {
			s.require(s.x.info.UD, "the device has no UD QPs")
		}
		s.do(model.CreateQP{Type: t})
		s.to(i, model.Init, model.RTR, model.RTS)
	}
}

func (s *session) to(qp int, states ...model.QPState) {
	for _, st := range states {
		s.do(model.ModifyQP{QP: qp, State: st})
	}
}

// fill posts single-SGE WRs until the SRQ holds max_wr, or a post fails
// (a device whose departures the run adopted may hold fewer).
func (s *session) fill(length uint32) {
	for v := s.view(); v.Occupied < int(v.Capacity); v = s.view() {
		if s.post(s.wr(length)).Errno != 0 {
			return
		}
	}
}

func (s *session) send(qp int, op model.Opcode, n uint32) model.Observation {
	return s.do(model.Arrive{QP: qp, Msg: model.Message{Opcode: op, Len: n, Imm: uint32(n) ^ 0x5a5a}})
}

func (s *session) poll() model.Observation { return s.do(model.Poll{}) }

// destroySRQ tries ibv_destroy_srq and reports whether the SRQ is gone, in
// which case the scenario can only end (a run that adopted a device's
// DESTROY-BUSY departure gets here with QPs attached).
func (s *session) destroySRQ() bool {
	s.do(model.DestroySRQ{})
	return s.view().Destroyed
}

const rc, ud = model.RC, model.UD

// queryUnsupported says whether every Query choice of p is a refusal.
func queryUnsupported(p model.Profile) bool {
	for _, q := range p.Query.Values() {
		if q != model.QueryENOSYS && q != model.QueryEOPNOTSUPP {
			return false
		}
	}
	return true
}

// Scenarios returns the deterministic scenarios, one or more per rule.
func Scenarios() []Scenario {
	return append([]Scenario(nil), scenarios...)
}

var scenarios = []Scenario{
	{model.RulePostOrder, "a bad WR in the middle: the prefix stays posted", "RUT ExceedMaxSge", func(s *session) {
		s.setup(8, 1, rc)
		a, b := s.wr(64), s.wr(64)
		bad := s.wr(8, 8)
		s.post(a, b, bad, s.wr(64))
		s.send(0, model.Send, 1)
		s.send(0, model.Send, 1)
		s.send(0, model.Send, 1)
		s.poll()
	}},
	{model.RulePostOrder, "a list longer than the free slots", "RUT ExceedMaxWrInfinitChain", func(s *session) {
		s.setup(4, 1)
		v := s.view()
		ws := make([]model.WR, v.Capacity+3)
		for i := range ws {
			ws[i] = s.wr(16)
		}
		s.post(ws...)
		s.do(model.Query{})
	}},
	{model.RulePostBadWR, "bad_wr names the failing WR", "RUT ExceedMaxSge", func(s *session) {
		s.setup(8, 2)
		s.post(s.wr(8), s.wr(8, 8), s.wr(8, 8, 8), s.wr(8))
	}},
	{model.RulePostReturn, "errno convention on a bad WR", "", func(s *session) {
		s.setup(4, 1)
		s.post(s.wr(8, 8))
	}},
	{model.RulePostFull, "exactly max_wr can be outstanding", "RUT MaxWr, ExceedMaxWr", func(s *session) {
		s.setup(16, 1)
		s.fill(32)
		s.post(s.wr(32))
		s.post(s.wr(32))
	}},
	{model.RulePostFull, "max_wr 5, not a power of two", "", func(s *session) {
		// A ring of a power of two that does not say so (siw: 8 for 5)
		// takes more than max_wr.
		s.setup(5, 1)
		s.fill(32)
		s.post(s.wr(32))
		s.post(s.wr(32))
	}},
	{model.RulePostFull, "a slot frees after a receive", "", func(s *session) {
		s.setup(4, 1, rc)
		s.fill(32)
		s.send(0, model.Send, 8)
		s.poll()
		s.post(s.wr(32))
		s.post(s.wr(32))
	}},
	{model.RulePostSGE, "num_sge at and above max_sge", "RUT MaxSge, ExceedMaxSge", func(s *session) {
		s.setup(8, 2)
		v := s.view()
		lens := make([]uint32, v.MaxSGE)
		for i := range lens {
			lens[i] = 8
		}
		s.post(s.wr(lens...))
		s.post(s.wr(append(lens, 8)...))
	}},
	{model.RulePostSGE, "num_sge 0", "", func(s *session) {
		s.setup(8, 1)
		s.post(model.WR{ID: highWRID(40)})
	}},
	// Where the provider is known not to check a negative num_sge and to
	// crash on it (Info.NegativeSGEUnsafe), the driver makes the post in a
	// child process: a crash is then this scenario's finding.
	{model.RulePostSGE, "a negative num_sge", "", func(s *session) {
		s.setup(8, 1)
		if s.model.View().Created && negativeSafe(s) {
			s.post(model.WR{ID: highWRID(40) + 1, NumSGE: -1})
			s.post(s.wr(8))
		}
	}},
	{model.RulePostCheckOrder, "too many SGEs on a full queue", "", func(s *session) {
		s.setup(4, 1)
		s.fill(8)
		s.post(s.wr(8, 8))
	}},
	{model.RulePostAnyState, "posting with no QP, and with QPs in every state", "", func(s *session) {
		s.do(model.CreateSRQ{MaxWR: 16, MaxSGE: 1})
		s.post(s.wr(8))
		s.do(model.CreateQP{Type: rc})
		s.post(s.wr(8))
		s.to(0, model.Init)
		s.post(s.wr(8))
		s.to(0, model.Err)
		s.post(s.wr(8))
		s.do(model.Query{})
	}},
	{model.RulePostNoKeyCheck, "posting through an invalidated key", "", func(s *session) {
		s.setup(8, 1)
		s.do(model.Invalidate{Key: 1})
		s.post(model.WR{ID: highWRID(41), NumSGE: 1, SGEs: []model.SGE{{Length: 64, Key: 1}}})
		s.do(model.Query{})
	}},
	{model.RulePostCopy, "the caller's WR is scribbled after post", "", func(s *session) {
		s.setup(8, 2, rc)
		s.post(s.wr(16, 48), s.wr(64))
		s.send(0, model.Send, 60)
		s.send(0, model.Send, 64)
		s.poll()
	}},
	{model.RulePostQPRQ, "ibv_post_recv on an SRQ-attached QP", "RUT PostWrongApi", func(s *session) {
		s.setup(8, 1, rc)
		s.do(model.PostRecv{QP: 0, WR: s.wr(8)})
		s.send(0, model.Send, 8)
	}},
	{model.RuleCreateAttr, "create writes back max_wr and max_sge", "", func(s *session) {
		s.do(model.CreateSRQ{MaxWR: 5, MaxSGE: 2})
		s.do(model.Query{})
		s.fill(8)
		s.post(s.wr(8))
	}},
	{model.RuleCreateMax, "create at max_srq_wr, at max_srq_sge, and at both", "RUT SrqTest.DeviceCap", func(s *session) {
		s.do(model.CreateSRQ{MaxWR: 4, MaxSGE: 1})
		s.do(model.CreateOther{MaxWR: s.x.info.MaxSRQWR, MaxSGE: 1})
		s.do(model.CreateOther{MaxWR: 5, MaxSGE: s.x.info.MaxSRQSGE})
		s.do(model.CreateOther{MaxWR: s.x.info.MaxSRQWR, MaxSGE: s.x.info.MaxSRQSGE})
	}},
	{model.RuleCreateMax, "create above max_srq_wr, and above max_srq_sge", "RUT SrqTest.ExceedDeviceMaxWr, SrqTest.ExceedDeviceMaxSge", func(s *session) {
		s.do(model.CreateSRQ{MaxWR: 4, MaxSGE: 1})
		s.do(model.CreateOther{MaxWR: s.x.info.MaxSRQWR + 1, MaxSGE: 1})
		s.do(model.CreateOther{MaxWR: 5, MaxSGE: s.x.info.MaxSRQSGE + 1})
		s.do(model.Query{})
	}},
	{model.RuleCreateEx, "an SRQ made by ibv_create_srq_ex(PD|TYPE, BASIC) works as ibv_create_srq's", "", func(s *session) {
		s.do(model.CreateSRQ{MaxWR: 8, MaxSGE: 2, Variant: model.CreateEx})
		s.do(model.CreateQP{Type: rc})
		s.to(0, model.Init, model.RTR, model.RTS)
		s.do(model.Query{})
		s.fill(64)
		s.post(s.wr(64))
		s.send(0, model.Send, 60)
		s.poll()
	}},
	{model.RuleCreateEx, "ibv_create_srq_ex plain, with the CQ bit, and with an unknown srq_type", "", func(s *session) {
		s.do(model.CreateSRQ{MaxWR: 4, MaxSGE: 1})
		for _, v := range []model.CreateVariant{model.CreateEx, model.CreateExCQ, model.CreateExBadType} {
			s.do(model.CreateOther{MaxWR: 4, MaxSGE: 1, Variant: v})
		}
	}},
	{model.RuleCreateLimit, "a srq_limit given at create", "", func(s *session) {
		s.do(model.CreateSRQ{MaxWR: 8, MaxSGE: 1, Limit: 3})
		s.do(model.CreateQP{Type: rc})
		s.to(0, model.Init, model.RTR, model.RTS)
		s.post(s.wr(8), s.wr(8), s.wr(8))
		s.send(0, model.Send, 1)
		s.poll()
	}},
	{model.RuleQueryAttr, "query after create and after traffic", "", func(s *session) {
		s.setup(6, 2, rc)
		s.do(model.Query{})
		s.post(s.wr(8))
		s.send(0, model.Send, 1)
		s.do(model.Query{})
	}},
	{model.RuleQueryLimit, "query reads the armed limit", "rdma-core test_modify_srq_limit", func(s *session) {
		s.setup(16, 1)
		for range 10 {
			s.post(s.wr(8))
		}
		s.do(model.Arm{Limit: 7})
		s.require(!queryUnsupported(s.profile), "the profile says this device has no ibv_query_srq (Query: "+s.profile.Query.String()+"): there is no limit to read")
		s.do(model.Query{})
	}},
	{model.RuleModifyOnlyMasked, "a refused limit changes nothing", "", func(s *session) {
		s.setup(4, 1)
		s.do(model.Arm{Limit: 2})
		s.do(model.Arm{Limit: s.view().Capacity + 1})
		s.do(model.Query{})
	}},
	{model.RuleDestroyBusy, "destroy with QPs attached fails and the SRQ keeps working; with none it succeeds", "", func(s *session) {
		s.setup(8, 1, rc)
		s.do(model.CreateQP{Type: rc}) // attached in RESET: it counts too
		s.post(s.wr(64), s.wr(64))
		if s.destroySRQ() {
			return
		}
		s.do(model.Query{})
		s.post(s.wr(64))
		s.send(0, model.Send, 8)
		s.poll()
		s.do(model.DestroyQP{QP: 0})
		if s.destroySRQ() { // qp1 is still attached
			return
		}
		s.do(model.DestroyQP{QP: 1})
		s.destroySRQ()
		s.poll()
	}},
	{model.RuleLimitArm, "arm, consume below, event", "rdma-core test_modify_srq_limit", func(s *session) {
		s.setup(16, 1, rc)
		for range 10 {
			s.post(s.wr(8))
		}
		s.do(model.Arm{Limit: 7})
		for range 4 {
			s.send(0, model.Send, 1)
		}
		s.poll()
	}},
	{model.RuleLimitDisarm, "limit 0 disarms", "", func(s *session) {
		s.setup(16, 1, rc)
		for range 4 {
			s.post(s.wr(8))
		}
		s.do(model.Arm{Limit: 3})
		s.do(model.Arm{Limit: 0})
		s.do(model.Query{})
		s.send(0, model.Send, 1)
		s.send(0, model.Send, 1)
		s.poll()
	}},
	{model.RuleLimitBound, "limit at and above max_wr", "", func(s *session) {
		s.setup(4, 1)
		c := s.view().Capacity
		s.do(model.Arm{Limit: c + 1})
		s.do(model.Arm{Limit: c})
		s.do(model.Arm{Limit: c - 1})
		s.do(model.Query{})
	}},
	{model.RuleLimitFire, "not at the limit, only below it", "RUT SrqLimit", func(s *session) {
		s.setup(16, 1, rc)
		for range 12 {
			s.post(s.wr(8))
		}
		s.do(model.Arm{Limit: 6})
		for range 6 {
			s.send(0, model.Send, 1)
		}
		s.poll()
		s.send(0, model.Send, 1)
		s.poll()
	}},
	{model.RuleLimitFire, "armed above the current count", "", func(s *session) {
		s.setup(16, 1, rc)
		s.post(s.wr(8), s.wr(8))
		s.do(model.Arm{Limit: 5})
		s.poll()
		s.send(0, model.Send, 1)
		s.poll()
	}},
	{model.RuleLimitOnce, "one event per arming, re-armed fires again", "", func(s *session) {
		s.setup(16, 1, ud)
		for range 8 {
			s.post(s.wr(128))
		}
		s.do(model.Arm{Limit: 6})
		for range 4 {
			s.send(0, model.Send, 1)
		}
		s.poll()
		s.do(model.Arm{Limit: 3})
		for range 3 {
			s.send(0, model.Send, 1)
		}
		s.poll()
	}},
	{model.RuleLimitAfterFire, "srq_limit after the event", "", func(s *session) {
		s.setup(16, 1, rc)
		s.post(s.wr(8), s.wr(8), s.wr(8))
		s.do(model.Arm{Limit: 3})
		s.send(0, model.Send, 1)
		s.poll()
		s.do(model.Query{})
	}},
	{model.RuleResizeOptional, "resize where the device advertises it, or not", "rdma-core test_srq resize", func(s *session) {
		s.setup(4, 1)
		s.do(model.Resize{MaxWR: 12})
		s.do(model.Query{})
	}},
	{model.RuleResizeBounds, "resize to 0 and above the device", "", func(s *session) {
		s.setup(4, 1)
		s.require(s.x.info.SRQResize, "the device does not advertise IBV_DEVICE_SRQ_RESIZE")
		s.do(model.Resize{MaxWR: 0})
		s.do(model.Resize{MaxWR: s.x.info.MaxSRQWR + 1})
		s.do(model.Query{})
	}},
	{model.RuleResizeBelowCount, "resize below the outstanding WRs", "RUT ModifyMaxWr", func(s *session) {
		s.setup(16, 1)
		s.require(s.x.info.SRQResize, "the device does not advertise IBV_DEVICE_SRQ_RESIZE")
		for range 9 {
			s.post(s.wr(8))
		}
		s.do(model.Resize{MaxWR: 4})
		s.do(model.Query{})
	}},
	{model.RuleResizeBelowLimit, "resize below the armed limit", "", func(s *session) {
		s.setup(16, 1)
		s.require(s.x.info.SRQResize, "the device does not advertise IBV_DEVICE_SRQ_RESIZE")
		s.do(model.Arm{Limit: 6})
		s.do(model.Resize{MaxWR: 4})
		s.do(model.Query{})
		s.poll()
	}},
	{model.RuleModifyOnlyMasked, "a resize keeps the armed limit", "", func(s *session) {
		s.setup(16, 1, rc)
		s.require(s.x.info.SRQResize, "the device does not advertise IBV_DEVICE_SRQ_RESIZE")
		for range 8 {
			s.post(s.wr(8))
		}
		s.do(model.Arm{Limit: 4}) // below the count: armed, nothing fires
		s.do(model.Resize{MaxWR: 32})
		s.do(model.Query{})
		for range 5 {
			s.send(0, model.Send, 1)
		}
		s.poll()
	}},
	{model.RuleResizeCapacity, "grow with WRs outstanding: they stay, in order, and the new max_wr fits", "RUT ModifyMaxWr", func(s *session) {
		s.setup(4, 1, rc)
		s.require(s.x.info.SRQResize, "the device does not advertise IBV_DEVICE_SRQ_RESIZE")
		s.post(s.wr(8), s.wr(8))
		s.do(model.Resize{MaxWR: 20})
		s.do(model.Query{})
		s.fill(8)
		s.post(s.wr(8))
		s.send(0, model.Send, 1)
		s.send(0, model.Send, 2)
		s.poll()
	}},
	{model.RuleQPTransitions, "illegal transitions are refused", "", func(s *session) {
		s.do(model.CreateSRQ{MaxWR: 4, MaxSGE: 1})
		s.do(model.CreateQP{Type: rc})
		s.to(0, model.RTR, model.Err, model.Init, model.RTS, model.RTR, model.RTS, model.SQD, model.RTR, model.SQD, model.RTS, model.SQE, model.Reset, model.Init, model.Err, model.Reset)
	}},
	{model.RuleQPFetchStates, "RTR, RTS and SQD fetch", "", func(s *session) {
		s.setup(8, 1)
		s.do(model.CreateQP{Type: rc})
		s.post(s.wr(64), s.wr(64), s.wr(64))
		s.to(0, model.Init, model.RTR)
		s.send(0, model.Send, 1)
		s.to(0, model.RTS)
		s.send(0, model.Send, 2)
		s.to(0, model.SQD)
		s.send(0, model.Send, 3)
		s.poll()
	}},
	{model.RuleQPFetchStates, "SQE fetches", "", func(s *session) {
		s.setup(8, 1, ud)
		s.require(s.x.info.InjectSQE, "the driver cannot move a QP to SQE")
		s.post(s.wr(64))
		s.do(model.InjectSQE{QP: 0})
		s.send(0, model.Send, 1)
		s.poll()
	}},
	{model.RuleQPNoFetchStates, "RESET, INIT and ERR fetch nothing", "", func(s *session) {
		s.setup(8, 1)
		s.do(model.CreateQP{Type: rc})
		s.do(model.CreateQP{Type: rc})
		s.post(s.wr(64), s.wr(64))
		s.send(0, model.Send, 1)
		s.to(1, model.Init)
		s.send(1, model.Send, 1)
		s.to(1, model.Err)
		s.send(1, model.Send, 1)
		s.poll()
		s.do(model.Query{})
	}},
	{model.RuleQPBeforeRTR, "messages to a QP in INIT, then RTR", "RUT BuffersMessagesWhenNotReadyToReceive", func(s *session) {
		s.setup(8, 1)
		s.require(s.x.info.UD, "the device has no UD QPs")
		s.do(model.CreateQP{Type: ud})
		s.post(s.wr(128), s.wr(128))
		s.to(0, model.Init)
		s.send(0, model.Send, 8)
		s.to(0, model.RTR)
		s.send(0, model.Send, 9)
		s.poll()
	}},
	{model.RuleQPLastWQE, "modify to ERR raises LAST_WQE_REACHED", "RUT QpFlush", func(s *session) {
		s.setup(8, 1, rc, rc)
		s.post(s.wr(8), s.wr(8))
		s.to(0, model.Err)
		s.poll()
		s.send(1, model.Send, 4)
		s.poll()
	}},
	{model.RuleQPLastWQE, "an error completion moves RC to ERR, with the event", "", func(s *session) {
		s.setup(8, 1, rc)
		s.post(s.wr(4), s.wr(64))
		s.send(0, model.Send, 5)
		s.poll()
	}},
	{model.RuleQPErrorEvent, "a message too long, a bad key, and a modify to ERR", "", func(s *session) {
		s.setup(8, 1, rc, rc, rc)
		s.post(s.wr(4))
		s.send(0, model.Send, 64)
		s.poll()
		s.post(model.WR{ID: highWRID(42), NumSGE: 1, SGEs: []model.SGE{{Length: 64, Key: 1}}})
		s.do(model.Invalidate{Key: 1})
		s.send(1, model.Send, 8)
		s.poll()
		s.to(2, model.Err)
		s.poll()
	}},
	{model.RuleQPFlushInProgress, "ERR while a WR is half filled", "", func(s *session) {
		s.setup(8, 1, rc)
		s.require(s.x.info.PartialDelivery, "the driver cannot hold a message half-delivered")
		s.post(s.wr(4096), s.wr(4096))
		s.do(model.Arrive{QP: 0, Msg: model.Message{Opcode: model.Send, Len: 3000}, FirstPacketOnly: true})
		s.to(0, model.Err)
		s.poll()
	}},
	{model.RuleSRQErrEvent, "an SRQ in error raises SRQ_ERR", "", func(s *session) {
		s.setup(8, 1, rc)
		s.require(s.x.info.InjectSRQError, "the driver cannot put the SRQ in error (rxe and mlx5 cannot from userspace)")
		s.do(model.InjectSRQError{})
		s.poll()
	}},
	{model.RuleSRQErrNoFetch, "nothing is fetched from an SRQ in error", "", func(s *session) {
		s.setup(8, 1, rc)
		s.require(s.x.info.InjectSRQError, "the driver cannot put the SRQ in error (rxe and mlx5 cannot from userspace)")
		s.post(s.wr(8))
		s.do(model.InjectSRQError{})
		s.send(0, model.Send, 1)
		s.post(s.wr(8))
		s.poll()
	}},
	{model.RuleFetchFIFO, "completions in posting order across QPs", "RUT multiplexing", func(s *session) {
		s.setup(16, 1, rc, ud)
		s.post(s.wr(256), s.wr(256), s.wr(256), s.wr(256), s.wr(256))
		for i := range 5 {
			s.send(i%2, model.Send, uint32(i))
		}
		s.poll()
	}},
	{model.RuleFetchOpcodes, "every opcode: which consume a WR", "", func(s *session) {
		s.setup(8, 1, rc)
		s.post(s.wr(64), s.wr(64), s.wr(64))
		for _, op := range []model.Opcode{model.Write, model.Read, model.CmpSwap, model.FetchAdd, model.Send, model.SendImm, model.WriteImm} {
			n := uint32(8)
			s.send(0, op, n)
		}
		s.poll()
		s.do(model.Query{})
	}},
	{model.RuleFetchOnce, "every wr_id completes once", "RUT multithreaded", func(s *session) {
		s.setup(32, 1, rc, ud)
		s.post(s.wr(256), s.wr(256), s.wr(256), s.wr(256), s.wr(256), s.wr(256), s.wr(256), s.wr(256))
		for i := range 8 {
			s.send(i%2, model.Send, 16)
			if i%4 == 3 {
				s.poll()
			}
		}
	}},
	{model.RuleRecvCompletion, "wr_id, QP and byte_len of a receive", "rdma-core test_srq traffic", func(s *session) {
		s.setup(8, 2, rc)
		s.post(s.wr(100, 100))
		s.send(0, model.Send, 150)
		s.poll()
	}},
	{model.RulePollMax, "polls of one and two completions from a CQ holding more", "", func(s *session) {
		s.setup(8, 1, rc, ud)
		s.post(s.wr(64), s.wr(64), s.wr(64), s.wr(64))
		for i := range 4 {
			s.send(i%2, model.Send, 8)
		}
		s.do(model.Poll{Max: 1})
		s.do(model.Poll{Max: 2})
		s.poll()
	}},
	{model.RuleRecvImm, "send with immediate", "", func(s *session) {
		s.setup(8, 1, rc)
		s.post(s.wr(64))
		s.send(0, model.SendImm, 12)
		s.poll()
	}},
	{model.RuleRecvWriteImm, "RDMA write with immediate into a WR with no SGEs", "", func(s *session) {
		s.setup(8, 1, rc)
		s.post(model.WR{ID: highWRID(42)})
		s.send(0, model.WriteImm, 512)
		s.poll()
	}},
	{model.RuleRecvFit, "messages exactly at the fit boundary", "", func(s *session) {
		s.setup(8, 2, rc)
		s.post(s.wr(60, 40), s.wr(100))
		s.send(0, model.Send, 100)
		s.send(0, model.Send, 100)
		s.poll()
	}},
	{model.RuleRecvNumSGE0, "num_sge 0 takes an empty message", "", func(s *session) {
		s.setup(8, 1, rc)
		s.post(model.WR{ID: highWRID(43)})
		s.send(0, model.Send, 0)
		s.poll()
	}},
	{model.RuleRecvNumSGE0, "num_sge 0 refuses one byte", "", func(s *session) {
		s.setup(8, 1, rc)
		s.post(model.WR{ID: highWRID(44)})
		s.send(0, model.Send, 1)
		s.poll()
	}},
	{model.RuleSGELen0, "an SGE of length 0", "", func(s *session) {
		s.setup(8, 1, rc)
		s.post(s.wr(0))
		s.send(0, model.Send, 64)
		s.poll()
	}},
	{model.RuleUDGRH, "UD needs 40 bytes for the GRH: at the boundary and one over", "", func(s *session) {
		s.setup(8, 1, ud)
		s.post(s.wr(104), s.wr(104), s.wr(200))
		s.send(0, model.Send, 64)
		s.send(0, model.Send, 65)
		s.send(0, model.Send, 1)
		s.poll()
	}},
	{model.RuleRecvTooLarge, "too large on RC", "", func(s *session) {
		s.setup(8, 1, rc, rc)
		s.post(s.wr(64), s.wr(64))
		s.send(0, model.Send, 65)
		s.poll()
		s.send(0, model.Send, 1)
		s.send(1, model.Send, 1)
		s.poll()
	}},
	{model.RuleRecvTooLarge, "too large on UD", "", func(s *session) {
		s.setup(8, 1, ud)
		s.post(s.wr(64), s.wr(128))
		s.send(0, model.Send, 100)
		s.poll()
		s.send(0, model.Send, 1)
		s.poll()
	}},
	{model.RuleRecvBadKey, "a WR through a deregistered MR", "", func(s *session) {
		s.setup(8, 2, rc)
		s.post(model.WR{ID: highWRID(45), NumSGE: 1, SGEs: []model.SGE{{Length: 64, Key: 1}}})
		s.do(model.Invalidate{Key: 1})
		s.send(0, model.Send, 8)
		s.poll()
	}},
	{model.RuleRecvBadKey, "an invalid key in an SGE the message does not reach", "", func(s *session) {
		s.setup(8, 2, rc)
		s.post(model.WR{ID: highWRID(46), NumSGE: 2, SGEs: []model.SGE{{Length: 64}, {Length: 64, Key: 1}}})
		s.do(model.Invalidate{Key: 1})
		s.send(0, model.Send, 8)
		s.poll()
	}},
	{model.RuleRecvRNR, "an empty SRQ: RNR on RC, dropped on UD", "RUT SendRnr", func(s *session) {
		s.setup(8, 1, rc)
		s.send(0, model.Send, 8)
		s.poll()
		s.post(s.wr(8))
		s.send(0, model.Send, 8)
		s.poll()
	}},
	{model.RuleSlotFree, "receive without polling, then post again", "", func(s *session) {
		s.setup(4, 1, rc)
		s.fill(16)
		s.send(0, model.Send, 1)
		s.send(0, model.Send, 1)
		s.post(s.wr(16), s.wr(16))
		s.poll()
		s.post(s.wr(16), s.wr(16))
	}},
	{model.RuleQPSRQCaps, "QPs asking for receive caps above the device's max_qp_wr and max_sge", "", func(s *session) {
		s.setup(8, 1, rc)
		s.do(model.CreateQP{Type: rc, RecvCaps: model.RecvCapsAboveWR})
		s.do(model.CreateQP{Type: rc, RecvCaps: model.RecvCapsAboveSGE})
		if s.x.info.UD {
			s.do(model.CreateQP{Type: ud, RecvCaps: model.RecvCapsAboveWR})
		}
		types := s.view().QPTypes
		for range types {
			s.post(s.wr(128))
		}
		for i := 1; i < len(types); i++ { // those created work with the SRQ
			s.to(i, model.Init, model.RTR, model.RTS)
		}
		for i := range types {
			s.send(i, model.Send, 8)
		}
		s.poll()
	}},
	{model.RuleQPCreate, "RC and UD QPs attached to one SRQ", "", func(s *session) {
		s.setup(8, 1, rc, ud)
		s.post(s.wr(128), s.wr(128))
		s.send(0, model.Send, 8)
		s.send(1, model.Send, 8)
		s.poll()
	}},
}

// negativeSafe reports whether the profile lets the suite post a negative
// num_sge: where the provider does not check it, doing so corrupts memory.
func negativeSafe(s *session) bool {
	return s.profile.NegativeSGE.Get() == model.Rejected
}
