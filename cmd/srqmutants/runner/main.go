package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/drivescript"
	"github.com/srqconform/srqconform/model"
	"github.com/srqconform/srqconform/mutants/outcome"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "runner: want a mode: check, scripts, transcript, passed or observe")
		return 2
	}
	fs := flag.NewFlagSet("runner "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	seed := fs.Uint64("seed", 1, "seed of the run or script")
	budget := fs.Duration("budget", conformance.DefaultBudget, "time budget of the random cases")
	from := fs.Uint64("from", 1, "first script seed")
	n := fs.Int("n", 1000, "scripts to run")
	steps := fs.Int("steps", 80, "random steps per script")
	cases := fs.Int("cases", 200, "passed: random cases to run")
	in := fs.String("in", "", "observe: a file of passed cases (JSON) to run again")
	if err := fs.Parse(args[1:]); err != nil {
		fmt.Fprintf(stderr, "runner %s: %v\n", args[0], err)
		return 2
	}
	ctx := context.Background()
	var out any
	switch args[0] {
	case "check":
		out = check(ctx, *seed, *budget)
	case "scripts":
		s := outcome.Scripts{From: *from, Steps: *steps}
		for i := range uint64(*n) {
			s.Digests = append(s.Digests, drivescript.Digest(drivescript.Transcript(ctx, emu.New(), *from+i, *steps)))
		}
		out = s
	case "transcript":
		out = drivescript.Transcript(ctx, emu.New(), *seed, *steps)
	case "passed":
		var err error
		if out, err = passed(ctx, *seed, *cases); err != nil {
			fmt.Fprintf(stderr, "runner passed: %v\n", err)
			return 1
		}
	case "observe":
		var err error
		if out, err = observe(ctx, *in); err != nil {
			fmt.Fprintf(stderr, "runner observe: %v\n", err)
			return 1
		}
	default:
		fmt.Fprintf(stderr, "runner: unknown mode %q, want check, scripts, transcript, passed or observe\n", args[0])
		return 2
	}
	if err := json.NewEncoder(stdout).Encode(out); err != nil {
		fmt.Fprintf(stderr, "runner: writing the result: %v\n", err)
		return 1
	}
	return 0
}

// check runs the suite on the emulator as srqconform run does by default.
func check(ctx context.Context, seed uint64, budget time.Duration) outcome.SeedRun {
	res := outcome.SeedRun{Seed: seed, Budget: budget}
	start := time.Now()
	rep, err := conformance.Check(ctx, emu.New(), drivers.Config{}, conformance.Options{
		Profile: model.Documented(), Seed: seed, Cases: -1, Duration: budget})
	res.Elapsed = time.Since(start)
	if err != nil {
		res.Error = err.Error()
	}
	if rep == nil {
		return res
	}
	if rep.Error != "" {
		res.Error = rep.Error
	}
	res.Unpredictable = rep.Unpredictable
	for _, r := range rep.Rules {
		if r.Status == conformance.Fail {
			res.Failing = append(res.Failing, r.Rule.ID.String())
		}
	}
	slices.Sort(res.Failing)
	for _, f := range rep.Failures {
		if f.Follows != 0 {
			// What followed from the root's departure: blamed on it.
			res.Diagnoses = append(res.Diagnoses, model.RuleNames([]model.RuleID{f.Follows}))
			continue
		}
		res.Diagnoses = append(res.Diagnoses, model.RuleNames(f.Rules))
	}
	return res
}

// passed runs the scenarios and the first cases random cases of seed on
// the emulator, held to the documented profile, and returns every case it
// passed with what the emulator answered.
func passed(ctx context.Context, seed uint64, cases int) ([]outcome.PassedCase, error) {
	var out []outcome.PassedCase
	var encErr error
	_, err := conformance.Check(ctx, emu.New(), drivers.Config{}, conformance.Options{
		Profile: model.Documented(), Seed: seed, Cases: cases,
		Passed: func(source string, ops []model.Op, observed []string) {
			c := outcome.PassedCase{Source: source, Observed: observed}
			for _, op := range ops {
				o, err := conformance.EncodeOp(op)
				if err == nil {
					var b []byte
					b, err = json.Marshal(o)
					c.Ops = append(c.Ops, b)
				}
				if err != nil && encErr == nil {
					encErr = err
				}
			}
			out = append(out, c)
		}})
	if err == nil {
		err = encErr
	}
	return out, err
}

// observe runs the operations of each case in file (passed's output) on
// the emulator and returns what it answered, case by case.
func observe(ctx context.Context, file string) ([][]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var cases []outcome.PassedCase
	if err := json.Unmarshal(b, &cases); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", file, err)
	}
	out := make([][]string, 0, len(cases))
	for i, c := range cases {
		ops := make([]model.Op, 0, len(c.Ops))
		for _, raw := range c.Ops {
			var o conformance.OpJSON
			if err := json.Unmarshal(raw, &o); err != nil {
				return nil, fmt.Errorf("case %d (%s): %w", i, c.Source, err)
			}
			op, err := conformance.DecodeOp(o)
			if err != nil {
				return nil, fmt.Errorf("case %d (%s): %w", i, c.Source, err)
			}
			ops = append(ops, op)
		}
		// A mutant that stops the case short (a step not made) differs by
		// what it observed up to there.
		tr, err := conformance.Replay(ctx, emu.New(), drivers.Config{}, model.Documented(), nil, ops, conformance.Options{})
		if err != nil && !errors.Is(err, conformance.ErrStepNotMade) {
			return nil, fmt.Errorf("case %d (%s): %w", i, c.Source, err)
		}
		out = append(out, tr.Observed())
	}
	return out, nil
}
