package main

import (
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

	"github.com/srqconform/srqconform/concurrent"
	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// concurrentFlags are the flags of srqconform concurrent.
type concurrentFlags struct {
	dev                                                         deviceFlags
	profile, htmlDir, historyDir, checkFile, format, out, known string
	seed, checkMemory                                           uint64
	runs, maxOps, posters, rc, ud                               int
	duration, checkTimeout, reduce                              time.Duration
	noCycles, noRaces, noArm, recordOnly                        bool
}

func (f *concurrentFlags) register(fs *flag.FlagSet) {
	f.dev.register(fs)
	fs.StringVar(&f.profile, "profile", "documented", "profile the device is held to: a built-in name (see srqconform profiles) or a profile file")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of the first history's client choices (0: pick one; it is reported)")
	fs.IntVar(&f.runs, "runs", 1, "histories to record and check, with seeds seed, seed+1, ...")
	fs.DurationVar(&f.duration, "duration", 2*time.Second, "most time one history records")
	fs.IntVar(&f.maxOps, "max-ops", 600, "most operations one history holds (porcupine's search grows with it)")
	fs.IntVar(&f.posters, "posters", 2, "threads posting lists to the SRQ")
	fs.IntVar(&f.rc, "rc", 0, "RC QPs, each with a sender thread (0 with -ud 0: 2 RC and, where the device has UD, 1 UD)")
	fs.IntVar(&f.ud, "ud", 0, "UD QPs, each with a sender thread")
	fs.BoolVar(&f.noCycles, "no-cycles", false, "leave the QPs in RTS (otherwise senders take their QP to ERR and back through RESET now and then)")
	fs.BoolVar(&f.noRaces, "no-races", false, "keep a cycle's move to ERR apart from the QP's messages (otherwise, on a UD QP, cycles come more often and each from RTS moves it to ERR while a burst of messages to it is in flight)")
	fs.BoolVar(&f.noArm, "no-arm", false, "never arm the SRQ limit")
	fs.DurationVar(&f.checkTimeout, "check-timeout", concurrent.DefaultCheckTimeout, "bound on porcupine's search per history (a history not decided by then is 'unknown')")
	fs.Uint64Var(&f.checkMemory, "check-memory", 0, checkMemoryUsage())
	fs.DurationVar(&f.reduce, "reduce", 20*time.Second, "time spent reducing a violating history (0: none)")
	fs.StringVar(&f.htmlDir, "html", "", "write porcupine's visualisation of each violation to this directory (violation-SEED.html)")
	fs.StringVar(&f.historyDir, "history-dir", "", "write every history to this directory (history-SEED.json; check one again with -check)")
	fs.StringVar(&f.checkFile, "check", "", "check this saved history (-history-dir), or every history a JSON report holds (vm -concurrent -json keeps the violating ones), instead of running a device")
	fs.BoolVar(&f.recordOnly, "record-only", false, "record the histories into the JSON report without checking them (vm -concurrent checks them on the host, where there is memory for porcupine)")
	fs.StringVar(&f.format, "format", "text", "report format: text, markdown or json")
	fs.StringVar(&f.out, "o", "", "write the report to this file (default: standard output)")
	fs.StringVar(&f.known, "known", "", "a file of rules the device is known to break (see run -known): violations of only those exit 0")
}

// check checks the parsed flags of srqconform concurrent; its error is a
// usage error.
func (f *concurrentFlags) check(fs *flagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("concurrent takes no arguments, got %q", fs.Args())
	}
	if !slices.Contains([]string{"text", "markdown", "json"}, f.format) {
		return fmt.Errorf("unknown format %q: want text, markdown or json", f.format)
	}
	if f.runs < 1 || f.maxOps < 1 || f.posters < 1 || f.rc < 0 || f.ud < 0 {
		return fmt.Errorf("-runs, -max-ops and -posters must be at least 1 and -rc, -ud at least 0 (got %d, %d, %d, %d, %d)", f.runs, f.maxOps, f.posters, f.rc, f.ud)
	}
	if err := fs.durations("duration", "check-timeout", "reduce"); err != nil {
		return err
	}
	if err := checkMemoryFlag(f.checkMemory); err != nil {
		return err
	}
	if f.duration == 0 {
		return fmt.Errorf("-duration must be positive")
	}
	if err := f.dev.checkDevice(); err != nil {
		return err
	}
	if f.checkFile != "" {
		for _, name := range []string{"driver", "d", "i", "x", "conn", "deviations", "profile", "seed", "runs", "duration", "max-ops", "posters", "rc", "ud", "no-cycles", "no-races", "no-arm", "history-dir", "record-only"} {
			if fs.set(name) {
				return fmt.Errorf("-%s goes with a run on a device, not with -check (a saved history holds its profile and operations)", name)
			}
		}
	}
	return nil
}

// baseCheckOptions are the checker's options from -check-timeout and
// -reduce.
func (f *concurrentFlags) baseCheckOptions() concurrent.CheckOptions {
	reduceBudget := f.reduce
	if reduceBudget == 0 {
		reduceBudget = -1
	}
	return concurrent.CheckOptions{Timeout: f.checkTimeout, ReduceBudget: reduceBudget, MemoryLimit: f.checkMemory << 20}
}

// checkMemoryUsage describes -check-memory, of concurrent and vm -concurrent.
func checkMemoryUsage() string {
	return fmt.Sprintf("bound, in MiB, on the heap porcupine's search per history may grow to (0: half the machine's memory, %d MiB here; a history not decided by then is 'unknown')", concurrent.DefaultMemoryLimit()>>20)
}

// maxCheckMemory is the largest -check-memory, in MiB (1 PiB): more would
// overflow the bound in bytes.
const maxCheckMemory = 1 << 30

// checkMemoryFlag checks -check-memory's value.
func checkMemoryFlag(mib uint64) error {
	if mib > maxCheckMemory {
		return fmt.Errorf("-check-memory %d: want at most %d MiB (0: the default)", mib, uint64(maxCheckMemory))
	}
	return nil
}

// checkOptions are the checker's options for the history of seed.
func (f *concurrentFlags) checkOptions(seed uint64) concurrent.CheckOptions {
	o := f.baseCheckOptions()
	if f.htmlDir != "" {
		o.HTML = filepath.Join(f.htmlDir, fmt.Sprintf("violation-%d.html", seed))
	}
	return o
}

// cmdConcurrent runs concurrent workloads on a device and checks each
// history for linearizability against the model (package concurrent), or
// checks a saved history (-check).
func cmdConcurrent(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("concurrent", stdout, stderr, "concurrent [flags]")
	var f concurrentFlags
	f.register(fs.FlagSet)
	if ok, code := fs.parse(args); !ok {
		return code
	}
	if err := f.check(fs); err != nil {
		return fail(stderr, "%v", err)
	}
	known, err := conformance.ReadKnown(f.known)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if err := checkWritable(f.out); err != nil {
		return fail(stderr, "-o: %v", err)
	}
	for _, d := range []struct{ flag, dir string }{{"-html", f.htmlDir}, {"-history-dir", f.historyDir}} {
		if err := checkDir(d.dir); err != nil {
			return fail(stderr, "%s: %v", d.flag, err)
		}
	}
	ctx, stop := interruptible(stderr)
	defer stop()
	if f.checkFile != "" {
		return f.checkSaved(ctx, known, stdout, stderr)
	}
	p, err := profileArg(f.profile)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	drv, err := driverByName(f.dev.driver)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	rep := &concurrent.Report{Profile: p.Name}
	if err := f.record(ctx, drv, p, rep, stderr); err != nil {
		return fail(stderr, "%v", err)
	}
	return concurrentStatus(rep, f.format, f.out, known, stdout, stderr)
}

// checkSaved is srqconform concurrent -check: it checks a saved history,
// or every history of a JSON report, again.
func (f *concurrentFlags) checkSaved(ctx context.Context, known conformance.Known, stdout, stderr io.Writer) int {
	if data, err := os.ReadFile(f.checkFile); err == nil && isConcurrentReport(data) {
		// A report with its histories (vm -concurrent -json): check
		// them all again.
		return hostConcurrentReport(ctx, data, 0, "", f.baseCheckOptions(), f.htmlDir, f.format, f.out, "", known, stdout, stderr)
	}
	h, err := concurrent.ReadHistory(f.checkFile)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	rep := &concurrent.Report{Device: h.Device, Kernel: h.Kernel, Profile: h.Profile}
	run := concurrent.NewHistoryRun(h, nil)
	run.History = h
	res, err := checkUnlessInterrupted(ctx, h, f.checkOptions(h.Seed))
	switch {
	case interrupted(ctx):
		rep.Interrupted = true
	case err != nil:
		return fail(stderr, "%v", err)
	default:
		run = concurrent.NewHistoryRun(h, res)
		run.History = h
	}
	rep.Runs = append(rep.Runs, run)
	return concurrentStatus(rep, f.format, f.out, known, stdout, stderr)
}

// record records -runs histories on drv and checks each (unless
// -record-only), into rep. It stops at the first error, which it sets in
// rep; the error it returns is one writing a history (-history-dir).
func (f *concurrentFlags) record(ctx context.Context, drv drivers.Driver, p model.Profile, rep *concurrent.Report, stderr io.Writer) error {
	first := f.seed
	if first == 0 {
		first = uint64(time.Now().UnixNano()) & (1<<53 - 1)
	}
	unchecked := func(h *concurrent.History) {
		run := concurrent.NewHistoryRun(h, nil)
		run.History = h
		rep.Runs = append(rep.Runs, run)
	}
	for i := range f.runs {
		s := first + uint64(i)
		h, err := concurrent.Run(ctx, drv, f.dev.config(), concurrent.Options{Profile: p, Seed: s, Duration: f.duration, MaxOps: f.maxOps,
			Posters: f.posters, RC: f.rc, UD: f.ud, NoCycles: f.noCycles, NoRaces: f.noRaces, NoArm: f.noArm})
		if h != nil {
			rep.Device, rep.Kernel = h.Device, h.Kernel
			if f.historyDir != "" {
				if werr := h.WriteFile(filepath.Join(f.historyDir, fmt.Sprintf("history-%d.json", s))); werr != nil {
					return werr
				}
			}
		}
		if interrupted(ctx) {
			// The history recorded until the signal is kept, unchecked:
			// checking it could take minutes.
			rep.Interrupted = true
			if h != nil && len(h.Ops) > 0 {
				unchecked(h)
			}
			return nil
		}
		if err != nil {
			rep.Error = err.Error()
			if h == nil || !h.Complete() {
				return nil
			}
		}
		if f.recordOnly {
			unchecked(h)
			fmt.Fprintf(stderr, "srqconform concurrent: seed %d: %d operations in %v, recorded\n", s, len(h.Ops), h.Wall.Round(time.Millisecond))
			if rep.Error != "" {
				return nil
			}
			continue
		}
		res, cerr := checkUnlessInterrupted(ctx, h, f.checkOptions(s))
		if interrupted(ctx) {
			unchecked(h)
			rep.Interrupted = true
			return nil
		}
		if cerr != nil {
			rep.Error = cerr.Error()
			return nil
		}
		run := concurrent.NewHistoryRun(h, res)
		if res.Violation() {
			run.History = h
		}
		rep.Runs = append(rep.Runs, run)
		fmt.Fprintf(stderr, "srqconform concurrent: seed %d: %d operations in %v, %s in %v %s\n", s, len(h.Ops), h.Wall.Round(time.Millisecond), res.Verdict, res.Time.Round(time.Millisecond), res.Rule)
		if rep.Error != "" {
			return nil
		}
	}
	return nil
}

// concurrentStatus writes the report and returns the exit status: 3 when
// the run stopped on an error, 1 on a violation of a rule -known does not
// list, else 0.
func concurrentStatus(rep *concurrent.Report, format, out string, known conformance.Known, stdout, stderr io.Writer) int {
	w := stdout
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return fail(stderr, "%v", err)
		}
		defer f.Close()
		w = f
	}
	var err error
	if format == "json" {
		err = rep.WriteJSON(w)
	} else {
		err = rep.WriteText(w, format == "markdown")
	}
	if err != nil {
		return fail(stderr, "write the report: %v", err)
	}
	where := out
	if where == "" {
		where = "standard output"
	}
	switch {
	case rep.Interrupted:
		fmt.Fprintf(stderr, "srqconform: interrupted: partial report (%d histories) written to %s\n", len(rep.Runs), where)
		return exitInterrupted
	case rep.Error != "":
		fmt.Fprintf(stderr, "srqconform concurrent: the run stopped: %s (report written to %s)\n", rep.Error, where)
		return exitHarness
	}
	var unknown, told []model.RuleID
	for _, run := range rep.Runs {
		res := run.Result
		if res == nil || !res.Violation() {
			continue
		}
		r, ok := knownCandidate(res, known)
		switch {
		case !ok:
			if !slices.Contains(unknown, res.Rule) {
				unknown = append(unknown, res.Rule)
			}
		case res.Rule != r:
			fmt.Fprintf(stderr, "srqconform concurrent: seed %d: a violation whose blame a bound cut at every scale: best guess %s, also explained by the known %s; not counted as a new departure\n", run.Seed, res.Rule, r)
		case !slices.Contains(told, r):
			told = append(told, r)
			fmt.Fprintf(stderr, "srqconform concurrent: %s violated, a known finding (%s)\n", r, known[r])
		}
	}
	if len(unknown) > 0 {
		fmt.Fprintf(stderr, "srqconform concurrent: violations of %s\n", strings.Join(model.RuleNames(unknown), ", "))
		return exitDeviates
	}
	return exitOK
}

// knownCandidate returns the first rule of res.Candidates that known
// lists: a decided blame counts as known only by its rule, an undecided
// one by any rule it names (a timer is never evidence of a new departure).
func knownCandidate(res *concurrent.Result, known conformance.Known) (model.RuleID, bool) {
	for _, r := range res.Candidates() {
		if _, ok := known[r]; ok {
			return r, true
		}
	}
	return 0, false
}

// hostConcurrentReport takes the JSON report a guest's srqconform
// concurrent -record-only wrote, checks each history on the host with
// base's bounds (reducing and drawing violations into htmlDir) and writes
// the report as asked.
func hostConcurrentReport(ctx context.Context, out []byte, guestExit int, kernel string, base concurrent.CheckOptions, htmlDir, format, outFile, jsonFile string, known conformance.Known, stdout, stderr io.Writer) int {
	var rep concurrent.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		return fail(stderr, "the guest's srqconform concurrent (exit %d) gave no report: %v", guestExit, err)
	}
	if rep.Kernel == "" {
		rep.Kernel = kernel
	}
	if htmlDir != "" {
		if err := os.MkdirAll(htmlDir, 0o755); err != nil {
			return fail(stderr, "%v", err)
		}
	}
	for i, run := range rep.Runs {
		if run.History == nil {
			continue
		}
		opts := base
		if htmlDir != "" {
			opts.HTML = filepath.Join(htmlDir, fmt.Sprintf("violation-%d.html", run.Seed))
		}
		res, err := checkUnlessInterrupted(ctx, run.History, opts)
		if interrupted(ctx) {
			rep.Interrupted = true
			break
		}
		if err != nil {
			return fail(stderr, "check the guest's history of seed %d: %v", run.Seed, err)
		}
		rep.Runs[i].Result = res
		if !res.Violation() {
			rep.Runs[i].History = nil // kept for violations only
		}
		fmt.Fprintf(stderr, "srqconform concurrent: seed %d: %d operations in %v, %s in %v %s\n", run.Seed, run.Ops, run.Wall.Round(time.Millisecond), res.Verdict, res.Time.Round(time.Millisecond), res.Rule)
	}
	if jsonFile != "" {
		f, err := os.Create(jsonFile)
		if err != nil {
			return fail(stderr, "%v", err)
		}
		err = rep.WriteJSON(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fail(stderr, "write %s: %v", jsonFile, err)
		}
	}
	return concurrentStatus(&rep, format, outFile, known, stdout, stderr)
}

// isConcurrentReport says data is a concurrent report (it has runs)
// rather than one history.
func isConcurrentReport(data []byte) bool {
	var probe struct {
		Runs []json.RawMessage `json:"runs"`
	}
	return json.Unmarshal(data, &probe) == nil && len(probe.Runs) > 0
}

// checkUnlessInterrupted checks h, or returns once ctx is cancelled (the
// check goes on in the background until the process exits).
func checkUnlessInterrupted(ctx context.Context, h *concurrent.History, opts concurrent.CheckOptions) (*concurrent.Result, error) {
	type result struct {
		res *concurrent.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := concurrent.Check(h, opts)
		done <- result{res, err}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}
