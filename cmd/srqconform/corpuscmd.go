package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/srqconform/srqconform/concurrent"
	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/corpus"
	"github.com/srqconform/srqconform/model"
	"github.com/srqconform/srqconform/qemuvm"
)

// corpusFlags are the corpus command's flags.
type corpusFlags struct {
	dir, entries, kernels, binary, accel, cache, knownDir, format, out, reports string
	cases, runs                                                                 int
	seed                                                                        uint64
	timeout, duration                                                           time.Duration
	list                                                                        bool
}

// cmdCorpus runs the corpus of real SRQ bugs: each kernel entry on each
// kernel it applies to, with vm -patch, one guest at a time, and prints
// the table of what the suite caught and blamed. It exits 1 when a run
// was not caught (the suite missed a bug, or the run stopped), else 3
// when a run was inconclusive (see corpusStatus).
func cmdCorpus(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("corpus", stdout, stderr, "corpus [-dir DIR] [-entries ID,...] [-kernels SUITE,...] [flags]")
	var f corpusFlags
	fs.StringVar(&f.dir, "dir", "corpus", "the corpus: a directory holding index.json and its patches")
	fs.StringVar(&f.entries, "entries", "", "comma-separated entry ids to run (default: all)")
	fs.StringVar(&f.kernels, "kernels", "", "comma-separated Debian suites to run on (default: every suite an entry has a patch for)")
	fs.IntVar(&f.cases, "cases", 30, "random cases per sequential run (vm -cases)")
	fs.DurationVar(&f.duration, "duration", 5*time.Second, "most time one history of a concurrent entry records (vm -concurrent -duration)")
	fs.IntVar(&f.runs, "runs", 10, "histories per run of a concurrent entry (vm -concurrent -runs): a race shows in some histories, not all")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of every run (vm -seed)")
	fs.StringVar(&f.binary, "binary", "", "srqconform binary built with the cgo driver (default: build one)")
	fs.StringVar(&f.accel, "accel", "auto", "QEMU accelerator (vm -accel)")
	fs.StringVar(&f.cache, "cache", "", "kernel and module cache (vm -cache)")
	fs.DurationVar(&f.timeout, "timeout", 20*time.Minute, "bound on each run, the module's build included (vm -timeout)")
	fs.StringVar(&f.knownDir, "known-dir", "", "a directory of known-findings files named PROVIDER-SUITE.txt, and concurrent-PROVIDER-SUITE.txt for concurrent entries (as .ci/known): a rule listed there for the kernel does not count as caught, unless the entry expects it")
	fs.StringVar(&f.format, "format", "markdown", "markdown (the table) or json (the results)")
	fs.StringVar(&f.out, "o", "", "write the table to this file (default: standard output)")
	fs.StringVar(&f.reports, "reports", "", "keep each run's vm report (JSON: the suite's, the histories', or the crash's) in this directory as ENTRY-SUITE.json")
	fs.BoolVar(&f.list, "list", false, "print the index as a Markdown table (corpus/README.md holds it) and run nothing")
	if ok, code := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "corpus takes no arguments, got %q", fs.Args())
	}
	if f.format != "markdown" && f.format != "json" {
		return fail(stderr, "unknown format %q for corpus: want markdown or json", f.format)
	}
	if f.cases < 1 || f.runs < 1 || f.timeout <= 0 || f.duration <= 0 {
		return fail(stderr, "-cases, -runs, -timeout and -duration must be above 0 (got %d, %d, %v, %v)", f.cases, f.runs, f.timeout, f.duration)
	}
	ix, err := corpus.Load(f.dir)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	plan, err := f.plan(ix)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if f.list {
		if err := corpus.WriteIndex(stdout, ix); err != nil {
			return fail(stderr, "%v", err)
		}
		return exitOK
	}
	if f.reports != "" {
		if err := os.MkdirAll(f.reports, 0o755); err != nil {
			return fail(stderr, "-reports: %v", err)
		}
	}
	if f.binary == "" {
		dir, err := os.MkdirTemp("", "srqconform-corpus-")
		if err != nil {
			return fail(stderr, "temporary directory: %v", err)
		}
		defer os.RemoveAll(dir)
		f.binary = filepath.Join(dir, "srqconform")
		ctx, stop := interruptible(stderr)
		err = buildWithCgo(ctx, f.binary, stderr)
		stop()
		if err != nil {
			return fail(stderr, "%v", err)
		}
	}
	var results []corpus.Result
	for _, p := range plan {
		r := f.runOne(ix, p, stderr)
		fmt.Fprintf(stderr, "corpus: %s on %s: caught %v, blamed %q (expected %q) in %v %s\n", r.Entry, r.Suite, r.Caught, r.Blamed, r.Expected, r.Wall.Round(time.Second), r.Skip)
		results = append(results, r)
		if f.out != "" {
			// Rewritten after every run: a corpus stopped half way keeps
			// the table of the runs made.
			if err := f.write(results, nil); err != nil {
				return fail(stderr, "%v", err)
			}
		}
	}
	if err := f.write(results, stdout); err != nil {
		return fail(stderr, "%v", err)
	}
	return corpusStatus(results, stderr)
}

// corpusStatus is the exit status of a corpus run: 1 when a run was not
// caught, else 3 when a run was inconclusive (no verdict), else 0.
func corpusStatus(results []corpus.Result, stderr io.Writer) int {
	missed, inconclusive := 0, 0
	for _, r := range results {
		switch {
		case r.Skip != "" || r.Caught:
		case r.Inconclusive:
			inconclusive++
		default:
			missed++
		}
	}
	switch {
	case missed > 0:
		fmt.Fprintf(stderr, "srqconform: corpus: %d of %d runs were not caught\n", missed, len(results))
		return exitDeviates
	case inconclusive > 0:
		fmt.Fprintf(stderr, "srqconform: corpus: %d of %d runs were inconclusive (they outran twice their bound with no kernel report)\n", inconclusive, len(results))
		return exitHarness
	}
	return exitOK
}

// write writes the results to -o, or to stdout when -o is not given
// (and stdout is not nil), in -format.
func (f *corpusFlags) write(results []corpus.Result, stdout io.Writer) error {
	w := stdout
	if f.out != "" {
		fh, err := os.Create(f.out)
		if err != nil {
			return err
		}
		defer fh.Close()
		w = fh
	}
	if w == nil {
		return nil
	}
	if f.format == "json" {
		js, _ := json.MarshalIndent(results, "", "  ")
		_, err := w.Write(append(js, '\n'))
		return err
	}
	return corpus.WriteTable(w, results)
}

// corpusRun is one entry on one kernel, or an entry skipped.
type corpusRun struct {
	entry corpus.Entry
	suite string
	skip  string
}

// plan lists the runs -entries and -kernels select, in the index's order.
func (f *corpusFlags) plan(ix *corpus.Index) ([]corpusRun, error) {
	var want, kernels []string
	if f.entries != "" {
		want = strings.Split(f.entries, ",")
		for _, id := range want {
			if !slices.ContainsFunc(ix.Entries, func(e corpus.Entry) bool { return e.ID == id }) {
				return nil, fmt.Errorf("-entries: no entry %q in %s/index.json", id, ix.Dir)
			}
		}
	}
	if f.kernels != "" {
		kernels = strings.Split(f.kernels, ",")
		for _, k := range kernels {
			if !slices.Contains(qemuvm.Suites(), k) {
				return nil, fmt.Errorf("-kernels: unknown suite %q: want some of %s", k, strings.Join(qemuvm.Suites(), ", "))
			}
		}
	}
	var plan []corpusRun
	for _, e := range ix.Entries {
		if want != nil && !slices.Contains(want, e.ID) {
			continue
		}
		if e.Skip != "" {
			plan = append(plan, corpusRun{entry: e, skip: e.Skip})
			continue
		}
		for _, s := range e.Suites() {
			if kernels == nil || slices.Contains(kernels, s) {
				plan = append(plan, corpusRun{entry: e, suite: s})
			}
		}
	}
	return plan, nil
}

// runOne runs vm -patch (a kernel entry) or vm -rdma-core-patch (a
// provider entry) for one entry and kernel and reads its verdict. A run
// that outran -timeout with no kernel report is inconclusive (a timer is
// never evidence): it runs once more with twice the bound, and stays
// inconclusive if that one outruns it too.
//
// A concurrent entry whose histories all linearized is run once more with
// twice the histories, on new seeds: a race shows in some histories, not
// all, so a run that did not show it is no evidence the bug is gone.
func (f *corpusFlags) runOne(ix *corpus.Index, p corpusRun, stderr io.Writer) corpus.Result {
	attempt := func(runs int, seed uint64) corpus.Result {
		return retryInconclusive(f.timeout, func(timeout time.Duration) corpus.Result {
			return f.runOnce(ix, p, timeout, runs, seed)
		}, func(r corpus.Result, next time.Duration) {
			fmt.Fprintf(stderr, "corpus: %s on %s: inconclusive (%s); again with -timeout %v\n", r.Entry, r.Suite, r.Detail, next)
		})
	}
	return raceAgain(p.entry.Mode, f.runs, f.seed, attempt, func(r corpus.Result, runs int) {
		fmt.Fprintf(stderr, "corpus: %s on %s: no history of %d showed it; again with %d histories on new seeds\n", r.Entry, r.Suite, f.runs, runs)
	})
}

// raceAgain runs attempt with runs histories from seed and, for a
// concurrent entry whose run finished without catching it, once more
// with twice the histories from the seed after the first run's (told
// first); the second run's result stands, its note says so, and its time
// counts both.
func raceAgain(mode string, runs int, seed uint64, attempt func(runs int, seed uint64) corpus.Result, told func(corpus.Result, int)) corpus.Result {
	r := attempt(runs, seed)
	if mode != "concurrent" || r.Caught || r.Inconclusive || r.Detail != "" || r.Skip != "" {
		return r
	}
	told(r, 2*runs)
	first := r.Wall
	r = attempt(2*runs, seed+uint64(runs))
	r.Wall += first
	if r.Detail == "" {
		r.Detail = fmt.Sprintf("after a first run of %d histories that showed nothing, on %d more", runs, 2*runs)
	}
	return r
}

// retryInconclusive runs run with timeout, and once more with twice it
// when the first result is inconclusive (told first).
func retryInconclusive(timeout time.Duration, run func(time.Duration) corpus.Result, told func(corpus.Result, time.Duration)) corpus.Result {
	r := run(timeout)
	if !r.Inconclusive {
		return r
	}
	told(r, 2*timeout)
	first := r.Wall
	r = run(2 * timeout)
	r.Wall += first
	return r
}

// runOnce is one run of runOne, bounded by timeout: runs histories from
// seed for a concurrent entry, the suite from seed for another.
func (f *corpusFlags) runOnce(ix *corpus.Index, p corpusRun, timeout time.Duration, runs int, seed uint64) corpus.Result {
	r := corpus.Result{Entry: p.entry.ID, Suite: p.suite, Mode: p.entry.Mode, Expected: p.entry.Expected, Skip: p.skip}
	if p.skip != "" {
		return r
	}
	tmp, err := os.MkdirTemp("", "srqconform-corpus-run-")
	if err != nil {
		r.Detail = err.Error()
		return r
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "report.json")
	patchFlag := "-patch" // a kernel entry: the driver module rebuilt
	if p.entry.Kind == "provider" {
		patchFlag = "-rdma-core-patch" // the suite's rdma-core provider rebuilt
	}
	args := []string{"-kernel", p.suite, "-provider", p.entry.Provider, patchFlag, filepath.Join(ix.Dir, p.entry.Patches[p.suite]),
		"-binary", f.binary, "-accel", f.accel, "-timeout", timeout.String(), "-seed", strconv.FormatUint(seed, 10),
		"-format", "json", "-o", out}
	if f.cache != "" {
		args = append(args, "-cache", f.cache)
	}
	if p.entry.Mode == "concurrent" {
		args = append(args, "-concurrent", "-runs", strconv.Itoa(runs), "-duration", f.duration.String())
	} else {
		args = append(args, "-cases", strconv.Itoa(f.cases))
	}
	known, err := f.known(p, tmp)
	if err != nil {
		r.Detail = err.Error()
		return r
	}
	if known != nil {
		args = append(args, "-known", filepath.Join(tmp, "known.txt"))
	}
	var errb bytes.Buffer
	start := time.Now()
	code := cmdVM(args, io.Discard, &errb)
	r.Wall = time.Since(start)
	b, rerr := os.ReadFile(out)
	if f.reports != "" && rerr == nil {
		keep := filepath.Join(f.reports, p.entry.ID+"-"+p.suite+".json")
		if err := os.WriteFile(keep, b, 0o644); err != nil {
			r.Detail = "-reports: " + err.Error()
			return r
		}
	}
	if code != exitOK && code != exitDeviates {
		r.Detail = fmt.Sprintf("vm exit %d: %s", code, firstLine(errb.String()))
		var cr crashReport
		if rerr == nil && json.Unmarshal(b, &cr) == nil && cr.Inconclusive != "" {
			r.Inconclusive, r.Kernel = true, cr.Kernel
			r.Detail = fmt.Sprintf("outran -timeout %v with no hang, lockup or stall report on the console", timeout)
		}
		return r
	}
	if rerr != nil {
		r.Detail = fmt.Sprintf("vm exit %d and no report: %v", code, rerr)
		return r
	}
	readVerdict(&r, b, p.entry.Mode, known)
	return r
}

// known writes the known findings of the entry's kernel, less the rule
// the entry expects, to dir/known.txt; nil without -known-dir or a file
// for the kernel.
func (f *corpusFlags) known(p corpusRun, dir string) (conformance.Known, error) {
	if f.knownDir == "" {
		return nil, nil
	}
	name := p.entry.Provider + "-" + p.suite + ".txt"
	if p.entry.Mode == "concurrent" {
		name = "concurrent-" + name // histories break their own known rules (.ci/known)
	}
	k, err := conformance.ReadKnown(filepath.Join(f.knownDir, name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) { // ReadKnown wraps it: os.IsNotExist would not see it
			return nil, nil
		}
		return nil, err
	}
	if r, err := model.ParseRuleID(p.entry.Expected); err == nil {
		delete(k, r)
	}
	var b strings.Builder
	for rule, why := range k {
		fmt.Fprintf(&b, "%s # %s\n", rule, why)
	}
	if err := os.WriteFile(filepath.Join(dir, "known.txt"), []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	return k, nil
}

// readVerdict fills r from the report vm wrote: a crash report, a
// concurrent report or the suite's report.
func readVerdict(r *corpus.Result, b []byte, mode string, known conformance.Known) {
	var cr crashReport
	if json.Unmarshal(b, &cr) == nil && cr.Finding != nil {
		r.Caught, r.Blamed, r.Kernel = true, cr.Finding.Kind, cr.Kernel
		r.Detail = cr.Finding.Summary()
		return
	}
	if mode == "concurrent" {
		var rep concurrent.Report
		if err := json.Unmarshal(b, &rep); err != nil {
			r.Detail = "concurrent report: " + err.Error()
			return
		}
		r.Kernel = rep.Kernel
		for _, h := range rep.Runs {
			if h.Result != nil && h.Result.Violation() {
				if _, isKnown := knownCandidate(h.Result, known); !isKnown && !slices.Contains(r.Failing, h.Result.Rule) {
					r.Failing = append(r.Failing, h.Result.Rule)
				}
			}
		}
	} else {
		rep, err := decodeReport(b)
		if err != nil {
			r.Detail = err.Error()
			return
		}
		r.Kernel = rep.Device.Kernel
		for _, fl := range rep.Failures {
			if _, isKnown := known[fl.Rule]; !isKnown && !slices.Contains(r.Failing, fl.Rule) {
				r.Failing = append(r.Failing, fl.Rule)
			}
		}
		if rep.Error != "" {
			r.Detail = "harness error: " + firstLine(rep.Error)
		}
	}
	if len(r.Failing) > 0 {
		r.Caught, r.Blamed = true, r.Failing[0].String()
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
