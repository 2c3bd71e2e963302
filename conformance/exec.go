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
	// recheck is how much longer a poll whose wait ran out looks again
	// when the model finds the shortfall a departure (recheckPoll);
	// short says the last poll's wait ran out before the model's
	// expected completions and events came.
	recheck time.Duration
	short   bool
	// futile counts second looks that found nothing more: past
	// maxFutileRechecks the device is taken to lack, not to lag, and no
	// poll looks a second time again in this run.
	futile  int
	pattern byte
	// timing records where the time goes (Report.Phases); nil records
	// nothing.
	timing *timing
	// bound is the longest a driver call may take before the run stops
	// with a harness error (0: unbounded, a synchronous driver); hung
	// names the call that overran it: the driver's goroutine is left
	// behind, and nothing touches the device again.
	bound time.Duration
	hung  string
	// crash is the panic of the case's call the driver crashed in, until
	// the case ends (close); "" when none did.
	crash string
	// failed says a call of the case failed by the driver's own state
	// (drivers.ErrCallFailed), until the case ends: close still frees
	// its resources, and a failure of that close adds nothing.
	failed bool
	// guard bounds the calls of a synchronous driver (see syncGuard);
	// nil on an asynchronous one, whose calls bound bounds.
	guard *syncGuard
	// spareSteps is the steps array of a passing random case, which the
	// next session's trace reuses (recycle).
	spareSteps []TraceStep
}

// maxFutileRechecks bounds the second looks that find nothing (see
// executor.futile): a device that lacks an event the model expects (rxe
// before 6.5 raises no LAST_WQE_REACHED) would otherwise pay ten times
// the wait at every such poll of every scenario before the rule is
// relaxed, and at every shrinking step.
const maxFutileRechecks = 3

// recheckFactor is how many times the poll's wait a poll that ran short
// looks again before its shortfall counts as a departure (the default of
// Options.Recheck).
const recheckFactor = 10

// DefaultSettle is how long a poll on an asynchronous device looks for
// completions and events the model does not expect.
const DefaultSettle = 5 * time.Millisecond

func newExecutor(dev drivers.Device, opts Options) *executor {
	x := &executor{dev: dev, info: dev.Info(), wait: opts.Wait, settle: opts.Settle, bound: opts.OpTimeout}
	x.recheck = opts.Recheck
	if x.recheck == 0 {
		x.recheck = recheckFactor * x.wait
	}
	switch {
	case x.info.Synchronous:
		x.wait, x.settle, x.bound, x.recheck = 0, 0, 0, 0
		if opts.OpTimeout > 0 {
			var deadline time.Time
			if opts.Duration > 0 {
				// A little past runEnd, when the run has ended its
				// last shrink and writes its report.
				deadline = time.Now().Add(runEnd(opts.Duration) + opts.Duration/8)
			}
			x.guard = newSyncGuard(syncBound(opts), deadline)
		}
	case x.settle == 0:
		// On rxe a message's completion and events exist before the ACK
		// that Deliver waits for; the settle is a margin for stragglers,
		// measured by repeated runs (docs/devices.md, "Negative observations").
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
	return failed(fmt.Sprintf(what, a...), err)
}

// callFailed is the error of a call the driver failed by its own state
// (drivers.ErrCallFailed): do observes it as the call's failure
// (model.Observation.Failed), not as the harness's.
type callFailed struct{ text string }

func (e *callFailed) Error() string { return e.text }

// failed wraps the error err of the driver's call what: a *callFailed
// where the driver failed it by its own state, the harness's otherwise.
func failed(what string, err error) error {
	if errors.Is(err, drivers.ErrCallFailed) {
		return &callFailed{what + ": " + err.Error()}
	}
	return harness("%s: %v", what, err)
}

// observeFailed turns a call the driver failed by its own state (err a
// *callFailed) into its observation, a departure from the call's rule
// that ends the case; other results pass through.
func (x *executor) observeFailed(obs model.Observation, err error) (model.Observation, error) {
	var f *callFailed
	if !errors.As(err, &f) {
		return obs, err
	}
	x.failed = true
	return model.Observation{BadWR: -1, Failed: f.text}, nil
}

func (x *executor) close() error {
	failed := x.failed
	x.failed = false // the mark ends with its case, made or not
	if x.crash != "" {
		// A crashed call may have left them half changed: they stay.
		x.srq, x.qps, x.crash = nil, nil, ""
		return nil
	}
	if x.srq == nil || x.hung != "" {
		return nil // a hung driver keeps its resources: its call may still hold them
	}
	defer x.timing.add(PhaseTeardown, stamp())
	var err error
	if !x.bounded("closing the SRQ and its QPs", func() { err = x.srq.Close() }) {
		return harness("the driver did not return from %s", x.hung)
	}
	x.srq, x.qps = nil, nil
	if failed {
		// The driver failed a call on them already: that its close
		// fails too is no news, and no harness failure.
		return nil
	}
	return err
}

// bounded runs f, within bound where there is one; past it, it records
// what (a text, or the Op, written out only then) as the hung call and
// returns false, leaving f's goroutine behind. A panic in f is the
// driver's crash: it is recorded as the hung call too ("it panicked"),
// and bounded returns false; the process goes on, with what it has.
func (x *executor) bounded(what any, f func()) bool {
	var crash any
	g := func() {
		defer func() { crash = recover() }()
		f()
	}
	switch {
	case x.guard != nil:
		x.guard.call(what, g)
		return x.crashed(what, crash)
	case x.bound <= 0:
		g()
		return x.crashed(what, crash)
	}
	if !within(x.bound, g) {
		x.hung = fmt.Sprintf("%v within %v", what, x.bound) // what: a string or an Op, written only here
		if t, ok := x.dev.(drivers.CallTracer); ok {
			if call := t.InCall(); call != "" {
				x.hung += " (inside " + call + ")"
			}
		}
		return false
	}
	return x.crashed(what, crash)
}

// crashed records a panic of the driver's, crash, in what as the hung
// call, and reports whether there was none.
func (x *executor) crashed(what, crash any) bool {
	if crash == nil {
		return true
	}
	x.hung = fmt.Sprintf("%v (it panicked: %v)", what, crash)
	return false
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
	if x.guard != nil {
		// A synchronous driver: no goroutine, no closure.
		s := x.guard.enter(op)
		obs, err := x.do(ctx, op, want)
		x.guard.leave(s)
		return obs, err
	}
	if x.bound <= 0 {
		return x.do(ctx, op, want) // no bound: no goroutine, no closure
	}
	var obs model.Observation
	var err error
	if !x.bounded(op, func() { obs, err = x.do(ctx, op, want) }) {
		return model.Observation{BadWR: -1}, harness("the driver did not return from %s: it hangs (the device or its kernel driver is stuck); the run stops here and leaves the device's resources to the process's exit", x.hung)
	}
	return obs, err
}

// needsWant reports whether exec reads the model's canonical outcome of
// op: a poll on an asynchronous device waits for the completions and
// events it expects, and the first packet of a message reports the peer
// status the model expects (the rest of the message decides it). Every
// other step ignores want.
func (x *executor) needsWant(op model.Op) bool {
	switch o := op.(type) {
	case model.Poll:
		return !x.info.Synchronous
	case model.Arrive:
		return o.FirstPacketOnly
	}
	return false
}

// do is exec without the bound. A panic in the driver's call is the
// device's crash (a Go driver's bug, as an oops is a kernel driver's): the
// call is observed as crashed (model.Observation.Crashed), a departure
// from the call's rule (model.CallRule), and the case ends there
// (session.do). Its resources are left where they are (x.crash), and
// the next case makes its own. A call the driver fails by its own state
// (drivers.ErrCallFailed) is observed as failed (Observation.Failed) and
// ends the case the same way, but close still frees its resources.
func (x *executor) do(ctx context.Context, op model.Op, want model.Observation) (obs model.Observation, err error) {
	defer func() {
		if r := recover(); r != nil {
			x.crash = fmt.Sprintf("%v", r)
			obs, err = model.Observation{BadWR: -1, Crashed: x.crash}, nil
		}
	}()
	obs = model.Observation{BadWR: -1}
	if _, ok := op.(model.CreateSRQ); !ok && x.srq == nil {
		return obs, harness("%s before create_srq", op.Name())
	}
	if o, ok := op.(model.Poll); ok {
		return x.observeFailed(x.poll(ctx, o, want))
	}
	start := stamp()
	defer func() { x.timing.add(phaseOf(op, obs), start) }()
	switch op.(type) {
	case model.CreateSRQ, model.CreateQP, model.CreateOther, model.DestroyQP, model.DestroySRQ:
		err = x.doResource(ctx, op, &obs)
	case model.Arrive, model.ArriveRest:
		err = x.doArrive(ctx, op, want, &obs)
	default:
		err = x.doVerb(op, &obs)
	}
	return x.observeFailed(obs, err)
}

// doResource performs an operation that creates or destroys an SRQ or QP
// into obs.
func (x *executor) doResource(ctx context.Context, op model.Op, obs *model.Observation) error {
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
		var refused *drivers.Refused
		if errors.As(err, &refused) {
			// The device's answer: the model judges it. A refusal that
			// names errno 0 is one that set none.
			obs.Errno = refused.Errno
			if obs.Errno == 0 {
				obs.Errno = -1
			}
			return nil
		}
		if err != nil {
			return optional("CreateSRQ(%s)", err, o)
		}
		x.srq, obs.Attr = srq, fromDriverAttr(attr)
	case model.CreateQP:
		var qp drivers.QP
		var err error
		// CreateQPCaps returns ibv_create_qp's errno, which the model
		// checks (QP-CREATE, QP-SRQ-CAPS); CreateQP only an error.
		qp, obs.Errno, err = x.srq.CreateQPCaps(ctx, drivers.QPType(o.Type), drivers.RecvCaps(o.RecvCaps))
		if o.RecvCaps == model.RecvCapsZero && errors.Is(err, drivers.ErrUnsupported) {
			obs.Errno = 0
			qp, err = x.srq.CreateQP(ctx, drivers.QPType(o.Type))
		}
		if err != nil {
			return optional("CreateQP(%s)", err, o)
		}
		if qp != nil {
			x.qps = append(x.qps, qp)
		}
	case model.CreateOther:
		e, err := x.srq.CreateOther(drivers.SRQAttr{MaxWR: o.MaxWR, MaxSGE: o.MaxSGE}, drivers.CreateVariant(o.Variant))
		if err != nil {
			return optional("CreateOther(%s)", err, o)
		}
		obs.Errno = e
	case model.DestroyQP:
		e, err := x.qps[o.QP].Destroy()
		if err != nil {
			return optional("DestroyQP(qp%d)", err, o.QP)
		}
		obs.Errno = e
	case model.DestroySRQ:
		e, err := x.srq.Destroy()
		if err != nil {
			return optional("DestroySRQ", err)
		}
		obs.Errno = e
	}
	return nil
}

// doArrive delivers a message, or the rest of one, into obs.
func (x *executor) doArrive(ctx context.Context, op model.Op, want model.Observation, obs *model.Observation) error {
	switch o := op.(type) {
	case model.Arrive:
		x.pattern++
		msg := toDriverMessage(o.Msg, x.pattern)
		if o.FirstPacketOnly {
			if err := x.qps[o.QP].DeliverFirstPacket(ctx, msg); err != nil {
				return failed("DeliverFirstPacket", err)
			}
			obs.Peer = want.Peer
			return nil
		}
		p, err := x.qps[o.QP].Deliver(ctx, msg)
		if err != nil {
			return failed(fmt.Sprintf("Deliver(%s)", o), err)
		}
		obs.Peer = model.PeerStatus(p)
	case model.ArriveRest:
		p, err := x.qps[o.QP].DeliverRest(ctx)
		if err != nil {
			return failed("DeliverRest", err)
		}
		obs.Peer = model.PeerStatus(p)
	}
	return nil
}

// doVerb performs the other operations (posts, queries, modifies and
// injected errors) into obs.
func (x *executor) doVerb(op model.Op, obs *model.Observation) error {
	switch o := op.(type) {
	case model.Post:
		wrs := toDriverWRs(o.WRs)
		obs.Errno, obs.BadWR = x.srq.Post(wrs)
		if err := madeInChild("Post", obs); err != nil {
			return err
		}
		scribble(wrs) // the SRQ must have copied them (POST-COPY)
	case model.PostRecv:
		wr := []drivers.RecvWR{toDriverWR(o.WR)}
		obs.Errno, obs.BadWR = x.qps[o.QP].PostRecv(wr[0])
		if err := madeInChild("PostRecv", obs); err != nil {
			return err
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
				return harness("Modify(QP %d to %s): errno %d, the connection failed: %v", o.QP, o.State, obs.Errno, err)
			}
		}
	case model.Invalidate:
		if err := x.srq.InvalidateKey(o.Key); err != nil {
			return failed(fmt.Sprintf("InvalidateKey(%d)", o.Key), err)
		}
	case model.InjectSRQError:
		if err := x.srq.InjectSRQError(); err != nil {
			return failed("InjectSRQError", err)
		}
	case model.InjectSQE:
		if err := x.qps[o.QP].InjectSQE(); err != nil {
			return failed("InjectSQE", err)
		}
	default:
		return harness("unknown operation %T", op)
	}
	return nil
}

// poll collects completions and events until the model's expected numbers
// arrive or the wait runs out (x.short), then looks for extras for the
// settle time.
func (x *executor) poll(ctx context.Context, o model.Poll, want model.Observation) (model.Observation, error) {
	obs := model.Observation{BadWR: -1}
	start := stamp()
	settling := false
	defer func() {
		if !settling {
			x.timing.add(PhasePollWait, start)
		}
	}()
	short, err := x.await(ctx, o, want, &obs, time.Now().Add(x.wait))
	x.short = short
	if err != nil || short {
		return obs, err
	}
	if x.settle > 0 {
		x.timing.add(PhasePollWait, start)
		settling = true
		defer x.timing.add(PhasePollSettle, stamp())
		t := time.NewTimer(x.settle)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		if err := x.collect(o, &obs); err != nil {
			return obs, err
		}
	}
	return obs, nil
}

// await collects into obs until it holds the numbers of completions and
// events want has, or deadline passes (short), or ctx ends.
func (x *executor) await(ctx context.Context, o model.Poll, want model.Observation, obs *model.Observation, deadline time.Time) (short bool, err error) {
	for {
		if err := x.collect(o, obs); err != nil {
			return false, err
		}
		if len(obs.Completions) >= len(want.Completions) && len(obs.Events) >= len(want.Events) {
			return false, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return true, nil
		}
		time.Sleep(time.Millisecond)
	}
}

// collect adds to obs the completions (up to o.Max in all) and events
// available now.
func (x *executor) collect(o model.Poll, obs *model.Observation) error {
	max := 0
	if o.Max > 0 {
		max = o.Max - len(obs.Completions)
		if max <= 0 {
			return nil
		}
	}
	cs, err := x.srq.PollCQ(max)
	if err != nil {
		return failed("PollCQ", err)
	}
	for _, c := range cs {
		obs.Completions = append(obs.Completions, fromDriverCompletion(c)) // the model checks payloads
	}
	es, err := x.srq.PollEvents()
	if err != nil {
		return failed("PollEvents", err)
	}
	for _, e := range es {
		obs.Events = append(obs.Events, fromDriverEvent(e))
	}
	return nil
}

// recheckPoll looks again, for up to x.recheck, for what a poll whose
// wait ran out expected, adding what comes to obs: a completion or event
// that was late on a busy machine is then seen before the shortfall
// decides anything. It does nothing after a poll that did not run short,
// on a synchronous device, or once maxFutileRechecks second looks found
// nothing.
func (x *executor) recheckPoll(ctx context.Context, o model.Poll, want model.Observation, obs *model.Observation) error {
	if !x.short || x.recheck <= 0 || x.hung != "" || x.futile >= maxFutileRechecks {
		return nil
	}
	x.short = false
	defer x.timing.add(PhasePollWait, stamp())
	had := len(obs.Completions) + len(obs.Events)
	var err error
	if !x.bounded("a poll's re-check", func() { _, err = x.await(ctx, o, want, obs, time.Now().Add(x.recheck)) }) {
		return harness("the driver did not return from %s", x.hung)
	}
	if len(obs.Completions)+len(obs.Events) == had {
		x.futile++
	}
	return err
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
