package main

import (
	"bufio"
	"context"
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

// runFlags are the flags of srqconform run.
type runFlags struct {
	dev                                                 deviceFlags
	profile, rules, format, out, replayDir, json, known string
	seed                                                uint64
	cases, steps, runs, parallel                        int
	duration, wait, settle                              time.Duration
	failFast, quiet, progressLog                        bool
}

func (f *runFlags) register(fs *flag.FlagSet) {
	f.dev.register(fs)
	fs.StringVar(&f.profile, "profile", "documented", "profile the device is held to: a built-in name (see srqconform profiles) or a profile file (.yaml, .json)")
	fs.Uint64Var(&f.seed, "seed", 0, "seed for the random cases (0: pick one; it is reported)")
	fs.IntVar(&f.cases, "cases", 0, "number of random cases (0: scenarios only); with no -cases and no -duration the budget is time: "+defaultBudgetText())
	fs.DurationVar(&f.duration, "duration", 0, "time budget for the random cases: run them until it is spent (with -cases, at most that many)")
	fs.BoolVar(&f.failFast, "failfast", false, "stop at the first failure (diagnosed and reported)")
	fs.IntVar(&f.steps, "steps", 40, "most steps per random case")
	fs.StringVar(&f.rules, "rules", "", "comma-separated rule IDs: run only their scenarios")
	fs.StringVar(&f.format, "format", "text", "report format: "+strings.Join(render.Formats, ", "))
	fs.StringVar(&f.out, "o", "", "write the report to this file (default: standard output)")
	fs.StringVar(&f.replayDir, "replay-dir", "", "save every counterexample as a replay file in this directory")
	fs.DurationVar(&f.wait, "wait", 2*time.Second, "how long a poll waits for expected completions and events")
	fs.DurationVar(&f.settle, "settle", 0, "how long a poll then looks for unexpected ones (0: the driver's default)")
	fs.BoolVar(&f.quiet, "q", false, "no progress on the terminal")
	fs.BoolVar(&f.progressLog, "progress-log", false, "print a line per finished scenario or random case on stderr, terminal or not (for logs and the vm console: where a run stands when it stops)")
	fs.IntVar(&f.runs, "runs", 1, "repeat the whole run with seeds seed, seed+1, ...; the report is the first deviating run's, else the last (an interrupted or failed run's, when one stops the sequence)")
	fs.StringVar(&f.json, "json", "", "also write the JSON report to this file")
	fs.StringVar(&f.known, "known", "", "a file of rules the device is known to break, one \"RULE-ID # why\" a line: when only those fail the exit status is 0 (the report still shows them)")
	fs.IntVar(&f.parallel, "parallel", 1, "with -runs: make up to this many runs at once, each in a process of its own with its own device context (waits on the device overlap; the reports and the exit status are as without it)")
}

// runSetup is what the flags of srqconform run resolve to.
type runSetup struct {
	opts  conformance.Options
	drv   drivers.Driver
	known conformance.Known
	outs  outputs
}

// resolve checks the parsed flags of srqconform run and turns them into
// the options of its runs; its error is a usage error.
func (f *runFlags) resolve(fs *flagSet) (runSetup, error) {
	var s runSetup
	if fs.NArg() > 0 {
		return s, fmt.Errorf("run takes no arguments, got %q", fs.Args())
	}
	if f.parallel < 1 {
		return s, fmt.Errorf("-parallel must be at least 1, got %d", f.parallel)
	}
	var err error
	if s.known, err = conformance.ReadKnown(f.known); err != nil {
		return s, err
	}
	if err := f.dev.checkDevice(); err != nil {
		return s, err
	}
	if err := fs.durations("wait", "settle"); err != nil {
		return s, err
	}
	if f.runs < 1 {
		return s, fmt.Errorf("-runs must be at least 1, got %d", f.runs)
	}
	if f.cases < 0 || f.steps <= 0 {
		return s, fmt.Errorf("-cases must be >= 0 and -steps > 0 (got %d, %d)", f.cases, f.steps)
	}
	if !validFormat(f.format) {
		return s, fmt.Errorf("unknown format %q: want one of %s", f.format, strings.Join(render.Formats, ", "))
	}
	p, err := profileArg(f.profile)
	if err != nil {
		return s, err
	}
	if s.drv, err = driverByName(f.dev.driver); err != nil {
		return s, err
	}
	if f.duration < 0 {
		return s, fmt.Errorf("-duration must not be negative, got %v", f.duration)
	}
	s.opts = conformance.Options{Profile: p, Seed: f.seed, Cases: f.cases, Steps: f.steps, Wait: f.wait, Settle: f.settle, Duration: f.duration, FailFast: f.failFast}
	casesSet, durationSet := fs.set("cases"), fs.set("duration")
	switch {
	case !casesSet && !durationSet:
		s.opts.Cases, s.opts.Duration = -1, defaultBudget[f.dev.driver] // explore deeply by default
	case f.duration > 0 && !casesSet:
		s.opts.Cases = -1 // the budget alone decides
		s.opts.Duration = f.duration
	case f.cases == 0:
		s.opts.Cases, s.opts.Duration = -1, 0
	}
	if s.opts.Rules, err = parseRules(f.rules); err != nil {
		return s, err
	}
	s.outs = outputs{report: f.out, format: f.format, json: f.json, replayDir: f.replayDir}
	if err := s.outs.check(); err != nil {
		return s, err
	}
	return s, nil
}

// progress returns the progress callback -progress-log and -q ask for,
// or nil for none.
func (f *runFlags) progress(stderr io.Writer) func(done, total int, what string) {
	switch {
	case f.progressLog:
		start := time.Now()
		return func(done, total int, what string) {
			fmt.Fprintf(stderr, "srqconform: [%d/%d %s] %s\n", done, total, time.Since(start).Round(time.Second), what)
		}
	case !f.quiet && isTerminal(stderr):
		return func(done, total int, what string) {
			fmt.Fprintf(stderr, "\r\033[K[%d/%d] %s", done, total, what)
			if done == total {
				fmt.Fprint(stderr, "\r\033[K")
			}
		}
	}
	return nil
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", stdout, stderr, "run [flags]")
	var f runFlags
	f.register(fs.FlagSet)
	if ok, code := fs.parse(args); !ok {
		return code
	}
	s, err := f.resolve(fs)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	s.opts.Progress = f.progress(stderr)
	ctx, stop := interruptible(stderr)
	defer stop()
	if s.opts.Seed == 0 {
		s.opts.Seed = uint64(time.Now().UnixNano()) >> 1
	}
	seq := runSequence{runs: f.runs, seed: s.opts.Seed, known: s.known, stderr: stderr}
	seq.next = func(i int) (*conformance.Report, error) {
		o := s.opts
		o.Seed = s.opts.Seed + uint64(i)
		return conformance.Check(ctx, s.drv, f.dev.config(), o)
	}
	seq.isolated = isolatedRuns(f.dev.driver, f.runs, f.parallel)
	if seq.isolated {
		var cleanup func()
		seq.next, cleanup = runChildren(ctx, fs.FlagSet, s.opts.Seed, f.runs, f.parallel, stderr)
		defer cleanup()
	}
	started := time.Now()
	if code, done := seq.run(ctx); done {
		return code
	}
	rep := seq.rep
	if len(seq.lost) > 0 {
		if rep == nil {
			fmt.Fprintf(stderr, "srqconform: no run gave a report:\n%s\n", strings.Join(seq.lost, "\n"))
			return exitHarness
		}
		rep.Error = strings.Join(append(seq.lost, rep.Error), "; ")
		rep.Error = strings.TrimSuffix(rep.Error, "; ")
	}
	if f.runs > 1 {
		wall := time.Since(started)
		fmt.Fprintf(stderr, "%d of %d runs deviated; %d inconclusive steps; %d steps in %v (%.1f steps/s, %d at once)\n", len(seq.deviatingSeeds), f.runs,
			seq.inconclusive, seq.total, wall.Round(time.Millisecond), float64(seq.total)/wall.Seconds(), min(f.parallel, f.runs))
	}
	if err := s.outs.write(rep, stdout, stderr); err != nil {
		return fail(stderr, "%v", err)
	}
	return finalStatus(rep, s.outs, seq.deviatingSeeds, s.known, seq.unknownElsewhere, stderr)
}

// runSequence makes the runs of srqconform run one after another (or
// gathers them from child processes when isolated) and keeps the report
// to show: the first run failing a rule -known does not list, else the
// first deviating run's, else the last.
type runSequence struct {
	runs     int
	seed     uint64
	known    conformance.Known
	isolated bool // each run in a child process (runChildren)
	next     func(i int) (*conformance.Report, error)
	stderr   io.Writer

	rep              *conformance.Report
	deviatingSeeds   []uint64
	lost             []string // the runs whose child gave no report
	total            int      // steps over every run
	inconclusive     int
	unknownElsewhere bool // a run failed a rule -known does not list
	repUnknown       bool // rep is such a run
}

// run makes the runs. When done is true the command ends at once with
// code (no run could report); otherwise q.rep is the report to write.
func (q *runSequence) run(ctx context.Context) (code int, done bool) {
	for i := range q.runs {
		if q.rep != nil && interrupted(ctx) { // between two runs
			q.rep.Interrupted = true
			break
		}
		seed := q.seed + uint64(i)
		r, err := q.next(i)
		if r == nil { // the device did not open, or a child gave no report
			if q.rep != nil && interrupted(ctx) {
				q.rep.Interrupted = true
				break
			}
			if q.isolated && !interrupted(ctx) {
				// The child died (a device value it could not survive):
				// that costs its own run only; the others are made and
				// reported, with the loss as the report's Error (exit 3).
				q.lost = append(q.lost, fmt.Sprintf("run %d of %d (seed %d) gave no report: %v", i+1, q.runs, seed, err))
				continue
			}
			if q.rep != nil { // keep the runs already made: report them, stopped
				q.rep.Error = fmt.Sprintf("run %d of %d (seed %d) gave no report: %v", i+1, q.runs, seed, err)
				break
			}
			if interrupted(ctx) {
				fmt.Fprintf(q.stderr, "srqconform: interrupted before the device opened; no report\n")
				return exitInterrupted, true
			}
			return fail(q.stderr, "%v", err), true
		}
		if stop := q.add(i, seed, r, err); stop {
			break
		}
	}
	return 0, false
}

// add counts run i's report r (err is what made it) and says whether the
// sequence stops there.
func (q *runSequence) add(i int, seed uint64, r *conformance.Report, err error) (stop bool) {
	q.total += r.StepsRun
	q.inconclusive += r.Inconclusive
	if err != nil && !r.Interrupted && r.Error == "" {
		r.Error = err.Error() // Check sets one of them; make sure
	}
	if q.runs > 1 {
		var failing []model.RuleID
		for _, f := range r.Failures {
			failing = append(failing, f.Rule)
		}
		fmt.Fprintf(q.stderr, "run %d/%d seed %d: conformant=%v steps=%d elapsed=%v failing=%v inconclusive=%d%s\n", i+1, q.runs, seed, r.Conformant(), r.StepsRun, r.Elapsed.Round(time.Millisecond), failing, r.Inconclusive, stoppedNote(r))
	}
	if r.Interrupted || r.Error != "" {
		q.rep = r // the partial report, which says why it stopped
		return true
	}
	unknown := false
	if !r.Conformant() {
		q.deviatingSeeds = append(q.deviatingSeeds, seed)
		unknown = q.known == nil || !r.FailingOnly() || len(q.known.Unknown(r, io.Discard)) > 0
		q.unknownElsewhere = q.unknownElsewhere || unknown
	}
	// Keep the first deviating run; but a run that fails a rule -known
	// does not list replaces one that failed known rules only, so that
	// the report shown is the one that decides the exit status.
	if q.rep == nil || q.rep.Conformant() || (unknown && !q.repUnknown) {
		q.rep = r
		q.repUnknown = unknown
	}
	return false
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
	var unknown []model.RuleID
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
		rule := tr.Deviation.Rule.String()
		if d := tr.Diagnosis; d != nil && len(d.Rules) > 0 {
			rule = strings.Join(model.RuleNames(d.Rules), " and ")
			// The run that wrote the file saw more of the device: where
			// this trace alone is as consistent with the rule it blamed,
			// say so in its terms.
			for _, set := range d.Explains() {
				if len(set) == 1 && set[0] == rf.Rule {
					rule = rf.Rule.String()
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
