package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/model"
)

var built struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// binary builds srqconform with the srqconformtest tag once per test
// binary run and returns its path.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	built.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		dir, err := os.MkdirTemp("", "srqconform-signal-test-")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "srqconform")
		cmd := exec.Command(goTool, "build", "-tags", "srqconformtest", "-o", built.path, ".")
		built.out, built.err = cmd.CombinedOutput()
	})
	require.NoError(t, built.err, "go build -tags srqconformtest: %s", built.out)
	return built.path
}

// TestMain removes the binary the signal tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.path != "" {
		os.RemoveAll(filepath.Dir(built.path))
	}
	os.Exit(code)
}

// started is a srqconform process under test.
type started struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan struct{}
	took   time.Duration // from the last signal to the exit
}

func start(t *testing.T, args ...string) *started {
	t.Helper()
	p := &started{cmd: exec.Command(binary(t), args...), done: make(chan struct{})}
	p.cmd.Stderr = &p.stderr
	require.NoError(t, p.cmd.Start())
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *started) signal(t *testing.T, s syscall.Signal) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(s))
}

// exit waits up to bound for the process and returns its exit status.
func (p *started) exit(t *testing.T, since time.Time, bound time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		p.took = time.Since(since)
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(bound):
		t.Fatalf("still running %v after the signal; stderr:\n%s", bound, p.stderr.String())
	}
	return -1
}

// TestASignalStopsShrinking interrupts a run after it found a failing
// random case: the slot-leak mutant fails a random case within a fraction
// of a second (seed 7), and the run, with a budget of ten minutes, is then
// shrinking it or testing on (shrinking once took some 20 s; it now takes
// about one). The run must stop at once and keep the counterexample it
// found.
func TestASignalStopsShrinking(t *testing.T) {
	dir := t.TempDir()
	out, js := filepath.Join(dir, "report.txt"), filepath.Join(dir, "report.json")
	p := start(t, "run", "-rules", "QUERY-ATTR", "-deviations", "slot-leak", "-seed", "7", "-duration", "10m", "-q", "-o", out, "-json", js)
	time.Sleep(3 * time.Second)
	at := time.Now()
	p.signal(t, syscall.SIGINT)
	assert.Equal(t, exitInterrupted, p.exit(t, at, 10*time.Second), p.stderr.String())
	t.Logf("exited %v after the signal", p.took)
	text, err := os.ReadFile(out)
	require.NoError(t, err, "the report file was not written")
	assert.Contains(t, string(text), "verdict: INTERRUPTED, DEVIATES so far", "the failing case found before the signal is not in the report")
	assert.Contains(t, string(text), "\nCOUNTEREXAMPLE #1: rule ")
	b, err := os.ReadFile(js)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"interrupted": true`)
}

// TestASecondSignalExitsAtOnce: run and concurrent wait for a device
// slow to close after the first SIGINT, not after the second.
func TestASecondSignalExitsAtOnce(t *testing.T) {
	for _, args := range [][]string{
		{"run", "-driver", "emu-slow-close", "-cases", "300000", "-q"},
		{"concurrent", "-driver", "emu-slow-close", "-seed", "1", "-duration", "10m", "-max-ops", "100000000"},
	} {
		t.Run(args[0], func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "report.txt")
			// The device takes a minute to close: after the first signal
			// the command stops but waits for it; the second must not.
			p := start(t, append(args, "-o", out)...)
			time.Sleep(time.Second)
			p.signal(t, syscall.SIGINT)
			time.Sleep(300 * time.Millisecond)
			select {
			case <-p.done:
				t.Fatalf("ended on the first signal without closing the device; stderr:\n%s", p.stderr.String())
			default:
			}
			at := time.Now()
			p.signal(t, syscall.SIGINT)
			assert.Equal(t, exitInterrupted, p.exit(t, at, 10*time.Second), p.stderr.String())
			t.Logf("exited %v after the second signal", p.took)
			assert.Contains(t, p.stderr.String(), "again: exiting at once")
			assert.NoFileExists(t, out, "the report was written: the command did not exit at once")
			assert.Equal(t, 2, strings.Count(p.stderr.String(), "srqconform: interrupt"), p.stderr.String())
		})
	}
}

// TestEveryLongCommandStopsOnASignalWithItsPartialReport: run, concurrent
// and infer stop on SIGINT or SIGTERM, write the partial report they
// promise and exit 130 (issue 20, bug 4: concurrent died at once of
// SIGTERM with exit 143 and no report, and ran its check to the end after
// SIGINT, exiting 0; infer wrote no profile).
func TestEveryLongCommandStopsOnASignalWithItsPartialReport(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  func(out string) []string
		check func(t *testing.T, out string)
	}{
		{"run", func(out string) []string {
			return []string{"run", "-cases", "300000", "-q", "-o", out, "-json", out + ".json"}
		}, func(t *testing.T, out string) {
			text, err := os.ReadFile(out)
			require.NoError(t, err, "the report file was not written")
			assert.Contains(t, string(text), "verdict: INTERRUPTED, CONFORMANT so far")
			b, err := os.ReadFile(out + ".json")
			require.NoError(t, err)
			assert.Contains(t, string(b), `"interrupted": true`)
		}},
		{"concurrent", func(out string) []string {
			return []string{"concurrent", "-seed", "1", "-duration", "10m", "-max-ops", "100000000", "-o", out}
		}, func(t *testing.T, out string) {
			b, err := os.ReadFile(out)
			require.NoError(t, err, "no report")
			assert.Contains(t, string(b), "verdict: INTERRUPTED, ")
			assert.Contains(t, string(b), "1 of 1 histories recorded but not checked")
		}},
		{"infer", func(out string) []string {
			return []string{"infer", "-seed", "1", "-cases", "1000000", "-q", "-o", out}
		}, func(t *testing.T, out string) {
			p, err := model.LoadProfile(out)
			require.NoError(t, err, "the partial profile does not load")
			assert.Contains(t, p.Description, "interrupted during run ")
		}},
	} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(tc.name+"/"+sig.String(), func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out")
				p := start(t, tc.args(out)...)
				time.Sleep(2 * time.Second)
				select {
				case <-p.done:
					t.Fatalf("ended before the signal; stderr:\n%s", p.stderr.String())
				default:
				}
				at := time.Now()
				p.signal(t, sig)
				assert.Equal(t, exitInterrupted, p.exit(t, at, 30*time.Second), p.stderr.String())
				t.Logf("exited %v after the signal", p.took)
				assert.Contains(t, p.stderr.String(), "srqconform: interrupted: partial ")
				tc.check(t, out)
			})
		}
	}
}
