package conformance

import (
	"sync"
	"time"

	"github.com/srqconform/srqconform/model"
)

// Phase is the time a run spent in one kind of work, and how often it
// went there.
type Phase struct {
	Name  string        `json:"name"`
	Total time.Duration `json:"total_ns"`
	Calls int           `json:"calls"`
}

// PhaseNames lists, in report order, the phases a run's time on the
// driver and the model is split into (Report.Phases). They do not overlap;
// what they leave of Report.Elapsed is the harness's own (generation,
// diagnosis by replay on the model, bookkeeping).
var PhaseNames = []string{
	PhaseCreateSRQ, PhaseCreateQP, PhasePost, PhaseDeliver, PhaseDeliverRefused, PhasePollWait, PhasePollSettle,
	PhaseModifyQP, PhaseSRQVerbs, PhaseInvalidate, PhaseInject, PhaseLifecycle, PhaseTeardown, PhaseModel,
}

// Phases of a run (Report.Phases).
const (
	// PhaseCreateSRQ is create_srq: the SRQ with its CQ, event channel
	// and memory regions.
	PhaseCreateSRQ = "create_srq"
	// PhaseCreateQP is create_qp: a QP attached to the SRQ and its peer
	// (with the driver's connection, where it makes it then).
	PhaseCreateQP = "create_qp"
	// PhasePost is posting WRs to the SRQ or to a QP's own queue.
	PhasePost = "post"
	// PhaseDeliver is the peer sending a message (or part of one) until
	// the receiver has processed it; a driver that reconnects a peer
	// before a send does it here.
	PhaseDeliver = "deliver"
	// PhaseDeliverRefused is a delivery the peer saw fail (receiver not
	// ready, or an error once its retries ran out): the retry timers are
	// paid here, and the reconnection of the peer before its next send.
	PhaseDeliverRefused = "deliver_refused"
	// PhasePollWait is a poll waiting for the completions and events the
	// model expects (up to Options.Wait).
	PhasePollWait = "poll_wait"
	// PhasePollSettle is a poll looking for completions and events the
	// model does not expect (Options.Settle).
	PhasePollSettle = "poll_settle"
	// PhaseModifyQP is ibv_modify_qp, with whatever the driver does with
	// it (connecting the peer at RTR, waiting for the SQD drain).
	PhaseModifyQP = "modify_qp"
	// PhaseSRQVerbs is ibv_query_srq and ibv_modify_srq (arm, resize).
	PhaseSRQVerbs = "srq_verbs"
	// PhaseInvalidate is deregistering a memory region.
	PhaseInvalidate = "invalidate"
	// PhaseInject is injecting an SRQ error or a send-queue error.
	PhaseInject = "inject"
	// PhaseLifecycle is the lifecycle steps: destroying a QP or the SRQ
	// within a case, creating another SRQ beside.
	PhaseLifecycle = "lifecycle"
	// PhaseTeardown is closing the SRQ and all it made after each case.
	PhaseTeardown = "teardown"
	// PhaseModel is the model predicting and checking the steps.
	PhaseModel = "model"
)

// StageNames lists, in report order, the stages a run's elapsed time is
// split into (Report.Stages). They do not overlap and add up to
// Report.Elapsed; each includes the phases that ran in it.
var StageNames = []string{StageScenarios, StageRandom, StageShrink, StageDiagnosis, StageReport}

// Stages of a run (Report.Stages).
const (
	// StageScenarios is running the directed scenarios; its calls count
	// scenario runs.
	StageScenarios = "scenarios"
	// StageRandom is running random cases, up to a failure; its calls
	// count cases.
	StageRandom = "random"
	// StageShrink is shrinking failing random cases and minimising
	// counterexamples; its calls count the candidate traces run.
	StageShrink = "shrink"
	// StageDiagnosis is diagnosing failing traces (by replay on the model,
	// and by running a trace again with more polls).
	StageDiagnosis = "diagnosis"
	// StageReport is building the rule table and the profile findings.
	StageReport = "report"
)

// timing accumulates a run's phases and stages. The stage clock runs
// from start to stop and is in exactly one stage at a time.
type timing struct {
	mu     sync.Mutex
	phases map[string]*Phase
	stages map[string]*Phase
	stage  string    // current stage, "" before start and after stop
	since  time.Time // when the current stage was entered
}

func newTiming() *timing {
	return &timing{phases: map[string]*Phase{}, stages: map[string]*Phase{}}
}

// epoch is the origin of the stamps phases are timed by.
var epoch = time.Now()

// stamp reads the monotonic clock, as time since epoch: phases are timed at
// every step, and time.Now reads the wall clock as well.
func stamp() time.Duration { return time.Since(epoch) }

// add records one call to phase that began at start (a stamp) and ends
// now.
func (t *timing) add(phase string, start time.Duration) {
	if t == nil {
		return
	}
	d := stamp() - start
	t.mu.Lock()
	p := t.phases[phase]
	if p == nil {
		p = &Phase{Name: phase}
		t.phases[phase] = p
	}
	p.Total += d
	p.Calls++
	t.mu.Unlock()
}

// enter moves the stage clock to stage, counting one call of it, and
// returns the stage it left, for the caller to go back to.
func (t *timing) enter(stage string) (prev string) {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	prev = t.switchTo(stage)
	if stage != "" {
		t.stageOf(stage).Calls++
	}
	return prev
}

// leave moves the stage clock back to prev without counting a call.
func (t *timing) leave(prev string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.switchTo(prev)
}

func (t *timing) switchTo(stage string) (prev string) {
	now := time.Now()
	if t.stage != "" {
		t.stageOf(t.stage).Total += now.Sub(t.since)
	}
	prev, t.stage, t.since = t.stage, stage, now
	return prev
}

func (t *timing) stageOf(name string) *Phase {
	p := t.stages[name]
	if p == nil {
		p = &Phase{Name: name}
		t.stages[name] = p
	}
	return p
}

// report returns the phases and stages in report order, those never
// entered left out.
func (t *timing) report() (phases, stages []Phase) {
	t.mu.Lock()
	defer t.mu.Unlock()
	pick := func(names []string, m map[string]*Phase) []Phase {
		var out []Phase
		for _, n := range names {
			if p := m[n]; p != nil {
				out = append(out, *p)
			}
		}
		return out
	}
	return pick(PhaseNames, t.phases), pick(StageNames, t.stages)
}

// phaseOf names the phase an operation's time goes to, given what was
// observed (a poll's is split by the poll itself).
func phaseOf(op model.Op, obs model.Observation) string {
	switch op.(type) {
	case model.CreateSRQ:
		return PhaseCreateSRQ
	case model.CreateQP:
		return PhaseCreateQP
	case model.Post, model.PostRecv:
		return PhasePost
	case model.Arrive, model.ArriveRest:
		if obs.Peer == model.PeerRNR || obs.Peer == model.PeerError {
			return PhaseDeliverRefused
		}
		return PhaseDeliver
	case model.ModifyQP:
		return PhaseModifyQP
	case model.Query, model.Arm, model.Resize:
		return PhaseSRQVerbs
	case model.Invalidate:
		return PhaseInvalidate
	case model.InjectSRQError, model.InjectSQE:
		return PhaseInject
	}
	return PhaseLifecycle
}
