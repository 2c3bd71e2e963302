package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// session runs operations on the model and the driver side by side and
// records the trace. A step that deviates, or a harness failure, ends the
// session by panicking with stop; run recovers it.
type session struct {
	ctx     context.Context
	profile model.Profile
	relaxed []model.RuleID // rules already diagnosed broken: the model admits their departures
	model   *model.Model
	x       *executor
	trace   Trace
	ids     uint64 // how many wr_ids were handed out
	// idBase is added to every wr_id: random cases spread them over 64
	// bits, so that a driver that keeps only some of the bits shows.
	idBase uint64
	// skip is set when the scenario needs something the driver lacks.
	skip string
	// stopAt, when set, is when a random case stops drawing steps (the
	// run's budget, or its shrink time): a prefix of a case is a case,
	// and a device whose calls are slow (a 60 ms deliver) would
	// otherwise take a whole case's steps past it.
	stopAt time.Time
	// unpredictable is set when the model could not predict a step (a
	// generator's or scenario's fault, not the device's).
	unpredictable bool
	features      *featureTracker
}

type stop struct{}

func newSession(ctx context.Context, p model.Profile, relaxed []model.RuleID, x *executor) (*session, error) {
	m, err := model.NewRelaxed(p, capsOf(x.info), relaxed)
	if err != nil {
		return nil, err
	}
	s := &session{ctx: ctx, profile: p, relaxed: relaxed, model: m, x: x, features: newFeatureTracker()}
	s.trace.Steps, x.spareSteps = x.spareSteps, nil
	s.trace.src = &wantSource{prof: p, caps: capsOf(x.info), relaxed: slices.Clone(relaxed)}
	return s, nil
}

// recycle hands the steps array of tr, a trace the caller drops, to the
// next session.
func (x *executor) recycle(tr Trace) {
	clear(tr.Steps) // what the steps point to is garbage now
	x.spareSteps = tr.Steps[:0]
}

// eagerWants makes every step ask the model for its canonical outcome
// before the device performs it, as the harness did before
// model.Predictable; a test compares the traces of both ways.
var eagerWants = false

// do performs op on both sides and returns the driver's observation.
func (s *session) do(op model.Op) model.Observation {
	if s.ctx.Err() != nil {
		s.trace.Interrupted = true
		panic(stop{})
	}
	if why := s.cannot(op); why != "" {
		s.require(false, why)
	}
	t0 := stamp()
	step := TraceStep{N: len(s.trace.Steps) + 1, Op: op, lazy: lazyOp | lazyWant}
	var want model.Observation
	if eagerWants || s.x.needsWant(op) || !s.model.Predictable(op) {
		// The executor needs the canonical outcome, or the model may
		// not predict op at all: then op is never performed.
		var err error
		if want, err = s.model.Expect(op); err != nil {
			s.x.timing.add(PhaseModel, t0)
			s.trace.Err = fmt.Sprintf("step %d %s: the model cannot predict it: %v", step.N, op, err)
			step.lazy = lazyOp
			s.trace.Steps = append(s.trace.Steps, step)
			s.unpredictable = true
			panic(stop{})
		}
		step.want, step.lazy = want, lazyOp|lazyAllowed
	}
	before := s.model.View()
	modelTime := stamp() - t0
	got, err := s.x.exec(s.ctx, op, want)
	if err == nil {
		got, err = s.recheck(op, want, got)
	}
	t1 := stamp()
	if errors.Is(err, drivers.ErrUnsupported) {
		s.skip = err.Error()
		panic(stop{})
	}
	step.obs, step.lazy = got, step.lazy|lazyGot
	if err == nil {
		err = s.model.Step(op, got)
	}
	if err != nil {
		s.noteFailure(&step, err)
	}
	s.trace.Steps = append(s.trace.Steps, step)
	if err == nil {
		s.features.observe(op, before, got)
	}
	s.x.timing.add(PhaseModel, t1-modelTime)
	if err != nil {
		if s.trace.Deviation != nil && !got.Ended() {
			s.evidence(op, before)
		}
		panic(stop{})
	}
	if got.Ended() {
		// A crash or failure the diagnosis excuses: the case cannot go on.
		panic(stop{})
	}
	return got
}

// noteFailure records in the trace, and in step, the error a step ended
// with: silence where the model needs an answer, a deviation, or the
// harness's or device's failure.
func (s *session) noteFailure(step *TraceStep, err error) {
	var d *model.Deviation
	var inc *model.Inconclusive
	switch {
	case errors.As(err, &inc):
		// Silence where the model needs an answer: the trace ends here,
		// neither passing nor failing.
		step.Rule, step.Allowed, step.Got = inc.Rule, inc.What+" = "+inc.Want, inc.What+" = "+inc.Got
		step.lazy &^= lazyAllowed | lazyGot | lazyWant
		s.trace.Inconclusive = inc
	case errors.As(err, &d):
		step.Rule, step.Allowed, step.Got = d.Rule, d.What+" = "+d.Want, d.What+" = "+d.Got
		step.lazy &^= lazyAllowed | lazyGot | lazyWant
		s.trace.Deviation = d
	default:
		s.trace.Err = fmt.Sprintf("step %d %s: %v", step.N, step.Op, err)
		if s.ctx.Err() != nil {
			s.trace.Interrupted = true
		}
	}
}

// recheck gives a poll whose wait ran out, where the model finds what
// came a departure, a much longer look (executor.recheckPoll), so that a
// completion or event that was only late does not decide the verdict.
// What is still missing after it counts: the device had ten times the
// poll's wait to write to its own queue, with nothing of the harness's in
// flight.
func (s *session) recheck(op model.Op, want, got model.Observation) (model.Observation, error) {
	p, ok := op.(model.Poll)
	if !ok || !s.x.short || s.x.recheck <= 0 {
		return got, nil // nothing ran short, or a synchronous device: no second look
	}
	if err := s.model.Clone().Step(op, got); err == nil || !errors.As(err, new(*model.Deviation)) {
		s.x.short = false
		return got, nil
	}
	return s.x.recheckPollValue(s.ctx, p, want, got)
}

// recheckPollValue is recheckPoll on a copy of got, which it returns: got
// itself stays on the caller's stack (not inlined: inlined, the copy
// would move to the heap on every step).
//
//go:noinline
func (x *executor) recheckPollValue(ctx context.Context, p model.Poll, want, got model.Observation) (model.Observation, error) {
	err := x.recheckPoll(ctx, p, want, &got)
	return x.observeFailed(got, err)
}

// evidence looks once more after a deviation, unchecked, so that the
// diagnosis sees what the departure left behind. It polls (a completion
// that shows which WR a message took, an event); after a failing post it
// posts one more WR (how many the device really holds); it queries the
// SRQ (whether an arming took); then it probes
// every QP the model had settled before the failing step with a WR and an
// empty Send, and polls again: whether the QP takes it shows whether the
// device had moved it to ERR, which a missing event or a QP's fate on an
// error completion leaves open. When none of those QPs could take a WR, a
// fresh QP brought to RTR receives one empty Send per WR the model held
// (up to freshProbeSends): the wr_ids they take show which WRs the device
// holds, and in what order.
func (s *session) evidence(after model.Op, v model.View) {
	if s.ctx.Err() != nil {
		return
	}
	look := func(op model.Op) bool {
		got, err := s.x.exec(s.ctx, op, model.Observation{})
		if err != nil && len(got.Completions) == 0 && len(got.Events) == 0 {
			return false
		}
		s.trace.Steps = append(s.trace.Steps, TraceStep{N: len(s.trace.Steps) + 1, Op: op, Evidence: true, obs: got, lazy: lazyOp | lazyGot})
		return !got.Ended() // a call the driver crashed in or failed ends the looking
	}
	if _, ok := after.(model.Poll); !ok && !look(model.Poll{}) {
		return
	}
	// v is the model's view before the failing step: after it the model
	// has no candidate left.
	// After a destroy that went through there is nothing left to probe.
	if _, gone := after.(model.DestroySRQ); gone || !v.Created || v.SRQErrorAny {
		return
	}
	if _, posting := after.(model.Post); posting {
		// One more WR shows how many the device really holds, which a
		// post refused or taken at the edge of full leaves open.
		probe := model.WR{ID: evidenceWRID - 1, NumSGE: 1, SGEs: []model.SGE{{Length: 64}}}
		if !look(model.Post{WRs: []model.WR{probe}}) {
			return
		}
	}
	// The attributes and the limit as query reads them: whether an arming
	// took, which a missing event alone leaves open.
	if !look(model.Query{}) {
		return
	}
	probed, fetched := false, false
	for qp := range v.QPTypes {
		if !settled(v, qp) || !v.QPStates[qp].Fetches() && v.QPStates[qp] != model.Err {
			continue
		}
		// A wr_id no generated WR has: the probe's completion is its own.
		probe := model.WR{ID: evidenceWRID + uint64(qp), NumSGE: 1, SGEs: []model.SGE{{Length: 64}}}
		if !look(model.Post{WRs: []model.WR{probe}}) || !look(model.Arrive{QP: qp, Msg: model.Message{Opcode: model.Send}}) {
			return
		}
		probed = true
		fetched = fetched || v.QPStates[qp].Fetches()
	}
	if !fetched {
		// No QP the model had settled could take a WR (each was in ERR,
		// or none was settled): a fresh RC QP brought to RTR takes from
		// the head of the SRQ, which a post or a limit event alone leaves
		// open.
		qp := len(v.QPTypes)
		probe := model.WR{ID: evidenceWRID + uint64(qp), NumSGE: 1, SGEs: []model.SGE{{Length: 64}}}
		if !look(model.CreateQP{Type: model.RC}) || !look(model.ModifyQP{QP: qp, State: model.Init}) ||
			!look(model.ModifyQP{QP: qp, State: model.RTR}) || !look(model.Post{WRs: []model.WR{probe}}) {
			return
		}
		// One empty Send per WR the model held (up to freshProbeSends):
		// the order of the wr_ids they take shows which WRs the device
		// holds, which the head alone may not (a list posted in part).
		for range max(1, min(v.Outstanding, freshProbeSends)) {
			if !look(model.Arrive{QP: qp, Msg: model.Message{Opcode: model.Send}}) {
				return
			}
		}
		probed = true
	}
	if probed {
		look(model.Poll{})
	}
}

// freshProbeSends bounds the Sends the evidence's fresh QP receives.
const freshProbeSends = 4

// evidenceWRID is the first wr_id of the evidence probes' WRs.
const evidenceWRID = 0xe0e0_0000_0000_0000

// run executes f in a fresh session and always releases the driver's SRQ.
// It returns the trace, the reason a scenario skipped, and the model's
// coverage of the steps that agreed.
func run(ctx context.Context, p model.Profile, relaxed []model.RuleID, x *executor, f func(*session)) (tr Trace, skip string, reached map[model.RuleID]int) {
	tr, skip, reached, _ = runCounting(ctx, p, relaxed, x, f)
	tr.fillTexts()
	return
}

// runCounting is run that also returns the state-space features the
// session's agreeing steps reached. The texts of a trace that passed are
// left unwritten (Trace.fillTexts): the random cases drop them.
func runCounting(ctx context.Context, p model.Profile, relaxed []model.RuleID, x *executor, f func(*session)) (tr Trace, skip string, reached map[model.RuleID]int, features map[string]int) {
	s, err := newSession(ctx, p, relaxed, x)
	if err != nil {
		return Trace{Err: err.Error()}, "", nil, nil
	}
	defer func() {
		if err := x.close(); err != nil && s.trace.Err == "" && s.trace.Deviation == nil {
			s.trace.Err = fmt.Sprintf("closing the SRQ: %v", err)
		}
		tr, skip, reached, features = s.trace, s.skip, s.model.Reached(), s.features.counts
		tr.unpredictable = s.unpredictable
		if tr.Failed() || tr.Inconclusive != nil || tr.unpredictable || tr.Interrupted {
			tr.fillTexts()
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stop); !ok {
				panic(r)
			}
		}
	}()
	f(s)
	return
}

// cannot says why the driver cannot perform op here (drivers.Info's
// CMStates, NoOpcodes), or "". A PostRecv that Info.PostRecvUnsafe says
// kills the process is made: the driver makes it in a child process.
func (s *session) cannot(op model.Op) string {
	if _, ok := op.(model.CreateSRQ); !ok && s.x.srq == nil {
		// Only where a relaxed rule let a refused create of the SRQ pass
		// (CREATE-ATTR, CREATE-MAX or CREATE-EX under diagnosis).
		return "the step needs the SRQ under test, which the device did not create in this case"
	}
	if n, ok := qpIndex(op); ok && n >= len(s.x.qps) && s.x.srq != nil {
		// Only where a relaxed rule let a refused create pass (QP-CREATE
		// under diagnosis): the case cannot go on without the QP.
		return fmt.Sprintf("the step needs qp%d, which the device did not create earlier in this case", n)
	}
	info := s.x.info
	switch o := op.(type) {
	case model.CreateSRQ:
		if o.MaxWR > info.MaxSRQWR || o.MaxSGE > info.MaxSRQSGE {
			return fmt.Sprintf("the step needs an SRQ of max_wr %d and max_sge %d; the device's limits are max_srq_wr %d and max_srq_sge %d",
				o.MaxWR, o.MaxSGE, info.MaxSRQWR, info.MaxSRQSGE)
		}
	case model.PostRecv:
		if why := unmadeQP(info, s.model.View(), o.QP); why != "" {
			return why
		}
	case model.Arrive:
		if !opcodeOK(info, o.Msg.Opcode) {
			return info.NoOpcodesWhy
		}
		if stallsResponder(info, s.model.View(), o.QP, o.Msg) {
			// Only in a shrunk or replayed trace: the generator keeps
			// such a message to one packet.
			return fmt.Sprintf("an RC RDMA Write with Immediate of %d bytes (more than one %d-byte packet) may meet an SRQ with no WR to give: the responder would wait for its last packet's retry, which the harness's peer, reset after the RNR, never sends",
				o.Msg.Len, info.MaxUDMessage)
		}
	case model.DestroySRQ:
		if why := unmadeQPs(info, s.model.View()); why != "" {
			return why
		}
	case model.ModifyQP:
		if info.CMStates {
			v := s.model.View()
			if o.QP < len(v.QPStates) && !cmTransition(v.QPStates[o.QP], v.QPStateSure[o.QP], o.State) {
				return fmt.Sprintf("QPs of this device reach RTS only through the connection manager (iWARP, rdma_cm): %s to %s is not a transition the driver can make",
					v.QPStates[o.QP], o.State)
			}
		}
	}
	return ""
}

// unmadeQPs says why destroy_srq cannot be refused for the QPs the model
// has attached: a connection-managed driver (Info.CMStates) makes a QP's
// verbs object when it connects (RTR) and drops it at RESET, so with none
// connected no QP holds the SRQ. "" when one does, or the driver is not
// connection-managed.
func unmadeQPs(info drivers.Info, v model.View) string {
	if !info.CMStates {
		return ""
	}
	for _, st := range v.QPStates {
		if !cmUnmade(st) {
			return ""
		}
	}
	return "in rdma_cm mode a QP exists on the device only from its connection (RTR) to RESET: with none connected, no QP holds the SRQ for destroy_srq to refuse"
}

// unmadeQP says why post_recv on qp cannot be made: a connection-managed
// driver has no verbs QP for it before it connects (RTR) or after RESET,
// so the answer would be the driver's, not the device's. A driver that
// makes the call in a child process (Info.PostRecvUnsafe) makes it on a
// QP of its own there, connected or not.
func unmadeQP(info drivers.Info, v model.View, qp int) string {
	if !info.CMStates || info.PostRecvUnsafe != "" || qp >= len(v.QPStates) {
		return ""
	}
	if st := v.QPStates[qp]; cmUnmade(st) {
		return fmt.Sprintf("in rdma_cm mode QP %d has no verbs QP in %s (it is made when it connects, at RTR): post_recv would reach the driver, not the device", qp, st)
	}
	return ""
}

// cmUnmade says a connection-managed QP in state st has no verbs QP: it
// is made when it connects (RTR) and dropped at RESET.
func cmUnmade(st model.QPState) bool { return st == model.Reset || st == model.Init }

// stallsResponder says whether msg, arriving at qp, is an RC RDMA Write
// with Immediate longer than one packet (the path MTU, Info.MaxUDMessage)
// that would, in some candidate state of v, meet an SRQ with no WR to
// give, or one in error. The responder takes the message's first packets and refuses
// the last with an RNR NAK (an RNR NAK answers a Send's first packet or
// a Write with Immediate's last: InfiniBand Architecture Specification,
// volume 1, chapter 9, receiver not ready), then waits for that packet's
// retry. The harness's peer does not retry it: it is reset and starts a
// new message at the PSN the responder holds for the old one's last
// packet, which the responder refuses as out of sequence. rxe on 7.2
// answers the next message on that QP, even an RDMA Write, with an error
// NAK. Whatever the model says of the next message would then test the
// harness, not the device, so such a message is never sent.
func stallsResponder(info drivers.Info, v model.View, qp int, msg model.Message) bool {
	return msg.Opcode == model.WriteImm && info.MaxUDMessage > 0 && msg.Len > info.MaxUDMessage &&
		qp < len(v.QPTypes) && v.QPTypes[qp] == model.RC && (v.MinOutstanding == 0 || v.SRQErrorAny)
}

// opcodeOK says whether the peer can send op on the device.
func opcodeOK(info drivers.Info, op model.Opcode) bool {
	return !info.NoOpcodes.Has(drivers.Opcode(op))
}

// cmTransition says whether a connection-managed QP (drivers.Info.CMStates)
// can go from cur to to: up the path RESET, INIT, RTR (connect), RTS; to
// RESET (disconnect) from anywhere; to ERR once connected.
func cmTransition(cur model.QPState, sure bool, to model.QPState) bool {
	if !sure {
		return to == model.Reset
	}
	switch to {
	case model.Reset:
		return true
	case model.Init:
		return cur == model.Reset
	case model.RTR:
		return cur == model.Init
	case model.RTS:
		return cur == model.RTR
	case model.Err:
		return cur != model.Reset && cur != model.Init
	}
	return false
}

// require skips the scenario when cond is false.
func (s *session) require(cond bool, reason string) {
	if !cond {
		s.skip = reason
		panic(stop{})
	}
}
