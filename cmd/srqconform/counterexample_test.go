package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestACounterexampleReadsAsADriverAuthorWouldWant checks the text of a
// counterexample (issue 20, item 12): the header says where the trace
// departs and counts the evidence steps apart; bad_wr is named as a WR on
// both sides; the evidence probes' wr_ids are in hex; the other runs are
// one a line and bounded; the replay file names its enumerations.
func TestACounterexampleReadsAsADriverAuthorWouldWant(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := srq(t, "run", "-deviations", "badwr-off-by-one", "-seed", "3", "-cases", "0", "-replay-dir", dir)
	require.Equal(t, exitDeviates, code, errs)
	head := "COUNTEREXAMPLE #1: rule POST-BADWR, scenario: a list longer than the free slots, departs at step 2 of 2 checked, then 9 evidence steps (not checked)\n"
	assert.Contains(t, out, head, "before: \"11 steps\"")
	assert.Contains(t, out, "driver did:   result = ENOMEM, bad_wr=5 (wr6)\n", "before: bad_wr=5, an index beside wr ids")
	assert.Contains(t, out, "[wr0xe0df_ffff_ffff_ffff{64@key0}]", "before: wr16203951459279044607")
	i := strings.Index(out, head)
	require.GreaterOrEqual(t, i, 0)
	lines := strings.Split(out[i+len(head):], "\n")
	assert.Regexp(t, `^  the same rule also failed in \d+ other runs:$`, lines[0])
	for _, l := range lines[1:6] {
		assert.True(t, strings.HasPrefix(l, "    scenario: "), "one other run a line: %q", l)
	}
	assert.Regexp(t, `^    and \d+ more \(the JSON report lists them all\)$`, lines[6])
	for _, l := range strings.Split(out, "\n") {
		assert.Less(t, len(l), 400, "a line of %d characters: %.120s...", len(l), l)
	}

	code, out, errs = srq(t, "run", "-deviations", "slot-leak", "-rules", "QUERY-ATTR", "-seed", "7", "-cases", "300", "-replay-dir", dir)
	require.Equal(t, exitDeviates, code, errs)
	assert.Contains(t, out, "  this trace alone fits as well: POST-FULL broken; it cannot tell them apart, and the diagnosis names SLOT-FREE as the more specific (model.Specificity)\n",
		"before: \"also consistent with: POST-FULL\"")
	files, err := filepath.Glob(filepath.Join(dir, "*-SLOT-FREE.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	assert.Contains(t, string(b), `"State": "INIT"`, "enumerations by name, not \"State\": 1")
	assert.Contains(t, string(b), `"Type": "RC"`)
	assert.NotRegexp(t, `"(State|Type|Opcode)": \d`, string(b))
	code, _, errs = srq(t, "replay", files[0])
	assert.Equal(t, exitDeviates, code, errs)
}
