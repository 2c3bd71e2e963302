package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srqconform/srqconform/conformance"

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

func failing(rep *conformance.Report) []string {
	var out []string
	for _, f := range rep.Failures {
		out = append(out, f.Rule)
	}
	return out
}
