package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func srq(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunOnTheEmulatorIsConformant(t *testing.T) {
	code, out, _ := srq(t, "run", "-cases", "20", "-seed", "3")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "verdict: CONFORMANT")
	assert.Contains(t, out, "pass        FETCH-FIFO")
}

func TestRunFindsADeviationAndItReplays(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := srq(t, "run", "-deviations", "badwr-off-by-one", "-cases", "10", "-seed", "3", "-replay-dir", dir)
	require.Equal(t, exitDeviates, code, errs)
	assert.Contains(t, out, "fail        POST-BADWR")
	files, err := filepath.Glob(filepath.Join(dir, "*-POST-BADWR.json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	code, out, _ = srq(t, "replay", files[0])
	assert.Equal(t, exitDeviates, code)
	assert.Contains(t, out, "deviation reproduced: rule POST-BADWR")
	// The same trace on an emulator without the mutant passes.
	code, out, _ = srq(t, "replay", "-deviations", "", files[0])
	assert.Equal(t, exitOK, code, out)
	assert.Contains(t, out, "no deviation")
}

func TestReportFormats(t *testing.T) {
	for _, f := range []string{"json", "junit", "markdown"} {
		code, out, errs := srq(t, "run", "-deviations", "lifo", "-cases", "5", "-seed", "1", "-format", f)
		require.Equal(t, exitDeviates, code, errs)
		switch f {
		case "json":
			var v struct {
				Conformant bool
				Failures   []struct{ Rule string }
			}
			require.NoError(t, json.Unmarshal([]byte(out), &v))
			assert.False(t, v.Conformant)
			assert.Equal(t, "FETCH-FIFO", v.Failures[0].Rule)
		case "junit":
			var v struct {
				Failures int `xml:"failures,attr"`
			}
			require.NoError(t, xml.Unmarshal([]byte(out), &v))
			assert.Positive(t, v.Failures)
		case "markdown":
			assert.Contains(t, out, "| FETCH-FIFO | fail |")
		}
	}
}

func TestUsageAndEnvironmentErrorsExit2(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	require.NoError(t, os.WriteFile(corrupt, []byte(`{"format":"srqconform-replay/1","driver":"emu","profile":"documented","ops":[{"op":"poll"}`), 0o644))
	wrongOrder := filepath.Join(dir, "order.json")
	require.NoError(t, os.WriteFile(wrongOrder, []byte(`{"format":"srqconform-replay/1","driver":"emu","profile":"documented","ops":[{"op":"poll","args":{"Max":0}}]}`), 0o644))
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{}, "srqconform: no command given: want one of run, "},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"run", "-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"run", "-driver", "nosuch"}, `unknown driver "nosuch"`},
		{[]string{"run", "-driver", "cgo"}, "built without it"},
		{[]string{"run", "-profile", "nosuch"}, `unknown profile "nosuch"`},
		{[]string{"run", "-format", "pdf"}, `unknown format "pdf"`},
		{[]string{"run", "-deviations", "nosuch"}, "nosuch"},
		{[]string{"run", "-rules", "NO-SUCH"}, `unknown rule "NO-SUCH"`},
		{[]string{"replay"}, "replay takes one replay file"},
		{[]string{"replay", filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{"replay", corrupt}, "not valid JSON"},
		{[]string{"replay", wrongOrder}, "create_srq must come first"},
		{[]string{"profiles", "nosuch"}, `unknown profile "nosuch"`},
		{[]string{"rules", "-format", "pdf"}, `unknown format "pdf"`},
	} {
		code, _, errs := srq(t, tc.args...)
		assert.Equal(t, exitUsage, code, "%v", tc.args)
		assert.Contains(t, errs, tc.msg, "%v", tc.args)
	}
}

func TestRulesAndProfilesCommands(t *testing.T) {
	code, out, _ := srq(t, "rules", "-format", "markdown")
	require.Equal(t, exitOK, code)
	onDisk, err := os.ReadFile("../../reports/rules.md")
	require.NoError(t, err)
	assert.Equal(t, string(onDisk), out, "reports/rules.md is the output of srqconform rules -format markdown")
	code, out, _ = srq(t, "profiles")
	require.Equal(t, exitOK, code)
	for _, p := range []string{"documented", "rxe", "rxe-6.1", "mlx5", "siw"} {
		assert.True(t, strings.Contains(out, p+" "), p)
	}
	code, out, _ = srq(t, "profiles", "rxe")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "ZeroLength")
	assert.Contains(t, out, "0 bytes")
}

func TestVMErrorsExit2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"vm", "-kernel", "potato"}, `unknown kernel suite "potato"`},
		{[]string{"vm", "-image", "/nonexistent/vmlinuz", "-modules", "/nonexistent"}, "kernel path"},
		{[]string{"vm", "-image", "/x"}, "-image and -modules go together"},
		{[]string{"vm", "-profile", "nosuch"}, `unknown profile "nosuch"`},
		{[]string{"vm", "-provider", "mlx5"}, `unknown provider "mlx5" for -provider: want one of rxe, siw`},
		{[]string{"vm", "-format", "pdf"}, `unknown format "pdf"`},
		{[]string{"vm", "-accel", "hvf"}, `unknown accelerator "hvf" for -accel: want one of auto, kvm, tcg`},
		{[]string{"vm", "-accel", ""}, `unknown accelerator "" for -accel`},
		{[]string{"vm", "-accel", "KVM"}, `unknown accelerator "KVM"`},
	} {
		code, _, errs := srq(t, tc.args...)
		assert.Equal(t, exitUsage, code, "%v", tc.args)
		assert.Contains(t, errs, tc.msg, "%v", tc.args)
	}
}

func TestVMAccelFlag(t *testing.T) {
	// A bad value is one line and exit status 2, before anything is built.
	code, out, errs := srq(t, "vm", "-accel", "hvf")
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out)
	assert.Equal(t, "srqconform: unknown accelerator \"hvf\" for -accel: want one of auto, kvm, tcg\n", errs)
	// The good values pass validation: the run gets as far as the next
	// check (the kernel suite) and stops there.
	for _, a := range []string{"auto", "kvm", "tcg"} {
		code, _, errs := srq(t, "vm", "-accel", a, "-kernel", "potato")
		assert.Equal(t, exitUsage, code, a)
		assert.NotContains(t, errs, "accelerator", a)
		assert.Contains(t, errs, `unknown kernel suite "potato"`, a)
	}
}

func TestRenderAndMatrixFromSavedReports(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	code, _, errs := srq(t, "run", "-cases", "3", "-seed", "5", "-json", a, "-o", filepath.Join(dir, "a.txt"))
	require.Equal(t, exitOK, code, errs)
	code, _, errs = srq(t, "run", "-cases", "3", "-seed", "5", "-deviations", "lifo", "-json", b, "-o", filepath.Join(dir, "b.txt"))
	require.Equal(t, exitDeviates, code, errs)
	code, out, errs := srq(t, "matrix", a, b)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "| FETCH-FIFO | pass | fail |")
	assert.Contains(t, out, "Rules whose status differs between the columns that hold them: FETCH-FIFO.")
	code, out, _ = srq(t, "render", "-format", "markdown", b)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "| FETCH-FIFO | fail |")
	code, out, errs = srq(t, "render", "-time", a)
	require.Equal(t, exitOK, code, errs)
	assert.True(t, strings.HasPrefix(out, "## Time\n"), out)
	assert.Contains(t, out, "| model | ")
	assert.NotContains(t, out, "FETCH-FIFO")
	code, _, errs = srq(t, "matrix", filepath.Join(dir, "missing.json"))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "no such file")
	code, _, errs = srq(t, "run", "-runs", "0")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "-runs must be at least 1")
}
