package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
)

// replayFile writes a replay file that creates an SRQ and an RC QP, then
// runs ops (JSON objects), and returns its path.
func replayFile(t *testing.T, ops ...string) string {
	t.Helper()
	all := append([]string{`{"op":"create_srq","args":{"MaxWR":8,"MaxSGE":1}}`, `{"op":"create_qp","args":{"Type":0}}`}, ops...)
	path := filepath.Join(t.TempDir(), "replay.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"format":"srqconform-replay/1","driver":"emu","profile":"documented","ops":[`+strings.Join(all, ",")+`]}`), 0o644))
	return path
}

// TestWrongInputIsOneLineAndExit2 runs every kind of wrong input: each is
// refused with exit status 2, nothing on stdout, and one line on stderr.
func TestWrongInputIsOneLineAndExit2(t *testing.T) {
	dir := t.TempDir()
	notReport := filepath.Join(dir, "not-a-report.json")
	require.NoError(t, os.WriteFile(notReport, []byte(`{"name":"something else","items":[1,2]}`), 0o644))
	noRules := filepath.Join(dir, "no-rules.json")
	require.NoError(t, os.WriteFile(noRules, []byte(`{"driver":"emu","profile":"documented","rules":[]}`), 0o644))
	aFile := filepath.Join(dir, "a-file")
	require.NoError(t, os.WriteFile(aFile, nil, 0o644))
	good := replayFile(t, `{"op":"poll","args":{"Max":0}}`)
	badHistory := filepath.Join(dir, "bad-history.json")
	require.NoError(t, os.WriteFile(badHistory, []byte(`{"profile":"documented","setup":{"srq":{"MaxWR":8,"MaxSGE":1},"attr":{"MaxWR":8,"MaxSGE":1},"qps":[0]},"clients":["poster"],"ops":[{"client":0,"input":{"kind":"modify","qp":7,"state":6},"output":{},"call_ns":1,"return_ns":2}]}`), 0o644))
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"run", "-bogus"}, "srqconform: flag provided but not defined: -bogus; run 'srqconform run -h' for the flags"},
		{[]string{"run", "-cases", "many"}, `invalid value "many" for flag -cases`},
		{[]string{"replay", "-bogus", good}, "run 'srqconform replay -h' for the flags"},
		{[]string{"vm", "-bogus"}, "run 'srqconform vm -h' for the flags"},
		{[]string{"render", "-bogus"}, "run 'srqconform render -h' for the flags"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"help", "frobnicate"}, `help takes at most a command name, got ["frobnicate"]`},
		{[]string{"rules", "extra"}, `rules takes no arguments, got ["extra"]`},
		{[]string{"run", "extra"}, `run takes no arguments`},
		{[]string{"profiles", "rxe", "mlx5"}, `profiles takes at most one name`},
		{[]string{"render", notReport, notReport}, `render takes one JSON report, got 2 arguments`},
		{[]string{"run", "-wait", "-1s"}, "-wait is -1s, want 0 or more"},
		{[]string{"run", "-duration", "-1s"}, "-duration must not be negative, got -1s"},
		{[]string{"vm", "-duration", "-1s"}, "-duration must not be negative, got -1s"},
		{[]string{"run", "-settle", "-5ms"}, "-settle is -5ms, want 0 or more"},
		{[]string{"run", "-i", "-1"}, "-i (port) is -1, want 1 or more"},
		{[]string{"run", "-x", "-2"}, "-x (GID index) is -2, want 0 or more"},
		{[]string{"replay", "-wait", "-1s", good}, "-wait is -1s"},
		{[]string{"replay", "-settle", "-1s", good}, "-settle is -1s"},
		{[]string{"replay", "-i", "-3", good}, "-i (port) is -3"},
		{[]string{"replay", "-x", "-3", good}, "-x (GID index) is -3"},
		{[]string{"vm", "-timeout", "-1m"}, "-timeout is -1m0s, want more than 0"},
		{[]string{"vm", "-runs", "0"}, "-runs must be at least 1"},
		{[]string{"vm", "-stress", "-1"}, "-stress must not be negative, got -1"},
		{[]string{"vm", "-html", dir}, "-html goes with -concurrent"},
		{[]string{"vm", "-check-timeout", "1m"}, "-check-timeout, -check-memory and -reduce go with -concurrent"},
		{[]string{"vm", "-check-memory", "512"}, "-check-timeout, -check-memory and -reduce go with -concurrent"},
		{[]string{"vm", "-concurrent", "-check-memory", "99999999999999"}, "-check-memory 99999999999999: want at most"},
		{[]string{"vm", "-concurrent", "-reduce", "-1s"}, "-reduce is -1s, want 0 or more"},
		{[]string{"vm", "-concurrent", "-format", "junit"}, `unknown format "junit" with -concurrent`},
		{[]string{"concurrent", "-bogus"}, "run 'srqconform concurrent -h' for the flags"},
		{[]string{"concurrent", "-runs", "0"}, "-runs, -max-ops and -posters must be at least 1"},
		{[]string{"concurrent", "-check-memory", "99999999999999"}, "-check-memory 99999999999999: want at most"},
		{[]string{"concurrent", "-check-memory", "-3"}, `invalid value "-3" for flag -check-memory`},
		{[]string{"concurrent", "-duration", "-1s"}, "-duration is -1s, want 0 or more"},
		{[]string{"concurrent", "-format", "junit"}, `unknown format "junit": want text, markdown or json`},
		{[]string{"concurrent", "-check", filepath.Join(dir, "none.json")}, "none.json: no such file"},
		{[]string{"concurrent", "-check", notReport}, `json: unknown field "name"`},
		{[]string{"concurrent", "-check", badHistory}, "operation 1: QP 7, want 0 to 0"},
		{[]string{"concurrent", "extra"}, "concurrent takes no arguments"},
		{[]string{"vm", "-replay-dir", "/proc/no/such"}, "-replay-dir: create the directory"},
		{[]string{"vm", "-conn", "tcp"}, "unknown connection mode \"tcp\" for -conn: want verbs or rdmacm"},
		{[]string{"vm", "-provider", "siw", "-conn", "verbs"}, "-conn verbs with -provider siw: siw QPs reach RTS only through rdma_cm"},
		{[]string{"run", "-rules", "POST-ORDER,"}, `-rules "POST-ORDER,": rule ID 2 is empty`},
		{[]string{"run", "-rules", ",POST-ORDER"}, `rule ID 1 is empty`},
		{[]string{"run", "-rules", "POST-ORDER,,FETCH-FIFO"}, `rule ID 2 is empty`},
		{[]string{"run", "-rules", "POST-ORDER, NO-SUCH"}, `unknown rule "NO-SUCH"`},
		{[]string{"render", notReport}, "not-a-report.json: not a srqconform JSON report"},
		{[]string{"matrix", notReport}, "not-a-report.json: not a srqconform JSON report"},
		{[]string{"render", noRules}, "not a srqconform JSON report: it has no rules"},
		{[]string{"render", good}, "not a srqconform JSON report"},
		{[]string{"render", aFile}, "a-file"},
		{[]string{"replay", replayFile(t, `{"op":"modify_qp","args":{"QP":0,"State":42}}`)}, `replay file operation 3: operation "modify_qp": field State is 42, want 0 (RESET) to 6 (ERR)`},
		{[]string{"replay", replayFile(t, `{"op":"arrive","args":{"QP":0,"Msg":{"Opcode":99,"Len":4}}}`)}, `replay file operation 3: operation "arrive": field Msg.Opcode is 99, want 0 (SEND) to 6`},
		{[]string{"replay", replayFile(t, `{"op":"poll","args":{"Max":1,"Bogus":2}}`)}, `replay file operation 3: operation "poll": arguments {"Max":1,"Bogus":2}: json: unknown field "Bogus"`},
		{[]string{"replay", replayFile(t, `{"op":"arrive_rest","args":{"QP":3}}`)}, `replay file operation 3 (arrive_rest): field QP is 3, want 0 to 0`},
		{[]string{"replay", replayFile(t, `{"op":"inject_sqe","args":{"QP":0}}`)}, "not a trace the model accepts"},
		{[]string{"run", "-o", filepath.Join(dir, "missing", "r.txt")}, "-o: create the output file: open " + filepath.Join(dir, "missing", "r.txt")},
		{[]string{"run", "-json", dir}, "-json: " + dir + " is a directory, want a file"},
		{[]string{"run", "-replay-dir", filepath.Join(aFile, "cx")}, "-replay-dir: create the directory"},
	} {
		code, out, errs := srq(t, tc.args...)
		assert.Equal(t, exitUsage, code, "%v", tc.args)
		assert.Empty(t, out, "%v", tc.args)
		assert.Contains(t, errs, tc.msg, "%v", tc.args)
		assert.Equal(t, 1, strings.Count(errs, "\n"), "%v: want one line, got %q", tc.args, errs)
	}
}

func TestHelpIsTheFullUsageAndExit0(t *testing.T) {
	for _, tc := range []struct {
		cmd, flag string
	}{{"run", "-replay-dir"}, {"rules", "-format"}, {"profiles", ""}, {"replay", "-deviations"}, {"vm", "-accel"}, {"render", "-format"}, {"matrix", ""}, {"concurrent", "-check"}} {
		for _, args := range [][]string{{tc.cmd, "-h"}, {tc.cmd, "-help"}, {"help", tc.cmd}} {
			code, out, errs := srq(t, args...)
			assert.Equal(t, exitOK, code, "%v", args)
			assert.Empty(t, errs, "%v", args)
			assert.True(t, strings.HasPrefix(out, "usage: srqconform "+tc.cmd), "%v: %q", args, out)
			assert.Contains(t, out, tc.flag, "%v", args)
		}
	}
	code, out, _ := srq(t, "-h")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "130 interrupted")
}

// countingDriver is the emulator, counting the devices it opens; with
// refuse set it opens none.
type countingDriver struct {
	drivers.Driver
	opens  *atomic.Int32
	refuse bool
}

func (d countingDriver) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	d.opens.Add(1)
	if d.refuse {
		return nil, errors.New("counting: Open: the test refuses to open a device")
	}
	return d.Driver.Open(ctx, cfg)
}

// failingDriver is the emulator whose device fails every CreateSRQ after
// the first srqs, as a device that is lost mid-run.
type failingDriver struct {
	drivers.Driver
	srqs int
}

type failingDevice struct {
	drivers.Device
	left int
}

func (d failingDriver) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	dev, err := d.Driver.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &failingDevice{Device: dev, left: d.srqs}, nil
}

func (d *failingDevice) CreateSRQ(ctx context.Context, attr drivers.SRQAttr, keys int) (drivers.SRQ, drivers.SRQAttr, error) {
	if d.left == 0 {
		return nil, drivers.SRQAttr{}, errors.New("ibv_create_srq: ENODEV (device lost)")
	}
	d.left--
	return d.Device.CreateSRQ(ctx, attr, keys)
}

// withDriver adds a driver to the registry for the test.
func withDriver(t *testing.T, name string, mk func() drivers.Driver) {
	t.Helper()
	registry[name] = mk
	t.Cleanup(func() { delete(registry, name) })
}

func TestOutputsAreCheckedBeforeTheRun(t *testing.T) {
	var opens atomic.Int32
	withDriver(t, "counting", func() drivers.Driver { return countingDriver{emu.New(), &opens, true} })
	withDriver(t, "counting-opens", func() drivers.Driver { return countingDriver{emu.New(), &opens, false} })
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.txt")
	require.NoError(t, os.WriteFile(existing, []byte("an earlier report\n"), 0o644))
	aFile := filepath.Join(dir, "a-file")
	require.NoError(t, os.WriteFile(aFile, nil, 0o644))
	for _, args := range [][]string{
		{"-o", filepath.Join(dir, "no", "such", "dir", "r.txt")},
		{"-o", existing, "-json", filepath.Join(dir, "missing", "r.json")},
		{"-o", existing, "-replay-dir", filepath.Join(aFile, "cx")},
		{"-json", dir},
	} {
		code, _, errs := srq(t, append([]string{"run", "-driver", "counting"}, args...)...)
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.Equal(t, 1, strings.Count(errs, "\n"), "%v: %q", args, errs)
		assert.NotContains(t, errs, "the test refuses", "%v: the outputs were not checked before the run", args)
	}
	assert.Zero(t, opens.Load(), "the device was opened: the outputs were not checked before the run")
	b, err := os.ReadFile(existing)
	require.NoError(t, err)
	assert.Equal(t, "an earlier report\n", string(b), "checking -o changed the file")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "checking the outputs left files behind")

	// Outputs that can be written pass the check, and the test files it
	// creates are gone.
	out, js, cx := filepath.Join(dir, "new.txt"), filepath.Join(dir, "new.json"), filepath.Join(dir, "cx")
	code, _, errs := srq(t, "run", "-driver", "counting-opens", "-cases", "2", "-seed", "1", "-o", out, "-json", js, "-replay-dir", cx)
	require.Equal(t, exitOK, code, errs)
	assert.EqualValues(t, 1, opens.Load())
	entries, err = os.ReadDir(cx)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestAHarnessErrorWritesEveryOutputAndExits3(t *testing.T) {
	withDriver(t, "failing", func() drivers.Driver { return failingDriver{emu.New(), 20} })
	dir := t.TempDir()
	out, js, cx := filepath.Join(dir, "r.md"), filepath.Join(dir, "r.json"), filepath.Join(dir, "cx")
	code, stdout, errs := srq(t, "run", "-driver", "failing", "-deviations", "badwr-off-by-one", "-rules", "POST-BADWR", "-cases", "100", "-seed", "1",
		"-format", "markdown", "-o", out, "-json", js, "-replay-dir", cx)
	require.Equal(t, exitHarness, code, errs)
	assert.Empty(t, stdout)
	var last string
	for _, l := range strings.Split(strings.TrimSpace(errs), "\n") {
		if !strings.HasPrefix(l, "counterexample #") {
			assert.Empty(t, last, "more than one line besides the saved counterexamples: %q", errs)
			last = l
		}
	}
	assert.Contains(t, last, "srqconform: harness error, partial report written to "+out+" and "+js+": ")
	assert.Contains(t, last, "ibv_create_srq: ENODEV (device lost)")

	md, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(md), "# srqconform report: HARNESS ERROR, DEVIATES so far on emu0")
	assert.Contains(t, string(md), "ibv_create_srq: ENODEV (device lost)")
	b, err := os.ReadFile(js)
	require.NoError(t, err)
	var v struct {
		Error    string
		Failures []struct{ Rule string }
	}
	require.NoError(t, json.Unmarshal(b, &v))
	assert.Contains(t, v.Error, "ENODEV")
	require.NotEmpty(t, v.Failures, "the run found the deviation before the device was lost")
	files, err := filepath.Glob(filepath.Join(cx, "*.json"))
	require.NoError(t, err)
	assert.Len(t, files, len(v.Failures))
	// A partial report renders again, and says so.
	code, rendered, errs := srq(t, "render", "-format", "text", js)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, rendered, "verdict: HARNESS ERROR, DEVIATES so far")
}

func TestARunThatWillNotOpenExits2(t *testing.T) {
	code, out, errs := srq(t, "run", "-d", "nosuch0", "-o", filepath.Join(t.TempDir(), "r.txt"))
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out)
	assert.Equal(t, 1, strings.Count(errs, "\n"), errs)
	assert.Contains(t, errs, `no such device`)
}
