package model

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite reports/rules.md from the catalogue")

func TestCatalogueFileIsCurrent(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteCatalogue(&b))
	path := filepath.Join("..", CataloguePath)
	if *update {
		require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	}
	onDisk, err := os.ReadFile(path)
	require.NoError(t, err, "read %s (run go test ./model -run TestCatalogueFileIsCurrent -update)", path)
	assert.Equal(t, b.String(), string(onDisk), "%s is stale: run go test ./model -run TestCatalogueFileIsCurrent -update", path)
}

func TestRuleIDsAreUniqueAndWellFormed(t *testing.T) {
	seen := map[RuleID]bool{}
	id := regexp.MustCompile(`^[A-Z0-9]+(-[A-Z0-9]+)+$`)
	for _, r := range Rules() {
		assert.False(t, seen[r.ID], "duplicate rule %s", r.ID)
		seen[r.ID] = true
		assert.Regexp(t, id, r.ID)
		assert.NotEmpty(t, r.Statement, r.ID)
		assert.NotEmpty(t, r.Source, r.ID)
		assert.Contains(t, []RuleKind{KindDocumented, KindImplementation, KindConsensus}, r.Kind, r.ID)
		if r.Kind == KindImplementation {
			assert.NotEmpty(t, r.Fields, "implementation-defined rule %s names no profile field", r.ID)
		}
		for _, f := range r.Fields {
			assert.Contains(t, FieldNames(), f, "rule %s names unknown field", r.ID)
		}
	}
}

// TestEveryRuleTheModelCitesExists reads the model's source for rule IDs so
// that a renamed or mistyped rule cannot reach a report.
func TestEveryRuleTheModelCitesExists(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	lit := regexp.MustCompile(`"((?:POST|CREATE|DESTROY|QUERY|MODIFY|LIMIT|RESIZE|QP|SRQ|FETCH|RECV|SGE|UD|SLOT)-[A-Z0-9-]+)"`)
	cited := 0
	for _, f := range files {
		if filepath.Ext(f) != ".go" || regexp.MustCompile(`_test\.go$`).MatchString(f) {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range lit.FindAllStringSubmatch(string(src), -1) {
			_, ok := RuleByID(m[1])
			assert.True(t, ok, "%s cites unknown rule %s", f, m[1])
			cited++
		}
	}
	assert.Greater(t, cited, 40)
}

func TestSeedMapIsComplete(t *testing.T) {
	covered := map[RuleID]bool{}
	for _, s := range SeedMap() {
		assert.NotEmpty(t, s.Statement)
		assert.True(t, (len(s.Rules) > 0) != (s.OutOfScope != ""), "%q must map to rules or to an out-of-scope reason, not both or neither", s.Statement)
		for _, id := range s.Rules {
			_, ok := RuleByID(id.String())
			assert.True(t, ok, "seed statement %q maps to unknown rule %s", s.Statement, id)
			covered[id] = true
		}
		_, err := os.Stat(filepath.Join("..", "..", "shared", "seeds", s.Seed))
		if err == nil || !os.IsNotExist(err) {
			continue
		}
		assert.Contains(t, []string{seedManSRQ, seedManRecv, seedMojo, seedMojoQ, seedBook}, s.Seed)
	}
	for _, seed := range []string{seedManSRQ, seedManRecv, seedMojo, seedMojoQ, seedBook} {
		assert.True(t, slices.ContainsFunc(SeedMap(), func(s SeedStatement) bool { return s.Seed == seed }), "no statement from %s", seed)
	}
}

func TestEveryProfileFieldHasASource(t *testing.T) {
	for name, p := range Profiles() {
		assert.Equal(t, name, p.Name)
		assert.NotEmpty(t, p.Description, name)
		for _, f := range FieldNames() {
			n, ok := p.Notes[f]
			if assert.True(t, ok, "profile %s field %s has no note", name, f) {
				assert.NotEmpty(t, n.Source, "profile %s field %s", name, f)
			}
			assert.NotEqual(t, "?", p.Field(f))
			assert.NotEmpty(t, p.Field(f), "profile %s field %s is empty", name, f)
		}
		for f := range p.Notes {
			assert.Contains(t, FieldNames(), f, "profile %s has a note for unknown field %s", name, f)
		}
	}
}

func TestNamedProfilesDeclareTheirDeviations(t *testing.T) {
	assert.Empty(t, Documented().Deviations())
	rxe := RXE().Deviations()
	for _, f := range []string{"CheckOrder", "CapacityReport", "SlotFree", "LimitAtCreate", "ZeroLength", "OversizeRCStatus", "FlushInProgress"} {
		assert.Contains(t, rxe, f)
	}
	diff := func(a, b Profile) (out []string) {
		for _, f := range FieldNames() {
			if a.Field(f) != b.Field(f) {
				out = append(out, f)
			}
		}
		return out
	}
	assert.ElementsMatch(t, []string{"CapacityReport", "Capacity", "OversizeUDStatus", "OversizeUDQP", "LastWQE", "LastWQERepeat", "FlushInProgress"}, diff(RXE(), RXE61()))
	_, err := ProfileByName("nope")
	assert.ErrorContains(t, err, "unknown profile")
}

func TestExpandDecidesEveryOpenChoice(t *testing.T) {
	p := Documented()
	open := p.OpenFields()
	require.NotEmpty(t, open)
	all := p.Expand()
	want := 1
	for _, f := range open {
		want *= len(regexp.MustCompile(` \| `).Split(p.Field(f), -1))
	}
	assert.Len(t, all, want)
	for _, q := range all {
		assert.Empty(t, q.OpenFields())
	}
}

func TestDeparturesAreOnlyBehavioursOutsideTheDocumentedSet(t *testing.T) {
	assert.Empty(t, Documented().Departures())
	assert.ElementsMatch(t, []string{"LimitAtCreate", "ZeroLength", "KeyErrorStatus", "FlushInProgress", "PostRecvBadWR", "LastWQERepeat"}, RXE().Departures())
	assert.ElementsMatch(t, []string{"Capacity", "LimitAtCreate", "ZeroLength", "KeyErrorStatus", "LastWQE", "PostRecvBadWR"}, RXE61().Departures())
	assert.Contains(t, MLX5().Departures(), "BeforeRTR")
	assert.NotContains(t, MLX5().Departures(), "CheckOrder", "a documented option is a narrowing")
}

func TestEveryProfileFieldHasOneOwningRuleThatNamesIt(t *testing.T) {
	for _, f := range FieldNames() {
		owner, ok := FieldOwner[f]
		if !assert.True(t, ok, "field %s has no owning rule", f) {
			continue
		}
		r, ok := RuleByID(owner.String())
		if assert.True(t, ok, "field %s: owner %s is not a rule", f, owner) {
			assert.Contains(t, r.Fields, f, "field %s: its owner %s does not name it", f, owner)
		}
	}
	assert.Len(t, FieldOwner, len(FieldNames()), "an owner for a field the profile does not have")
}

// TestNamesAreTotal: every enum a device's value is converted to names a
// value past its list instead of panicking (a counterexample showing a
// wild event type or peer outcome once crashed the run).
func TestNamesAreTotal(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{QPState(200).String(), "QPState(200)"},
		{Opcode(200).String(), "Opcode(200)"},
		{EventType(200).String(), "EventType(200)"},
		{PeerStatus(200).String(), "PeerStatus(200)"},
		{WCOpcode(200).String(), "WCOpcode(200)"},
		{WCStatus(200).String(), "STATUS_200"},
		{Event{Type: 9, QP: 3}.String(), "EventType(9)(qp3)"},
		{WCOpcode(1).String(), "RECV_RDMA_WITH_IMM"},
		{EventType(5).String(), "QP_ACCESS_ERR"},
	} {
		if c.got != c.want {
			t.Errorf("String() = %q, want %q", c.got, c.want)
		}
	}
}
