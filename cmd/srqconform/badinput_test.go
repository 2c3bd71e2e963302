package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/model"
)

// badInput is one wrong input to the built binary: it must exit 2 with
// nothing on stdout and one line on stderr that starts "srqconform: " and
// holds msg.
type badInput struct {
	args []string
	msg  string
}

// runBinary runs the built srqconform with args in dir and returns its exit
// status, stdout and stderr. A process still running after bound is
// killed and fails the test: a bad input must not start the work.
func runBinary(t *testing.T, dir string, bound time.Duration, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("srqconform %q still ran after %v: a bad input started the work; stderr: %s", args, bound, errb.String())
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("srqconform %q: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// flagLine is a flag in a command's -h output: "  -name type" or, for a
// boolean, "  -name" alone.
var flagLine = regexp.MustCompile(`^  -([a-z][a-z0-9-]*)(?: (\w+))?`)

// commandFlags returns each flag of command cmd with its type ("bool" for
// a boolean), from the built binary's -h.
func commandFlags(t *testing.T, cmd string) map[string]string {
	t.Helper()
	code, out, errs := runBinary(t, t.TempDir(), time.Minute, cmd, "-h")
	require.Equal(t, exitOK, code, errs)
	flags := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if m := flagLine.FindStringSubmatch(l); m != nil {
			typ := m[2]
			if typ == "" {
				typ = "bool"
			}
			flags[m[1]] = typ
		}
	}
	require.NotEmpty(t, flags, "%s -h lists no flags", cmd)
	return flags
}

// generatedBadInputs is, for every flag of every command, a value of the
// wrong kind for its type and the flag without its value, and for every
// command an unknown flag.
func generatedBadInputs(t *testing.T) []badInput {
	var out []badInput
	for _, cmd := range commands {
		out = append(out, badInput{[]string{cmd, "-no-such-flag"}, "flag provided but not defined: -no-such-flag; run 'srqconform " + cmd + " -h' for the flags"})
		if cmd == "matrix" {
			continue // no flags
		}
		for name, typ := range commandFlags(t, cmd) {
			switch typ {
			case "bool":
				out = append(out, badInput{[]string{cmd, "-" + name + "=maybe"}, `invalid boolean value "maybe" for -` + name})
				continue
			case "int":
				out = append(out, badInput{[]string{cmd, "-" + name + "=x"}, `invalid value "x" for flag -` + name})
			case "uint":
				out = append(out, badInput{[]string{cmd, "-" + name + "=-1"}, `invalid value "-1" for flag -` + name})
			case "duration":
				out = append(out, badInput{[]string{cmd, "-" + name + "=5"}, `invalid value "5" for flag -` + name})
			}
			out = append(out, badInput{[]string{cmd, "-" + name}, "flag needs an argument: -" + name})
		}
	}
	return out
}

// fixtures writes the input files of the bad inputs into dir and returns
// them by name.
func fixtures(t *testing.T, dir string) map[string]string {
	t.Helper()
	f := map[string]string{}
	write := func(name, data string) {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
		f[name] = path
	}
	f["missing.json"] = filepath.Join(dir, "missing.json")
	f["dir"] = filepath.Join(dir, "adir")
	require.NoError(t, os.Mkdir(f["dir"], 0o755))
	write("empty.json", "")
	write("garbage.json", "\x00\xff\xfe binary \x01")
	write("truncated.json", `{"format":`)
	write("other.json", `{"name":"something else","items":[1,2]}`)
	write("list.yaml", "- a\n- b\n")

	replay := func(name, top string, ops ...string) {
		all := append([]string{`{"op":"create_srq","args":{"MaxWR":8,"MaxSGE":1}}`, `{"op":"create_qp","args":{"Type":"RC"}}`}, ops...)
		write(name, `{"format":"srqconform-replay/1","driver":"emu","profile":"documented"`+top+`,"ops":[`+strings.Join(all, ",")+`]}`)
	}
	replay("good-replay.json", "", `{"op":"poll","args":{"Max":0}}`)
	replay("arrive-no-args.json", "", `{"op":"arrive"}`)
	replay("port.json", `,"config":{"Device":"","Port":-5,"GIDIndex":0}`, `{"op":"poll","args":{"Max":0}}`)
	replay("rule.json", `,"rule":"NO-SUCH-RULE"`, `{"op":"poll","args":{"Max":0}}`)
	replay("relaxed.json", `,"relaxed":["NO-SUCH-RULE"]`, `{"op":"poll","args":{"Max":0}}`)
	replay("state-name.json", "", `{"op":"modify_qp","args":{"QP":0,"State":"BOGUS"}}`)
	replay("state-number.json", "", `{"op":"modify_qp","args":{"QP":0,"State":42}}`)
	replay("opcode.json", "", `{"op":"arrive","args":{"QP":0,"Msg":{"Opcode":"TELEPORT","Len":4}}}`)
	replay("qp.json", "", `{"op":"arrive_rest","args":{"QP":3}}`)
	replay("unknown-op.json", "", `{"op":"frobnicate","args":{}}`)
	replay("second-srq.json", "", `{"op":"create_srq","args":{"MaxWR":8,"MaxSGE":1}}`)
	replay("unpredictable.json", "", `{"op":"inject_sqe","args":{"QP":0}}`)
	replay("profile-name.json", `,"profile_file":{"format":"srqconform-profile/1"}`, `{"op":"poll","args":{"Max":0}}`)
	write("no-ops.json", `{"format":"srqconform-replay/1","driver":"emu","profile":"documented","ops":[]}`)
	write("format.json", `{"format":"srqconform-replay/9","driver":"emu","profile":"documented","ops":[{"op":"poll","args":{"Max":0}}]}`)
	write("unknown-profile.json", `{"format":"srqconform-replay/1","driver":"emu","profile":"inferred","ops":[{"op":"create_srq","args":{"MaxWR":8,"MaxSGE":1}}]}`)

	history := func(name, clients, ops string) {
		write(name, `{"profile":"documented","setup":{"srq":{"MaxWR":8,"MaxSGE":1},"attr":{"MaxWR":8,"MaxSGE":1},"qps":["RC"]},"clients":`+clients+`,"ops":`+ops+`}`)
	}
	op := func(client int) string {
		return fmt.Sprintf(`[{"client":%d,"input":{"kind":"modify","qp":0,"state":"ERR"},"output":{},"call_ns":1,"return_ns":2}]`, client)
	}
	history("history.json", `["poster"]`, op(0))
	history("client.json", `["poster"]`, op(99))
	history("no-clients.json", `[]`, op(0))
	history("no-history-ops.json", `["poster"]`, `[]`)
	history("history-qp.json", `["poster"]`, strings.Replace(op(0), `"qp":0`, `"qp":7`, 1))

	profile := func(name, base, newName, from, to string) {
		f[name] = profileFileAt(t, filepath.Join(dir, name), base, newName, from, to)
	}
	profile("no-format.yaml", "rxe", "vendor", "format: "+model.ProfileFormat+"\n", "")
	profile("claims-documented.yaml", "mlx5", "documented", "", "")
	profile("edited-mlx5.yaml", "mlx5", "mlx5", "  ZeroSGE: accepted\n", "  ZeroSGE: rejected\n")
	profile("bad-value.yaml", "rxe", "vendor", "  SlotFree: at fetch\n", "  SlotFree: at polling\n")
	write("known.txt", "NO-SUCH-RULE # why\n")
	write("report.json", `{"driver":"emu","profile":"documented","rules":[]}`)
	return f
}

// handBadInputs are the wrong inputs issue 20 and the command's checks
// name, each with the line it must give.
func handBadInputs(f map[string]string) []badInput {
	dir := f["dir"]
	root, _ := filepath.Abs("../..") // the repository, for its corpus
	return []badInput{
		// No command, unknown command, help.
		{[]string{}, "srqconform: no command given: want one of run, "},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"help", "frobnicate"}, "help takes at most a command name"},
		{[]string{"help", "run", "extra"}, "help takes at most a command name"},
		// Arguments where none or one is wanted.
		{[]string{"run", "extra"}, "run takes no arguments"},
		{[]string{"concurrent", "extra"}, "concurrent takes no arguments"},
		{[]string{"rules", "extra"}, "rules takes no arguments"},
		{[]string{"deviations", "extra"}, "deviations takes no arguments"},
		{[]string{"infer", "extra"}, "infer takes no arguments"},
		{[]string{"profiles", "rxe", "mlx5"}, "profiles takes at most one name"},
		{[]string{"replay"}, "replay takes one replay file, got 0 arguments"},
		{[]string{"replay", f["good-replay.json"], f["good-replay.json"]}, "replay takes one replay file, got 2 arguments"},
		{[]string{"render"}, "render takes one JSON report"},
		{[]string{"render", f["report.json"], f["report.json"]}, "render takes one JSON report, got 2 arguments"},
		{[]string{"matrix"}, "matrix"},
		// Bug 5: garbage that was accepted with exit 0.
		{[]string{"run", "-conn", "foo"}, `unknown connection mode "foo" for -conn: want verbs or rdmacm`},
		{[]string{"run", "-conn", "verbs"}, "-conn is for -driver cgo"},
		{[]string{"run", "-deviations", ",,"}, `-deviations ",,": entry 1 is empty`},
		{[]string{"run", "-deviations", "lifo,"}, `-deviations "lifo,": entry 2 is empty`},
		{[]string{"run", "-deviations", "bogus"}, `unknown deviation or set "bogus" (srqconform deviations lists them)`},
		{[]string{"run", "-deviations", "help"}, `unknown deviation or set "help"`},
		{[]string{"run", "-deviations", "lifo=3"}, `deviation "lifo" takes no value`},
		{[]string{"run", "-deviations", "oversize-rc-status=999"}, "value must be a completion status 0..255"},
		{[]string{"run", "-deviations", "capacity-pow2,capacity-hidden"}, "cannot both be on"},
		{[]string{"run", "-profile", f["no-format.yaml"]}, "format is missing: want format: " + model.ProfileFormat},
		{[]string{"replay", f["arrive-no-args.json"]}, `operation "arrive" has no args`},
		{[]string{"replay", f["port.json"]}, "config has Port -5"},
		{[]string{"replay", f["rule.json"]}, `rule "NO-SUCH-RULE" is not in the catalogue`},
		{[]string{"concurrent", "-check", f["client.json"]}, "operation 1: client 99, want 0 to 0"},
		{[]string{"concurrent", "-check", f["no-clients.json"]}, "has no clients"},
		{[]string{"concurrent", "-check", f["no-history-ops.json"]}, "has no operations: nothing to check"},
		{[]string{"concurrent", "-check", f["history.json"], "-deviations", "mlx5"}, "-deviations goes with a run on a device, not with -check"},
		{[]string{"concurrent", "-check", f["history.json"], "-profile", "rxe"}, "-profile goes with a run on a device"},
		{[]string{"concurrent", "-check", f["history.json"], "-runs", "3"}, "-runs goes with a run on a device"},
		{[]string{"concurrent", "-deviations", "bogus"}, `unknown deviation or set "bogus"`},
		{[]string{"concurrent", "-deviations", ",,"}, "entry 1 is empty"},
		{[]string{"concurrent", "-conn", "foo"}, `unknown connection mode "foo"`},
		// Bugs 1 and 2: profile files.
		{[]string{"run", "-profile", f["claims-documented.yaml"]}, `name "documented" is a built-in profile's, and this profile differs from it in `},
		{[]string{"run", "-profile", f["edited-mlx5.yaml"]}, `name "mlx5" is a built-in profile's, and this profile differs from it in ZeroSGE`},
		{[]string{"replay", "-profile", f["edited-mlx5.yaml"], f["good-replay.json"]}, "give the edited profile a name of its own"},
		{[]string{"profiles", f["claims-documented.yaml"]}, "is a built-in profile's"},
		{[]string{"infer", "-name", "mlx5"}, `-name "mlx5" is a built-in profile's`},
		{[]string{"replay", f["unknown-profile.json"]}, `unknown profile "inferred"`},
		{[]string{"replay", f["profile-name.json"]}, "profile_file of the replay file"},
		// Bug 6: outputs checked before the work.
		{[]string{"concurrent", "-o", dir}, "-o: " + dir + " is a directory, want a file"},
		{[]string{"infer", "-o", dir}, "-o: " + dir + " is a directory, want a file"},
		{[]string{"run", "-o", dir}, "-o: " + dir + " is a directory, want a file"},
		{[]string{"run", "-json", dir}, "-json: " + dir + " is a directory, want a file"},
		{[]string{"run", "-replay-dir", f["empty.json"]}, "-replay-dir: create the directory"},
		{[]string{"concurrent", "-html", f["empty.json"]}, "-html: create the directory"},
		{[]string{"concurrent", "-history-dir", f["empty.json"]}, "-history-dir: create the directory"},
		{[]string{"infer", "-o", filepath.Join(f["missing.json"], "p.yaml")}, "-o: create the output file"},
		{[]string{"concurrent", "-o", filepath.Join(f["missing.json"], "r.txt")}, "-o: create the output file"},
		// Values out of range.
		{[]string{"run", "-runs", "0"}, "-runs must be at least 1"},
		{[]string{"run", "-parallel", "0"}, "-parallel must be at least 1"},
		{[]string{"run", "-steps", "0"}, "-steps > 0"},
		{[]string{"run", "-cases", "-1"}, "-cases must be >= 0"},
		{[]string{"run", "-duration", "-1s"}, "-duration must not be negative"},
		{[]string{"run", "-wait", "-1s"}, "-wait is -1s, want 0 or more"},
		{[]string{"run", "-settle", "-1s"}, "-settle is -1s, want 0 or more"},
		{[]string{"run", "-i", "-1"}, "-i (port) is -1"},
		{[]string{"run", "-x", "-1"}, "-x (GID index) is -1"},
		{[]string{"run", "-format", "pdf"}, `unknown format "pdf"`},
		{[]string{"run", "-driver", "nosuch"}, `unknown driver "nosuch"`},
		{[]string{"run", "-profile", "nosuch"}, `unknown profile "nosuch"`},
		{[]string{"run", "-rules", "NO-SUCH"}, `unknown rule "NO-SUCH"`},
		{[]string{"run", "-rules", ","}, "rule ID 1 is empty"},
		{[]string{"run", "-known", f["known.txt"]}, "NO-SUCH-RULE"},
		{[]string{"concurrent", "-runs", "0"}, "must be at least 1"},
		{[]string{"concurrent", "-max-ops", "0"}, "must be at least 1"},
		{[]string{"concurrent", "-posters", "0"}, "must be at least 1"},
		{[]string{"concurrent", "-rc", "-1"}, "-rc, -ud at least 0"},
		{[]string{"concurrent", "-ud", "-1"}, "-rc, -ud at least 0"},
		{[]string{"concurrent", "-duration", "0s"}, "-duration must be positive"},
		{[]string{"concurrent", "-check-timeout", "-1s"}, "-check-timeout is -1s"},
		{[]string{"concurrent", "-reduce", "-1s"}, "-reduce is -1s"},
		{[]string{"concurrent", "-format", "junit"}, `unknown format "junit"`},
		{[]string{"concurrent", "-profile", "nosuch"}, `unknown profile "nosuch"`},
		{[]string{"concurrent", "-known", f["known.txt"]}, "NO-SUCH-RULE"},
		{[]string{"concurrent", "-check", f["history-qp.json"]}, "operation 1: QP 7, want 0 to 0"},
		{[]string{"infer", "-cases", "-1"}, "-cases must be >= 0"},
		{[]string{"infer", "-steps", "0"}, "-steps > 0"},
		{[]string{"infer", "-format", "toml"}, `unknown format "toml"`},
		{[]string{"infer", "-name", ""}, "-name must not be empty"},
		{[]string{"infer", "-deviations", "bogus"}, `unknown deviation or set "bogus"`},
		{[]string{"infer", "-conn", "verbs"}, "-conn is for -driver cgo"},
		{[]string{"infer", "-driver", "nosuch"}, `unknown driver "nosuch"`},
		{[]string{"rules", "-format", "pdf"}, `unknown format "pdf"`},
		{[]string{"profiles", "nosuch"}, `unknown profile "nosuch"`},
		{[]string{"profiles", "-format", "toml", "rxe"}, `unknown format "toml"`},
		{[]string{"profiles", "-format", "yaml"}, "takes one profile name or file, got 0 arguments"},
		{[]string{"deviations", "-kind", "bogus"}, `unknown kind "bogus"`},
		{[]string{"render", "-format", "pdf", f["report.json"]}, `unknown format "pdf"`},
		{[]string{"render", f["report.json"]}, "it has no rules"},
		{[]string{"matrix", f["report.json"]}, "it has no rules"},
		{[]string{"replay", "-deviations", "bogus", f["good-replay.json"]}, `unknown deviation or set "bogus"`},
		{[]string{"replay", "-conn", "foo", f["good-replay.json"]}, `unknown connection mode "foo"`},
		{[]string{"replay", "-profile", "nosuch", f["good-replay.json"]}, `unknown profile "nosuch"`},
		{[]string{"replay", "-i", "-1", f["good-replay.json"]}, "-i (port) is -1"},
		{[]string{"replay", "-wait", "-1s", f["good-replay.json"]}, "-wait is -1s"},
		{[]string{"replay", f["relaxed.json"]}, `relaxed rule "NO-SUCH-RULE" is not in the catalogue`},
		{[]string{"replay", f["state-name.json"]}, `unknown QP state "BOGUS": want one of RESET, INIT, RTR, RTS, SQD, SQE, ERR`},
		{[]string{"replay", f["state-number.json"]}, "field State is 42, want 0 (RESET) to 6 (ERR)"},
		{[]string{"replay", f["opcode.json"]}, `unknown opcode "TELEPORT"`},
		{[]string{"replay", f["qp.json"]}, "field QP is 3, want 0 to 0"},
		{[]string{"replay", f["unknown-op.json"]}, `unknown operation "frobnicate"`},
		{[]string{"replay", f["second-srq.json"]}, "create_srq must come first, and only once"},
		{[]string{"replay", f["unpredictable.json"]}, "not a trace the model accepts"},
		{[]string{"replay", f["no-ops.json"]}, "replay file has 0 operations"},
		{[]string{"replay", f["format.json"]}, `replay file format is "srqconform-replay/9"`},
		{[]string{"run", "-profile", f["bad-value.yaml"]}, `field SlotFree: unknown value "at polling"`},
		{[]string{"vm", "-runs", "0"}, "-runs must be at least 1"},
		{[]string{"vm", "-timeout", "-1m"}, "-timeout is -1m0s"},
		{[]string{"vm", "-conn", "tcp"}, `unknown connection mode "tcp"`},
		{[]string{"vm", "-provider", "siw", "-conn", "verbs"}, "siw QPs reach RTS only through rdma_cm"},
		{[]string{"vm", "-html", dir}, "-html goes with -concurrent"},
		{[]string{"vm", "-concurrent", "-format", "junit"}, `unknown format "junit" with -concurrent`},
		{[]string{"vm", "-kernel", "nosuch"}, `unknown kernel suite "nosuch"`},
		{[]string{"corpus", "-dir", filepath.Join(root, "corpus"), "-reports", "/proc/no/such", "-binary", "/nonexistent"}, "-reports: mkdir /proc/no"},
		{[]string{"vm", "-profile", "nosuch"}, `unknown profile "nosuch"`},
		{[]string{"vm", "-duration", "-1s"}, "-duration must not be negative"},
		{[]string{"vm", "-rdma-core", "distro"}, `unknown rdma-core "distro"`},
		{[]string{"vm", "-rdma-core-patch", "/nonexistent.patch"}, "patch file: stat /nonexistent.patch"},
		{[]string{"vm", "-rdma-core", "host", "-rdma-core-patch", f["report.json"]}, "-rdma-core-patch with -rdma-core host"},
		{[]string{"vm", "-image", f["report.json"], "-modules", dir, "-rdma-core", "suite"}, "a custom kernel has no Debian suite"},
	}
}

// fileKindInputs gives every argument that names an input file every kind
// of wrong file: missing, a directory, empty, binary garbage, truncated
// JSON, JSON of another shape, a YAML list.
func fileKindInputs(f map[string]string) []badInput {
	var out []badInput
	kinds := []string{"missing.json", "dir", "empty.json", "garbage.json", "truncated.json", "other.json", "list.yaml"}
	takes := []func(string) []string{
		func(p string) []string { return []string{"replay", p} },
		func(p string) []string { return []string{"render", p} },
		func(p string) []string { return []string{"matrix", p} },
		func(p string) []string { return []string{"concurrent", "-check", p} },
		func(p string) []string { return []string{"run", "-profile", p} },
		func(p string) []string { return []string{"profiles", p} },
		func(p string) []string { return []string{"replay", "-profile", p, f["good-replay.json"]} },
	}
	for _, take := range takes {
		for _, k := range kinds {
			out = append(out, badInput{take(f[k]), ""})
		}
	}
	for _, k := range []string{"missing.json", "dir", "garbage.json"} {
		out = append(out, badInput{[]string{"run", "-known", f[k]}, ""}, badInput{[]string{"concurrent", "-known", f[k]}, ""})
	}
	return out
}

// TestEveryBadInputExits2WithOneLine runs every bad input through the
// built binary (issue 20: at least 200, every command, flag and file
// kind): each exits 2 with one line on stderr and nothing on stdout.
func TestEveryBadInputExits2WithOneLine(t *testing.T) {
	dir := t.TempDir()
	f := fixtures(t, dir)
	inputs := append(append(generatedBadInputs(t), handBadInputs(f)...), fileKindInputs(f)...)
	require.GreaterOrEqual(t, len(inputs), 200)
	covered := map[string]bool{}
	for _, in := range inputs {
		if len(in.args) > 0 {
			covered[in.args[0]] = true
		}
		code, out, errs := runBinary(t, dir, 2*time.Minute, in.args...)
		if !assert.Equal(t, exitUsage, code, "srqconform %q: stderr %q", in.args, errs) {
			continue
		}
		assert.Empty(t, out, "srqconform %q: stdout", in.args)
		assert.Equal(t, 1, strings.Count(errs, "\n"), "srqconform %q: want one line, got %q", in.args, errs)
		assert.True(t, strings.HasPrefix(errs, "srqconform: "), "srqconform %q: %q", in.args, errs)
		assert.Contains(t, errs, in.msg, "srqconform %q", in.args)
	}
	for _, cmd := range commands {
		assert.True(t, covered[cmd], "no bad input for %s", cmd)
	}
	t.Logf("%d bad inputs", len(inputs))
}
