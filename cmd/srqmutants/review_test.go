package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/mutants"
	"github.com/srqconform/srqconform/mutants/outcome"
)

// TestReviewComparesBlameWithAReviewersVerdicts: -review counts, over the
// caught runs, those on one rule, on the label, on the reviewer's primary
// (or a rule tied with it) and on rules the reviewer found broken; bad
// input is one line and exit 2.
func TestReviewComparesBlameWithAReviewersVerdicts(t *testing.T) {
	dir := t.TempDir()
	rep := sweepReport{Mutants: []result{
		{Mutant: mutants.Mutant{ID: "a", Label: []string{"POST-FULL"}}, Runs: []outcome.SeedRun{
			{Failing: []string{"POST-FULL"}}, {Failing: []string{"POST-SGE"}}, {},
		}},
		{Mutant: mutants.Mutant{ID: "b", Label: []string{"RECV-FIT"}}, Runs: []outcome.SeedRun{
			{Failing: []string{"RECV-FIT", "RECV-TOO-LARGE"}}, {Failing: []string{"RECV-COMPLETION"}},
		}},
	}}
	vs := []verdict{
		{ID: "a", Observable: true, Broken: []string{"POST-FULL", "POST-RETURN"}, Primary: "POST-RETURN", PrimaryTie: []string{"POST-RETURN", "POST-FULL"}},
		{ID: "b", Observable: true, Broken: []string{"RECV-FIT", "RECV-TOO-LARGE"}, Primary: "RECV-FIT"},
	}
	write := func(name string, v any) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	repPath, vPath := write("report.json", rep), write("verdicts.json", vs)
	f, err := review(repPath, vPath)
	require.NoError(t, err)
	assert.Equal(t, reviewFigures{Mutants: 2, Runs: 4, LabelMeetsPrimary: 2, OneRule: 3, OneRuleLabel: 1, OneRulePrimary: 1,
		OneRuleBroken: 1, AllBroken: 2, ReviewerSeveralBroken: 2, ReviewerTie: 1}, f)

	var stdout, stderr bytes.Buffer
	assert.Equal(t, 0, run(context.Background(), []string{"-review", vPath, "-report", repPath}, &stdout, &stderr), "stderr %q", stderr.String())
	assert.Contains(t, stdout.String(), "caught runs on one rule: 3 (75.0%)")

	bad := write("bad.json", []verdict{{ID: "nope"}})
	for _, args := range [][]string{
		{"-review", vPath}, {"-review", bad, "-report", repPath}, {"-review", repPath + ".missing", "-report", repPath},
	} {
		stdout.Reset()
		stderr.Reset()
		assert.Equal(t, 2, run(context.Background(), args, &stdout, &stderr), "srqmutants %v", args)
		assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "srqmutants %v: %q", args, stderr.String())
	}
}
