package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// hangDriver is the emulator, asynchronous, whose Deliver of a message
// of length hangLen (or, with inClose, the SRQ's Close) never returns: a
// driver stuck in a call (a kernel driver that never completes a WR, a
// blocking verb).
type hangDriver struct {
	drivers.Driver
	inClose bool  // hang in the SRQ's Close instead
	panics  bool  // panic in Deliver instead, as a Go driver's bug would
	sync    bool  // stay synchronous, as the emulator is
	fails   error // Deliver returns this error instead
}

const hangLen = 0

type hangDevice struct {
	drivers.Device
	inClose, panics, sync bool
	fails                 error
}
type hangSRQ struct {
	drivers.SRQ
	inClose, panics bool
	fails           error
}
type hangQP struct {
	drivers.QP
	hang, panics bool
	fails        error
}

func (d hangDriver) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	dev, err := d.Driver.Open(ctx, cfg)
	return &hangDevice{Device: dev, inClose: d.inClose, panics: d.panics, sync: d.sync, fails: d.fails}, err
}

// InCall names the call a hung verb is stuck in (drivers.CallTracer), as
// the cgo driver names its rdma_cm calls.
func (d *hangDevice) InCall() string { return "stuck_call(test)" }

func (d *hangDevice) Info() drivers.Info {
	i := d.Device.Info()
	i.Synchronous = d.sync
	return i
}

func (d *hangDevice) CreateSRQ(ctx context.Context, a drivers.SRQAttr, keys int) (drivers.SRQ, drivers.SRQAttr, error) {
	s, attr, err := d.Device.CreateSRQ(ctx, a, keys)
	if err != nil {
		return nil, attr, err
	}
	return hangSRQ{s, d.inClose, d.panics, d.fails}, attr, nil
}

func (s hangSRQ) Close() error {
	if s.inClose {
		select {}
	}
	return s.SRQ.Close()
}

func (s hangSRQ) CreateQP(ctx context.Context, t drivers.QPType) (drivers.QP, error) {
	q, _, err := s.CreateQPCaps(ctx, t, drivers.RecvCapsZero)
	return q, err
}

func (s hangSRQ) CreateQPCaps(ctx context.Context, t drivers.QPType, c drivers.RecvCaps) (drivers.QP, int, error) {
	q, e, err := s.SRQ.CreateQPCaps(ctx, t, c)
	if q == nil || e != 0 || err != nil {
		return q, e, err
	}
	return hangQP{q, !s.inClose && s.fails == nil, s.panics, s.fails}, 0, nil
}

func (q hangQP) Deliver(ctx context.Context, m drivers.Message) (drivers.PeerStatus, error) {
	if m.Len == hangLen && q.panics {
		var ring []int
		_ = ring[m.Len] // index out of range, as a Go driver's bug would be
	}
	if m.Len == hangLen && q.fails != nil {
		return 0, q.fails
	}
	if m.Len == hangLen && q.hang {
		select {} // stuck for good, as a C call would be
	}
	return q.QP.Deliver(ctx, m)
}

// TestHungDriverCallIsAHarnessError: a driver call that never returns
// (a Deliver, or the SRQ's Close) stops the run within Options.OpTimeout with a harness error that names
// the call, the report holding what ran before it, and the device is not
// touched again (Close would wait on the hung call's locks).
func TestHungDriverCallIsAHarnessError(t *testing.T) {
	for _, c := range []struct {
		inClose, sync bool
		want          []string
	}{
		{false, false, []string{"did not return from", "arrive", "within 3s (inside stuck_call(test))"}},
		{true, false, []string{"did not return from", "closing the SRQ", "within 3s (inside stuck_call(test))"}},
		// A synchronous driver's calls run with no goroutine of their
		// own (syncGuard): the run's goroutine is left in the call.
		{false, true, []string{"did not return from", "arrive", "within 3s"}},
		{true, true, []string{"did not return from", "closing the SRQ", "within 3s"}},
	} {
		// The bound is 3 s: a call of the emulator's on a busy machine
		// never takes that long, so the hang the report names is the
		// driver's own.
		drv := hangDriver{Driver: emu.New(), inClose: c.inClose, sync: c.sync}
		start := time.Now()
		rep, err := Check(context.Background(), drv, drivers.Config{},
			Options{Profile: model.Documented(), Rules: []model.RuleID{model.RuleRecvCompletion, model.RuleRecvNumSGE0, model.RuleRecvFit}, Cases: -1,
				Wait: 10 * time.Millisecond, OpTimeout: 3 * time.Second})
		if took := time.Since(start); took > time.Minute {
			t.Errorf("inClose=%v sync=%v: the run took %v, want it stopped soon after the 3s bound", c.inClose, c.sync, took)
		}
		if err == nil || rep == nil {
			t.Fatalf("inClose=%v: Check = %v, %v; want a partial report and a harness error", c.inClose, rep, err)
		}
		for _, want := range c.want {
			if !strings.Contains(rep.Error, want) {
				t.Errorf("inClose=%v: Report.Error = %q, want it to contain %q", c.inClose, rep.Error, want)
			}
		}
		// A synchronous driver hung in the SRQ's Close leaves the case
		// it closes uncounted (the report is what the run had when the
		// call began): the first scenario's.
		if rep.StepsRun == 0 && !(c.sync && c.inClose) {
			t.Errorf("inClose=%v: the partial report holds no steps", c.inClose)
		}
	}
}

// TestADriverPanicIsADepartureFromTheCallsRule: a driver call that
// panics (a message of length 0 here) is the device's crash in that call:
// a departure from the rule the call keeps by returning (model.CallRule:
// RECV-COMPLETION for a message), whose counterexample is minimized and
// replays. The run goes on with its other cases; the process lives on.
func TestADriverPanicIsADepartureFromTheCallsRule(t *testing.T) {
	assertCallDeparture(t, hangDriver{Driver: emu.New(), panics: true}, "crashed", "index out of range")
}

// assertCallDeparture runs drv, whose Deliver of a message of length
// hangLen crashes or fails, and checks that the run's one counterexample
// is that call's departure from RECV-COMPLETION, its last step's
// observation saying each of words, minimized, and that it replays.
func assertCallDeparture(t *testing.T, drv hangDriver, words ...string) {
	t.Helper()
	rep, err := Check(context.Background(), drv, drivers.Config{},
		Options{Profile: model.Documented(), Rules: []model.RuleID{model.RuleRecvCompletion, model.RuleRecvNumSGE0}, Cases: 5, Seed: 1})
	if err != nil || rep == nil || rep.Error != "" {
		t.Fatalf("Check = %v; want a report with no harness error", err)
	}
	if len(rep.Failures) != 1 {
		t.Fatalf("%d counterexamples, want 1 (the call's)", len(rep.Failures))
	}
	f := rep.Failures[0]
	if !slices.Equal(f.Rules, []model.RuleID{model.RuleRecvCompletion}) {
		t.Errorf("the call is blamed on %v, want RECV-COMPLETION", model.RuleNames(f.Rules))
	}
	last := f.Trace.Steps[len(f.Trace.Steps)-1]
	for _, want := range words {
		if !strings.Contains(last.Got, want) {
			t.Errorf("the last step's observation %q does not contain %q", last.Got, want)
		}
	}
	if a, ok := last.Op.(model.Arrive); !ok || a.Msg.Len != hangLen {
		t.Errorf("the trace ends with %v, want the message of length %d", last.Op, hangLen)
	}
	// create_srq, create_qp, INIT, RTR, the post, the message.
	if n := len(f.Trace.Ops()); n > 6 {
		t.Errorf("the counterexample has %d steps, want at most 6:\n%s", n, f.Trace.Text())
	}
	tr, err := Replay(context.Background(), drv, drivers.Config{}, model.Documented(), nil, f.Trace.Ops(), Options{})
	if err != nil || tr.Deviation == nil || tr.Deviation.Rule != model.RuleRecvCompletion {
		t.Errorf("the replay = %+v, %v; want the same departure", tr.Deviation, err)
	}
}

// TestACallTheDriverFailsByItsOwnStateIsADeparture: a Deliver that
// returns an error wrapping drivers.ErrCallFailed (the driver holds the
// QP destroyed, which the suite has not destroyed) is the device's
// failure of the call: a departure from RECV-COMPLETION, minimized, that
// replays. Any other error of the same call (a wait that ran out) is the
// harness's: the run stops with it and no counterexample.
func TestACallTheDriverFailsByItsOwnStateIsADeparture(t *testing.T) {
	drv := hangDriver{Driver: emu.New(), fails: fmt.Errorf("test: Deliver on QP 0, which it holds destroyed: %w", drivers.ErrCallFailed)}
	assertCallDeparture(t, drv, "failed", "holds destroyed")

	drv.fails = errors.New("test: no send completion from the peer within 5s")
	rep, err := Check(context.Background(), drv, drivers.Config{},
		Options{Profile: model.Documented(), Rules: []model.RuleID{model.RuleRecvCompletion, model.RuleRecvNumSGE0}, Cases: 5, Seed: 1})
	if err == nil || rep == nil || !strings.Contains(rep.Error, "within 5s") {
		t.Fatalf("Check with a plain error = %v; want a harness error naming it", err)
	}
	if len(rep.Failures) != 0 {
		t.Errorf("a plain error of the driver's made %d counterexamples, want none: a wait that ran out is no evidence", len(rep.Failures))
	}
}

// TestAFailedCallsMarkEndsWithItsCase: a call the driver failed marks its
// case, so that the case's close may fail too without a harness error;
// the mark ends with that case even when the failed call made nothing to
// close (a create), so the next case's close failing is still reported.
func TestAFailedCallsMarkEndsWithItsCase(t *testing.T) {
	x := &executor{failed: true}
	if err := x.close(); err != nil || x.failed {
		t.Fatalf("close with nothing made = %v, failed mark %v; want nil and the mark gone", err, x.failed)
	}
}

// TestASlowCallInFlightAtTheRunsDeadlineStopsTheRun: a synchronous
// driver's call still in flight past the run's deadline is given up on,
// though it has not run for the guard's bound (an hour here): a driver
// whose calls each take seconds cannot carry a run past its end. The
// report says the run's time ran out with the call in flight.
func TestASlowCallInFlightAtTheRunsDeadlineStopsTheRun(t *testing.T) {
	x := &executor{guard: newSyncGuard(time.Hour, time.Now().Add(200*time.Millisecond))}
	defer x.guard.release()
	release := make(chan struct{})
	defer close(release)
	done := make(chan bool, 1)
	go func() {
		done <- x.guarded(func() { x.guard.call("arrive qp0 SEND len=0", func() { <-release }) })
	}()
	select {
	case ok := <-done:
		if ok {
			t.Error("guarded returned true for a call still in flight past the deadline")
		}
	case <-time.After(time.Minute):
		t.Fatal("the call in flight past the deadline was not given up on within a minute")
	}
	if want := "arrive qp0 SEND len=0 before the run's time ran out"; !strings.Contains(x.hung, want) {
		t.Errorf("x.hung = %q, want it to contain %q", x.hung, want)
	}

	// Without a deadline, the same call is given up on only past the bound.
	y := &executor{guard: newSyncGuard(time.Hour, time.Time{})}
	defer y.guard.release()
	go func() { y.guarded(func() { y.guard.call("arrive", func() { <-release }) }) }()
	select {
	case <-y.guard.stuck:
		t.Error("a guard with no deadline gave up on a call long before its bound")
	case <-time.After(time.Second):
	}
}
