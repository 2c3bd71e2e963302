package conformance

import (
	"fmt"
	"sync/atomic"
	"time"
)

// syncGuard bounds the calls of a synchronous driver (the emulator, or a
// driver wrapping it) at the cost of two atomic operations per call: no
// goroutine or timer per call, as an asynchronous driver's calls have
// (executor.bound). The run's work goes on its own goroutine (guarded),
// each call runs there directly (call), and one watchdog goroutine looks
// a few times per bound whether the call in flight is the one it saw in
// flight a bound ago. When it is (a driver looping for ever: a mutant's
// `p <<= 0`), guarded returns false and the run stops with a harness
// error naming the call, as an asynchronous driver's does past
// Options.OpTimeout; the goroutine stays parked in the call, and parks
// for good if the call ever returns. A call that returns late is never a
// departure: the run only stops, and says why.
type syncGuard struct {
	bound time.Duration
	// what is the call in flight (a text or an Op), written before seq
	// turns odd and read only once stuck is closed.
	what any
	// seq counts call starts and ends (odd while a call is in flight);
	// abandoned, its top bit, is set by the watchdog on the call it
	// gives up on.
	seq   atomic.Uint64
	stuck chan struct{} // closed by the watchdog when a call overran bound
	stop  chan struct{}
	// deadline, when set, is when the run must be done: past it the
	// watchdog looks every lateTick and gives up on any call in flight
	// at two looks running (pastEnd, then set, is read only once stuck
	// is closed), so that a driver whose calls each take seconds, none
	// past bound, cannot carry the run past it by more than a tick.
	deadline time.Time
	pastEnd  bool
}

// lateTick is how often the watchdog looks past the run's deadline: the
// emulator's calls take microseconds, even under the race detector on a
// busy machine, a slow driver's seconds.
const lateTick = 250 * time.Millisecond

const abandoned = 1 << 63

// syncBound is how long a synchronous driver's call may take before the
// run stops: the run's budget (Options.Duration), or ShrinkTime when the
// run counts cases, and never under 5 s, nor over Options.OpTimeout. The
// emulator's calls take microseconds; a busy machine under the race
// detector does not make one take seconds. A hang met as late as two
// and a half budgets into a run (shrinking, diagnosing) still ends the
// run within four; a driver whose calls each take seconds, none past the
// bound, is stopped at the run's deadline (newSyncGuard).
func syncBound(opts Options) time.Duration {
	b := opts.ShrinkTime
	if opts.Duration > 0 {
		b = opts.Duration
	}
	return min(max(b, 5*time.Second), opts.OpTimeout)
}

// newSyncGuard starts the guard's watchdog, with the run's deadline (zero:
// none); release stops it.
func newSyncGuard(bound time.Duration, deadline time.Time) *syncGuard {
	g := &syncGuard{bound: bound, stuck: make(chan struct{}), stop: make(chan struct{}), deadline: deadline}
	go g.watch()
	return g
}

// watch closes stuck when one call has been in flight for a bound: it
// looks every quarter bound, so a call is given up on after between one
// and one and a quarter bounds.
func (g *syncGuard) watch() {
	t := time.NewTicker(g.bound / 4)
	defer t.Stop()
	var late <-chan time.Time
	if !g.deadline.IsZero() {
		lt := time.NewTimer(time.Until(g.deadline))
		defer lt.Stop()
		late = lt.C
	}
	var seen uint64
	var since time.Time
	for {
		select {
		case <-g.stop:
			return
		case <-late:
			late, g.pastEnd = nil, true
			t.Reset(lateTick)
		case now := <-t.C:
			s := g.seq.Load()
			switch {
			case s%2 == 0 || s != seen:
				seen, since = s, now
			case (now.Sub(since) >= g.bound || g.pastEnd) && g.seq.CompareAndSwap(s, s|abandoned):
				close(g.stuck)
				return
			}
		}
	}
}

// call runs f, the driver call what (enter, f, leave).
func (g *syncGuard) call(what any, f func()) {
	s := g.enter(what)
	f()
	g.leave(s)
}

// enter marks the driver call what in flight; leave, given enter's
// result, marks it returned. If the watchdog gave up on the call, leave
// parks the goroutine for good: guarded has stopped the run, and its
// report is written from what was there when the call began.
func (g *syncGuard) enter(what any) uint64 {
	g.what = what
	return g.seq.Add(1)
}

func (g *syncGuard) leave(s uint64) {
	if !g.seq.CompareAndSwap(s, s+1) {
		select {} // abandoned: touch nothing the report is made from
	}
}

// release stops the watchdog.
func (g *syncGuard) release() {
	if g != nil {
		close(g.stop)
	}
}

// guarded runs body, on a goroutine of its own when x has a guard, and
// reports whether it returned: false when a driver call in it overran
// the guard's bound (x.hung then names that call). A panic in body is
// raised again here.
func (x *executor) guarded(body func()) bool {
	if x.guard == nil {
		body()
		return true
	}
	done := make(chan struct{})
	var crash any
	go func() {
		defer close(done)
		defer func() { crash = recover() }()
		body()
	}()
	select {
	case <-done:
		if crash != nil {
			panic(crash)
		}
		return true
	case <-x.guard.stuck:
		x.hung = fmt.Sprintf("%v within %v", x.guard.what, x.guard.bound)
		if x.guard.pastEnd {
			x.hung = fmt.Sprintf("%v before the run's time ran out (it was still in flight then)", x.guard.what)
		}
		return false
	}
}
