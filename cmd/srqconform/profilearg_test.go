package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/model"
)

func TestProfilesPrintsTheFileFormat(t *testing.T) {
	for _, format := range model.ProfileFileFormats {
		code, out, errs := srq(t, "profiles", "-format", format, "rxe")
		require.Equal(t, exitOK, code, errs)
		want, err := model.MarshalProfile(model.RXE(), format)
		require.NoError(t, err)
		assert.Equal(t, string(want), out)
	}
}

func TestRunWithAProfileFile(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"rxe.yaml", "rxe.json"} {
		code, out, errs := srq(t, "profiles", "-format", strings.TrimPrefix(filepath.Ext(name), "."), "rxe")
		require.Equal(t, exitOK, code, errs)
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
		code, out, errs = srq(t, "run", "-profile", path, "-deviations", "rxe", "-cases", "10", "-seed", "3")
		assert.Equal(t, exitOK, code, "%s\n%s", out, errs)
		assert.Contains(t, out, "verdict: CONFORMANT")
		// The same file does not fit the documented emulator: rxe departs.
		code, _, _ = srq(t, "run", "-profile", path, "-cases", "10", "-seed", "3")
		assert.Equal(t, exitDeviates, code)
	}
	// profiles shows a file's profile too.
	code, out, errs := srq(t, "profiles", filepath.Join(dir, "rxe.yaml"))
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "ZeroLength")
	// A file in the working directory without a separator or extension.
	t.Chdir(dir)
	require.NoError(t, os.Rename("rxe.yaml", "vendorprofile"))
	code, _, errs = srq(t, "run", "-profile", "vendorprofile", "-deviations", "rxe", "-cases", "5", "-seed", "3")
	assert.Equal(t, exitOK, code, errs)
}

func TestBadProfileFilesExit2WithOneLine(t *testing.T) {
	dir := t.TempDir()
	good, err := model.MarshalProfile(model.RXE(), "yaml")
	require.NoError(t, err)
	replay := saveReplay(t, dir)
	write := func(name, from, to string) string {
		require.Contains(t, string(good), from)
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(good), from, to, 1)), 0o644))
		return path
	}
	for _, tc := range []struct {
		path, msg string
	}{
		{write("field.yaml", "  ZeroSGE: accepted\n", "  ZeroSGEs: accepted\n"), `unknown field "ZeroSGEs"`},
		{write("value.yaml", "  ZeroSGE: accepted\n", "  ZeroSGE: maybe\n"), `field ZeroSGE: unknown value "maybe"`},
		{write("empty.yaml", "  ZeroSGE: accepted\n", "  ZeroSGE: []\n"), "field ZeroSGE: empty list"},
		{write("malformed.yaml", "fields:\n", "fields: {\n"), "not valid YAML"},
		{filepath.Join(dir, "missing.json"), "no such file"},
	} {
		for _, args := range [][]string{{"run", "-profile", tc.path}, {"profiles", "-format", "json", tc.path}, {"replay", "-profile", tc.path, replay}} {
			code, out, errs := srq(t, args...)
			assert.Equal(t, exitUsage, code, "%v", args)
			assert.Empty(t, out, "%v", args)
			assert.True(t, strings.HasPrefix(errs, "srqconform: profile file "+tc.path+": "), "%v: %s", args, errs)
			assert.Contains(t, errs, tc.msg, "%v", args)
			assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
		}
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"run", "-profile", "nosuch"}, `unknown profile "nosuch": want one of [documented mlx5 rxe rxe-6.1 siw], or a profile file`},
		{[]string{"profiles", "-format", "toml", "rxe"}, `unknown format "toml": want text, yaml or json`},
		{[]string{"profiles", "-format", "yaml"}, "profiles -format yaml takes one profile name or file, got 0 arguments"},
	} {
		code, _, errs := srq(t, tc.args...)
		assert.Equal(t, exitUsage, code, "%v", tc.args)
		assert.Contains(t, errs, tc.msg, "%v", tc.args)
	}
}

// saveReplay saves the counterexample of a run on a mutant and returns its
// path.
func saveReplay(t *testing.T, dir string) string {
	t.Helper()
	code, _, errs := srq(t, "run", "-deviations", "lifo", "-cases", "5", "-seed", "1", "-replay-dir", dir)
	require.Equal(t, exitDeviates, code, errs)
	files, err := filepath.Glob(filepath.Join(dir, "*-FETCH-FIFO.json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	return files[0]
}

func TestReplayWithAProfileFile(t *testing.T) {
	dir := t.TempDir()
	replay := saveReplay(t, dir)
	code, out, errs := srq(t, "profiles", "-format", "yaml", "documented")
	require.Equal(t, exitOK, code, errs)
	path := filepath.Join(dir, "documented.yaml")
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	code, out, errs = srq(t, "replay", "-profile", path, replay)
	assert.Equal(t, exitDeviates, code, errs)
	assert.Contains(t, out, "deviation reproduced: rule FETCH-FIFO")
}

func TestProfileArgPrefersBuiltInNames(t *testing.T) {
	t.Chdir(t.TempDir())
	require.NoError(t, os.WriteFile("rxe", []byte("not a profile"), 0o644))
	p, err := profileArg("rxe")
	require.NoError(t, err)
	assert.True(t, reflect.DeepEqual(model.RXE(), p))
	_, err = profileArg("./rxe")
	assert.ErrorContains(t, err, "profile file ./rxe: ")
}
