package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// config is what the flags ask for.
type config struct {
	seeds    []uint64
	budget   time.Duration
	cases    int // > 0: a number of random cases instead of the budget
	run      *regexp.Regexp
	parallel int
	out      string
	format   string
	list     bool
	set      string
	bugs     []bug // the bugs -set and -run select
	args     []string
}

// usageText is -h's answer: the usage, for standard output.
type usageText struct{ text string }

func (u *usageText) Error() string { return "help requested" }

// errUsage marks a bad command line.
var errUsage = errors.New("usage")

// parse reads the command line.
func parse(args []string) (config, error) {
	fs := flag.NewFlagSet("srqblame", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	seeds := fs.String("seeds", "1,2,3", "comma-separated seeds")
	budget := fs.Duration("budget", 5*time.Second, "time budget of random cases per run")
	cases := fs.Int("cases", 0, "run this many random cases per run instead of a time budget")
	run := fs.String("run", "", "only the bugs whose name matches this regular expression")
	parallel := fs.Int("parallel", 1, "runs at once")
	out := fs.String("o", "", "write the report to this file instead of standard output")
	format := fs.String("format", "md", "md or json")
	list := fs.Bool("list", false, "print the bugs -run selects (name, label, description) as markdown and run nothing")
	set := fs.String("set", defaultSet, "the bug set: "+strings.Join(setNames(), " or "))
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			var b strings.Builder
			b.WriteString("usage: srqblame [flags]\n\nflags:\n")
			fs.SetOutput(&b)
			fs.PrintDefaults()
			return config{}, &usageText{b.String()}
		}
		return config{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	c := config{budget: *budget, cases: *cases, parallel: *parallel, out: *out, format: *format, list: *list, set: *set, args: args}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	case c.budget <= 0:
		return c, fmt.Errorf("%w: -budget %v, want a positive duration", errUsage, c.budget)
	case c.cases < 0:
		return c, fmt.Errorf("%w: -cases %d, want a positive number (or 0 for the budget)", errUsage, c.cases)
	case c.parallel < 1:
		return c, fmt.Errorf("%w: -parallel %d, want 1 or more", errUsage, c.parallel)
	case c.format != "md" && c.format != "json":
		return c, fmt.Errorf("%w: -format %q, want md or json", errUsage, c.format)
	}
	for _, f := range strings.Split(*seeds, ",") {
		s, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil || s == 0 {
			return c, fmt.Errorf("%w: -seeds %q: %q is not a seed (a positive integer)", errUsage, *seeds, f)
		}
		c.seeds = append(c.seeds, s)
	}
	re, err := regexp.Compile(*run)
	if err != nil {
		return c, fmt.Errorf("%w: -run %q: %v", errUsage, *run, err)
	}
	c.run = re
	if c.bugs, err = selectBugs(c.set, re); err != nil {
		return c, err
	}
	if len(c.bugs) == 0 {
		return c, fmt.Errorf("%w: -run %q matches no bug of set %s", errUsage, *run, c.set)
	}
	return c, nil
}

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

// realMain runs the command and returns its exit status: 0 done, 1 a run
// or the output failed, 2 a bad command line.
func realMain(args []string, stdout, stderr io.Writer) int {
	c, err := parse(args)
	var help *usageText
	if errors.As(err, &help) {
		fmt.Fprint(stdout, help.text)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "srqblame: %s\n", strings.TrimPrefix(err.Error(), "usage: "))
		return 2
	}
	if c.list {
		if err := writeList(stdout, c.bugs); err != nil {
			fmt.Fprintf(stderr, "srqblame: %v\n", err)
			return 1
		}
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := measure(ctx, c.bugs, c, func(r Run) {
		fmt.Fprintf(stderr, "srqblame: %s seed %d: %s %v (%.1fs)\n", r.Bug, r.Seed, r.Verdict, r.Rules, r.Elapsed.Seconds())
	})
	w := stdout
	if c.out != "" {
		f, err := os.Create(c.out)
		if err != nil {
			fmt.Fprintf(stderr, "srqblame: %v\n", err)
			return 1
		}
		defer f.Close()
		w = f
	}
	if c.format == "json" {
		err = writeJSON(w, m)
	} else {
		err = writeMarkdown(w, m)
	}
	if err != nil {
		fmt.Fprintf(stderr, "srqblame: writing the report: %v\n", err)
		return 1
	}
	if m.Errors > 0 || ctx.Err() != nil {
		fmt.Fprintf(stderr, "srqblame: %d runs ended in a harness error or were interrupted\n", m.Errors)
		return 1
	}
	return 0
}
