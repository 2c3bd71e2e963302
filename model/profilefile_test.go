package model

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuiltInProfilesRoundTripThroughTheFileFormat(t *testing.T) {
	profiles := Profiles()
	profiles["open"] = Open()
	for name, p := range profiles {
		for _, format := range ProfileFileFormats {
			b, err := MarshalProfile(p, format)
			require.NoError(t, err, "MarshalProfile(%s, %s)", name, format)
			got, err := ParseProfile(name+"."+format, b)
			require.NoError(t, err, "ParseProfile(%s.%s)", name, format)
			assert.True(t, reflect.DeepEqual(p, got), "profile %s read back from %s differs:\n%s", name, format, b)
			// Without the extension the content decides the format.
			got, err = ParseProfile(name, b)
			require.NoError(t, err, "ParseProfile(%s) of %s", name, format)
			assert.True(t, reflect.DeepEqual(p, got), "profile %s read back from %s without extension differs", name, format)
		}
	}
}

func TestProfileFileIsReadable(t *testing.T) {
	b, err := MarshalProfile(MLX5(), "yaml")
	require.NoError(t, err)
	text := string(b)
	assert.True(t, strings.HasPrefix(text, "format: "+ProfileFormat+"\nname: mlx5\n"), text)
	assert.Contains(t, text, "\n  CheckOrder: num_sge checked first (EINVAL)\n")
	assert.Contains(t, text, "\n  LimitAfterFire:\n    - reads 0\n    - keeps its value (disarmed)\n")
	assert.Contains(t, text, "\n  OversizeRCStatus: LOC_LEN_ERR\n")
	// Fields come in declaration order.
	assert.Less(t, strings.Index(text, "  PostErrno:"), strings.Index(text, "  FlushInProgress:"))
	b, err = MarshalProfile(Documented(), "json")
	require.NoError(t, err)
	assert.Contains(t, string(b), `"OversizeRCStatus": "any error status"`)
	assert.Contains(t, string(b), `"CheckOrder": [`)
	assert.NotContains(t, string(b), `\u003e`, "sources keep their >")
	_, err = MarshalProfile(RXE(), "toml")
	assert.ErrorContains(t, err, `unknown profile file format "toml"`)
}

// TestEveryValueIsListed parses profile.go: every constant of a field's
// value type must be a value the file format knows.
func TestEveryValueIsListed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "profile.go", nil, 0)
	require.NoError(t, err)
	byType := map[string][]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			id, ok := vs.Type.(*ast.Ident)
			if !ok {
				continue
			}
			for _, v := range vs.Values {
				lit := v.(*ast.BasicLit)
				text, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				byType[id.Name] = append(byType[id.Name], text)
			}
		}
	}
	require.NotEmpty(t, byType)
	pt := reflect.TypeFor[Profile]()
	for _, name := range FieldNames() {
		ft, _ := pt.FieldByName(name)
		k, ok := fieldKinds[ft.Type]
		require.True(t, ok, "field %s of type %s has no fieldKind", name, ft.Type)
		if ft.Type == reflect.TypeFor[StatusSet]() {
			continue
		}
		elem := ft.Type.Field(0).Type.Elem().Name() // Choice[T].vals is []T
		assert.ElementsMatch(t, byType[elem], k.values, "values of %s (field %s)", elem, name)
	}
}

func TestOpenAllowsEveryValue(t *testing.T) {
	p := Open()
	assert.Empty(t, p.Departures(), "every documented value is allowed")
	for _, name := range FieldNames() {
		assert.Equal(t, OpenNote, p.Notes[name].Source, name)
		if name == "OversizeRCStatus" || name == "OversizeUDStatus" || name == "KeyErrorStatus" {
			assert.Equal(t, []string{anyErrorText}, p.FieldTexts(name))
			continue
		}
		assert.ElementsMatch(t, FieldValues(name), p.FieldTexts(name), name)
		assert.Contains(t, p.OpenFields(), name)
		// The documented value comes first, but for NegativeSGE.
		if name != "NegativeSGE" {
			assert.Equal(t, Documented().values(name)[0], p.FieldTexts(name)[0], name)
		}
	}
	assert.Equal(t, Accepted, p.NegativeSGE.Get(), "the suite must not post a negative num_sge during inference")
	assert.Nil(t, FieldValues("Name"))
	assert.Nil(t, FieldValues("Nope"))
	assert.Contains(t, FieldValues("KeyErrorStatus"), "LOC_PROT_ERR")
}

func TestSetField(t *testing.T) {
	p := Documented()
	require.NoError(t, p.SetField("Query", []string{"unsupported (EOPNOTSUPP)", "reports the created max_wr"}))
	assert.Equal(t, Either(QueryEOPNOTSUPP, QuerySame), p.Query)
	require.NoError(t, p.SetField("KeyErrorStatus", []string{"LOC_QP_OP_ERR", "REM_INV_REQ_ERR"}))
	assert.Equal(t, Statuses(WCLocQPOpErr, WCRemInvReq), p.KeyErrorStatus)
	require.NoError(t, p.SetField("KeyErrorStatus", []string{"STATUS_3"}))
	assert.Equal(t, Statuses(3), p.KeyErrorStatus)
	require.NoError(t, p.SetField("KeyErrorStatus", []string{anyErrorText}))
	assert.Equal(t, AnyError, p.KeyErrorStatus)
	for _, tc := range []struct {
		field string
		vals  []string
		msg   string
	}{
		{"Nope", []string{"x"}, `unknown field "Nope"`},
		{"Notes", []string{"x"}, `unknown field "Notes"`},
		{"Query", nil, "field Query: empty list"},
		{"Query", []string{"sometimes"}, `field Query: unknown value "sometimes": want one or a list of "reports the created max_wr"`},
		{"Query", []string{"reports the created max_wr", "reports the created max_wr"}, "listed twice"},
		{"KeyErrorStatus", []string{"SUCCESS"}, `field KeyErrorStatus: unknown value "SUCCESS": want "any error status", or one or a list of "LOC_LEN_ERR"`},
	} {
		q := Documented()
		assert.ErrorContains(t, q.SetField(tc.field, tc.vals), tc.msg, "%s %q", tc.field, tc.vals)
		assert.True(t, reflect.DeepEqual(Documented(), q), "a failed SetField leaves the profile as it was")
	}
}

func TestBadProfileFilesGetOneLineNamingTheFileAndField(t *testing.T) {
	good, err := MarshalProfile(RXE(), "yaml")
	require.NoError(t, err)
	goodJSON, err := MarshalProfile(RXE(), "json")
	require.NoError(t, err)
	edit := func(from, to string) string {
		require.Contains(t, string(good), from)
		return strings.Replace(string(good), from, to, 1)
	}
	for _, tc := range []struct {
		name, data, msg string
	}{
		{"unknown-field.yaml", edit("  PostErrno: positive errno\n", "  PostErrno: positive errno\n  PostErno: positive errno\n"), `unknown field "PostErno"`},
		{"unknown-note.yaml", edit("notes:\n", "notes:\n  Bogus:\n    source: x\n"), `unknown field "Bogus"`},
		{"unknown-value.yaml", edit("  SlotFree: at fetch\n", "  SlotFree: at polling\n"), `field SlotFree: unknown value "at polling"`},
		{"unknown-status.yaml", edit("  OversizeRCStatus: LOC_QP_OP_ERR\n", "  OversizeRCStatus: [LOC_QP_OP_ERR, LOC_OOPS]\n"), `field OversizeRCStatus: unknown value "LOC_OOPS"`},
		{"empty-list.yaml", edit("  SlotFree: at fetch\n", "  SlotFree: []\n"), "field SlotFree: empty list"},
		{"null.yaml", edit("  SlotFree: at fetch\n", "  SlotFree:\n"), "field SlotFree: value is empty"},
		{"mapping.yaml", edit("  SlotFree: at fetch\n", "  SlotFree: {a: b}\n"), "field SlotFree: value is a mapping"},
		{"missing.yaml", edit("  SlotFree: at fetch\n", ""), "field SlotFree is missing from fields"},
		{"no-note.yaml", regexp.MustCompile(`\n  SlotFree:\n    source: [^\n]*\n    verified: [a-z]+`).ReplaceAllString(string(good), ""), "field SlotFree has no entry in notes"},
		{"empty-source.yaml", edit("  ZeroSGE:\n    source: '", "  ZeroSGE:\n    source: '' #"), "notes of field ZeroSGE: source is empty"},
		{"verified.yaml", edit("    verified: true\n", "    verified: yes\n"), `notes of field PostErrno: verified is the string "yes": want true or false`},
		{"note-key.yaml", edit("    verified: true\n", "    verified: true\n    seen: true\n"), `notes of field PostErrno: unknown key "seen"`},
		{"format.yaml", edit("format: "+ProfileFormat, "format: srqconform-profile/9"), `format is srqconform-profile/9: want "srqconform-profile/1"`},
		{"top-key.yaml", edit("name: rxe\n", "name: rxe\nversion: 2\n"), `unknown key "version"`},
		{"no-name.yaml", edit("name: rxe\n", ""), "name is missing"},
		{"no-format.yaml", edit("format: "+ProfileFormat+"\n", ""), "format is missing: want format: " + ProfileFormat},
		{"builtin-name.yaml", edit("name: rxe\n", "name: mlx5\n"), `name "mlx5" is a built-in profile's, and this profile differs from it in `},
		{"malformed.yaml", edit("fields:\n", "fields: [\n"), "not valid YAML"},
		{"tabs.yaml", edit("  SlotFree: at fetch\n", "\tSlotFree: at fetch\n"), "not valid YAML"},
		{"list.yaml", "- a\n- b\n", "want a mapping of format, name, description, fields and notes, got a list"},
		{"empty.yaml", "\n", "empty file"},
		{"malformed.json", strings.Replace(string(goodJSON), `"fields": {`, `"fields": {,`, 1), "not valid JSON"},
		{"trailing.json", string(goodJSON) + "{}", "not valid JSON: more than one value"},
		{"unknown-value.json", strings.Replace(string(goodJSON), `"ZeroSGE": "accepted"`, `"ZeroSGE": ["accepted", 7]`, 1), `field ZeroSGE: unknown value "7"`},
		{"bool-value.json", strings.Replace(string(goodJSON), `"ZeroSGE": "accepted"`, `"ZeroSGE": [true]`, 1), "field ZeroSGE: list entry 1 is the boolean true"},
	} {
		_, err := ParseProfile(tc.name, []byte(tc.data))
		if !assert.Error(t, err, tc.name) {
			continue
		}
		msg := err.Error()
		assert.Contains(t, msg, tc.msg, tc.name)
		assert.True(t, strings.HasPrefix(msg, "profile file "+tc.name+": "), "%s: %s", tc.name, msg)
		assert.NotContains(t, msg, "\n", tc.name)
	}
}

func TestLoadProfile(t *testing.T) {
	dir := t.TempDir()
	b, err := MarshalProfile(SIW(), "json")
	require.NoError(t, err)
	path := filepath.Join(dir, "vendor.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	p, err := LoadProfile(path)
	require.NoError(t, err)
	assert.True(t, reflect.DeepEqual(SIW(), p))
	_, err = LoadProfile(filepath.Join(dir, "missing.yaml"))
	assert.EqualError(t, err, "profile file "+filepath.Join(dir, "missing.yaml")+": read: no such file or directory")

	// An unquoted YAML -1 reads as the value "-1".
	y, err := MarshalProfile(SIW(), "yaml")
	require.NoError(t, err)
	y = []byte(strings.Replace(string(y), "PostErrno: negative errno", "PostErrno: -1", 1))
	y = []byte(strings.Replace(string(y), "name: siw\n", "name: siw-minus\n", 1))
	p, err = ParseProfile("minus.yaml", y)
	require.NoError(t, err)
	assert.Equal(t, One(ErrnoMinusOne), p.PostErrno)
}

func TestLooksLikeProfileFile(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "vendor")
	require.NoError(t, os.WriteFile(plain, []byte("x"), 0o644))
	t.Chdir(dir)
	for s, want := range map[string]bool{
		"rxe": false, "documented": false, "mlx5": false, "nosuch": false,
		"vendor": true, "./rxe": true, "profiles/new": true, "new.yaml": true, "new.YML": true, "new.json": true,
	} {
		assert.Equal(t, want, LooksLikeProfileFile(s), s)
	}
	assert.True(t, slices.Contains(ProfileFileFormats, "yaml"))
}
