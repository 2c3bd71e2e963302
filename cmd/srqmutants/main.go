package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the parsed flags.
type options struct {
	cfg    config
	format string
	out    string
	// review and report, set together, ask for the comparison of a
	// sweep report with a reviewer's verdicts (review.go), not a sweep.
	review, report string
}

// usageText is -h's answer: the usage, for standard output.
type usageText struct{ text string }

func (u *usageText) Error() string { return "help requested" }

// helpRequest returns the usage of fs's flags.
func helpRequest(fs *flag.FlagSet) error {
	var b strings.Builder
	b.WriteString("usage: srqmutants [flags]\n\nflags:\n")
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return &usageText{b.String()}
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("srqmutants", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	seeds := fs.String("seeds", "1,2,3", "comma-separated seeds, each a run of the suite per mutant")
	budget := fs.Duration("budget", 5*time.Second, "time budget of the random cases per run (srqconform run's default)")
	sample := fs.Int("sample", 0, "sweep N mutants, spread over the labels (0: every compiling mutant)")
	parallel := fs.Int("parallel", 2, "mutants run at once")
	format := fs.String("format", "md", "output format: md or json")
	out := fs.String("o", "", "write the report to FILE (default standard output)")
	scripts := fs.Int("scripts", 2000, "witness scripts per mutant no seed catches")
	steps := fs.Int("steps", 80, "random steps per witness script")
	only := fs.String("mutants", "", "comma-separated mutant IDs to sweep (default: all, or the sample)")
	reviewFile := fs.String("review", "", "compare a sweep report (-report) with a reviewer's verdicts in FILE, and sweep nothing")
	reportFile := fs.String("report", "", "the sweep report (-format json) that -review compares")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return options{}, helpRequest(fs)
		}
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if (*reviewFile == "") != (*reportFile == "") {
		return options{}, fmt.Errorf("-review %q -report %q: want both or neither", *reviewFile, *reportFile)
	}
	o := options{format: *format, out: *out, review: *reviewFile, report: *reportFile, cfg: config{Budget: *budget, Sample: *sample, Parallel: *parallel, Scripts: *scripts, Steps: *steps}}
	for _, s := range strings.Split(*seeds, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil || n == 0 {
			return options{}, fmt.Errorf("-seeds %q: want positive integers separated by commas", *seeds)
		}
		o.cfg.Seeds = append(o.cfg.Seeds, n)
	}
	if *only != "" {
		o.cfg.Only = strings.Split(*only, ",")
	}
	switch {
	case *budget <= 0:
		return options{}, fmt.Errorf("-budget %v: want a positive duration", *budget)
	case *sample < 0:
		return options{}, fmt.Errorf("-sample %d: want 0 (all) or more", *sample)
	case *parallel < 1:
		return options{}, fmt.Errorf("-parallel %d: want 1 or more", *parallel)
	case *scripts < 1 || *steps < 1:
		return options{}, fmt.Errorf("-scripts %d -steps %d: want 1 or more of each", *scripts, *steps)
	case *format != "md" && *format != "json":
		return options{}, fmt.Errorf("-format %q: want md or json", *format)
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args)
	var help *usageText
	if errors.As(err, &help) {
		fmt.Fprint(stdout, help.text)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "srqmutants: %v\n", err)
		return 2
	}
	if o.review != "" {
		f, err := review(o.report, o.review)
		if err != nil {
			fmt.Fprintf(stderr, "srqmutants: -review: %v\n", err)
			return 2
		}
		writeReview(stdout, f)
		return 0
	}
	rep, err := sweepAll(ctx, o.cfg, stderr)
	if rep == nil {
		fmt.Fprintf(stderr, "srqmutants: %v\n", err)
		return 1
	}
	rep.Command = strings.Join(append([]string{"srqmutants"}, args...), " ")
	if werr := write(rep, o, stdout); werr != nil {
		fmt.Fprintf(stderr, "srqmutants: writing the report: %v\n", werr)
		return 1
	}
	switch {
	case rep.Interrupted:
		return 130
	case err != nil:
		fmt.Fprintf(stderr, "srqmutants: %v\n", err)
		return 1
	}
	return 0
}

// sweepAll generates, chooses and sweeps the mutants. It returns a nil
// report when nothing could run, and a report with an error when some
// mutant's run broke (the report holds the others).
func sweepAll(ctx context.Context, cfg config, progress io.Writer) (*sweepReport, error) {
	start := time.Now()
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "srqmutants-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	sw := &sweeper{cfg: cfg, root: root, tmp: tmp, progress: progress}
	if err := sw.prepare(ctx); err != nil {
		return nil, err
	}
	typeErrors := 0
	for _, m := range sw.set.Mutants {
		if m.NotCompiling != "" {
			typeErrors++
		}
	}
	chosen := choose(sw.set.Mutants, cfg.Sample, cfg.Only)
	if len(chosen) == 0 {
		return nil, errors.New("no compiling mutant chosen (check -mutants)")
	}
	fmt.Fprintf(progress, "srqmutants: %d mutants generated, %d type-check, sweeping %d with %d seeds, %d at once\n",
		len(sw.set.Mutants), len(sw.set.Mutants)-typeErrors, len(chosen), len(cfg.Seeds), cfg.Parallel)
	results, err := sw.sweep(ctx, chosen)
	rep := &sweepReport{Config: cfg, Elapsed: time.Since(start), Interrupted: ctx.Err() != nil,
		Figures: measure(len(sw.set.Mutants), typeErrors, results), Mutants: results}
	if rep.Interrupted {
		err = nil
	}
	return rep, err
}

// write writes the report in o's format to o's file or stdout.
func write(rep *sweepReport, o options, stdout io.Writer) error {
	if o.out == "" {
		return encode(rep, o.format, stdout)
	}
	f, err := os.Create(o.out)
	if err != nil {
		return err
	}
	if err := encode(rep, o.format, f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func encode(rep *sweepReport, format string, w io.Writer) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return writeMarkdown(w, *rep)
}
