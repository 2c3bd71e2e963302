package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/model"
)

// inferFlags are the flags of srqconform infer.
type inferFlags struct {
	dev               deviceFlags
	seed              uint64
	cases, steps      int
	out, format, name string
	wait, settle      time.Duration
	quiet             bool
}

func (f *inferFlags) register(fs *flag.FlagSet) {
	f.dev.register(fs)
	fs.Uint64Var(&f.seed, "seed", 0, "seed for the random cases (0: pick one; it is written in the profile's notes)")
	fs.IntVar(&f.cases, "cases", 100, "random cases per run (0: scenarios only)")
	fs.IntVar(&f.steps, "steps", 40, "most steps per random case")
	fs.StringVar(&f.out, "o", "", "write the profile to this file (default: standard output)")
	fs.StringVar(&f.format, "format", "", "profile file format: yaml or json (default: from -o's extension, else yaml)")
	fs.StringVar(&f.name, "name", "inferred", "the inferred profile's name")
	fs.DurationVar(&f.wait, "wait", 2*time.Second, "how long a poll waits for expected completions and events")
	fs.DurationVar(&f.settle, "settle", 0, "how long a poll then looks for unexpected ones (0: the driver's default)")
	fs.BoolVar(&f.quiet, "q", false, "print only errors and deviations")
}

// check checks the parsed flags of srqconform infer (and picks -format
// when it is not given); its error is a usage error.
func (f *inferFlags) check(fs *flagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("infer takes no arguments, got %q", fs.Args())
	}
	if f.cases < 0 || f.steps <= 0 {
		return fmt.Errorf("-cases must be >= 0 and -steps > 0 (got %d, %d)", f.cases, f.steps)
	}
	if f.format == "" {
		f.format = "yaml"
		if strings.EqualFold(filepath.Ext(f.out), ".json") {
			f.format = "json"
		}
	}
	if !slices.Contains(model.ProfileFileFormats, f.format) {
		return fmt.Errorf("unknown format %q: want %s", f.format, strings.Join(model.ProfileFileFormats, " or "))
	}
	if f.name == "" {
		return fmt.Errorf("-name must not be empty")
	}
	if _, err := model.ProfileByName(f.name); err == nil {
		return fmt.Errorf("-name %q is a built-in profile's: the inferred profile needs a name of its own (a profile file may not claim a built-in name)", f.name)
	}
	if err := f.dev.checkDevice(); err != nil {
		return err
	}
	if err := checkWritable(f.out); err != nil {
		return fmt.Errorf("-o: %v", err)
	}
	return nil
}

// cmdInfer is srqconform infer: run the suite with every implementation-
// defined field open and write the profile the device showed, as a profile
// file that run -profile FILE reads.
func cmdInfer(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("infer", stdout, stderr, "infer [flags]")
	var f inferFlags
	f.register(fs.FlagSet)
	if ok, code := fs.parse(args); !ok {
		return code
	}
	if err := f.check(fs); err != nil {
		return fail(stderr, "%v", err)
	}
	drv, err := driverByName(f.dev.driver)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	opts := conformance.Options{Seed: f.seed, Cases: f.cases, Steps: f.steps, Wait: f.wait, Settle: f.settle}
	if f.cases == 0 {
		opts.Cases = -1
	}
	if opts.Seed == 0 {
		opts.Seed = uint64(time.Now().UnixNano()) >> 1
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "infer: "+format+"\n", a...) }
	if f.quiet {
		logf = nil
	}
	ctx, cancel := interruptible(stderr)
	defer cancel()
	inf, err := conformance.Infer(ctx, drv, f.dev.config(), opts, logf)
	if err != nil && (inf == nil || !inf.Interrupted) {
		return fail(stderr, "%v", err)
	}
	inf.Profile.Name = f.name
	b, err := model.MarshalProfile(inf.Profile, f.format)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if f.out == "" {
		_, err = stdout.Write(b)
	} else {
		err = os.WriteFile(f.out, b, 0o644)
	}
	if err != nil {
		return fail(stderr, "write the inferred profile: %v", err)
	}
	if inf.Interrupted {
		where := f.out
		if where == "" {
			where = "standard output"
		}
		fmt.Fprintf(stderr, "srqconform: interrupted: partial profile (what %d finished runs showed; every other field open) written to %s\n", inf.Runs-1, where)
		return exitInterrupted
	}
	return inferStatus(inf, f.quiet, stderr)
}

// inferStatus tells on stderr what a finished inference showed (each
// field, unless quiet; the deviations from the inferred profile) and
// returns the exit status.
func inferStatus(inf *conformance.Inference, quiet bool, stderr io.Writer) int {
	if !quiet {
		for _, r := range inf.Fields {
			mark := conformance.MarkShown
			if !r.Shown {
				mark = conformance.MarkNotShown
			}
			fmt.Fprintf(stderr, "%-17s %-9s %s\n", r.Field, mark, strings.Join(r.Values, " | "))
		}
	}
	rep := inf.Report
	if !rep.Conformant() {
		fmt.Fprintf(stderr, "srqconform: the device deviates from the inferred profile too, on rules no choice of values excuses (seed %d):\n", rep.Seed)
		for _, f := range rep.Failures {
			fmt.Fprintf(stderr, "rule %s (%s):\n%s", f.Rule, f.Source, f.Trace.Text())
		}
		for _, f := range rep.Findings {
			if !f.Untestable {
				fmt.Fprintf(stderr, "finding %s: %s\n", f.Field, f.Detail)
			}
		}
		return exitDeviates
	}
	if !quiet {
		fmt.Fprintf(stderr, "infer: the suite against the inferred profile: CONFORMANT (%d runs, %d steps in the last)\n", inf.Runs, rep.StepsRun)
	}
	return exitOK
}
