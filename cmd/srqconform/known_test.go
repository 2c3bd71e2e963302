package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKnownFindings: with -known, a run that fails only the listed rules
// exits 0 and still reports them; any other failing rule exits 1; a bad
// file exits 2 before the run.
func TestKnownFindings(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	badwr := file("badwr.txt", "# the emulator's mutant\nPOST-BADWR  # bad_wr off by one, on purpose\n\n")
	other := file("other.txt", "FETCH-FIFO # something else\n")
	args := []string{"run", "-deviations", "badwr-off-by-one", "-cases", "10", "-seed", "3"}

	code, out, errs := srq(t, append(args, "-known", badwr)...)
	assert.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "verdict: DEVIATES")
	assert.Contains(t, errs, "POST-BADWR failed, a known finding (bad_wr off by one, on purpose)")

	code, _, errs = srq(t, append(args, "-known", badwr, "-runs", "2")...)
	assert.Equal(t, exitOK, code, errs)

	code, _, errs = srq(t, append(args, "-known", other)...)
	assert.Equal(t, exitDeviates, code, errs)
	assert.Contains(t, errs, "known finding FETCH-FIFO did not fail in this run")

	code, _, errs = srq(t, "run", "-cases", "5", "-seed", "3", "-known", badwr)
	assert.Equal(t, exitOK, code, errs)
	assert.Contains(t, errs, "known finding POST-BADWR did not fail in this run", "a conformant run says a known finding is gone")

	for text, want := range map[string]string{
		"NO-SUCH-RULE # why\n": `"NO-SUCH-RULE" is not a rule ID`,
		"POST-BADWR\n":         "rule POST-BADWR has no reason",
	} {
		code, _, errs = srq(t, append(args, "-known", file("bad.txt", text))...)
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, errs, want)
	}
	code, _, errs = srq(t, append(args, "-known", filepath.Join(dir, "missing.txt"))...)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "-known:")
}
