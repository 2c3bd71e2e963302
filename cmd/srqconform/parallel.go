package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/srqconform/srqconform/conformance"
)

// childFlags are the run flags a child of run -parallel does not inherit:
// the parent decides the seed and the outputs, and keeps the progress.
var childFlags = []string{"runs", "parallel", "seed", "o", "json", "format", "replay-dir", "q"}

// isolatedRuns says whether run -runs makes each run in a child process
// (runChildren): with -parallel, and on a real device (the cgo driver)
// whatever -parallel says, since a device's value can kill the process
// that reads it and a death must cost only its own run.
func isolatedRuns(driver string, runs, parallel int) bool {
	return runs > 1 && (parallel > 1 || driver == "cgo")
}

// runChildren starts runs runs of srqconform run, with seeds seed,
// seed+1, ..., in child processes, up to parallel at once; each child opens
// the device itself, so their waits on it overlap. It returns a function
// that waits for run i and returns its report (nil, with why, when the
// child gave none), and a cleanup that interrupts the children still
// running, waits for them and removes their files.
func runChildren(ctx context.Context, fs *flag.FlagSet, seed uint64, runs, parallel int, stderr io.Writer) (func(int) (*conformance.Report, error), func()) {
	fail := func(err error) (func(int) (*conformance.Report, error), func()) {
		return func(int) (*conformance.Report, error) { return nil, err }, func() {}
	}
	self, err := os.Executable()
	if err != nil {
		return fail(fmt.Errorf("-parallel: os.Executable: %w", err))
	}
	dir, err := os.MkdirTemp("", "srqconform-runs-")
	if err != nil {
		return fail(fmt.Errorf("-parallel: temporary directory: %w", err))
	}
	var base []string
	fs.Visit(func(f *flag.Flag) {
		for _, n := range childFlags {
			if f.Name == n {
				return
			}
		}
		base = append(base, "-"+f.Name+"="+f.Value.String())
	})
	type result struct {
		rep *conformance.Report
		err error
	}
	done := make([]chan result, runs)
	for i := range done {
		done[i] = make(chan result, 1)
	}
	cctx, cancel := context.WithCancel(ctx)
	out := &lockedWriter{w: stderr}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		slots := make(chan struct{}, parallel)
		for i := range runs {
			select {
			case slots <- struct{}{}:
			case <-cctx.Done():
				for j := i; j < runs; j++ {
					done[j] <- result{nil, fmt.Errorf("run %d of %d (seed %d) not started: %w", j+1, runs, seed+uint64(j), context.Cause(cctx))}
				}
				return
			}
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				defer func() { <-slots }()
				rep, err := runChild(cctx, self, base, seed+uint64(i), filepath.Join(dir, fmt.Sprintf("run-%d.json", i)), out)
				done[i] <- result{rep, err}
			}(i)
		}
	}()
	next := func(i int) (*conformance.Report, error) {
		r := <-done[i]
		return r.rep, r.err
	}
	cleanup := func() {
		cancel()
		wg.Wait()
		os.RemoveAll(dir)
	}
	return next, cleanup
}

// runChild runs srqconform run once in a child process with the JSON
// report written to file, and decodes it. Cancelling ctx interrupts the
// child (SIGINT: it releases the device and writes its partial report).
func runChild(ctx context.Context, self string, base []string, seed uint64, file string, stderr io.Writer) (*conformance.Report, error) {
	args := append([]string{"run"}, base...)
	args = append(args, "-seed="+strconv.FormatUint(seed, 10), "-format=json", "-o="+file, "-q")
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 2 * time.Minute
	cmd.Stderr = stderr
	runErr := cmd.Run()
	b, err := os.ReadFile(file)
	if err == nil {
		var rep *conformance.Report
		if rep, err = decodeReport(b); err == nil {
			return rep, nil
		}
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) && ee.ExitCode() == exitUsage {
		return nil, fmt.Errorf("run with seed %d in a child process exited %d (its error is above); no report", seed, exitUsage)
	}
	return nil, fmt.Errorf("run with seed %d in a child process (%s): %v, and its report: %v", seed, self, runErr, err)
}

// lockedWriter serialises the children's writes to one stream.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
