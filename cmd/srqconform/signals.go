package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// errInterrupted is the cause of a context interruptible cancelled.
var errInterrupted = errors.New("interrupted by a signal")

// exitNow ends the process on a second signal.
var exitNow = os.Exit

// interruptible returns a context that the first SIGINT or SIGTERM
// cancels (with cause errInterrupted), so that a run stops, releases its
// verbs resources and writes its partial report; the caller must wait for
// the work it started to return before it writes. A second signal exits at
// once with exitInterrupted. stop ends the signal handling.
func interruptible(stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			fmt.Fprintf(stderr, "\nsrqconform: %v: stopping the run and writing the partial report (again to exit at once)\n", s)
			cancel(errInterrupted)
		case <-done:
			return
		}
		select {
		case s := <-sigs:
			fmt.Fprintf(stderr, "srqconform: %v again: exiting at once\n", s)
			exitNow(exitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// interrupted reports whether a signal cancelled ctx.
func interrupted(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errInterrupted)
}
