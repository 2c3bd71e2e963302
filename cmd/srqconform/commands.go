package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/conformance/render"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// deviceFlags are the flags that select a driver and device (perftest's -d,
// -i and -x are the convention).
type deviceFlags struct {
	driver, device, deviations, conn string
	port, gid                        int
}

func (d *deviceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.driver, "driver", "emu", "driver: emu (built-in emulator) or cgo (libibverbs)")
	fs.StringVar(&d.device, "d", "", "device name as ibv_devinfo shows it (default: the first)")
	fs.IntVar(&d.port, "i", 1, "port number")
	fs.IntVar(&d.gid, "x", 1, "GID index (RoCE)")
	fs.StringVar(&d.conn, "conn", "", "cgo only: how peers connect, verbs (ibv_modify_qp) or rdmacm (librdmacm; default on iWARP, where it is the only way)")
	fs.StringVar(&d.deviations, "deviations", "", "emulator only: comma-separated deviations or a set (rxe, rxe-6.1, mlx5, siw); srqconform deviations lists them")
}

func (d *deviceFlags) config() drivers.Config {
	cfg := drivers.Config{Device: d.device, Port: d.port, GIDIndex: d.gid}
	cfg.Options = map[string]string{}
	if d.deviations != "" {
		cfg.Options["deviations"] = d.deviations
	}
	if d.conn != "" {
		cfg.Options["conn"] = d.conn
	}
	return cfg
}

// defaultBudget is the time a run gives its random cases when neither
// -cases nor -duration is given: seconds on the emulator, where that is
// tens of thousands of steps; a minute on a device, where steps cost
// round trips.
var defaultBudget = map[string]time.Duration{"emu": conformance.DefaultBudget, "cgo": time.Minute}

func defaultBudgetText() string {
	return fmt.Sprintf("%v on the emulator, %v on a device", defaultBudget["emu"], defaultBudget["cgo"])
}

func fail(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "srqconform: "+format+"\n", a...)
	return exitUsage
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", stdout, stderr, "run [flags]")
	var dev deviceFlags
	dev.register(fs.FlagSet)
	profile := fs.String("profile", "documented", "profile the device is held to: a built-in name (see srqconform profiles) or a profile file (.yaml, .json)")
	seed := fs.Uint64("seed", 0, "seed for the random cases (0: pick one; it is reported)")
	cases := fs.Int("cases", 0, "number of random cases (0: scenarios only); with no -cases and no -duration the budget is time: "+defaultBudgetText())
	duration := fs.Duration("duration", 0, "time budget for the random cases: run them until it is spent (with -cases, at most that many)")
	failFast := fs.Bool("failfast", false, "stop at the first failure (diagnosed and reported)")
	steps := fs.Int("steps", 40, "most steps per random case")
	rules := fs.String("rules", "", "comma-separated rule IDs: run only their scenarios")
	format := fs.String("format", "text", "report format: "+strings.Join(render.Formats, ", "))
	out := fs.String("o", "", "write the report to this file (default: standard output)")
	replayDir := fs.String("replay-dir", "", "save every counterexample as a replay file in this directory")
	wait := fs.Duration("wait", 2*time.Second, "how long a poll waits for expected completions and events")
	settle := fs.Duration("settle", 0, "how long a poll then looks for unexpected ones (0: the driver's default)")
	quiet := fs.Bool("q", false, "no progress on the terminal")
	progressLog := fs.Bool("progress-log", false, "print a line per finished scenario or random case on stderr, terminal or not (for logs and the vm console: where a run stands when it stops)")
	runs := fs.Int("runs", 1, "repeat the whole run with seeds seed, seed+1, ...; the report is the first deviating run's, else the last (an interrupted or failed run's, when one stops the sequence)")
	jsonOut := fs.String("json", "", "also write the JSON report to this file")
	knownFile := fs.String("known", "", "a file of rules the device is known to break, one \"RULE-ID # why\" a line: when only those fail the exit status is 0 (the report still shows them)")
	parallel := fs.Int("parallel", 1, "with -runs: make up to this many runs at once, each in a process of its own with its own device context (waits on the device overlap; the reports and the exit status are as without it)")
	if ok, code := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "run takes no arguments, got %q", fs.Args())
	}
	if *parallel < 1 {
		return fail(stderr, "-parallel must be at least 1, got %d", *parallel)
	}
	known, err := conformance.ReadKnown(*knownFile)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if err := dev.checkDevice(); err != nil {
		return fail(stderr, "%v", err)
	}
	if err := fs.durations("wait", "settle"); err != nil {
		return fail(stderr, "%v", err)
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
	if *duration < 0 {
		return fail(stderr, "-duration must not be negative, got %v", *duration)
	}
	opts := conformance.Options{Profile: p, Seed: *seed, Cases: *cases, Steps: *steps, Wait: *wait, Settle: *settle, Duration: *duration, FailFast: *failFast}
	casesSet, durationSet := false, false
	fs.Visit(func(f *flag.Flag) {
		casesSet = casesSet || f.Name == "cases"
		durationSet = durationSet || f.Name == "duration"
	})
	switch {
	case !casesSet && !durationSet:
		opts.Cases, opts.Duration = -1, defaultBudget[dev.driver] // explore deeply by default
	case *duration > 0 && !casesSet:
		opts.Cases = -1 // the budget alone decides
		opts.Duration = *duration
	case *cases == 0:
		opts.Cases, opts.Duration = -1, 0
	}
	if opts.Rules, err = parseRules(*rules); err != nil {
		return fail(stderr, "%v", err)
	}
	outs := outputs{report: *out, format: *format, json: *jsonOut, replayDir: *replayDir}
	if err := outs.check(); err != nil {
		return fail(stderr, "%v", err)
	}
	switch {
	case *progressLog:
		start := time.Now()
		opts.Progress = func(done, total int, what string) {
			fmt.Fprintf(stderr, "srqconform: [%d/%d %s] %s\n", done, total, time.Since(start).Round(time.Second), what)
		}
	case !*quiet && isTerminal(stderr):
		opts.Progress = func(done, total int, what string) {
			fmt.Fprintf(stderr, "\r\033[K[%d/%d] %s", done, total, what)
			if done == total {
				fmt.Fprint(stderr, "\r\033[K")
			}
		}
	}
	ctx, stop := interruptible(stderr)
	defer stop()
	if opts.Seed == 0 {
		opts.Seed = uint64(time.Now().UnixNano()) >> 1
	}
	var rep *conformance.Report
	var deviatingSeeds []uint64
	next := func(i int) (*conformance.Report, error) {
		o := opts
		o.Seed = opts.Seed + uint64(i)
		return conformance.Check(ctx, drv, dev.config(), o)
	}
	isolated := isolatedRuns(dev.driver, *runs, *parallel)
	var lost []string // the runs whose child gave no report
	if isolated {
		var cleanup func()
		next, cleanup = runChildren(ctx, fs.FlagSet, opts.Seed, *runs, *parallel, stderr)
		defer cleanup()
	}
	started := time.Now()
	total, inconclusive := 0, 0
	unknownElsewhere := false // a run failed a rule -known does not list
	for i := range *runs {
		if rep != nil && interrupted(ctx) { // between two runs
			rep.Interrupted = true
			break
		}
		o := opts
		o.Seed = opts.Seed + uint64(i)
		r, err := next(i)
		if r == nil { // the device did not open, or a child gave no report
			if rep != nil && interrupted(ctx) {
				rep.Interrupted = true
				break
			}
			if isolated && !interrupted(ctx) {
				// The child died (a device value it could not survive):
				// that costs its own run only; the others are made and
				// reported, with the loss as the report's Error (exit 3).
				lost = append(lost, fmt.Sprintf("run %d of %d (seed %d) gave no report: %v", i+1, *runs, o.Seed, err))
				continue
			}
			if rep != nil { // keep the runs already made: report them, stopped
				rep.Error = fmt.Sprintf("run %d of %d (seed %d) gave no report: %v", i+1, *runs, o.Seed, err)
				break
			}
			if interrupted(ctx) {
				fmt.Fprintf(stderr, "srqconform: interrupted before the device opened; no report\n")
				return exitInterrupted
			}
			return fail(stderr, "%v", err)
		}
		total += r.StepsRun
		inconclusive += r.Inconclusive
		if err != nil && !r.Interrupted && r.Error == "" {
			r.Error = err.Error() // Check sets one of them; make sure
		}
		if *runs > 1 {
			var failing []string
			for _, f := range r.Failures {
				failing = append(failing, f.Rule)
			}
			fmt.Fprintf(stderr, "run %d/%d seed %d: conformant=%v steps=%d elapsed=%v failing=%v inconclusive=%d%s\n", i+1, *runs, o.Seed, r.Conformant(), r.StepsRun, r.Elapsed.Round(time.Millisecond), failing, r.Inconclusive, stoppedNote(r))
		}
		if r.Interrupted || r.Error != "" {
			rep = r // the partial report, which says why it stopped
			break
		}
		if !r.Conformant() {
			deviatingSeeds = append(deviatingSeeds, o.Seed)
			if known == nil || !r.FailingOnly() || len(known.Unknown(r, io.Discard)) > 0 {
				unknownElsewhere = true
			}
		}
		if rep == nil || rep.Conformant() { // keep the first deviating run
			rep = r
		}
	}
	if len(lost) > 0 {
		if rep == nil {
			fmt.Fprintf(stderr, "srqconform: no run gave a report:\n%s\n", strings.Join(lost, "\n"))
			return exitHarness
		}
		rep.Error = strings.Join(append(lost, rep.Error), "; ")
		rep.Error = strings.TrimSuffix(rep.Error, "; ")
	}
	if *runs > 1 {
		wall := time.Since(started)
		fmt.Fprintf(stderr, "%d of %d runs deviated; %d inconclusive steps; %d steps in %v (%.1f steps/s, %d at once)\n", len(deviatingSeeds), *runs,
			inconclusive, total, wall.Round(time.Millisecond), float64(total)/wall.Seconds(), min(*parallel, *runs))
	}
	if err := outs.write(rep, stdout, stderr); err != nil {
		return fail(stderr, "%v", err)
	}
	return finalStatus(rep, outs, deviatingSeeds, known, unknownElsewhere, stderr)
}

// stoppedNote says, on a per-run line, why a run stopped early.
func stoppedNote(r *conformance.Report) string {
	switch {
	case r.Interrupted:
		return " (interrupted)"
	case r.Error != "":
		return " (harness error)"
	}
	return ""
}

// finalStatus prints the one line a partial report gets on stderr and
// returns the exit status for rep. deviatingSeeds are the seeds of earlier
// runs (-runs) that deviated.
// known, when not nil, lets a deviating run exit 0 if every rule it fails
// is a known finding and no other run (unknownElsewhere) failed another.
func finalStatus(rep *conformance.Report, outs outputs, deviatingSeeds []uint64, known conformance.Known, unknownElsewhere bool, stderr io.Writer) int {
	earlier := ""
	if (rep.Interrupted || rep.Error != "") && len(deviatingSeeds) > 0 {
		earlier = fmt.Sprintf("; earlier runs deviated with seeds %v", deviatingSeeds)
	}
	switch {
	case rep.Interrupted:
		fmt.Fprintf(stderr, "srqconform: interrupted: partial report (%d steps run) written to %s%s\n", rep.StepsRun, outs.where(), earlier)
		return exitInterrupted
	case rep.Error != "":
		fmt.Fprintf(stderr, "srqconform: harness error, partial report written to %s: %s%s\n", outs.where(), rep.Error, earlier)
		return exitHarness
	}
	var unknown []string
	if known != nil {
		unknown = known.Unknown(rep, stderr)
	}
	switch {
	case rep.Conformant():
		return exitOK
	case known != nil && !unknownElsewhere && len(unknown) == 0 && rep.FailingOnly():
		fmt.Fprintf(stderr, "srqconform: every failing rule is a known finding (-known): exit 0\n")
		return exitOK
	}
	return exitDeviates
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
	fs := newFlagSet("rules", stdout, stderr, "rules [-format text|markdown|json]")
	format := fs.String("format", "text", "text, markdown or json")
	if ok, code := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "rules takes no arguments, got %q", fs.Args())
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
	fs := newFlagSet("profiles", stdout, stderr, "profiles [-format text|yaml|json] [NAME|FILE]")
	format := fs.String("format", "text", "text, or yaml or json: the profile file format (-profile FILE reads it)")
	if ok, code := fs.parse(args); !ok {
		return code
	}
	if *format != "text" {
		return printProfileFile(fs.FlagSet, *format, stdout, stderr)
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
	fs := newFlagSet("replay", stdout, stderr, "replay [flags] FILE")
	var dev deviceFlags
	dev.register(fs.FlagSet)
	profile := fs.String("profile", "", "profile: a built-in name or a profile file (default: the one the replay file holds or names)")
	wait := fs.Duration("wait", 2*time.Second, "how long a poll waits for expected completions and events")
	settle := fs.Duration("settle", 0, "how long a poll then looks for unexpected ones")
	if ok, code := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return fail(stderr, "replay takes one replay file, got %d arguments", fs.NArg())
	}
	if err := dev.check(); err != nil {
		return fail(stderr, "%v", err)
	}
	if err := fs.durations("wait", "settle"); err != nil {
		return fail(stderr, "%v", err)
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
	if set["d"] || set["i"] || set["x"] || set["deviations"] || set["conn"] {
		cfg = dev.config()
	}
	if set["driver"] || set["deviations"] || set["conn"] {
		d := dev
		d.driver = name
		if err := d.checkDevice(); err != nil {
			return fail(stderr, "%v", err)
		}
	}
	p, err := rf.ProfileOf() // ReadReplay checked it
	if *profile != "" {
		p, err = profileArg(*profile)
	}
	if err != nil {
		return fail(stderr, "%v", err)
	}
	drv, err := driverByName(name)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	ctx, stop := interruptible(stderr)
	defer stop()
	tr, err := conformance.Replay(ctx, drv, cfg, p, rf.Relaxed, ops, conformance.Options{Wait: *wait, Settle: *settle})
	if err != nil {
		if interrupted(ctx) {
			fmt.Fprintf(stderr, "srqconform: interrupted: %v\n", err)
			return exitInterrupted
		}
		return fail(stderr, "%v", err)
	}
	if tr.Err != "" && tr.Unpredictable() && !interrupted(ctx) {
		return fail(stderr, "%s: not a trace the model accepts: %s", fs.Arg(0), tr.Err)
	}
	fmt.Fprintf(stdout, "replay of %s (%s) on driver %s, profile %s\n%s", fs.Arg(0), rf.Source, name, p.Name, tr.Text())
	switch {
	case interrupted(ctx):
		fmt.Fprintf(stdout, "INTERRUPTED after %d of %d steps\n", len(tr.Steps), len(ops))
		fmt.Fprintf(stderr, "srqconform: interrupted: the replay stopped after %d of %d steps\n", len(tr.Steps), len(ops))
		return exitInterrupted
	case tr.Deviation != nil:
		rule := tr.Deviation.Rule
		if d := tr.Diagnosis; d != nil && len(d.Rules) > 0 {
			rule = strings.Join(d.Rules, " and ")
			// The run that wrote the file saw more of the device: where
			// this trace alone is as consistent with the rule it blamed,
			// say so in its terms.
			for _, set := range d.Explains() {
				if len(set) == 1 && set[0] == rf.Rule {
					rule = rf.Rule
				}
			}
		}
		fmt.Fprintf(stdout, "deviation reproduced: rule %s\n", rule)
		return exitDeviates
	case tr.Err != "":
		fmt.Fprintf(stderr, "srqconform: harness error: the replay stopped: %s\n", tr.Err)
		return exitHarness
	case tr.Inconclusive != nil:
		fmt.Fprintf(stdout, "inconclusive after %d of %d steps (no deviation shown, none ruled out): %v\n", len(tr.Steps), len(ops), tr.Inconclusive)
		return exitOK
	}
	fmt.Fprintln(stdout, "no deviation: the trace passes")
	return exitOK
}
