package corpus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/srqconform/srqconform/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheCorpusLoads(t *testing.T) {
	ix, err := Load(".")
	require.NoError(t, err)
	kernel, provider := 0, 0
	for _, e := range ix.Entries {
		switch e.Kind {
		case "kernel":
			kernel++
			assert.NotEmpty(t, e.Suites(), "%s has no kernel to run on", e.ID)
			assert.Contains(t, e.ID, strings.Trim(strings.Fields(e.Upstream)[0], ","), "%s: the id names the upstream commit", e.ID)
		case "provider":
			provider++
			assert.NotEmpty(t, e.Suites(), "%s has no suite whose rdma-core it patches", e.ID)
		}
	}
	assert.GreaterOrEqual(t, kernel+provider, 8, "the corpus holds at least 8 bugs")
}

// writeIndex writes an index of one entry and the patch it names.
func writeIndex(t *testing.T, entry string) string {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.patch"), []byte("--- a/x.c\n+++ b/x.c\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "index.json"), []byte(`{"format": "srqconform-corpus/1", "entries": [`+entry+`]}`), 0o644))
	return dir
}

func TestLoadRefusesABadEntry(t *testing.T) {
	good := `{"id": "a", "kind": "kernel", "provider": "rxe", "upstream": "123", "patches": {"trixie": "x.patch"}, "expected": "FETCH-ONCE", "mode": "sequential"}`
	_, err := Load(writeIndex(t, good))
	require.NoError(t, err)
	for bad, want := range map[string]string{
		strings.Replace(good, "FETCH-ONCE", "NO-SUCH-RULE", 1):  `expected "NO-SUCH-RULE" is neither a rule`,
		strings.Replace(good, "x.patch", "missing.patch", 1):    "patch for trixie",
		strings.Replace(good, `"kernel"`, `"firmware"`, 1):      `kind "firmware"`,
		strings.Replace(good, "sequential", "parallel", 1):      `mode "parallel"`,
		strings.Replace(good, `{"trixie": "x.patch"}`, "{}", 1): "no patches and no reason to skip",
		good + ", " + good: `id "a" given twice`,
	} {
		_, err := Load(writeIndex(t, bad))
		if assert.Error(t, err, bad) {
			assert.Contains(t, err.Error(), want)
		}
	}
	_, err = Load(t.TempDir())
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestWriteTableCountsCaughtEntriesAndExpectedBlame(t *testing.T) {
	results := []Result{
		{Entry: "a", Suite: "trixie", Kernel: "6.12.118", Mode: "sequential", Caught: true, Blamed: "QP-LAST-WQE", Expected: "QP-LAST-WQE", Wall: 90 * time.Second},
		{Entry: "a", Suite: "sid", Mode: "sequential", Caught: true, Blamed: "FETCH-ONCE", Failing: []model.RuleID{model.RuleFetchOnce, model.RuleQPLastWQE}, Expected: "QP-LAST-WQE", Wall: time.Minute},
		{Entry: "b", Suite: "trixie", Mode: "sequential", Caught: true, Blamed: KernelCrash, Expected: KernelCrash, Detail: "kernel crash in x | y"},
		{Entry: "c", Suite: "trixie", Mode: "concurrent", Expected: "FETCH-ONCE", Detail: "vm exit 2: boom"},
		{Entry: "d", Mode: "sequential", Expected: "POST-RETURN", Skip: "needs -rdma-core-patch"},
		{Entry: "e", Suite: "sid", Mode: "sequential", Expected: "RECV-COMPLETION", Inconclusive: true, Detail: "outran -timeout 30m0s", Wall: 45 * time.Minute},
	}
	var b strings.Builder
	require.NoError(t, WriteTable(&b, results))
	out := b.String()
	assert.Contains(t, out, "| a | trixie (6.12.118) | yes | QP-LAST-WQE | QP-LAST-WQE | yes | sequential | 1m30s |")
	assert.Contains(t, out, "failing FETCH-ONCE, QP-LAST-WQE")
	assert.Contains(t, out, `kernel crash in x \| y`, "a | in a note is escaped")
	assert.Contains(t, out, "| d |  | skipped | - | POST-RETURN | - | sequential | - | needs -rdma-core-patch |")
	assert.Contains(t, out, "| e | sid | inconclusive | - | RECV-COMPLETION | - | sequential | 45m0s | outran -timeout 30m0s |")
	assert.Contains(t, out, "4 runs of 4 entries: 2 entries caught on every kernel they ran on; 2 of 4 runs blamed on the expected rule.",
		"an inconclusive run is neither caught nor missed")
	assert.Contains(t, out, "1 more runs inconclusive")
}

func TestTheREADMEHoldsTheIndexAsGenerated(t *testing.T) {
	ix, err := Load(".")
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, WriteIndex(&b, ix))
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	assert.Contains(t, string(readme), b.String(), "corpus/README.md: regenerate its table with srqconform corpus -list")
}
