package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/conformance/render"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// deviceFlags are the flags that select a driver and device (perftest's -d,
// -i and -x are the convention).
type deviceFlags struct {
	driver, device, deviations string
	port, gid                  int
}

func (d *deviceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.driver, "driver", "emu", "driver: emu (built-in emulator) or cgo (libibverbs)")
	fs.StringVar(&d.device, "d", "", "device name as ibv_devinfo shows it (default: the first)")
	fs.IntVar(&d.port, "i", 1, "port number")
	fs.IntVar(&d.gid, "x", 1, "GID index (RoCE)")
	fs.StringVar(&d.deviations, "deviations", "", "emulator only: comma-separated deviations or a set (rxe, rxe-6.1, mlx5, siw)")
}

func (d *deviceFlags) config() drivers.Config {
	cfg := drivers.Config{Device: d.device, Port: d.port, GIDIndex: d.gid}
	if d.deviations != "" {
		cfg.Options = map[string]string{"deviations": d.deviations}
	}
	return cfg
}

func newFlagSet(name string, stderr io.Writer, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: srqconform %s\n\nflags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags; it returns false and the exit code on -h or an error.
func parse(fs *flag.FlagSet, args []string) (bool, int) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return false, exitOK
		}
		return false, exitUsage
	}
	return true, 0
}

func fail(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "srqconform: "+format+"\n", a...)
	return exitUsage
}

// interruptible returns a context cancelled on SIGINT or SIGTERM, so that a
// run stops cleanly and releases its verbs resources.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", stderr, "run [flags]")
	var dev deviceFlags
	dev.register(fs)
	profile := fs.String("profile", "documented", "profile the device is held to: a built-in name (see srqconform profiles) or a profile file (.yaml, .json)")
	seed := fs.Uint64("seed", 0, "seed for the random cases (0: pick one; it is reported)")
	cases := fs.Int("cases", 100, "number of random cases (0: scenarios only)")
	steps := fs.Int("steps", 40, "most steps per random case")
	rules := fs.String("rules", "", "comma-separated rule IDs: run only their scenarios")
	format := fs.String("format", "text", "report format: "+strings.Join(render.Formats, ", "))
	out := fs.String("o", "", "write the report to this file (default: standard output)")
	replayDir := fs.String("replay-dir", "", "save every counterexample as a replay file in this directory")
	wait := fs.Duration("wait", 2*time.Second, "how long a poll waits for expected completions and events")
	settle := fs.Duration("settle", 0, "how long a poll then looks for unexpected ones (0: the driver's default)")
	quiet := fs.Bool("q", false, "no progress on the terminal")
	runs := fs.Int("runs", 1, "repeat the whole run with seeds seed, seed+1, ...; the report is the first deviating run's, else the last")
	jsonOut := fs.String("json", "", "also write the JSON report to this file")
	if ok, code := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "run takes no arguments, got %q", fs.Args())
	}
	if *runs < 1 {
		return fail(stderr, "-runs must be at least 1, got %d", *runs)
	}
	if *cases < 0 || *steps <= 0 {
		return fail(stderr, "-cases must be >= 0 and -steps > 0 (got %d, %d)", *cases, *steps)
	}
	if !validFormat(*format) {
		return fail(stderr, "unknown format %q: want one of %s", *format, strings.Join(render.Formats, ", "))
	}
	p, err := profileArg(*profile)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	drv, err := driverByName(dev.driver)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	opts := conformance.Options{Profile: p, Seed: *seed, Cases: *cases, Steps: *steps, Wait: *wait, Settle: *settle}
	if *cases == 0 {
		opts.Cases = -1
	}
	if *rules != "" {
		for _, id := range strings.Split(*rules, ",") {
			if _, ok := model.RuleByID(strings.TrimSpace(id)); !ok {
				return fail(stderr, "unknown rule %q (see srqconform rules)", id)
			}
			opts.Rules = append(opts.Rules, strings.TrimSpace(id))
		}
	}
	if !*quiet && isTerminal(stderr) {
		opts.Progress = func(done, total int, what string) {
			fmt.Fprintf(stderr, "\r\033[K[%d/%d] %s", done, total, what)
			if done == total {
				fmt.Fprint(stderr, "\r\033[K")
			}
		}
	}
	ctx, cancel := interruptible()
	defer cancel()
	if opts.Seed == 0 {
		opts.Seed = uint64(time.Now().UnixNano()) >> 1
	}
	var rep *conformance.Report
	deviating := 0
	for i := range *runs {
		o := opts
		o.Seed = opts.Seed + uint64(i)
		r, err := conformance.Check(ctx, drv, dev.config(), o)
		if err != nil {
			fmt.Fprintf(stderr, "srqconform: %v\n", err)
			return exitUsage
		}
		if *runs > 1 {
			var failing []string
			for _, f := range r.Failures {
				failing = append(failing, f.Rule)
			}
			fmt.Fprintf(stderr, "run %d/%d seed %d: conformant=%v steps=%d elapsed=%v failing=%v\n", i+1, *runs, o.Seed, r.Conformant(), r.StepsRun, r.Elapsed.Round(time.Millisecond), failing)
		}
		if !r.Conformant() {
			deviating++
		}
		if rep == nil || rep.Conformant() { // keep the first deviating run
			rep = r
		}
	}
	if *runs > 1 {
		fmt.Fprintf(stderr, "%d of %d runs deviated\n", deviating, *runs)
	}
	if *jsonOut != "" {
		if err := writeReport(*jsonOut, "json", rep, stdout); err != nil {
			return fail(stderr, "%v", err)
		}
	}
	if *replayDir != "" {
		if err := saveReplays(*replayDir, rep, stderr); err != nil {
			return fail(stderr, "%v", err)
		}
	}
	if err := writeReport(*out, *format, rep, stdout); err != nil {
		return fail(stderr, "%v", err)
	}
	if !rep.Conformant() {
		return exitDeviates
	}
	return exitOK
}

func validFormat(f string) bool { return f == "md" || slices.Contains(render.Formats, f) }

func writeReport(path, format string, rep *conformance.Report, stdout io.Writer) error {
	if path == "" {
		return render.Write(stdout, format, rep)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create report file: %w", err)
	}
	w := bufio.NewWriter(f)
	if err := render.Write(w, format, rep); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

func saveReplays(dir string, rep *conformance.Report, stderr io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create replay directory: %w", err)
	}
	for i, f := range rep.Failures {
		path := filepath.Join(dir, fmt.Sprintf("%02d-%s.json", i+1, f.Rule))
		b, err := json.MarshalIndent(f.Replay, "", "  ")
		if err != nil {
			return fmt.Errorf("encode replay %s: %w", path, err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("write replay: %w", err)
		}
		fmt.Fprintf(stderr, "counterexample #%d (%s) saved: srqconform replay %s\n", i+1, f.Rule, path)
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func cmdRules(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("rules", stderr, "rules [-format text|markdown|json]")
	format := fs.String("format", "text", "text, markdown or json")
	if ok, code := parse(fs, args); !ok {
		return code
	}
	switch *format {
	case "markdown", "md":
		if err := model.WriteCatalogue(stdout); err != nil {
			return fail(stderr, "%v", err)
		}
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"rules": model.Rules(), "invariants": model.Invariants(), "seed_statements": model.SeedMap()}); err != nil {
			return fail(stderr, "%v", err)
		}
	case "text":
		for _, r := range model.Rules() {
			fmt.Fprintf(stdout, "%-20s %-22s %s\n%20s source: %s\n", r.ID, r.Kind, r.Statement, "", r.Source)
			if len(r.Fields) > 0 {
				fmt.Fprintf(stdout, "%20s profile fields: %s\n", "", strings.Join(r.Fields, ", "))
			}
		}
	default:
		return fail(stderr, "unknown format %q: want text, markdown or json", *format)
	}
	return exitOK
}

func cmdProfiles(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("profiles", stderr, "profiles [-format text|yaml|json] [NAME|FILE]")
	format := fs.String("format", "text", "text, or yaml or json: the profile file format (-profile FILE reads it)")
	if ok, code := parse(fs, args); !ok {
		return code
	}
	if *format != "text" {
		return printProfileFile(fs, *format, stdout, stderr)
	}
	switch fs.NArg() {
	case 0:
		for _, n := range model.ProfileNames() {
			p, _ := model.ProfileByName(n)
			fmt.Fprintf(stdout, "%-10s %s\n", n, p.Description)
			if d := p.Departures(); len(d) > 0 {
				fmt.Fprintf(stdout, "%-10s departs from the documented semantics in: %s\n", "", strings.Join(d, ", "))
			}
		}
	case 1:
		p, err := profileArg(fs.Arg(0))
		if err != nil {
			return fail(stderr, "%v", err)
		}
		fmt.Fprintf(stdout, "%s: %s\n\n", p.Name, p.Description)
		for _, f := range model.FieldNames() {
			n := p.Notes[f]
			mark := "unverified"
			if n.Verified {
				mark = "verified"
			}
			fmt.Fprintf(stdout, "%-17s %s\n%17s (%s) %s\n", f, p.Field(f), "", mark, n.Source)
		}
	default:
		return fail(stderr, "profiles takes at most one name, got %q", fs.Args())
	}
	return exitOK
}

func cmdReplay(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("replay", stderr, "replay [flags] FILE")
	var dev deviceFlags
	dev.register(fs)
	profile := fs.String("profile", "", "profile (default: the one in the file)")
	wait := fs.Duration("wait", 2*time.Second, "how long a poll waits for expected completions and events")
	settle := fs.Duration("settle", 0, "how long a poll then looks for unexpected ones")
	if ok, code := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return fail(stderr, "replay takes one replay file, got %d arguments", fs.NArg())
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return fail(stderr, "open replay file: %v", err)
	}
	rf, ops, err := conformance.ReadReplay(f)
	f.Close()
	if err != nil {
		return fail(stderr, "%s: %v", fs.Arg(0), err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	cfg := rf.Config
	name := rf.Driver
	if set["driver"] {
		name = dev.driver
	}
	if set["d"] || set["i"] || set["x"] || set["deviations"] {
		cfg = dev.config()
	}
	pname := rf.Profile
	if *profile != "" {
		pname = *profile
	}
	p, err := profileArg(pname)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	drv, err := driverByName(name)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	ctx, cancel := interruptible()
	defer cancel()
	tr, err := conformance.Replay(ctx, drv, cfg, p, rf.Relaxed, ops, conformance.Options{Wait: *wait, Settle: *settle})
	if err != nil {
		return fail(stderr, "%v", err)
	}
	fmt.Fprintf(stdout, "replay of %s (%s) on driver %s, profile %s\n%s", fs.Arg(0), rf.Source, name, p.Name, tr.Text())
	switch {
	case tr.Deviation != nil:
		rule := tr.Deviation.Rule
		if tr.Diagnosis != nil && len(tr.Diagnosis.Rules) > 0 {
			rule = strings.Join(tr.Diagnosis.Rules, " and ")
		}
		fmt.Fprintf(stdout, "deviation reproduced: rule %s\n", rule)
		return exitDeviates
	case tr.Err != "":
		fmt.Fprintf(stderr, "srqconform: replay stopped: %s\n", tr.Err)
		return exitUsage
	}
	fmt.Fprintln(stdout, "no deviation: the trace passes")
	return exitOK
}
