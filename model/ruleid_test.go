package model

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAMisspelledRuleIDDoesNotCompile builds the packages that name rules
// with one rule ID misspelled (go build -overlay: the file in the tree is
// not touched) and wants the compiler to refuse it: a string literal does
// not convert to RuleID, and a misspelled constant is undefined. The
// unchanged packages must build, so a RuleID that took any string would
// fail this test.
func TestAMisspelledRuleIDDoesNotCompile(t *testing.T) {
	for _, c := range []struct {
		dir, file, from, to, want string
	}{
		{"../conformance", "scenarios.go", "model.RuleLimitOnce", `"LIMIT-0NCE"`,
			`cannot use "LIMIT-0NCE" (untyped string constant) as model.RuleID value`},
		{"../conformance", "scenarios.go", "model.RuleLimitOnce", "model.RuleLimit0nce",
			"undefined: model.RuleLimit0nce"},
		{"../concurrent", "check.go", "var workloadRules = model.WorkloadRules", `var workloadRules = []model.RuleID{model.RuleFetchOnce, "FETCH-FIF0"}`,
			`cannot use "FETCH-FIF0" (untyped string constant) as model.RuleID value`},
		{"../concurrent", "check.go", "var workloadRules = model.WorkloadRules", `var workloadRules = []model.RuleID{model.RuleFetchOnce, model.RuleFetchFIFO}`,
			""}, // spelled right, it builds
	} {
		out, err := buildWith(t, c.dir, c.file, c.from, c.to)
		if c.want == "" {
			require.NoError(t, err, "go build of %s with %s: %s", c.dir, c.to, out)
			continue
		}
		require.Error(t, err, "go build of %s with %s in %s succeeded; want it refused", c.dir, c.to, c.file)
		assert.Contains(t, out, c.want, "go build of %s with %s", c.dir, c.to)
	}
}

// buildWith runs go build in dir with the first from in file replaced by
// to, and returns what it printed.
func buildWith(t *testing.T, dir, file, from, to string) (string, error) {
	t.Helper()
	path, err := filepath.Abs(filepath.Join(dir, file))
	require.NoError(t, err)
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(src), from, "%s no longer holds what the test misspells", path)
	tmp := filepath.Join(t.TempDir(), file)
	require.NoError(t, os.WriteFile(tmp, []byte(strings.Replace(string(src), from, to, 1)), 0o644))
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {path: tmp}})
	require.NoError(t, err)
	ov := filepath.Join(t.TempDir(), "overlay.json")
	require.NoError(t, os.WriteFile(ov, overlay, 0o644))
	cmd := exec.Command("go", "build", "-overlay", ov, ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestTheEmulatorSharesNoCodeWithTheModel: the emulator and the faulty
// drivers label their code with rule names as strings; they must not
// import the model, whose rules they are checked against.
func TestTheEmulatorSharesNoCodeWithTheModel(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../drivers/emu", "../drivers/faulty").CombinedOutput()
	require.NoError(t, err, "go list -deps: %s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/srqconform/srqconform/drivers/emu")
	assert.False(t, slices.Contains(deps, "github.com/srqconform/srqconform/model"), "drivers/emu or drivers/faulty imports the model")
}

func TestRuleIDReadsAndWritesAsItsName(t *testing.T) {
	for _, r := range catalogue {
		id, err := ParseRuleID(r.ID.String())
		require.NoError(t, err)
		assert.Equal(t, r.ID, id)
		assert.True(t, id.Valid(), "%s", id)
	}
	b, err := json.Marshal(map[string]any{"rule": RulePostOrder, "none": RuleID(0), "set": []RuleID{RuleUDGRH, RuleFetchFIFO}, "by": map[RuleID]int{RuleSlotFree: 1}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"rule":"POST-ORDER","none":"","set":["UD-GRH","FETCH-FIFO"],"by":{"SLOT-FREE":1}}`, string(b))
	var back struct {
		Rule RuleID   `json:"rule,omitempty"`
		Set  []RuleID `json:"set"`
	}
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, RulePostOrder, back.Rule)
	assert.Equal(t, []RuleID{RuleUDGRH, RuleFetchFIFO}, back.Set)
	_, err = ParseRuleID("LIMIT-0NCE")
	assert.ErrorContains(t, err, `model.ParseRuleID("LIMIT-0NCE")`)
	// A name from a file that the catalogue lacks survives a round trip
	// but is not Valid.
	var stale RuleID
	require.NoError(t, stale.UnmarshalText([]byte("OLD-RULE")))
	assert.False(t, stale.Valid())
	assert.Equal(t, "OLD-RULE", stale.String())
	b, err = stale.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, "OLD-RULE", string(b))
}

// TestRuleIDsOrderAsTheirNames: the constants are numbered in the order
// of their names, so sorting RuleIDs sorts as sorting the names did.
func TestRuleIDsOrderAsTheirNames(t *testing.T) {
	var ids []RuleID
	for _, r := range catalogue {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	assert.Len(t, ruleNames, len(catalogue)+1, "a RuleID for every rule of the catalogue and no other")
	names := RuleNames(ids)
	assert.True(t, slices.IsSorted(names), "%v", names)
	assert.Len(t, slices.Compact(names), len(catalogue), "every rule has its own ID")
}

// TestFactsAreConsistent: every profile field has one owner, which names
// it among its Fields; ranks are 1, 2, ... with no gaps or repeats.
func TestFactsAreConsistent(t *testing.T) {
	owners := map[string]int{}
	var ranks []int
	for _, r := range catalogue {
		for _, f := range r.Owns {
			owners[f]++
			assert.Contains(t, r.Fields, f, "%s owns %s but does not name it among its profile fields", r.ID, f)
		}
		if r.Rank > 0 {
			ranks = append(ranks, r.Rank)
		}
	}
	for f, n := range owners {
		assert.Equal(t, 1, n, "profile field %s has %d owners", f, n)
	}
	slices.Sort(ranks)
	for i, k := range ranks {
		assert.Equal(t, i+1, k, "ranks %v", ranks)
	}
	assert.Len(t, Specificity, len(ranks))
}
