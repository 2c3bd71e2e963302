package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// sleepy is the emulator made slow by known sleeps per operation, and
// asynchronous, so that polls settle.
type sleepy struct{ drivers.Driver }

type sleepyDevice struct{ drivers.Device }

type sleepySRQ struct{ drivers.SRQ }

type sleepyQP struct{ drivers.QP }

// The sleep of each slowed operation, by the phase it belongs to.
var sleeps = map[string]time.Duration{
	conformance.PhaseCreateSRQ: 4 * time.Millisecond,
	conformance.PhaseCreateQP:  3 * time.Millisecond,
	conformance.PhasePost:      2 * time.Millisecond,
	conformance.PhaseDeliver:   3 * time.Millisecond,
	// A refused delivery is the same call: its time goes to its own phase.
	conformance.PhaseDeliverRefused: 3 * time.Millisecond,
	conformance.PhaseModifyQP:       time.Millisecond,
	conformance.PhaseTeardown:       2 * time.Millisecond,
}

const sleepySettle = 3 * time.Millisecond

func (d sleepy) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	dev, err := d.Driver.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return sleepyDevice{dev}, nil
}

func (d sleepyDevice) Info() drivers.Info {
	i := d.Device.Info()
	i.Synchronous = false
	return i
}

func (d sleepyDevice) CreateSRQ(ctx context.Context, a drivers.SRQAttr, keys int) (drivers.SRQ, drivers.SRQAttr, error) {
	time.Sleep(sleeps[conformance.PhaseCreateSRQ])
	s, attr, err := d.Device.CreateSRQ(ctx, a, keys)
	if err != nil {
		return nil, attr, err
	}
	return sleepySRQ{s}, attr, nil
}

func (d sleepyDevice) CreateSRQEx(ctx context.Context, a drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQ, drivers.SRQAttr, error) {
	time.Sleep(sleeps[conformance.PhaseCreateSRQ])
	s, attr, err := d.Device.CreateSRQEx(ctx, a, keys, v)
	if err != nil {
		return nil, attr, err
	}
	return sleepySRQ{s}, attr, nil
}

func (s sleepySRQ) Post(wrs []drivers.RecvWR) (int, int) {
	time.Sleep(sleeps[conformance.PhasePost])
	return s.SRQ.Post(wrs)
}

func (s sleepySRQ) CreateQP(ctx context.Context, t drivers.QPType) (drivers.QP, error) {
	time.Sleep(sleeps[conformance.PhaseCreateQP])
	q, err := s.SRQ.CreateQP(ctx, t)
	if err != nil {
		return nil, err
	}
	return sleepyQP{q}, nil
}

func (s sleepySRQ) CreateQPCaps(ctx context.Context, t drivers.QPType, caps drivers.RecvCaps) (drivers.QP, int, error) {
	time.Sleep(sleeps[conformance.PhaseCreateQP])
	q, e, err := s.SRQ.CreateQPCaps(ctx, t, caps)
	if q == nil || err != nil {
		return nil, e, err
	}
	return sleepyQP{q}, e, nil
}

func (s sleepySRQ) Close() error {
	time.Sleep(sleeps[conformance.PhaseTeardown])
	return s.SRQ.Close()
}

func (q sleepyQP) Modify(to drivers.QPState) int {
	time.Sleep(sleeps[conformance.PhaseModifyQP])
	return q.QP.Modify(to)
}

func (q sleepyQP) PostRecv(wr drivers.RecvWR) (int, int) {
	time.Sleep(sleeps[conformance.PhasePost])
	return q.QP.PostRecv(wr)
}

func (q sleepyQP) Deliver(ctx context.Context, m drivers.Message) (drivers.PeerStatus, error) {
	time.Sleep(sleeps[conformance.PhaseDeliver])
	return q.QP.Deliver(ctx, m)
}

func (q sleepyQP) DeliverFirstPacket(ctx context.Context, m drivers.Message) error {
	time.Sleep(sleeps[conformance.PhaseDeliver])
	return q.QP.DeliverFirstPacket(ctx, m)
}

func (q sleepyQP) DeliverRest(ctx context.Context) (drivers.PeerStatus, error) {
	time.Sleep(sleeps[conformance.PhaseDeliver])
	return q.QP.DeliverRest(ctx)
}

func phaseMap(ps []conformance.Phase) map[string]conformance.Phase {
	m := map[string]conformance.Phase{}
	for _, p := range ps {
		m[p.Name] = p
	}
	return m
}

// TestPhasesShowWhereTheTimeGoes runs a driver whose operations sleep for
// known times: each sleep shows in its own phase, polls split into waiting
// (the emulator has everything at once) and settling (the settle time
// every time), and the phases add up to no more than the elapsed time,
// which the stages cover.
func TestPhasesShowWhereTheTimeGoes(t *testing.T) {
	rep, err := conformance.Check(context.Background(), sleepy{emu.New()}, drivers.Config{},
		conformance.Options{Cases: 8, Steps: 20, Seed: 1, Rules: []model.RuleID{model.RuleFetchFIFO, model.RuleQPCreate}, Settle: sleepySettle})
	require.NoError(t, err)
	require.Empty(t, rep.Failures)
	ph := phaseMap(rep.Phases)
	for name, d := range sleeps {
		p, ok := ph[name]
		require.True(t, ok, "phase %s missing from %+v", name, rep.Phases)
		assert.Positive(t, p.Calls, name)
		assert.GreaterOrEqual(t, p.Total, time.Duration(p.Calls)*d, "phase %s: %d calls of %v each", name, p.Calls, d)
	}
	settle, wait := ph[conformance.PhasePollSettle], ph[conformance.PhasePollWait]
	require.Positive(t, settle.Calls)
	assert.GreaterOrEqual(t, settle.Total, time.Duration(settle.Calls)*sleepySettle)
	assert.GreaterOrEqual(t, wait.Calls, settle.Calls, "every poll waits, then settles")
	// How the wait compares with the settle is the machine's load as much
	// as the harness's: only what holds however slow the machine is
	// asserted here (the sleeps are lower bounds, the phases add up to no
	// more than the run).
	// The model's time is its own: the sleeps are not in it.
	assert.Equal(t, rep.StepsRun, ph[conformance.PhaseModel].Calls)

	var sum time.Duration
	for _, p := range rep.Phases {
		sum += p.Total
	}
	assert.LessOrEqual(t, sum, rep.Elapsed, "phases overlap")
	var stages time.Duration
	st := phaseMap(rep.Stages)
	for _, p := range rep.Stages {
		stages += p.Total
	}
	assert.LessOrEqual(t, stages, rep.Elapsed, "stages overlap")
	// The stages cover the run but the steps between them; half is a
	// margin that a busy machine's preemptions there do not eat.
	assert.Greater(t, stages, rep.Elapsed/2, "stages leave time out: %+v, elapsed %v", rep.Stages, rep.Elapsed)
	assert.Equal(t, rep.CasesRun, st[conformance.StageRandom].Calls)
	assert.Positive(t, st[conformance.StageScenarios].Calls)
}

// TestShrinkingAndDiagnosisHaveTheirStages finds a deviation (the emulator
// with rxe's departures, held to the documented profile) and sees its
// shrinking and diagnosis timed.
func TestShrinkingAndDiagnosisHaveTheirStages(t *testing.T) {
	rep, err := conformance.Check(context.Background(), emu.New(), drivers.Config{Options: map[string]string{"deviations": "rxe"}},
		conformance.Options{Cases: 50, Seed: 1, Rules: []model.RuleID{model.RuleQPCreate}, ShrinkTime: 2 * time.Second})
	require.NoError(t, err)
	require.NotEmpty(t, rep.Failures)
	st := phaseMap(rep.Stages)
	assert.Positive(t, st[conformance.StageDiagnosis].Calls)
	assert.Positive(t, st[conformance.StageDiagnosis].Total)
	assert.Positive(t, st[conformance.StageShrink].Calls)
	var stages time.Duration
	for _, p := range rep.Stages {
		stages += p.Total
	}
	assert.LessOrEqual(t, stages, rep.Elapsed)
}
