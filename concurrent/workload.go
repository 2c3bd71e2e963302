package concurrent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// Options shape a concurrent workload.
type Options struct {
	// Profile is the profile the history is checked under.
	Profile model.Profile
	// Seed seeds every client's choices (0: from the clock). The
	// interleaving itself is the scheduler's and the device's.
	Seed uint64
	// Duration bounds the run (0: 2 s); MaxOps bounds the history (0:
	// 600), so that it stays checkable.
	Duration time.Duration
	MaxOps   int
	// Posters is the number of threads posting lists (0: 2); RC and UD
	// the receiving QPs of each type, each with a sender of its own (0 and
	// 0: 2 RC and, where the device has UD, 1 UD).
	Posters int
	RC, UD  int
	// MaxWR is the SRQ's size (0: 8): small, so that it fills, empties
	// and crosses its limit often.
	MaxWR uint32
	// NoCycles leaves the QPs in RTS; otherwise a QP's sender now and
	// then takes it to ERR and back up through RESET.
	NoCycles bool
	// NoRaces keeps a cycle's move to ERR apart from the QP's messages;
	// otherwise, on a UD QP whose driver can (drivers.ErrRacer), cycles
	// come more often, and each from RTS starts with a burst of messages
	// the move to ERR overtakes.
	NoRaces bool
	// NoArm leaves the limit alone; otherwise a client arms it now and then.
	NoArm bool
	// Settle is how long the run waits, after every client stopped, for
	// completions and events still on their way (0: 2 s, none on a
	// synchronous device).
	Settle time.Duration
	// OpTimeout bounds a driver call that waits on the network (Deliver;
	// 0: conformance.DefaultOpTimeout); one that overruns is an info
	// operation.
	OpTimeout time.Duration
}

func (o *Options) defaults(info drivers.Info) {
	if o.Duration <= 0 {
		o.Duration = 2 * time.Second
	}
	if o.MaxOps <= 0 {
		o.MaxOps = 600
	}
	if o.Posters <= 0 {
		o.Posters = 2
	}
	if o.RC == 0 && o.UD == 0 {
		o.RC = 2
		if info.UD {
			o.UD = 1
		}
	}
	if !info.UD {
		o.UD = 0
	}
	if o.MaxWR == 0 {
		o.MaxWR = 8
	}
	if o.Settle == 0 && !info.Synchronous {
		// As long as the sequential suite waits for an expected event
		// (run -wait): a device's events may lag its completions.
		o.Settle = 2 * time.Second
	}
	if o.OpTimeout <= 0 {
		// As the sequential suite bounds a call (conformance.DefaultOpTimeout):
		// on iWARP a refused message is proved by tearing the connection
		// down, seconds under emulation.
		o.OpTimeout = conformance.DefaultOpTimeout
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
}

// recorder collects one run's operations.
type recorder struct {
	start time.Time
	ops   atomic.Int64 // operations recorded so far, against MaxOps
	max   int64
	stop  time.Time
	ctx   context.Context

	qpTypes []model.QPType

	// limits counts the limit events polled so far: the arming client
	// waits for the event of its last arming before it arms again.
	limits atomic.Int64

	mu      sync.Mutex
	perCli  [][]Operation
	seen    []seenCompletion // completions in the order polled
	clients []string
}

type seenCompletion struct {
	c  model.Completion
	at time.Duration // return of the poll that read it
	// pattern is the first byte of the message as the driver read it
	// back (hasPattern): the Message's Pattern, the low byte of its number.
	pattern    byte
	hasPattern bool
}

func (r *recorder) now() time.Duration { return time.Since(r.start) }

// more says a client may start another operation.
func (r *recorder) more() bool {
	return r.ctx.Err() == nil && time.Now().Before(r.stop) && r.ops.Load() < r.max
}

func (r *recorder) add(client int, o Operation) {
	o.Client = client
	r.ops.Add(1)
	r.mu.Lock()
	r.perCli[client] = append(r.perCli[client], o)
	r.mu.Unlock()
}

func (r *recorder) client(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clients = append(r.clients, name)
	r.perCli = append(r.perCli, nil)
	return len(r.clients) - 1
}

// Run opens a device with drv and cfg, makes an SRQ with QPs, runs the
// concurrent workload on it and returns the history. The SRQ and device
// are closed before it returns, whatever happened; a history is returned
// with the error when there is one to check.
func Run(ctx context.Context, drv drivers.Driver, cfg drivers.Config, opts Options) (*History, error) {
	dev, err := drv.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("concurrent: open device: %w", err)
	}
	defer dev.Close()
	info := dev.Info()
	opts.defaults(info)
	h := &History{Profile: opts.Profile.Name, Caps: model.Caps{MaxSRQWR: info.MaxSRQWR, MaxSRQSGE: info.MaxSRQSGE, Resize: info.SRQResize},
		Device: info.Name, Kernel: info.Kernel, Seed: opts.Seed}
	if h.ProfileFile, err = model.EmbedProfile(opts.Profile); err != nil {
		return nil, fmt.Errorf("concurrent: %w", err)
	}
	h.Setup.SRQ = model.CreateSRQ{MaxWR: opts.MaxWR, MaxSGE: 1}
	srq, attr, err := dev.CreateSRQ(ctx, drivers.SRQAttr{MaxWR: opts.MaxWR, MaxSGE: 1}, model.NumKeys)
	if err != nil {
		return nil, fmt.Errorf("concurrent: CreateSRQ(max_wr %d, max_sge 1): %w", opts.MaxWR, err)
	}
	defer srq.Close()
	h.Setup.Attr = model.SRQAttr{MaxWR: attr.MaxWR, MaxSGE: attr.MaxSGE, SRQLimit: attr.SRQLimit}
	qps, err := setUpQPs(ctx, srq, opts, h)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &workload{opts: opts, info: info, h: h, srq: srq, ctx: runCtx, cancel: cancel,
		rec: &recorder{start: time.Now(), max: int64(opts.MaxOps), ctx: runCtx, qpTypes: h.Setup.QPs}}
	w.rec.stop = w.rec.start.Add(opts.Duration)
	// A message carries its number as immediate data, so that its
	// completion names it; iWARP has none (siw): plain Sends then, and
	// each completion goes to the oldest message of its QP still owed one.
	w.opcode = drivers.SendImm
	if info.NoOpcodes.Has(drivers.SendImm) {
		w.opcode = drivers.Send
	}
	for p := range opts.Posters {
		w.spawn(fmt.Sprintf("poster %d", p), w.post)
	}
	for i, q := range qps {
		w.spawn(fmt.Sprintf("qp%d (%s): sends and state changes", i, h.Setup.QPs[i]), func(c int, rng *rand.Rand) { w.send(i, q, c, rng) })
	}
	if !opts.NoArm {
		w.spawn("limit arming", w.arm)
	}
	w.pollUntilDone()
	time.Sleep(opts.Settle)
	// A LAST_WQE_REACHED not there after the settle is waited for again,
	// up to three settles more: a late event is no missing one (a timer
	// is never evidence).
	for i := 0; i < lateEventRounds && w.firstErr == nil && w.rec.lastWQEPending(); i++ {
		if err := pollOnce(srq, w.rec, w.poller, false); err != nil {
			w.firstErr = err
			break
		}
		if !w.rec.lastWQEPending() {
			break
		}
		time.Sleep(opts.Settle)
	}
	if w.firstErr == nil {
		if err := pollOnce(srq, w.rec, w.poller, true); err != nil {
			w.firstErr = err
		}
	}
	h.Clients = w.rec.clients
	h.Ops = w.rec.assemble()
	h.Wall = w.rec.now()
	return h, w.firstErr
}

// lateEventRounds is how many settles more a run waits for a
// LAST_WQE_REACHED event still missing after the first.
const lateEventRounds = 3

// lastWQEPending reports whether some QP entered ERR through a modify
// more often than a LAST_WQE_REACHED event for it was polled, on a device
// that raised the event at least once in the history (one that never does
// has a profile that expects none, and is not waited for). It is called
// once the clients have stopped.
func (r *recorder) lastWQEPending() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	entered := map[int]int{}
	events := map[int]int{}
	raised := false
	for _, ops := range r.perCli {
		inErr := map[int]bool{} // a QP's modifies all come from its own client
		for _, o := range ops {
			switch o.Input.Kind {
			case KindModify:
				if o.Output.Unknown || o.Output.Errno != 0 {
					continue
				}
				err := o.Input.State == model.Err
				if err && !inErr[o.Input.QP] {
					entered[o.Input.QP]++
				}
				inErr[o.Input.QP] = err
			case KindEvents, KindFinal:
				for _, e := range o.Output.Events {
					if e.Type == model.EventQPLastWQEReached {
						events[e.QP]++
						raised = true
					}
				}
			}
		}
	}
	if !raised {
		return false
	}
	for qp, n := range entered {
		if events[qp] < n {
			return true
		}
	}
	return false
}

// setUpQPs creates opts.RC RC and then opts.UD UD QPs on srq, records
// their types in h's setup and takes each to RTS.
func setUpQPs(ctx context.Context, srq drivers.SRQ, opts Options, h *History) ([]drivers.QP, error) {
	var qps []drivers.QP
	for i := range opts.RC + opts.UD {
		t := drivers.RC
		if i >= opts.RC {
			t = drivers.UD
		}
		q, err := srq.CreateQP(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("concurrent: CreateQP(%s) for QP %d: %w", model.QPType(t), i, err)
		}
		qps = append(qps, q)
		h.Setup.QPs = append(h.Setup.QPs, model.QPType(t))
	}
	for i, q := range qps {
		for _, st := range []drivers.QPState{drivers.Init, drivers.RTR, drivers.RTS} {
			if r := q.Modify(st); r != 0 {
				return nil, fmt.Errorf("concurrent: setup Modify(QP %d to %s) returned %s, want 0", i, st, model.ErrnoName(r))
			}
		}
	}
	return qps, nil
}

// workload is one recording in progress: the SRQ, the recorder and the
// client threads that drive the SRQ and its QPs.
type workload struct {
	opts   Options
	info   drivers.Info
	h      *History
	srq    drivers.SRQ
	rec    *recorder
	ctx    context.Context // the run's: cancelled by fail
	cancel context.CancelFunc
	opcode drivers.Opcode // of every message: SendImm, or Send without it

	wrID, msgNo atomic.Uint64
	wg          sync.WaitGroup // the clients but the poller
	poller      int            // the poller's client number

	errOnce  sync.Once
	firstErr error // read only once every client has stopped
}

// fail records the run's first error and stops every client.
func (w *workload) fail(err error) {
	w.errOnce.Do(func() { w.firstErr = err })
	w.cancel()
}

// spawn starts the client name on an OS thread of its own, as an
// application's are, with a random source of its own.
func (w *workload) spawn(name string, body func(c int, rng *rand.Rand)) {
	c := w.rec.client(name)
	rng := rand.New(rand.NewPCG(w.opts.Seed, uint64(c)+1))
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		body(c, rng)
	}()
}

// post is a poster client: lists of one to three receive WRs.
func (w *workload) post(c int, rng *rand.Rand) {
	for w.rec.more() {
		n := 1 + rng.IntN(3)
		wrs := make([]model.WR, n)
		for i := range wrs {
			wrs[i] = model.WR{ID: w.wrID.Add(1), NumSGE: 1, SGEs: []model.SGE{{Length: 128}}}
		}
		dw := make([]drivers.RecvWR, n)
		for i, wr := range wrs {
			dw[i] = drivers.RecvWR{ID: wr.ID, NumSGE: 1, SGEs: []drivers.SGE{{Length: 128}}}
		}
		call := w.rec.now()
		e, bad := w.srq.Post(dw)
		w.rec.add(c, Operation{Input: Input{Kind: KindPost, WRs: wrs}, Output: Output{Errno: e, BadWR: bad}, Call: call, Return: w.rec.now()})
		pause(rng, e != 0)
		switch {
		case e != 0 && !w.info.Synchronous:
			// A device's messages take milliseconds: a full SRQ
			// stays full a while, and refused posts would crowd
			// the history out.
			time.Sleep(time.Duration(1+rng.IntN(3)) * time.Millisecond)
		case e != 0:
			// The same on an in-process device, at its pace: the
			// messages that empty the SRQ, and fire its limit, get
			// a larger share of the history.
			time.Sleep(time.Duration(50+rng.IntN(150)) * time.Microsecond)
		}
	}
}

// send is QP i's client: messages to it and, now and then, a cycle of
// its state through ERR and RESET back to RTS.
func (w *workload) send(i int, q drivers.QP, c int, rng *rand.Rand) {
	state := drivers.RTS
	racer, _ := q.(drivers.ErrRacer)
	if w.opts.NoRaces || w.h.Setup.QPs[i] != model.UD {
		racer = nil
	}
	// Let the posters go first, as an application posts before
	// its peers send: an empty SRQ at the start proves nothing.
	time.Sleep(2 * time.Millisecond)
	for w.rec.more() {
		// A QP that races cycles three times as often, and every cycle
		// from RTS is a race: a race meets a message in flight only
		// now and then.
		if !w.opts.NoCycles && (rng.IntN(12) == 0 || racer != nil && rng.IntN(4) == 0) {
			var ok bool
			if state == drivers.RTS && racer != nil {
				if state, ok = w.race(i, racer, c, rng); !ok {
					return
				}
				if state == drivers.RTS {
					racer = nil // the driver cannot race this QP, or the move to ERR failed
				} else if rng.IntN(2) == 0 {
					continue // stay in ERR for a while
				}
			}
			if state, ok = w.cycle(i, q, state, c, rng); !ok {
				return
			}
			continue
		}
		no := uint32(w.msgNo.Add(1))
		msg := model.Message{Opcode: model.Opcode(w.opcode), Len: uint32(rng.IntN(33)), Imm: no}
		call := w.rec.now()
		dctx, dcancel := context.WithTimeout(w.ctx, w.opts.OpTimeout)
		peer, err := q.Deliver(dctx, drivers.Message{Opcode: w.opcode, Len: msg.Len, Imm: no, Pattern: byte(no)})
		dcancel()
		o := Operation{Input: Input{Kind: KindMessage, QP: i, Msg: msg}, Output: Output{BadWR: -1, Peer: model.PeerStatus(peer)}, Call: call, Return: w.rec.now()}
		if err != nil {
			o.Output.Unknown, o.Return = true, Forever
			w.rec.add(c, o)
			if !errors.Is(err, context.Canceled) {
				w.fail(fmt.Errorf("concurrent: Deliver(message %d to QP %d): %w", no, i, err))
			}
			return
		}
		w.rec.add(c, o)
		pause(rng, false)
	}
}

// race sends a burst of messages to UD QP i and moves it to ERR while
// they are in flight (drivers.ErrRacer): the messages and the modify are
// operations of one call and return, so the model may take any of the
// messages before the modify and the rest after it. It returns the
// state the QP is left in (RTS when the driver cannot race it, having
// sent nothing), and false when the run has failed.
func (w *workload) race(i int, q drivers.ErrRacer, c int, rng *rand.Rand) (drivers.QPState, bool) {
	n := 1 + rng.IntN(drivers.MaxRacingMessages)
	msgs := make([]model.Message, n)
	dmsgs := make([]drivers.Message, n)
	for k := range msgs {
		no := uint32(w.msgNo.Add(1))
		msgs[k] = model.Message{Opcode: model.Opcode(w.opcode), Len: uint32(rng.IntN(33)), Imm: no}
		dmsgs[k] = drivers.Message{Opcode: w.opcode, Len: msgs[k].Len, Imm: no, Pattern: byte(no)}
	}
	// The modify comes up to 200 µs after the last post: a message takes
	// tens of microseconds in a software device under emulation.
	spin := time.Duration(rng.IntN(200)) * time.Microsecond
	call := w.rec.now()
	dctx, dcancel := context.WithTimeout(w.ctx, w.opts.OpTimeout)
	peers, r, err := q.DeliverRacingErr(dctx, dmsgs, spin)
	dcancel()
	ret := w.rec.now()
	if errors.Is(err, drivers.ErrUnsupported) {
		return drivers.RTS, true
	}
	mod := Operation{Input: Input{Kind: KindModify, QP: i, State: model.Err}, Output: Output{Errno: r, BadWR: -1}, Call: call, Return: ret}
	ops := []Operation{mod}
	for k, m := range msgs {
		o := Operation{Input: Input{Kind: KindMessage, QP: i, Msg: m}, Output: Output{BadWR: -1}, Call: call, Return: ret}
		if err == nil {
			o.Output.Peer = model.PeerStatus(peers[k])
		}
		ops = append(ops, o)
	}
	if err != nil {
		for k := range ops {
			ops[k].Output.Unknown, ops[k].Return = true, Forever
		}
	}
	for _, o := range ops {
		w.rec.add(c, o)
	}
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			w.fail(fmt.Errorf("concurrent: DeliverRacingErr(%d messages from %d to QP %d): %w", n, msgs[0].Imm, i, err))
		}
		return drivers.RTS, false
	}
	if r != 0 {
		return drivers.RTS, true
	}
	return drivers.Err, true
}

// cycle takes QP i from state towards ERR, RESET and back to RTS,
// stopping at the first refusal (or, half the time, in ERR). It returns
// the state the QP is left in, and false when the driver could not make
// its connection (the run has failed).
func (w *workload) cycle(i int, q drivers.QP, state drivers.QPState, c int, rng *rand.Rand) (drivers.QPState, bool) {
	path := []drivers.QPState{drivers.Err, drivers.Reset, drivers.Init, drivers.RTR, drivers.RTS}
	if state != drivers.RTS {
		path = path[1:]
	}
	for _, st := range path {
		call := w.rec.now()
		r := q.Modify(st)
		o := Operation{Input: Input{Kind: KindModify, QP: i, State: model.QPState(st)}, Output: Output{Errno: r, BadWR: -1}, Call: call, Return: w.rec.now()}
		if cf, ok := q.(drivers.ConnectionFailer); ok && r != 0 {
			if err := cf.ConnectionErr(); err != nil {
				// The driver could not make its connection:
				// the harness's failure, not the device's.
				o.Output.Unknown, o.Return = true, Forever
				w.rec.add(c, o)
				w.fail(fmt.Errorf("concurrent: Modify(QP %d to %s) returned %s, the connection failed: %w", i, st, model.ErrnoName(r), err))
				return state, false
			}
		}
		w.rec.add(c, o)
		if r != 0 {
			break
		}
		state = st
		if st == drivers.Err && rng.IntN(2) == 0 {
			break // stay in ERR for a while: messages meet it there
		}
	}
	return state, true
}

// arm is the limit-arming client.
func (w *workload) arm(c int, rng *rand.Rand) {
	for w.rec.more() {
		time.Sleep(time.Duration(100+rng.IntN(300)) * time.Microsecond)
		l := 1 + uint32(rng.IntN(int(max(1, w.h.Setup.Attr.MaxWR-1))))
		seen := w.rec.limits.Load()
		call := w.rec.now()
		r := w.srq.ModifyLimit(l)
		w.rec.add(c, Operation{Input: Input{Kind: KindArm, Limit: l}, Output: Output{Errno: r, BadWR: -1}, Call: call, Return: w.rec.now()})
		if r != 0 || rng.IntN(4) == 0 {
			continue // now and then, arm again while armed
		}
		// As an application does, mostly wait for the event before
		// arming again (or a while, if the count stays above the
		// limit). An arming that overlaps a second event makes
		// that event legal: a limit check that fires twice shows
		// only when no arming falls between the two.
		for wait := time.Now().Add(armWait(w.info)); w.rec.more() && w.rec.limits.Load() == seen && time.Now().Before(wait); {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// pollUntilDone runs the poller client until the other clients have
// stopped, and one poll more.
func (w *workload) pollUntilDone() {
	workersDone := make(chan struct{})
	var pollWG sync.WaitGroup
	w.poller = w.rec.client("poller: completions and events")
	pollWG.Add(1)
	go func() {
		defer pollWG.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for {
			stop := false
			select {
			case <-workersDone:
				stop = true
			default:
			}
			if err := pollOnce(w.srq, w.rec, w.poller, false); err != nil {
				w.fail(err)
				return
			}
			if stop {
				return
			}
			time.Sleep(50 * time.Microsecond)
		}
	}()
	w.wg.Wait()
	close(workersDone)
	pollWG.Wait()
}

// armWait bounds how long the arming client waits for the event of its
// last arming: a few messages' time on the device.
func armWait(info drivers.Info) time.Duration {
	if info.Synchronous {
		return 2 * time.Millisecond
	}
	return 20 * time.Millisecond
}

// pause spaces a client's operations a little, more after a refusal, so
// that the SRQ fills and empties rather than staying either.
func pause(rng *rand.Rand, refused bool) {
	d := time.Duration(rng.IntN(100)) * time.Microsecond
	if refused {
		d += 300 * time.Microsecond
	}
	if d > 20*time.Microsecond {
		time.Sleep(d)
	} else {
		runtime.Gosched()
	}
}

// pollOnce reads the CQ and the async events once; final makes it the
// history's final operation.
func pollOnce(srq drivers.SRQ, rec *recorder, client int, final bool) error {
	call := rec.now()
	cs, err := srq.PollCQ(0)
	if err != nil {
		return fmt.Errorf("concurrent: PollCQ: %w", err)
	}
	evs, err := srq.PollEvents()
	if err != nil {
		return fmt.Errorf("concurrent: PollEvents: %w", err)
	}
	ret := rec.now()
	rec.mu.Lock()
	for _, c := range cs {
		rec.seen = append(rec.seen, seenCompletion{c: model.Completion{WRID: c.WRID, Status: model.WCStatus(c.Status), Opcode: model.WCOpcode(c.Opcode),
			ByteLen: c.ByteLen, HasImm: c.HasImm, Imm: c.Imm, QP: c.QP, PayloadErr: c.PayloadErr}, at: ret, pattern: c.Pattern, hasPattern: c.HasPattern})
	}
	rec.mu.Unlock()
	var mes []model.Event
	for _, e := range evs {
		mes = append(mes, model.Event{Type: model.EventType(e.Type), QP: e.QP})
		if mes[len(mes)-1].Type == model.EventSRQLimitReached {
			rec.limits.Add(1)
		}
	}
	switch {
	case final:
		rec.add(client, Operation{Input: Input{Kind: KindFinal}, Output: Output{BadWR: -1, Events: mes}, Call: call, Return: ret})
	case len(mes) > 0:
		rec.add(client, Operation{Input: Input{Kind: KindEvents}, Output: Output{BadWR: -1, Events: mes}, Call: call, Return: ret})
	}
	return nil
}

// assemble gives each message the completions carrying its number (its
// return becomes the poll that read the last of them) and the final poll
// those no message claims, and merges the clients' operations by call.
func (r *recorder) assemble() []Operation {
	type at struct{ client, i int }
	msgs := map[uint32]at{}
	for c, ops := range r.perCli {
		for i, o := range ops {
			if o.Input.Kind == KindMessage {
				msgs[o.Input.Msg.Imm] = at{c, i}
			}
		}
	}
	var final *Operation
	for c, ops := range r.perCli {
		for i := range ops {
			if ops[i].Input.Kind == KindFinal {
				final = &r.perCli[c][i]
			}
		}
	}
	for _, s := range r.seen {
		if a, ok := msgs[s.c.Imm]; ok && s.c.HasImm && s.c.QP == r.perCli[a.client][a.i].Input.QP {
			o := &r.perCli[a.client][a.i]
			if !o.Output.Unknown {
				o.Output.Completions = append(o.Output.Completions, s.c)
				o.Return = max(o.Return, s.at)
				continue
			}
		}
		if o := r.oldestUnclaimed(s); o != nil {
			o.Output.Completions = append(o.Output.Completions, s.c)
			o.Return = max(o.Return, s.at)
			continue
		}
		if final != nil {
			final.Output.Completions = append(final.Output.Completions, s.c)
		}
	}
	var all []Operation
	for _, ops := range r.perCli {
		all = append(all, ops...)
	}
	slices.SortStableFunc(all, func(a, b Operation) int { return cmpDur(a.Call, b.Call) })
	return all
}

// oldestUnclaimed is where a completion without immediate data (an error
// completion carries none; on iWARP none does) goes: the earliest message
// to its QP, called before the poll that read it, that has no completion
// yet (and, for a successful one on RC, whose sender saw success). Of
// those, a successful completion goes to the earliest whose length, and
// whose pattern where the driver read it back, it carries: a message the
// receiver never took (its QP in ERR, say, while iWARP's sender saw its
// Send leave) is passed over, not handed the next one's completion. When
// none fits, the earliest takes it, and the model says what is wrong.
func (r *recorder) oldestUnclaimed(s seenCompletion) *Operation {
	if s.c.HasImm {
		return nil
	}
	fits := func(o *Operation) bool {
		if s.c.Status != model.WCSuccess {
			return true
		}
		n := o.Input.Msg.Len
		if s.c.ByteLen != n && (r.qpTypes[o.Input.QP] != model.UD || s.c.ByteLen != n+model.UDHeader) {
			return false // UD counts the GRH area, unless the device departs from UD-GRH
		}
		return !s.hasPattern || o.Input.Msg.Len == 0 || s.pattern == byte(o.Input.Msg.Imm)
	}
	if o := r.earliestUnclaimed(s, fits); o != nil {
		return o
	}
	return r.earliestUnclaimed(s, func(*Operation) bool { return true })
}

// earliestUnclaimed is the earliest message oldestUnclaimed may give s
// to, of those ok accepts.
func (r *recorder) earliestUnclaimed(s seenCompletion, ok func(*Operation) bool) *Operation {
	var best *Operation
	for c := range r.perCli {
		for i := range r.perCli[c] {
			o := &r.perCli[c][i]
			if o.Input.Kind != KindMessage || o.Input.QP != s.c.QP || o.Output.Unknown || len(o.Output.Completions) > 0 || o.Call > s.at {
				continue
			}
			if s.c.Status == model.WCSuccess && r.qpTypes[o.Input.QP] == model.RC && o.Output.Peer != model.PeerOK {
				continue // an RC sender that saw an error or RNR was not received
			}
			if !ok(o) {
				continue
			}
			if best == nil || o.Call < best.Call {
				best = o
			}
		}
	}
	return best
}
