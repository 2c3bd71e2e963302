package qemuvm

import (
	"bytes"
	"context"
	"os/exec"
	"sync"
	"time"
)

// DefaultStallTimeout is how long a booting guest may leave its serial
// console silent before QEMU is killed, when Options.StallTimeout is
// zero.
//
// A kernel booted without "quiet" prints its boot messages on the
// console, a few hundred lines spread over the whole boot, so under TCG
// too the gaps between lines are seconds, not minutes. A minute of
// silence before the guest's program starts is a hung guest: seen with
// KVM on a host whose probe passed, where a Debian kernel printed
// "Probing EDD ... ok" and then nothing.
const DefaultStallTimeout = time.Minute

// consoleWatch is an io.Writer on the guest's serial console. It notes
// when bytes last arrived and whether the marker line the init script
// prints just before it runs the program (START) has gone by.
//
// Stall detection ends at that marker. The program's stdout goes to a
// file in the guest and only its stderr reaches the console, so a
// program may rightly be silent for as long as it runs: srqconform run
// -q prints nothing until its report, and a go test binary's -test.v
// output is stdout. After START only Options.Timeout bounds the run.
type consoleWatch struct {
	start []byte           // the START marker, which ends stall detection
	now   func() time.Time // time.Now, or a fake clock in tests

	mu      sync.Mutex
	last    time.Time // when bytes last arrived (or the watch began)
	started bool      // start was seen
	carry   []byte    // the last len(start)-1 bytes, for a split marker
}

// newConsoleWatch returns a watch that ends at startMarker; now is the
// clock (time.Now when nil).
func newConsoleWatch(startMarker string, now func() time.Time) *consoleWatch {
	if now == nil {
		now = time.Now
	}
	return &consoleWatch{start: []byte(startMarker), now: now, last: now()}
}

// Write records that console output arrived. It never fails.
func (w *consoleWatch) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last = w.now()
	if !w.started {
		buf := append(append([]byte(nil), w.carry...), p...)
		if bytes.Contains(buf, w.start) {
			w.started, w.carry = true, nil
		} else {
			keep := min(len(buf), len(w.start)-1)
			w.carry = buf[len(buf)-keep:]
		}
	}
	return len(p), nil
}

// touch restarts the silence count, as if bytes had just arrived.
func (w *consoleWatch) touch() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last = w.now()
}

// state returns how long the console has been silent at now and whether
// the program has started.
func (w *consoleWatch) state(now time.Time) (silent time.Duration, started bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return now.Sub(w.last), w.started
}

// wait blocks until the console has been silent for limit before the
// program started (it returns true), or until the program starts or ctx
// is done (it returns false).
func (w *consoleWatch) wait(ctx context.Context, limit time.Duration) bool {
	for {
		silent, started := w.state(w.now())
		if started {
			return false
		}
		if silent >= limit {
			return true
		}
		t := time.NewTimer(limit - silent)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

// runWatched starts cmd, whose Stdout (and Stderr) must write to w, and
// waits for it. When w sees limit of silence before the program starts,
// cmd is killed and stalled is true; limit <= 0 turns this off. err is
// what cmd.Start or cmd.Wait returned.
func runWatched(ctx context.Context, cmd *exec.Cmd, w *consoleWatch, limit time.Duration) (stalled bool, err error) {
	w.touch()
	if err := cmd.Start(); err != nil {
		return false, err
	}
	if limit <= 0 {
		return false, cmd.Wait()
	}
	wctx, cancel := context.WithCancel(ctx)
	verdict := make(chan bool, 1)
	go func() {
		verdict <- w.wait(wctx, limit) && cmd.Process.Kill() == nil
	}()
	err = cmd.Wait()
	cancel()
	stalled = <-verdict
	// A process that exited on its own just as the bound ran out was
	// not killed for a stall.
	if stalled && cmd.ProcessState != nil && cmd.ProcessState.Exited() {
		stalled = false
	}
	return stalled, err
}
