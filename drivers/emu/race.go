package emu

import (
	"runtime"
	"time"
)

// Race mutants: rule violations that only concurrent calls show (issue
// 11). Each opens a window in a critical section: it lets go of the lock
// between reading shared state and acting on what it read, as a driver
// does that takes its lock too late or releases it too early. Called from
// one thread the window is empty and the mutant behaves; the sequential
// suite cannot see it.
const (
	PostRaceLoses  Switch = "post-race-loses"
	FetchRaceTwice Switch = "fetch-race-twice"
	LimitRaceTwice Switch = "limit-race-twice"
	ErrReexecutes  Switch = "err-reexecutes"
)

// KindRaceMutant is the Kind of a race mutant.
const KindRaceMutant = "race-mutant"

// RaceMutants lists the race mutants.
var RaceMutants = []Switch{PostRaceLoses, FetchRaceTwice, LimitRaceTwice, ErrReexecutes}

// raceCatalogue describes the race mutants.
var raceCatalogue = []SwitchInfo{
	{PostRaceLoses, KindRaceMutant, "POST-ATOMIC", "a post reads the producer index, lets go of the lock, then writes its WRs there and publishes: a post in between is overwritten (its WRs lost) although it returned 0", nil},
	{FetchRaceTwice, KindRaceMutant, "FETCH-ONCE", "a fetch reads the head WR, lets go of the lock, and takes that WR even when another QP took it meanwhile: one WR completes on two QPs", nil},
	{LimitRaceTwice, KindRaceMutant, "LIMIT-ONCE", "the limit check lets go of the lock between finding the count below the limit and firing: two QPs fetching at once both fire", nil},
	{ErrReexecutes, KindRaceMutant, "FETCH-ONCE", "a UD message whose processing a modify to ERR overtakes is completed again on every WR left in the SRQ, as rxe's responder did with 15ae32c4a355 reverted: one message, several completions", nil},
}

// raceWindow is how long a race mutant leaves its critical section open:
// about as long as a cache miss on a remote socket plus a preemption
// check, long enough that two threads meet in it within a short run.
const raceWindow = 50 * time.Microsecond

// limitRaceWindow bounds limit-race-twice's window: the time between
// finding the count below the limit and raising the event, which goes
// through the event handler's queue. The window closes early once another
// limit check has fired: the mutant's double event needs a second fetch in
// it, and fetches come only with messages. A window of fixed length
// (4*raceWindow) let the race show on 98 to 100 of 100 seeds, fewer on a
// busy machine; one that waits for the other fetch shows it whenever two
// fetches meet, whatever the scheduler does.
const limitRaceWindow = 5 * time.Millisecond

// openWindow lets go of the device lock for a moment, long enough for
// another thread to take it. The caller holds dev.mu and holds it again
// on return; anything it read before may have changed.
// rule: none (race mutants only)
func (s *srq) openWindow() {
	s.dev.mu.Unlock()
	runtime.Gosched()
	for start := time.Now(); time.Since(start) < raceWindow; {
	}
	s.dev.mu.Lock()
}

// openWindowUntil is openWindow until done (called with dev.mu held)
// reports true, or for at most bound.
// rule: none (race mutants only)
func (s *srq) openWindowUntil(done func() bool, bound time.Duration) {
	s.dev.mu.Unlock()
	for start := time.Now(); time.Since(start) < bound; {
		runtime.Gosched()
		s.dev.mu.Lock()
		ok := done()
		s.dev.mu.Unlock()
		if ok {
			break
		}
	}
	s.dev.mu.Lock()
}
