package main

import (
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

// cmdInfer is srqconform infer: run the suite with every implementation-
// defined field open and write the profile the device showed, as a profile
// file that run -profile FILE reads.
func cmdInfer(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("infer", stdout, stderr, "infer [flags]")
	var dev deviceFlags
	dev.register(fs.FlagSet)
	seed := fs.Uint64("seed", 0, "seed for the random cases (0: pick one; it is written in the profile's notes)")
	cases := fs.Int("cases", 100, "random cases per run (0: scenarios only)")
	steps := fs.Int("steps", 40, "most steps per random case")
	out := fs.String("o", "", "write the profile to this file (default: standard output)")
	format := fs.String("format", "", "profile file format: yaml or json (default: from -o's extension, else yaml)")
	name := fs.String("name", "inferred", "the inferred profile's name")
	wait := fs.Duration("wait", 2*time.Second, "how long a poll waits for expected completions and events")
	settle := fs.Duration("settle", 0, "how long a poll then looks for unexpected ones (0: the driver's default)")
	quiet := fs.Bool("q", false, "print only errors and deviations")
	if ok, code := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "infer takes no arguments, got %q", fs.Args())
	}
	if *cases < 0 || *steps <= 0 {
		return fail(stderr, "-cases must be >= 0 and -steps > 0 (got %d, %d)", *cases, *steps)
	}
	if *format == "" {
		*format = "yaml"
		if strings.EqualFold(filepath.Ext(*out), ".json") {
			*format = "json"
		}
	}
	if !slices.Contains(model.ProfileFileFormats, *format) {
		return fail(stderr, "unknown format %q: want %s", *format, strings.Join(model.ProfileFileFormats, " or "))
	}
	if *name == "" {
		return fail(stderr, "-name must not be empty")
	}
	if _, err := model.ProfileByName(*name); err == nil {
		return fail(stderr, "-name %q is a built-in profile's: the inferred profile needs a name of its own (a profile file may not claim a built-in name)", *name)
	}
	if err := dev.checkDevice(); err != nil {
		return fail(stderr, "%v", err)
	}
	if err := checkWritable(*out); err != nil {
		return fail(stderr, "-o: %v", err)
	}
	drv, err := driverByName(dev.driver)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	opts := conformance.Options{Seed: *seed, Cases: *cases, Steps: *steps, Wait: *wait, Settle: *settle}
	if *cases == 0 {
		opts.Cases = -1
	}
	if opts.Seed == 0 {
		opts.Seed = uint64(time.Now().UnixNano()) >> 1
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "infer: "+format+"\n", a...) }
	if *quiet {
		logf = nil
	}
	ctx, cancel := interruptible(stderr)
	defer cancel()
	inf, err := conformance.Infer(ctx, drv, dev.config(), opts, logf)
	if err != nil && (inf == nil || !inf.Interrupted) {
		return fail(stderr, "%v", err)
	}
	inf.Profile.Name = *name
	b, err := model.MarshalProfile(inf.Profile, *format)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if *out == "" {
		_, err = stdout.Write(b)
	} else {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		return fail(stderr, "write the inferred profile: %v", err)
	}
	if inf.Interrupted {
		where := *out
		if where == "" {
			where = "standard output"
		}
		fmt.Fprintf(stderr, "srqconform: interrupted: partial profile (what %d finished runs showed; every other field open) written to %s\n", inf.Runs-1, where)
		return exitInterrupted
	}
	if !*quiet {
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
	if !*quiet {
		fmt.Fprintf(stderr, "infer: the suite against the inferred profile: CONFORMANT (%d runs, %d steps in the last)\n", inf.Runs, rep.StepsRun)
	}
	return exitOK
}
