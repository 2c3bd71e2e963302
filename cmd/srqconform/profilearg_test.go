package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/conformance"
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

// profileFile writes built-in profile base as a YAML profile file
// dir/name.yaml of the profile name, with the line from replaced by to
// (none when from is empty).
func profileFile(t *testing.T, dir, base, name, from, to string) string {
	t.Helper()
	return profileFileAt(t, filepath.Join(dir, name+".yaml"), base, name, from, to)
}

// profileFileAt is profileFile at path.
func profileFileAt(t *testing.T, path, base, name, from, to string) string {
	t.Helper()
	p, err := model.ProfileByName(base)
	require.NoError(t, err)
	b, err := model.MarshalProfile(p, "yaml")
	require.NoError(t, err)
	s := strings.Replace(string(b), "name: "+base+"\n", "name: "+name+"\n", 1)
	if from != "" {
		require.Contains(t, s, from)
		s = strings.Replace(s, from, to, 1)
	}
	require.NoError(t, os.WriteFile(path, []byte(s), 0o644))
	return path
}

// TestAReplayCarriesItsProfileFile saves a counterexample of a run under a
// profile file and replays it without -profile: the replay file holds the
// profile, edited fields and all (before, replay exited 2 with "unknown
// profile").
func TestAReplayCarriesItsProfileFile(t *testing.T) {
	dir := t.TempDir()
	path := profileFile(t, dir, "documented", "vendor", "  ZeroSGE: accepted\n", "  ZeroSGE: [accepted, rejected]\n")
	want, err := model.LoadProfile(path)
	require.NoError(t, err)
	cx := filepath.Join(dir, "cx")
	code, _, errs := srq(t, "run", "-deviations", "lifo", "-profile", path, "-cases", "5", "-seed", "1", "-replay-dir", cx)
	require.Equal(t, exitDeviates, code, errs)
	files, err := filepath.Glob(filepath.Join(cx, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	f, err := os.Open(files[0])
	require.NoError(t, err)
	rf, _, err := conformance.ReadReplay(f)
	f.Close()
	require.NoError(t, err)
	got, err := rf.ProfileOf()
	require.NoError(t, err)
	assert.True(t, reflect.DeepEqual(want, got), "the replay file's profile is not the file's: %+v", got)
	code, out, errs := srq(t, "replay", files[0])
	assert.Equal(t, exitDeviates, code, errs)
	assert.Contains(t, out, "profile vendor\n")
	assert.Contains(t, out, "deviation reproduced")
}

// TestAProfileFileMayNotClaimABuiltInName: a file named after a built-in
// profile is refused unless its fields are the built-in's (before, a file
// "documented" with mlx5's fields made the report say "profile documented
// ... CONFORMANT" of a device the real documented profile finds deviating).
func TestAProfileFileMayNotClaimABuiltInName(t *testing.T) {
	dir := t.TempDir()
	mlx5 := profileFile(t, dir, "mlx5", "documented", "", "")
	own := profileFile(t, dir, "mlx5", "mlx5", "", "")
	for _, args := range [][]string{
		{"run", "-deviations", "mlx5", "-profile", mlx5, "-cases", "2"},
		{"profiles", mlx5},
	} {
		code, out, errs := srq(t, args...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, out)
		assert.Contains(t, errs, `name "documented" is a built-in profile's, and this profile differs from it in `)
		assert.Contains(t, errs, "give the edited profile a name of its own")
		assert.Equal(t, 1, strings.Count(errs, "\n"), errs)
	}
	// The built-in's own file, unedited, is the built-in.
	code, _, errs := srq(t, "run", "-deviations", "mlx5", "-profile", own, "-cases", "2", "-seed", "1")
	assert.Equal(t, exitOK, code, errs)
	// infer may not name its profile after a built-in either.
	code, _, errs = srq(t, "infer", "-name", "rxe", "-cases", "1")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, `-name "rxe" is a built-in profile's`)
}

// TestAProfileFileWithoutItsFormatLineIsRefused (before, it was read).
func TestAProfileFileWithoutItsFormatLineIsRefused(t *testing.T) {
	path := profileFile(t, t.TempDir(), "rxe", "vendor", "format: "+model.ProfileFormat+"\n", "")
	code, _, errs := srq(t, "run", "-profile", path, "-cases", "1")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "format is missing: want format: "+model.ProfileFormat)
	assert.Equal(t, 1, strings.Count(errs, "\n"), errs)
}

// TestConcurrentRunsAndChecksUnderAProfileFile: a history recorded under a
// profile file holds the profile, so that it is checked at once and again
// with -check (before, both stopped on "unknown profile").
func TestConcurrentRunsAndChecksUnderAProfileFile(t *testing.T) {
	dir := t.TempDir()
	path := profileFile(t, dir, "documented", "vendor", "", "")
	code, out, errs := srq(t, "concurrent", "-profile", path, "-seed", "1", "-duration", "200ms", "-max-ops", "100", "-history-dir", dir)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "profile vendor")
	code, out, errs = srq(t, "concurrent", "-check", filepath.Join(dir, "history-1.json"))
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "profile vendor")
	assert.Contains(t, out, "verdict: LINEARIZABLE")
}
