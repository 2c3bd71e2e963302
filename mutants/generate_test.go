package mutants

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(path, src string) error { return os.WriteFile(path, []byte(src), 0o644) }

// byAfter indexes compiling mutants by their After snippet.
func byAfter(s *Set) map[string]Mutant {
	out := map[string]Mutant{}
	for _, m := range s.Mutants {
		if m.NotCompiling == "" {
			out[m.After] = m
		}
	}
	return out
}

func TestGenerateMakesEachOperatorWhereItApplies(t *testing.T) {
	s, err := Generate("testdata/fixture")
	require.NoError(t, err)
	got := byAfter(s)
	want := map[string]string{
		"return q.prod-q.cons > max":    OpBoundary,
		"if !(q.full(max)) {":           OpNegate,
		"return (q.prod-q.cons >= max)": "",
		"q.prod--":                      "",
		"":                              OpDrop,
		"return max >= q.prod-q.cons":   OpSwap,
		"func (q *queue) full(max uint32) bool { return false;": OpEarlyReturn,
		"func (q *queue) post(max uint32) error { return nil;":  OpEarlyReturn,
		"q.fired = false": OpConstant,
		"if q.prod-q.cons <= q.limit && !q.cfg.has(\"limit-never\") {":      OpBoundary,
		"if !(q.prod-q.cons < q.limit && !q.cfg.has(\"limit-never\")) {":    OpNegate,
		"if q.prod-(q.cons + 1) < q.limit && !q.cfg.has(\"limit-never\") {": "",
		"if q.cons - q.prod < q.limit && !q.cfg.has(\"limit-never\") {":     OpSwap,
	}
	for after, op := range want {
		m, ok := got[after]
		if op == "" {
			assert.False(t, ok, "a mutant %q (%s) was made; it should not be", after, m.Operator)
			continue
		}
		if assert.True(t, ok, "no mutant %q", after) {
			assert.Equal(t, op, m.Operator, "mutant %q", after)
		}
	}
	for _, m := range s.Mutants {
		assert.NotContains(t, m.Func, "skipped", "%s: a function labelled none was mutated", m.ID)
		assert.NotContains(t, m.Func, "has", "%s: the deviation switch was mutated", m.ID)
		assert.False(t, strings.Contains(m.Before, "one-over") && m.Line < 25, "%s: code only a deviation runs was mutated: %s", m.ID, m.After)
		assert.NotContains(t, m.After, "post: full at", "%s: an error message was mutated", m.ID)
		switch {
		case strings.Contains(m.Before, "q.limit") || strings.Contains(m.Before, "q.fired"):
			assert.Equal(t, []string{"LIMIT-FIRE"}, m.Label, "%s: %s", m.ID, m.Before)
		case m.Operator == OpEarlyReturn && m.Func == "queue.post":
			// The return skips the statement annotated LIMIT-FIRE too.
			assert.Equal(t, []string{"POST-FULL", "LIMIT-FIRE"}, m.Label, "%s: %s", m.ID, m.Before)
		default:
			assert.Equal(t, []string{"POST-FULL"}, m.Label, "%s: %s", m.ID, m.Before)
		}
	}
}

func TestGenerateIsDeterministicWithUniqueIDs(t *testing.T) {
	a, err := Generate("testdata/fixture")
	require.NoError(t, err)
	b, err := Generate("testdata/fixture")
	require.NoError(t, err)
	require.Equal(t, a.Mutants, b.Mutants)
	ids := map[string]bool{}
	for _, m := range a.Mutants {
		assert.False(t, ids[m.ID], "id %s twice", m.ID)
		ids[m.ID] = true
		src := string(a.Source(m))
		assert.NotEqual(t, string(a.Sources[m.File]), src, "%s changes nothing", m.ID)
	}
}

// TestGenerateOnTheEmulator: the emulator yields enough compiling mutants
// for a sweep to find 300 that are not equivalent, each labelled with
// rules of the catalogue, with every operator represented.
func TestGenerateOnTheEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks every mutant of drivers/emu")
	}
	s, err := Generate("../drivers/emu")
	require.NoError(t, err)
	ops := map[string]int{}
	compiling := 0
	for _, m := range s.Mutants {
		require.NoError(t, CheckLabel(m.Label), "%s", m.ID)
		assert.NotContains(t, m.Label, NoRule, "%s", m.ID)
		assert.NotContains(t, []string{"deviation.go", "race.go"}, m.File, "%s: only deviation code there", m.ID)
		if m.NotCompiling == "" {
			compiling++
			ops[m.Operator]++
		}
	}
	assert.GreaterOrEqual(t, compiling, 400, "compiling mutants")
	for _, op := range []string{OpBoundary, OpNegate, OpOffByOne, OpConstant, OpDrop, OpSwap, OpEarlyReturn} {
		assert.Positive(t, ops[op], "operator %s made no compiling mutant", op)
	}
	assert.True(t, slices.ContainsFunc(s.Mutants, func(m Mutant) bool { return m.NotCompiling != "" }),
		"no mutant failed to type-check: the check may not run")
}
