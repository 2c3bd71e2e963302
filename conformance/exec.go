package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// executor performs model operations on a driver and reports what it saw.
type executor struct {
	dev  drivers.Device
	info drivers.Info
	srq  drivers.SRQ
	qps  []drivers.QP
	// settle is how long a poll keeps looking for completions or events the
	// model does not expect (negative observations); wait is how long it
	// waits for those it does expect.
	settle, wait time.Duration
	pattern      byte
	// timing records where the time goes (Report.Phases); nil records
	// nothing.
	timing *timing
	// bound is the longest a driver call may take before the run stops
	// with a harness error (0: unbounded, a synchronous driver); hung
	// names the call that overran it: the driver's goroutine is left
	// behind, and nothing touches the device again.
	bound time.Duration
	hung  string
}

// DefaultSettle is how long a poll on an asynchronous device looks for
// completions and events the model does not expect.
const DefaultSettle = 5 * time.Millisecond

func newExecutor(dev drivers.Device, opts Options) *executor {
	x := &executor{dev: dev, info: dev.Info(), wait: opts.Wait, settle: opts.Settle, bound: opts.OpTimeout}
	switch {
	case x.info.Synchronous:
		x.wait, x.settle, x.bound = 0, 0, 0
	case x.settle == 0:
		// On rxe a message's completion and events exist before the ACK
		// that Deliver waits for; the settle is a margin for stragglers,
		// measured by repeated runs (README, "Negative observations").
		x.settle = DefaultSettle
	}
	return x
}

// Ceilings on the device limits the suite sizes its lists by: a scenario
// posts one WR more than an SRQ of max_srq_wr holds, and a WR of
// max_srq_sge SGEs, and the model holds a copy of each outstanding WR per
// candidate. Devices report tens of thousands of WRs and tens of SGEs
// (rxe 16384 and 32, mlx5 32767 and 31); past these a limit is a wild
// value (ibv_device_attr's fields are C ints: 0xffffffff is -1).
const (
	mostDeviceWR  = 1 << 20
	mostDeviceSGE = 1 << 10
)

// checkLimits refuses device limits past the ceilings (a run on them would
// allocate by a wild value) and zero SRQ limits (no SRQ could be made): the
// run stops before its first step, with a report saying why.
func checkLimits(i drivers.Info) error {
	for _, l := range []struct {
		name      string
		v, lo, hi uint32
	}{
		{"max_srq_wr", i.MaxSRQWR, 1, mostDeviceWR},
		{"max_srq_sge", i.MaxSRQSGE, 1, mostDeviceSGE},
		{"max_qp_wr", i.MaxQPWR, 0, mostDeviceWR},
		{"max_sge", i.MaxSGE, 0, mostDeviceSGE},
	} {
		if l.v < l.lo || l.v > l.hi {
			return harness("the device reports %s = %d (as a C int, %d), want %d to %d: the suite cannot size a run by it", l.name, l.v, int32(l.v), l.lo, l.hi)
		}
	}
	return nil
}

// errHarness marks a failure of the device or harness rather than a
// deviation: resources that could not be created, a timeout in Deliver.
var errHarness = errors.New("harness")

func harness(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errHarness, fmt.Sprintf(format, a...))
}

// optional wraps the error of an optional operation: unsupported stays
// recognisable (errors.Is(err, drivers.ErrUnsupported): the session skips
// the scenario), anything else is the harness's.
func optional(what string, err error, a ...any) error {
	if errors.Is(err, drivers.ErrUnsupported) {
		return fmt.Errorf("%s: %w", fmt.Sprintf(what, a...), err)
	}
	return harness("%s: %v", fmt.Sprintf(what, a...), err)
}

func (x *executor) close() error {
	if x.srq == nil || x.hung != "" {
		return nil // a hung driver keeps its resources: its call may still hold them
	}
	defer x.timing.add(PhaseTeardown, time.Now())
	var err error
	if !x.bounded("closing the SRQ and its QPs", func() { err = x.srq.Close() }) {
		return harness("the driver did not return from %s", x.hung)
	}
	x.srq, x.qps = nil, nil
	return err
}

// bounded runs f, within bound where there is one; past it, it records
// what as the hung call and returns false, leaving f's goroutine behind.
func (x *executor) bounded(what string, f func()) bool {
	if x.bound <= 0 {
		f()
		return true
	}
	if !within(x.bound, f) {
		x.hung = fmt.Sprintf("%s within %v", what, x.bound)
		if t, ok := x.dev.(drivers.CallTracer); ok {
			if call := t.InCall(); call != "" {
				x.hung += " (inside " + call + ")"
			}
		}
		return false
	}
	return true
}

// within runs f in a goroutine and reports whether it returned within d.
func within(d time.Duration, f func()) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// DefaultOpTimeout bounds each driver call on a device that is not
// synchronous (Options.OpTimeout). The slowest legitimate call is a poll
// (Options.Wait and the settle) or an rdma_cm connection or Deliver of the
// cgo driver (each of its waits bounded at 5 s, at most four in a row),
// under TCG: a call past this bound is a hang.
const DefaultOpTimeout = 2 * time.Minute

// exec performs op. want is the model's canonical observation, used only to
// know how many completions and events to wait for. On a device that is
// not synchronous the call is bounded (bound): one that does not return in
// time becomes a harness error naming it, and every later exec fails at
// once, so that the run ends with its partial report instead of hanging.
func (x *executor) exec(ctx context.Context, op model.Op, want model.Observation) (model.Observation, error) {
	if x.hung != "" {
		return model.Observation{BadWR: -1}, harness("%s not performed: the driver did not return from %s", op.Name(), x.hung)
	}
	var obs model.Observation
	var err error
	if !x.bounded(op.String(), func() { obs, err = x.do(ctx, op, want) }) {
		return model.Observation{BadWR: -1}, harness("the driver did not return from %s: it hangs (the device or its kernel driver is stuck); the run stops here and leaves the device's resources to the process's exit", x.hung)
	}
	return obs, err
}

// do is exec without the bound.
func (x *executor) do(ctx context.Context, op model.Op, want model.Observation) (model.Observation, error) {
	obs := model.Observation{BadWR: -1}
	if _, ok := op.(model.CreateSRQ); !ok && x.srq == nil {
		return obs, harness("%s before create_srq", op.Name())
	}
	if _, ok := op.(model.Poll); !ok {
		start := time.Now()
		defer func() { x.timing.add(phaseOf(op, obs), start) }()
	}
	switch o := op.(type) {
	case model.CreateSRQ:
		a := drivers.SRQAttr{MaxWR: o.MaxWR, MaxSGE: o.MaxSGE, SRQLimit: o.Limit}
		var srq drivers.SRQ
		var attr drivers.SRQAttr
		var err error
		if o.Variant == model.CreatePlain {
			srq, attr, err = x.dev.CreateSRQ(ctx, a, model.NumKeys)
		} else {
			srq, attr, err = x.dev.CreateSRQEx(ctx, a, model.NumKeys, drivers.CreateVariant(o.Variant))
		}
		if err != nil {
			return obs, optional("CreateSRQ(%s)", err, o)
		}
		x.srq, obs.Attr = srq, fromDriverAttr(attr)
	case model.CreateQP:
		var qp drivers.QP
		var err error
		if o.RecvCaps == model.RecvCapsZero {
			qp, err = x.srq.CreateQP(ctx, drivers.QPType(o.Type))
		} else {
			qp, obs.Errno, err = x.srq.CreateQPCaps(ctx, drivers.QPType(o.Type), drivers.RecvCaps(o.RecvCaps))
		}
		if err != nil {
			return obs, optional("CreateQP(%s)", err, o)
		}
		if qp != nil {
			x.qps = append(x.qps, qp)
		}
	case model.Post:
		wrs := toDriverWRs(o.WRs)
		obs.Errno, obs.BadWR = x.srq.Post(wrs)
		if err := madeInChild("Post", &obs); err != nil {
			return obs, err
		}
		scribble(wrs) // the SRQ must have copied them (POST-COPY)
	case model.PostRecv:
		wr := []drivers.RecvWR{toDriverWR(o.WR)}
		obs.Errno, obs.BadWR = x.qps[o.QP].PostRecv(wr[0])
		if err := madeInChild("PostRecv", &obs); err != nil {
			return obs, err
		}
		scribble(wr)
	case model.Query:
		var a drivers.SRQAttr
		a, obs.Errno = x.srq.Query()
		if obs.Errno == 0 {
			obs.Attr = fromDriverAttr(a)
		}
	case model.Arm:
		obs.Errno = x.srq.ModifyLimit(o.Limit)
	case model.Resize:
		obs.Errno = x.srq.Resize(o.MaxWR)
	case model.ModifyQP:
		obs.Errno = x.qps[o.QP].Modify(drivers.QPState(o.State))
		if c, ok := x.qps[o.QP].(drivers.ConnectionFailer); ok && obs.Errno != 0 {
			if err := c.ConnectionErr(); err != nil {
				return obs, harness("Modify(QP %d to %s): errno %d, the connection failed: %v", o.QP, o.State, obs.Errno, err)
			}
		}
	case model.Invalidate:
		if err := x.srq.InvalidateKey(o.Key); err != nil {
			return obs, harness("InvalidateKey(%d): %v", o.Key, err)
		}
	case model.Arrive:
		x.pattern++
		msg := toDriverMessage(o.Msg, x.pattern)
		if o.FirstPacketOnly {
			if err := x.qps[o.QP].DeliverFirstPacket(ctx, msg); err != nil {
				return obs, harness("DeliverFirstPacket: %v", err)
			}
			obs.Peer = want.Peer
			break
		}
		p, err := x.qps[o.QP].Deliver(ctx, msg)
		if err != nil {
			return obs, harness("Deliver(%s): %v", o, err)
		}
		obs.Peer = model.PeerStatus(p)
	case model.ArriveRest:
		p, err := x.qps[o.QP].DeliverRest(ctx)
		if err != nil {
			return obs, harness("DeliverRest: %v", err)
		}
		obs.Peer = model.PeerStatus(p)
	case model.Poll:
		return x.poll(ctx, o, want)
	case model.InjectSRQError:
		if err := x.srq.InjectSRQError(); err != nil {
			return obs, harness("InjectSRQError: %v", err)
		}
	case model.InjectSQE:
		if err := x.qps[o.QP].InjectSQE(); err != nil {
			return obs, harness("InjectSQE: %v", err)
		}
	case model.CreateOther:
		e, err := x.srq.CreateOther(drivers.SRQAttr{MaxWR: o.MaxWR, MaxSGE: o.MaxSGE}, drivers.CreateVariant(o.Variant))
		if err != nil {
			return obs, optional("CreateOther(%s)", err, o)
		}
		obs.Errno = e
	case model.DestroyQP:
		e, err := x.qps[o.QP].Destroy()
		if err != nil {
			return obs, optional("DestroyQP(qp%d)", err, o.QP)
		}
		obs.Errno = e
	case model.DestroySRQ:
		e, err := x.srq.Destroy()
		if err != nil {
			return obs, optional("DestroySRQ", err)
		}
		obs.Errno = e
	default:
		return obs, harness("unknown operation %T", op)
	}
	return obs, nil
}

// poll collects completions and events until the model's expected numbers
// arrive or the wait runs out, then looks for extras for the settle time.
func (x *executor) poll(ctx context.Context, o model.Poll, want model.Observation) (model.Observation, error) {
	obs := model.Observation{BadWR: -1}
	collect := func() error {
		max := 0
		if o.Max > 0 {
			max = o.Max - len(obs.Completions)
			if max <= 0 {
				return nil
			}
		}
		cs, err := x.srq.PollCQ(max)
		if err != nil {
			return harness("PollCQ: %v", err)
		}
		for _, c := range cs {
			obs.Completions = append(obs.Completions, fromDriverCompletion(c)) // the model checks payloads
		}
		es, err := x.srq.PollEvents()
		if err != nil {
			return harness("PollEvents: %v", err)
		}
		for _, e := range es {
			obs.Events = append(obs.Events, fromDriverEvent(e))
		}
		return nil
	}
	start := time.Now()
	settling := false
	defer func() {
		if !settling {
			x.timing.add(PhasePollWait, start)
		}
	}()
	deadline := start.Add(x.wait)
	for {
		if err := collect(); err != nil {
			return obs, err
		}
		if len(obs.Completions) >= len(want.Completions) && len(obs.Events) >= len(want.Events) {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return obs, nil
		}
		time.Sleep(time.Millisecond)
	}
	if x.settle > 0 {
		x.timing.add(PhasePollWait, start)
		settling = true
		defer x.timing.add(PhasePollSettle, time.Now())
		t := time.NewTimer(x.settle)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		if err := collect(); err != nil {
			return obs, err
		}
	}
	return obs, nil
}

// madeInChild reads a post's errno for what a call made in a child process
// reports (drivers.Info.PostRecvUnsafe, NegativeSGEUnsafe): the signal that
// killed the child becomes obs.Killed, and a child the driver could not
// run at all a harness error naming verb.
func madeInChild(verb string, obs *model.Observation) error {
	if obs.Errno == drivers.ProbeFailed {
		return harness("%s: the driver could not make the call in a child process (its standard error says why)", verb)
	}
	if sig, ok := drivers.KilledBy(obs.Errno); ok {
		obs.Errno, obs.BadWR, obs.Killed = 0, -1, drivers.SignalName(sig)
	}
	return nil
}

// scribble overwrites the caller's WRs after a post, as an application
// reusing its memory would.
func scribble(wrs []drivers.RecvWR) {
	for i := range wrs {
		wrs[i].ID = ^wrs[i].ID
		for j := range wrs[i].SGEs {
			wrs[i].SGEs[j].Length = 0xdeadbeef
			wrs[i].SGEs[j].Key = -1
		}
	}
}
