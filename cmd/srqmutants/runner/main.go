package main

import (
	"context"
	"encoding/json"
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
		fmt.Fprintln(stderr, "runner: want a mode: check, scripts or transcript")
		return 2
	}
	fs := flag.NewFlagSet("runner "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	seed := fs.Uint64("seed", 1, "seed of the run or script")
	budget := fs.Duration("budget", conformance.DefaultBudget, "time budget of the random cases")
	from := fs.Uint64("from", 1, "first script seed")
	n := fs.Int("n", 1000, "scripts to run")
	steps := fs.Int("steps", 80, "random steps per script")
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
	default:
		fmt.Fprintf(stderr, "runner: unknown mode %q, want check, scripts or transcript\n", args[0])
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
		res.Diagnoses = append(res.Diagnoses, model.RuleNames(f.Rules))
	}
	return res
}
