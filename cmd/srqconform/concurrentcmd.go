package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/srqconform/srqconform/concurrent"
	"github.com/srqconform/srqconform/conformance"
)

// cmdConcurrent runs concurrent workloads on a device and checks each
// history for linearizability against the model (package concurrent), or
// checks a saved history (-check).
func cmdConcurrent(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("concurrent", stdout, stderr, "concurrent [flags]")
	var dev deviceFlags
	dev.register(fs.FlagSet)
	profile := fs.String("profile", "documented", "profile the device is held to: a built-in name (see srqconform profiles) or a profile file")
	seed := fs.Uint64("seed", 0, "seed of the first history's client choices (0: pick one; it is reported)")
	runs := fs.Int("runs", 1, "histories to record and check, with seeds seed, seed+1, ...")
	duration := fs.Duration("duration", 2*time.Second, "most time one history records")
	maxOps := fs.Int("max-ops", 600, "most operations one history holds (porcupine's search grows with it)")
	posters := fs.Int("posters", 2, "threads posting lists to the SRQ")
	rc := fs.Int("rc", 0, "RC QPs, each with a sender thread (0 with -ud 0: 2 RC and, where the device has UD, 1 UD)")
	ud := fs.Int("ud", 0, "UD QPs, each with a sender thread")
	noCycles := fs.Bool("no-cycles", false, "leave the QPs in RTS (otherwise senders take their QP to ERR and back through RESET now and then)")
	noArm := fs.Bool("no-arm", false, "never arm the SRQ limit")
	checkTimeout := fs.Duration("check-timeout", concurrent.DefaultCheckTimeout, "bound on porcupine's search per history (a history not decided by then is 'unknown')")
	reduce := fs.Duration("reduce", 20*time.Second, "time spent reducing a violating history (0: none)")
	htmlDir := fs.String("html", "", "write porcupine's visualisation of each violation to this directory (violation-SEED.html)")
	historyDir := fs.String("history-dir", "", "write every history to this directory (history-SEED.json; check one again with -check)")
	checkFile := fs.String("check", "", "check this saved history (-history-dir), or every history a JSON report holds (vm -concurrent -json keeps the violating ones), instead of running a device")
	recordOnly := fs.Bool("record-only", false, "record the histories into the JSON report without checking them (vm -concurrent checks them on the host, where there is memory for porcupine)")
	format := fs.String("format", "text", "report format: text, markdown or json")
	out := fs.String("o", "", "write the report to this file (default: standard output)")
	knownFile := fs.String("known", "", "a file of rules the device is known to break (see run -known): violations of only those exit 0")
	if ok, code := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "concurrent takes no arguments, got %q", fs.Args())
	}
	if !slices.Contains([]string{"text", "markdown", "json"}, *format) {
		return fail(stderr, "unknown format %q: want text, markdown or json", *format)
	}
	if *runs < 1 || *maxOps < 1 || *posters < 1 || *rc < 0 || *ud < 0 {
		return fail(stderr, "-runs, -max-ops and -posters must be at least 1 and -rc, -ud at least 0 (got %d, %d, %d, %d, %d)", *runs, *maxOps, *posters, *rc, *ud)
	}
	if err := fs.durations("duration", "check-timeout", "reduce"); err != nil {
		return fail(stderr, "%v", err)
	}
	if *duration == 0 {
		return fail(stderr, "-duration must be positive")
	}
	if err := dev.checkDevice(); err != nil {
		return fail(stderr, "%v", err)
	}
	if *checkFile != "" {
		for _, f := range []string{"driver", "d", "i", "x", "conn", "deviations", "profile", "seed", "runs", "duration", "max-ops", "posters", "rc", "ud", "no-cycles", "no-arm", "history-dir", "record-only"} {
			if fs.set(f) {
				return fail(stderr, "-%s goes with a run on a device, not with -check (a saved history holds its profile and operations)", f)
			}
		}
	}
	known, err := conformance.ReadKnown(*knownFile)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if err := checkWritable(*out); err != nil {
		return fail(stderr, "-o: %v", err)
	}
	for _, d := range []struct{ flag, dir string }{{"-html", *htmlDir}, {"-history-dir", *historyDir}} {
		if err := checkDir(d.dir); err != nil {
			return fail(stderr, "%s: %v", d.flag, err)
		}
	}
	reduceBudget := *reduce
	if reduceBudget == 0 {
		reduceBudget = -1
	}
	checkOpts := func(seed uint64) concurrent.CheckOptions {
		o := concurrent.CheckOptions{Timeout: *checkTimeout, ReduceBudget: reduceBudget}
		if *htmlDir != "" {
			o.HTML = filepath.Join(*htmlDir, fmt.Sprintf("violation-%d.html", seed))
		}
		return o
	}
	rep := &concurrent.Report{}
	ctx, stop := interruptible(stderr)
	defer stop()
	if *checkFile != "" {
		if data, err := os.ReadFile(*checkFile); err == nil && isConcurrentReport(data) {
			// A report with its histories (vm -concurrent -json): check
			// them all again.
			return hostConcurrentReport(ctx, data, 0, "", concurrent.CheckOptions{Timeout: *checkTimeout, ReduceBudget: reduceBudget}, *htmlDir, *format, *out, "", known, stdout, stderr)
		}
		h, err := concurrent.ReadHistory(*checkFile)
		if err != nil {
			return fail(stderr, "%v", err)
		}
		rep.Device, rep.Kernel, rep.Profile = h.Device, h.Kernel, h.Profile
		run := concurrent.NewHistoryRun(h, nil)
		run.History = h
		res, err := checkUnlessInterrupted(ctx, h, checkOpts(h.Seed))
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
		return concurrentStatus(rep, *format, *out, known, stdout, stderr)
	}
	p, err := profileArg(*profile)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	drv, err := driverByName(dev.driver)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	rep.Profile = p.Name
	first := *seed
	if first == 0 {
		first = uint64(time.Now().UnixNano()) & (1<<53 - 1)
	}
	for i := range *runs {
		s := first + uint64(i)
		h, err := concurrent.Run(ctx, drv, dev.config(), concurrent.Options{Profile: p, Seed: s, Duration: *duration, MaxOps: *maxOps,
			Posters: *posters, RC: *rc, UD: *ud, NoCycles: *noCycles, NoArm: *noArm})
		if h != nil {
			rep.Device, rep.Kernel = h.Device, h.Kernel
			if *historyDir != "" {
				if werr := h.WriteFile(filepath.Join(*historyDir, fmt.Sprintf("history-%d.json", s))); werr != nil {
					return fail(stderr, "%v", werr)
				}
			}
		}
		if interrupted(ctx) {
			// The history recorded until the signal is kept, unchecked:
			// checking it could take minutes.
			rep.Interrupted = true
			if h != nil && len(h.Ops) > 0 {
				run := concurrent.NewHistoryRun(h, nil)
				run.History = h
				rep.Runs = append(rep.Runs, run)
			}
			break
		}
		if err != nil {
			rep.Error = err.Error()
			if h == nil || !h.Complete() {
				break
			}
		}
		if *recordOnly {
			run := concurrent.NewHistoryRun(h, nil)
			run.History = h
			rep.Runs = append(rep.Runs, run)
			fmt.Fprintf(stderr, "srqconform concurrent: seed %d: %d operations in %v, recorded\n", s, len(h.Ops), h.Wall.Round(time.Millisecond))
			if rep.Error != "" {
				break
			}
			continue
		}
		res, cerr := checkUnlessInterrupted(ctx, h, checkOpts(s))
		if interrupted(ctx) {
			run := concurrent.NewHistoryRun(h, nil)
			run.History = h
			rep.Runs = append(rep.Runs, run)
			rep.Interrupted = true
			break
		}
		if cerr != nil {
			rep.Error = cerr.Error()
			break
		}
		run := concurrent.NewHistoryRun(h, res)
		if res.Violation() {
			run.History = h
		}
		rep.Runs = append(rep.Runs, run)
		fmt.Fprintf(stderr, "srqconform concurrent: seed %d: %d operations in %v, %s in %v %s\n", s, len(h.Ops), h.Wall.Round(time.Millisecond), res.Verdict, res.Time.Round(time.Millisecond), res.Rule)
		if rep.Error != "" {
			break
		}
	}
	return concurrentStatus(rep, *format, *out, known, stdout, stderr)
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
	var unknown []string
	for _, r := range rep.FailingRules() {
		if why, ok := known[r]; ok {
			fmt.Fprintf(stderr, "srqconform concurrent: %s violated, a known finding (%s)\n", r, why)
			continue
		}
		unknown = append(unknown, r)
	}
	if len(unknown) > 0 {
		fmt.Fprintf(stderr, "srqconform concurrent: violations of %s\n", strings.Join(unknown, ", "))
		return exitDeviates
	}
	return exitOK
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
