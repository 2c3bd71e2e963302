package conformance_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// lateDriver is the emulator as an asynchronous device on a busy machine:
// a completion is handed out only delay after a poll first found it, so
// that the poll's wait always runs out before it comes.
type lateDriver struct {
	drivers.Driver
	delay time.Duration
}

type lateDevice struct {
	drivers.Device
	delay time.Duration
}

type lateSRQ struct {
	drivers.SRQ
	delay time.Duration
	mu    sync.Mutex
	held  []heldCompletion
}

type heldCompletion struct {
	c    drivers.Completion
	seen time.Time
}

func (d *lateDriver) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	dev, err := d.Driver.Open(ctx, cfg)
	return lateDevice{dev, d.delay}, err
}

func (d lateDevice) Info() drivers.Info {
	i := d.Device.Info()
	i.Synchronous = false
	return i
}

func (d lateDevice) CreateSRQ(ctx context.Context, a drivers.SRQAttr, keys int) (drivers.SRQ, drivers.SRQAttr, error) {
	s, attr, err := d.Device.CreateSRQ(ctx, a, keys)
	if err != nil {
		return nil, attr, err
	}
	return &lateSRQ{SRQ: s, delay: d.delay}, attr, nil
}

func (s *lateSRQ) PollCQ(max int) ([]drivers.Completion, error) {
	cs, err := s.SRQ.PollCQ(0)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for _, c := range cs {
		s.held = append(s.held, heldCompletion{c, now})
	}
	var out []drivers.Completion
	for len(s.held) > 0 && now.Sub(s.held[0].seen) >= s.delay && (max <= 0 || len(out) < max) {
		out = append(out, s.held[0].c)
		s.held = s.held[1:]
	}
	return out, err
}

// TestALateCompletionIsLookedForAgain: a completion that comes after the
// poll's wait ran out (but within ten times the wait) is found by the
// second look, and the run has no failure; without the second look the
// same device fails. The completion is held from the first poll that
// found it, so the first wait always runs out, however loaded the
// machine.
func TestALateCompletionIsLookedForAgain(t *testing.T) {
	const wait = 40 * time.Millisecond
	opts := conformance.Options{Profile: model.Documented(), Rules: []model.RuleID{model.RuleRecvCompletion, model.RuleFetchFIFO}, Cases: -1, Wait: wait, Settle: time.Millisecond}
	rep, err := conformance.Check(context.Background(), &lateDriver{emu.New(), 5 * wait}, drivers.Config{}, opts)
	if err != nil {
		t.Fatalf("Check with late completions: %v", err)
	}
	if len(rep.Failures) != 0 {
		t.Errorf("late completions gave %d failures, first on %s; want none: the second look finds them", len(rep.Failures), rep.Failures[0].Rule)
	}
	opts.Recheck = -1
	rep, err = conformance.Check(context.Background(), &lateDriver{emu.New(), 5 * wait}, drivers.Config{}, opts)
	if err != nil {
		t.Fatalf("Check with late completions and no second look: %v", err)
	}
	if len(rep.Failures) == 0 {
		t.Errorf("late completions with no second look gave no failure; want the missing completion to fail a rule")
	}
}
