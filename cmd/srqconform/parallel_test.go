package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/srqconform/srqconform/conformance"

	"github.com/srqconform/srqconform/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParallelRunsGiveTheSequentialReport: run -runs N -parallel P makes
// the runs in child processes and reports as run -runs N does: the first
// deviating run's report, its replay files, the per-run lines and the exit
// status.
func TestParallelRunsGiveTheSequentialReport(t *testing.T) {
	bin := binary(t)
	report := func(extra ...string) (string, string, int, []string) {
		dir := t.TempDir()
		args := append([]string{"run", "-deviations", "badwr-off-by-one", "-cases", "10", "-seed", "1", "-runs", "4", "-format", "json",
			"-replay-dir", dir}, extra...)
		cmd := exec.Command(bin, args...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		require.NoError(t, err)
		for i := range files {
			files[i] = filepath.Base(files[i])
		}
		return out.String(), errb.String(), code, files
	}
	seqOut, seqErr, seqCode, seqFiles := report()
	parOut, parErr, parCode, parFiles := report("-parallel", "3")
	require.Equal(t, exitDeviates, seqCode, seqErr)
	assert.Equal(t, seqCode, parCode, parErr)
	assert.Equal(t, seqFiles, parFiles)
	assert.NotEmpty(t, parFiles)
	seq, err := decodeReport([]byte(seqOut))
	require.NoError(t, err)
	par, err := decodeReport([]byte(parOut))
	require.NoError(t, err, parErr)
	assert.Equal(t, seq.Seed, par.Seed)
	assert.Equal(t, seq.StepsRun, par.StepsRun)
	assert.Equal(t, failing(seq), failing(par))
	for _, line := range []string{"run 1/4 seed 1:", "run 4/4 seed 4:", "runs deviated;"} {
		assert.Contains(t, parErr, line)
	}
	assert.Contains(t, parErr, "3 at once")
	// Bad input stops before any child starts.
	cmd := exec.Command(bin, "run", "-runs", "2", "-parallel", "0")
	out, _ := cmd.CombinedOutput()
	assert.Equal(t, exitUsage, cmd.ProcessState.ExitCode())
	assert.Contains(t, string(out), "-parallel must be at least 1")
}

func failing(rep *conformance.Report) []model.RuleID {
	var out []model.RuleID
	for _, f := range rep.Failures {
		out = append(out, f.Rule)
	}
	return out
}

// TestParallelRunsKeepTheRunsMadeWhenAChildDies: a child killed before it
// wrote its report stops run -runs -parallel with a harness error (exit
// 3), and the report of the runs already made is still written.
func TestParallelRunsKeepTheRunsMadeWhenAChildDies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	bin := binary(t)
	out := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(bin, "run", "-cases", "2000", "-seed", "1", "-runs", "3", "-parallel", "2", "-json", out)
	var errb strings.Builder
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	// Kill the third run's child as soon as it shows up (it starts once
	// one of the first two has finished).
	killed := false
	for deadline := time.Now().Add(2 * time.Minute); !killed && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			b, err := os.ReadFile(p)
			if err != nil || !strings.Contains(string(b), "-seed=3\x00") || !strings.Contains(string(b), bin) {
				continue
			}
			pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			require.NoError(t, err)
			require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
			killed = true
			break
		}
	}
	err := cmd.Wait() // errb is the command's until it returns
	require.True(t, killed, "the third run's child never started: %s", errb.String())
	ee, ok := err.(*exec.ExitError)
	require.True(t, ok, "run: %v, want exit %d; stderr:\n%s", err, exitHarness, errb.String())
	assert.Equal(t, exitHarness, ee.ExitCode(), errb.String())
	assert.Contains(t, errb.String(), "run 2/3 seed 2:")
	assert.Contains(t, errb.String(), "run 3 of 3 (seed 3) gave no report")
	b, err := os.ReadFile(out)
	require.NoError(t, err, "the runs made must be reported")
	rep, err := decodeReport(b)
	require.NoError(t, err)
	assert.Less(t, rep.Seed, uint64(3), "the report is one of the runs made")
	assert.Contains(t, rep.Error, "seed 3")
}

// TestRunsKeepTheRunsMadeWhenTheFirstChildDies: a run whose process dies
// (here the first, before any report is kept) costs that run only: the
// later runs are made and reported, the death is the report's Error, and
// the exit status is 3, not 2 with nothing.
func TestRunsKeepTheRunsMadeWhenTheFirstChildDies(t *testing.T) {
	bin := binary(t)
	cmd := exec.Command(bin, "run", "-driver", "emu-dies", "-cases", "5", "-seed", "1", "-runs", "3", "-parallel", "2", "-format", "json")
	cmd.Env = append(os.Environ(), "SRQCONFORM_TEST_DIE_SEED=1") // driver_dies.go
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	require.True(t, ok, "run: %v, want exit %d; stderr:\n%s", err, exitHarness, errb.String())
	assert.Equal(t, exitHarness, ee.ExitCode(), errb.String())
	assert.Contains(t, errb.String(), "run 1 of 3 (seed 1) gave no report")
	assert.Contains(t, errb.String(), "run 3/3 seed 3:", "the runs after the death are made")
	rep, err := decodeReport([]byte(out.String()))
	require.NoError(t, err, "the runs made must be reported; stderr:\n%s", errb.String())
	assert.Greater(t, rep.Seed, uint64(1), "the report is one of the runs made")
	assert.Contains(t, rep.Error, "seed 1")
}

// TestIsolatedRuns: several runs on a real device are each made in a
// process of their own, as with -parallel; one run never is.
func TestIsolatedRuns(t *testing.T) {
	for _, c := range []struct {
		driver         string
		runs, parallel int
		want           bool
	}{{"cgo", 4, 1, true}, {"cgo", 1, 1, false}, {"emu", 4, 1, false}, {"emu", 4, 2, true}, {"emu", 1, 4, false}} {
		if got := isolatedRuns(c.driver, c.runs, c.parallel); got != c.want {
			t.Errorf("isolatedRuns(%s, runs %d, parallel %d) = %v, want %v", c.driver, c.runs, c.parallel, got, c.want)
		}
	}
}

// TestAGuestRunThatDiedIsAHarnessError: a guest srqconform run that died
// before it printed a report (the Go runtime out of memory) makes vm exit
// 3 with the guest's stderr, not 2 as a usage error; a report it printed
// (the runs made, with the death as its Error) is kept.
func TestAGuestRunThatDiedIsAHarnessError(t *testing.T) {
	var errb strings.Builder
	rep, code := guestRunReport(nil, 2, []byte("fatal error: runtime: out of memory\n"), &errb)
	assert.Nil(t, rep)
	assert.Equal(t, exitHarness, code)
	assert.Contains(t, errb.String(), "the guest run died (exit 2)")
	assert.Contains(t, errb.String(), "fatal error: runtime: out of memory")
	made := `{"driver":"cgo","profile":"documented","seed":7,"rules":[{"rule":{"id":"POST-FULL"},"status":"pass"}],"error":"run 2 of 4 (seed 8) gave no report"}`
	rep, _ = guestRunReport([]byte(made), exitHarness, nil, &errb)
	require.NotNil(t, rep, errb.String())
	assert.Equal(t, uint64(7), rep.Seed)
	assert.Contains(t, rep.Error, "seed 8")
}
