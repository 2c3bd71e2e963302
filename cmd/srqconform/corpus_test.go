package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/corpus"
	"github.com/srqconform/srqconform/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCorpusReadsEveryKindOfVerdict(t *testing.T) {
	suite := `{"driver": "cgo", "profile": "rxe", "device": {"Kernel": "6.12.118+deb13-amd64"},
		"rules": [{"rule": {"id": "QP-LAST-WQE"}, "status": "fail"}, {"rule": {"id": "CREATE-ATTR"}, "status": "fail"}],
		"failures": [{"rule": "QP-LAST-WQE"}, {"rule": "CREATE-ATTR"}, {"rule": "QP-LAST-WQE"}]}`
	var r corpus.Result
	readVerdict(&r, []byte(suite), "sequential", nil)
	assert.True(t, r.Caught)
	assert.Equal(t, "QP-LAST-WQE", r.Blamed, "the first counterexample's rule")
	assert.Equal(t, []model.RuleID{model.RuleQPLastWQE, model.RuleCreateAttr}, r.Failing)
	assert.Equal(t, "6.12.118+deb13-amd64", r.Kernel)

	r = corpus.Result{}
	readVerdict(&r, []byte(suite), "sequential", conformance.Known{model.RuleQPLastWQE: "intermittent on 6.12"})
	assert.Equal(t, "CREATE-ATTR", r.Blamed, "a known rule is not the blame")

	r = corpus.Result{}
	readVerdict(&r, []byte(suite), "sequential", conformance.Known{model.RuleQPLastWQE: "x", model.RuleCreateAttr: "y"})
	assert.False(t, r.Caught, "only known rules failed")

	crash := `{"finding": {"kind": "kernel crash", "headline": "BUG: kernel NULL pointer dereference", "function": "rxe_srq_chk_attr", "verb": "modify_srq"}, "kernel": "7.2.13+deb14-amd64"}`
	r = corpus.Result{}
	readVerdict(&r, []byte(crash), "sequential", nil)
	assert.True(t, r.Caught)
	assert.Equal(t, corpus.KernelCrash, r.Blamed)
	assert.Contains(t, r.Detail, "during modify_srq")

	conc := `{"profile": "rxe", "kernel": "6.12", "runs": [{"seed": 1, "result": {"verdict": "linearizable"}}, {"seed": 2, "result": {"verdict": "violation", "rule": "FETCH-ONCE"}}]}`
	r = corpus.Result{}
	readVerdict(&r, []byte(conc), "concurrent", nil)
	assert.True(t, r.Caught)
	assert.Equal(t, "FETCH-ONCE", r.Blamed)

	r = corpus.Result{}
	readVerdict(&r, []byte(`{"profile": "rxe", "runs": [{"seed": 1, "result": {"verdict": "linearizable"}}]}`), "concurrent", nil)
	assert.False(t, r.Caught)
}

// TestCorpusRunsAnInconclusiveRunAgainWithTwiceTheBound: a run that
// outran its bound with no kernel report is made once more with twice
// the bound; a verdict then is the result, another timeout stays
// inconclusive (never a hang).
func TestCorpusRunsAnInconclusiveRunAgainWithTwiceTheBound(t *testing.T) {
	for _, tc := range []struct {
		name      string
		outcomes  []corpus.Result // by attempt
		wantRuns  []time.Duration
		wantFinal corpus.Result
	}{
		{"a verdict at once", []corpus.Result{{Caught: true, Blamed: "FETCH-ONCE", Wall: time.Minute}},
			[]time.Duration{15 * time.Minute}, corpus.Result{Caught: true, Blamed: "FETCH-ONCE", Wall: time.Minute}},
		{"a verdict the second time", []corpus.Result{{Inconclusive: true, Wall: 15 * time.Minute}, {Caught: true, Blamed: "RECV-BAD-KEY", Wall: 20 * time.Minute}},
			[]time.Duration{15 * time.Minute, 30 * time.Minute}, corpus.Result{Caught: true, Blamed: "RECV-BAD-KEY", Wall: 35 * time.Minute}},
		{"inconclusive twice", []corpus.Result{{Inconclusive: true, Wall: 15 * time.Minute}, {Inconclusive: true, Wall: 30 * time.Minute}},
			[]time.Duration{15 * time.Minute, 30 * time.Minute}, corpus.Result{Inconclusive: true, Wall: 45 * time.Minute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var runs []time.Duration
			told := 0
			got := retryInconclusive(15*time.Minute, func(d time.Duration) corpus.Result {
				runs = append(runs, d)
				return tc.outcomes[len(runs)-1]
			}, func(corpus.Result, time.Duration) { told++ })
			assert.Equal(t, tc.wantRuns, runs)
			assert.Equal(t, tc.wantFinal, got)
			assert.Equal(t, len(tc.wantRuns)-1, told, "each retry is told")
		})
	}
}

// TestCorpusReadsAnUndecidedBlame: a concurrent violation whose blame
// was undecided and names a known rule is not a catch.
func TestCorpusReadsAnUndecidedBlame(t *testing.T) {
	conc := `{"profile": "rxe", "runs": [{"seed": 2, "result": {"verdict": "violation", "rule": "LIMIT-FIRE", "also": ["QP-LAST-WQE"], "blame_undecided": true}}]}`
	var r corpus.Result
	readVerdict(&r, []byte(conc), "concurrent", conformance.Known{model.RuleQPLastWQE: "known"})
	assert.False(t, r.Caught, "an undecided blame that may be the known rule")
	r = corpus.Result{}
	readVerdict(&r, []byte(conc), "concurrent", nil)
	assert.True(t, r.Caught)
	assert.Equal(t, "LIMIT-FIRE", r.Blamed)
}

// TestCorpusRunsAKernelWithoutAKnownFile: -known-dir without a file for
// the entry's kernel holds the run to no known findings; it is no error
// (bookworm has none: its rxe-6.1 profile expects what 6.1 does).
func TestCorpusRunsAKernelWithoutAKnownFile(t *testing.T) {
	dir := t.TempDir()
	f := &corpusFlags{knownDir: dir}
	p := corpusRun{entry: corpus.Entry{ID: "x", Provider: "rxe", Expected: "QP-LAST-WQE"}, suite: "bookworm"}
	k, err := f.known(p, t.TempDir())
	assert.NoError(t, err)
	assert.Nil(t, k)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "rxe-trixie.txt"), []byte("QP-LAST-WQE # expected, so dropped\nCREATE-LIMIT # kept\n"), 0o644))
	p.suite = "trixie"
	k, err = f.known(p, t.TempDir())
	assert.NoError(t, err)
	assert.Equal(t, conformance.Known{model.RuleCreateLimit: "kept"}, k)
}

// TestCorpusStatusTellsAMissFromNoVerdict: a run not caught exits 1; an
// inconclusive run is no miss, but no pass either: exit 3.
func TestCorpusStatusTellsAMissFromNoVerdict(t *testing.T) {
	caught := corpus.Result{Caught: true}
	missed := corpus.Result{}
	inconclusive := corpus.Result{Inconclusive: true}
	skipped := corpus.Result{Skip: "no patch"}
	for _, tc := range []struct {
		results []corpus.Result
		want    int
	}{
		{[]corpus.Result{caught, skipped}, exitOK},
		{[]corpus.Result{caught, inconclusive}, exitHarness},
		{[]corpus.Result{missed, inconclusive}, exitDeviates},
	} {
		assert.Equal(t, tc.want, corpusStatus(tc.results, io.Discard), "%+v", tc.results)
	}
}

// TestACorpusRaceNotShownRunsAgainWithTwiceTheHistories: a concurrent
// entry whose histories all linearized runs once more with twice the
// histories on new seeds, and that run stands; a catch, a harness
// failure or a sequential entry does not.
func TestACorpusRaceNotShownRunsAgainWithTwiceTheHistories(t *testing.T) {
	type call struct {
		runs int
		seed uint64
	}
	for _, tc := range []struct {
		name      string
		mode      string
		outcomes  []corpus.Result
		wantCalls []call
		wantFinal corpus.Result
	}{
		{"caught at once", "concurrent", []corpus.Result{{Caught: true, Blamed: "FETCH-ONCE", Wall: time.Minute}},
			[]call{{10, 1}}, corpus.Result{Caught: true, Blamed: "FETCH-ONCE", Wall: time.Minute}},
		{"caught on the second run", "concurrent", []corpus.Result{{Wall: time.Minute}, {Caught: true, Blamed: "FETCH-ONCE", Wall: 2 * time.Minute}},
			[]call{{10, 1}, {20, 11}}, corpus.Result{Caught: true, Blamed: "FETCH-ONCE", Wall: 3 * time.Minute,
				Detail: "after a first run of 10 histories that showed nothing, on 20 more"}},
		{"missed twice", "concurrent", []corpus.Result{{Wall: time.Minute}, {Wall: 2 * time.Minute}},
			[]call{{10, 1}, {20, 11}}, corpus.Result{Wall: 3 * time.Minute, Detail: "after a first run of 10 histories that showed nothing, on 20 more"}},
		{"a harness failure", "concurrent", []corpus.Result{{Detail: "vm exit 2: no qemu"}},
			[]call{{10, 1}}, corpus.Result{Detail: "vm exit 2: no qemu"}},
		{"sequential, missed", "sequential", []corpus.Result{{Wall: time.Minute}},
			[]call{{10, 1}}, corpus.Result{Wall: time.Minute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls []call
			told := 0
			got := raceAgain(tc.mode, 10, 1, func(runs int, seed uint64) corpus.Result {
				calls = append(calls, call{runs, seed})
				return tc.outcomes[len(calls)-1]
			}, func(corpus.Result, int) { told++ })
			assert.Equal(t, tc.wantCalls, calls)
			assert.Equal(t, tc.wantFinal, got)
			assert.Equal(t, len(tc.wantCalls)-1, told, "the second run is told")
		})
	}
}
