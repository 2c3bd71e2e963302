package qemuvm

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestConsoleWatchState(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	w := newConsoleWatch("@@SRQVM n1 START", clk.now)
	clk.advance(30 * time.Second)
	if silent, started := w.state(clk.now()); silent != 30*time.Second || started {
		t.Errorf("after 30s without output: silent %v started %v, want 30s and false", silent, started)
	}
	w.Write([]byte("Probing EDD (edd=off to disable)... ok\r\n"))
	clk.advance(5 * time.Second)
	w.Write(nil) // an empty write is no progress
	if silent, _ := w.state(clk.now()); silent != 5*time.Second {
		t.Errorf("5s after the last bytes (and an empty write): silent %v, want 5s", silent)
	}
	// Another run's marker, or the word alone, does not end the watch.
	w.Write([]byte("@@SRQVM n2 START\r\nSTART\r\n"))
	if _, started := w.state(clk.now()); started {
		t.Errorf("a START marker with another nonce ended stall detection")
	}
	// The marker split over three writes does.
	for _, part := range []string{"[  2.1] x\r\n@@SRQ", "VM n1 ST", "ART\r\n"} {
		w.Write([]byte(part))
	}
	clk.advance(time.Hour)
	if silent, started := w.state(clk.now()); !started || silent != time.Hour {
		t.Errorf("after a split START marker: silent %v started %v, want 1h0m0s and true", silent, started)
	}
}

// shCmd returns a command running script under sh with stdout and
// stderr going to w.
func shCmd(t *testing.T, ctx context.Context, w *consoleWatch, script string) *exec.Cmd {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	cmd := exec.CommandContext(ctx, sh, "-c", script)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.WaitDelay = time.Second
	return cmd
}

func TestRunWatchedKillsASilentProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w := newConsoleWatch("@@SRQVM n START", nil)
	limit := 200 * time.Millisecond
	// Prints, then is silent for longer than the test's own deadline.
	cmd := shCmd(t, ctx, w, `printf 'Probing EDD (edd=off to disable)... ok\r\n'; exec sleep 60`)
	start := time.Now()
	stalled, err := runWatched(ctx, cmd, w, limit)
	took := time.Since(start)
	if !stalled {
		t.Fatalf("runWatched(silent process, %v) = stalled false, err %v after %v; want it killed for a stall", limit, err, took)
	}
	if ctx.Err() != nil {
		t.Errorf("the process was killed by the test's deadline, not by the stall bound")
	}
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("runWatched error = %v, want the process's death by SIGKILL", err)
	}
	if took < limit {
		t.Errorf("killed after %v, before the %v bound", took, limit)
	}
}

// outputClock is a clock that moves only when the watched process prints:
// by step before each write reaches the watch.
type outputClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *outputClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// writer returns w with the clock moved by step before each write.
func (c *outputClock) writer(w *consoleWatch) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		c.mu.Lock()
		c.t = c.t.Add(c.step)
		c.mu.Unlock()
		return w.Write(p)
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestRunWatchedSparesASteadyProcess(t *testing.T) {
	// The watch's clock moves 10 ms with each line the process prints, so
	// its 100 lines span a second of the watch's time, against a bound of
	// thirty such gaps that the run outlasts three times over: spared only
	// if every line restarts the silence, however late the machine runs
	// the shell (its real gaps of 10 ms were 540 ms on a busy machine).
	clk := &outputClock{t: time.Unix(1000, 0), step: 10 * time.Millisecond}
	w := newConsoleWatch("@@SRQVM n START", clk.now)
	cmd := shCmd(t, context.Background(), w, `i=0; while [ $i -lt 100 ]; do echo "[ $i ] boot message"; sleep 0.01; i=$((i+1)); done`)
	cmd.Stdout = clk.writer(w)
	cmd.Stderr = cmd.Stdout
	stalled, err := runWatched(context.Background(), cmd, w, 300*time.Millisecond)
	if stalled || err != nil {
		t.Errorf("runWatched(steady output) = stalled %v, err %v; want false, nil", stalled, err)
	}
}

func TestRunWatchedSparesAQuietProgram(t *testing.T) {
	t.Parallel() // it sleeps
	w := newConsoleWatch("@@SRQVM n START", nil)
	// The program starts, then prints nothing for longer than the bound
	// (3 s: a shell slow to start on a busy machine is not a stall).
	cmd := shCmd(t, context.Background(), w, `printf '@@SRQVM n RELEASE 6.1\r\n@@SRQVM n START\r\n'; sleep 3.5; exit 3`)
	stalled, err := runWatched(context.Background(), cmd, w, 3*time.Second)
	var ee *exec.ExitError
	if stalled || !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("runWatched(quiet after START) = stalled %v, err %v; want false and exit status 3", stalled, err)
	}
	// With the check off, silence before START is not a stall either.
	w = newConsoleWatch("@@SRQVM n START", nil)
	cmd = shCmd(t, context.Background(), w, `printf booting; sleep 0.3`)
	if stalled, err := runWatched(context.Background(), cmd, w, -1); stalled || err != nil {
		t.Errorf("runWatched(limit -1) = stalled %v, err %v; want false, nil", stalled, err)
	}
}

// fakeQEMU writes a script standing in for qemu-system-x86_64: under an
// accelerator listed in stallUnder it prints the setup code's last line
// and hangs (ACCEL-once: only on its first boot under ACCEL); otherwise it plays a guest whose program printed "ok" and
// exited 0, writing the result block to the -serial file: port.
func fakeQEMU(t *testing.T, nonce string, stallUnder ...string) string {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	result := filepath.Join(dir, "result.txt")
	if err := os.WriteFile(result, []byte(guestText(nonce, "6.1.0-test", 0, []byte("ok\n"), nil, true)), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	for _, a := range stallUnder {
		if acc, ok := strings.CutSuffix(a, "-once"); ok {
			// Stall on the first boot under acc only.
			once := shellQuote(filepath.Join(dir, "stalled-once"))
			b.WriteString(`case " $* " in *" -accel ` + acc + ` "*) if [ ! -e ` + once + ` ]; then : > ` + once + `; printf 'Probing EDD (edd=off to disable)... ok\r\n'; exec sleep 60; fi;; esac` + "\n")
			continue
		}
		b.WriteString(`case " $* " in *" -accel ` + a + ` "*) printf 'Probing EDD (edd=off to disable)... ok\r\n'; exec sleep 60;; esac` + "\n")
	}
	b.WriteString(`for a; do case "$a" in file:*) out=${a#file:};; esac; done` + "\n")
	b.WriteString(`printf '[    0.000000] Linux version 6.1.0-test\r\n@@SRQVM ` + nonce + ` RELEASE 6.1.0-test\r\n@@SRQVM ` + nonce + ` START\r\n'` + "\n")
	b.WriteString(`cp ` + shellQuote(result) + ` "$out"` + "\n")
	qemu := filepath.Join(dir, "qemu-system-x86_64")
	if err := os.WriteFile(qemu, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kvmBroken.Delete(qemu) })
	return qemu
}

// testStall is the stall bound of the boot tests: long enough that a fake
// QEMU slow to start on a busy machine is not taken for a stalled one.
const testStall = 3 * time.Second

func TestBootFallsBackToTCGOnKVMStall(t *testing.T) {
	t.Parallel() // it waits for a stall
	const nonce = "0123abcd"
	qemu := fakeQEMU(t, nonce, "kvm")
	var log strings.Builder
	opts := Options{StallTimeout: testStall, Log: &log}
	pk := &PreparedKernel{Release: "6.1.0-test", Image: "/k"}
	res := &Result{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rep, err := bootWithFallback(ctx, qemu, "kvm", opts, pk, "/i", nonce, t.TempDir(), res)
	if err != nil {
		t.Fatalf("bootWithFallback(kvm stalls, auto) = %v; want a TCG boot's report\nlog:\n%s", err, log.String())
	}
	if string(rep.Stdout) != "ok\n" || res.Accel != "tcg" {
		t.Errorf("report stdout %q, accel %q; want \"ok\\n\" under tcg", rep.Stdout, res.Accel)
	}
	const line = "vm: no console output for 3s under kvm; falling back to tcg\n"
	if !strings.Contains(log.String(), line) {
		t.Errorf("log lacks %q:\n%s", line, log.String())
	}
	if res.AccelFallback != "no console output for 3s under kvm" {
		t.Errorf("Result.AccelFallback = %q", res.AccelFallback)
	}
	// Later auto runs with this qemu skip KVM.
	if accel, err := chooseAccel(ctx, qemu, Options{Log: &log}); accel != "tcg" || err != nil {
		t.Errorf("chooseAccel after a KVM stall = %q, %v; want tcg", accel, err)
	}
}

func TestBootStallIsAnErrorWithoutFallback(t *testing.T) {
	t.Parallel() // it waits for stalls
	const nonce = "4567cdef"
	for _, tc := range []struct {
		name, accel, optAccel string
		stallUnder            []string
	}{
		{"explicit kvm", "kvm", "kvm", []string{"kvm"}},
		{"tcg", "tcg", "tcg", []string{"kvm", "tcg"}},
		{"auto after fallback", "kvm", "auto", []string{"kvm", "tcg"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			qemu := fakeQEMU(t, nonce, tc.stallUnder...)
			opts := Options{Accel: tc.optAccel, StallTimeout: testStall, Timeout: time.Minute}
			res := &Result{}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := bootWithFallback(ctx, qemu, tc.accel, opts, &PreparedKernel{Image: "/k"}, "/i", nonce, t.TempDir(), res)
			var se *StallError
			if !errors.As(err, &se) {
				t.Fatalf("bootWithFallback = %v; want a StallError", err)
			}
			// Under TCG a stall is booted again with a bound four times
			// as large before it is an error.
			silence := "3s"
			if res.Accel == "tcg" {
				silence = "12s"
			}
			for _, w := range []string{"printed nothing on its serial console for " + silence + " under " + res.Accel, "Probing EDD", "-accel " + res.Accel, "expected console output at least every " + silence} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			wantAccel := tc.accel
			if tc.optAccel == "auto" {
				wantAccel = "tcg"
			}
			if se.Accel != wantAccel || res.Accel != wantAccel {
				t.Errorf("stalled under %q (result %q), want %q", se.Accel, res.Accel, wantAccel)
			}
		})
	}
}

// TestTCGStallIsBootedAgainWithALargerBound: a TCG boot that went quiet
// for the stall bound (a busy host) is booted again with a bound four
// times as large; a boot that then goes through gives its report.
func TestTCGStallIsBootedAgainWithALargerBound(t *testing.T) {
	t.Parallel() // it waits for a stall
	const nonce = "89ab0123"
	qemu := fakeQEMU(t, nonce, "tcg-once")
	var log strings.Builder
	opts := Options{Accel: "tcg", StallTimeout: testStall, Timeout: time.Minute, Log: &log}
	res := &Result{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := bootWithFallback(ctx, qemu, "tcg", opts, &PreparedKernel{Release: "6.1.0-test", Image: "/k"}, "/i", nonce, t.TempDir(), res)
	if err != nil {
		t.Fatalf("bootWithFallback(tcg stalls once) = %v; want the second boot's report\nlog:\n%s", err, log.String())
	}
	if string(rep.Stdout) != "ok\n" || res.BootRetries != 1 {
		t.Errorf("report stdout %q, BootRetries %d; want \"ok\\n\" after 1 retry", rep.Stdout, res.BootRetries)
	}
	const line = "vm: no console output for 3s under tcg; booting again with a bound of 12s\n"
	if !strings.Contains(log.String(), line) {
		t.Errorf("log lacks %q:\n%s", line, log.String())
	}
}

func TestStallErrorSaysWhere(t *testing.T) {
	e := &StallError{Accel: "kvm", Silence: time.Minute, Command: "qemu-system-x86_64 -accel kvm", Release: "6.12.9-amd64", LastLines: "@@SRQVM n RELEASE 6.12.9-amd64"}
	for _, w := range []string{"qemu-system-x86_64 -accel kvm", "for 1m0s under kvm after kernel 6.12.9-amd64 booted but before the program started", "expected console output at least every 1m0s", "RELEASE 6.12.9-amd64"} {
		if !strings.Contains(e.Error(), w) {
			t.Errorf("StallError %q lacks %q", e.Error(), w)
		}
	}
}

func TestAccelValidation(t *testing.T) {
	for _, a := range []string{"", "auto", "kvm", "tcg"} {
		if err := checkAccel(a); err != nil {
			t.Errorf("checkAccel(%q) = %v, want nil", a, err)
		}
	}
	// Run rejects a bad value before it looks for QEMU or a kernel.
	_, err := Run(context.Background(), Options{Accel: "hvf", QEMU: "/nonexistent/qemu"})
	if err == nil || !strings.Contains(err.Error(), `Options.Accel is "hvf"; expected "auto", "kvm" or "tcg"`) {
		t.Errorf("Run(Accel hvf) = %v, want an error naming the value and the choices", err)
	}
}
