package concurrent_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/srqconform/srqconform/concurrent"
	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

func runEmu(t testing.TB, seed uint64, devs ...emu.Switch) *concurrent.History {
	t.Helper()
	return runEmuWith(t, concurrent.Options{Profile: model.Documented(), Seed: seed}, devs...)
}

func runEmuWith(t testing.TB, opts concurrent.Options, devs ...emu.Switch) *concurrent.History {
	t.Helper()
	seed := opts.Seed
	h, err := concurrent.Run(context.Background(), emu.New(devs...), drivers.Config{}, opts)
	if err != nil {
		t.Fatalf("Run(seed %d): %v", seed, err)
	}
	return h
}

// TestEmulatorHistoriesAreLinearizable: the emulator without mutants
// gives histories the model linearizes.
func TestEmulatorHistoriesAreLinearizable(t *testing.T) {
	if testing.Short() {
		t.Skip("records and checks histories of several seeds")
	}
	for seed := uint64(1); seed <= 3; seed++ {
		h := runEmu(t, seed)
		kinds := map[concurrent.Kind]int{}
		for _, o := range h.Ops {
			kinds[o.Input.Kind]++
		}
		start := time.Now()
		r, err := concurrent.Check(h, concurrent.CheckOptions{HTML: filepath.Join(t.TempDir(), "v.html")})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("seed %d: %d ops %v in %v, checked in %v: %s", seed, len(h.Ops), kinds, h.Wall, time.Since(start), r.Verdict)
		if r.Verdict != concurrent.Linearizable {
			for _, o := range r.Reduced {
				t.Logf("  %v..%v c%d %s", o.Call, o.Return, o.Client, o)
			}
			t.Fatalf("seed %d: verdict %s, rule %s: %s; want linearizable", seed, r.Verdict, r.Rule, r.Complaint)
		}
	}
}

// TestRaceMutantsAreCaught: each race mutant of the emulator gives a
// history with no linearization, blamed on the rule it breaks, and
// reduced to fewer operations that still have none.
func TestRaceMutantsAreCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("records and checks a history per race mutant")
	}
	for _, info := range emu.Catalogue() {
		if info.Kind != emu.KindRaceMutant {
			continue
		}
		t.Run(string(info.Name), func(t *testing.T) {
			// A race shows when the scheduler lets it: under the race
			// detector, or on a loaded machine, one seed may pass. Up to
			// three are tried; the sweep (TestRaceMutantsAreCaughtOnEverySeed)
			// holds the rate.
			var h *concurrent.History
			var r *concurrent.Result
			for seed := uint64(1); seed <= 3; seed++ {
				// Races to ERR only where the mutant needs them: their
				// bursts make some histories of the others slow to
				// search (over 100 s seen for limit-race-twice), and
				// the sweep below keeps them on for every mutant.
				opts := concurrent.Options{Profile: model.Documented(), Seed: seed, NoRaces: info.Name != emu.ErrReexecutes}
				h = runEmuWith(t, opts, info.Name)
				var err error
				r, err = concurrent.Check(h, concurrent.CheckOptions{ReduceBudget: 5 * time.Second, HTML: filepath.Join(t.TempDir(), "v.html")})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("seed %d: %d ops, %s in %v, rule %s %v (%s), reduced to %d ops", seed, len(h.Ops), r.Verdict, r.Time, r.Rule, r.Also, r.Complaint, len(r.Reduced))
				if r.Violation() && r.Rule.String() == info.Rule {
					break
				}
			}
			if !r.Violation() || r.Rule.String() != info.Rule {
				t.Fatalf("verdict %s blaming %q, want a violation of %s", r.Verdict, r.Rule, info.Rule)
			}
			if len(r.Reduced) == 0 || len(r.Reduced) >= len(h.Ops) {
				t.Errorf("reduced to %d of %d operations, want fewer and some", len(r.Reduced), len(h.Ops))
			}
			small := *h
			small.Ops = r.Reduced
			again, err := concurrent.Check(&small, concurrent.CheckOptions{ReduceBudget: -1})
			if err != nil {
				t.Fatal(err)
			}
			if !again.Violation() {
				t.Errorf("the reduced history is %s, want a violation", again.Verdict)
			}
			if _, err := os.Stat(r.HTML); err != nil {
				t.Errorf("visualisation: %v", err)
			}
		})
	}
}

// TestRaceMutantsAreCaughtOnEverySeed is the sweep behind issue 11's
// figure: every race mutant over SRQCONFORM_RACE_SEEDS seeds (CI runs 100
// without the race detector), each caught within the history's default
// budget and DefaultCheckTimeout (a history still undecided then is
// checked again with twice the bound) and blamed on its rule
// (SRQCONFORM_RACE_MUTANTS=a,b limits it to those mutants). It fails when
// fewer than 99% are caught, or fewer than 85% blamed on the mutant's rule.
func TestRaceMutantsAreCaughtOnEverySeed(t *testing.T) {
	s := os.Getenv("SRQCONFORM_RACE_SEEDS")
	if s == "" {
		t.Skip("set SRQCONFORM_RACE_SEEDS (CI: 100) to sweep the race mutants; a rate needs many seeds and no race detector")
	}
	seeds, err := strconv.Atoi(s)
	if err != nil || seeds < 1 {
		t.Fatalf("SRQCONFORM_RACE_SEEDS=%q: want a positive number", s)
	}
	// porcupine keeps every state it reaches: a search of minutes holds
	// gigabytes. A soft limit keeps the collector close to what is live
	// instead of twice it, and what a long search held goes back to the
	// system once it is over.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(6 << 30))
	var only []string // SRQCONFORM_RACE_MUTANTS: a comma-separated subset
	if v := os.Getenv("SRQCONFORM_RACE_MUTANTS"); v != "" {
		only = strings.Split(v, ",")
	}
	for _, info := range emu.Catalogue() {
		if info.Kind != emu.KindRaceMutant || only != nil && !slices.Contains(only, string(info.Name)) {
			continue
		}
		caught, blamed, undecided := 0, 0, 0
		var slowest time.Duration
		for seed := uint64(1); seed <= uint64(seeds); seed++ {
			h := runEmu(t, seed, info.Name)
			r, err := concurrent.Check(h, concurrent.CheckOptions{Timeout: concurrent.DefaultCheckTimeout, ReduceBudget: -1})
			if err != nil {
				t.Fatal(err)
			}
			slowest = max(slowest, r.Time)
			if r.Verdict == concurrent.Unknown {
				// A search that ran out is no verdict: check again with
				// a larger bound before the seed counts as a miss.
				t.Logf("%s seed %d: undecided after %v (%d ops); checking again with %v", info.Name, seed, r.Time, len(h.Ops), 2*concurrent.DefaultCheckTimeout)
				debug.FreeOSMemory()
				if r, err = concurrent.Check(h, concurrent.CheckOptions{Timeout: 2 * concurrent.DefaultCheckTimeout, ReduceBudget: -1}); err != nil {
					t.Fatal(err)
				}
				slowest = max(slowest, r.Time)
				debug.FreeOSMemory()
			}
			if r.Time > 30*time.Second {
				t.Logf("%s seed %d: %d ops checked in %v (%s)", info.Name, seed, len(h.Ops), r.Time, r.Verdict)
			}
			switch {
			case r.Verdict == concurrent.Unknown:
				// Undecided twice: no verdict, so neither a catch nor a
				// miss (a timer is never evidence).
				undecided++
				t.Logf("%s seed %d: undecided again after %v: inconclusive, not counted", info.Name, seed, r.Time)
			case r.Violation():
				caught++
				if r.Rule.String() == info.Rule {
					blamed++
				} else {
					t.Logf("%s seed %d: blamed %s (also %v): %s", info.Name, seed, r.Rule, r.Also, r.Complaint)
				}
			default:
				t.Logf("%s seed %d: %s, %d ops", info.Name, seed, r.Verdict, len(h.Ops))
			}
		}
		t.Logf("%s: caught on %d of %d seeds, blamed on %s on %d; slowest check %v; %d inconclusive", info.Name, caught, seeds, info.Rule, blamed, slowest, undecided)
		// Issue 11 asks for the catch on 99 of 100 seeds. The blame is held
		// to 85%: over 100 seeds post-race-loses and fetch-race-twice were
		// blamed on their rule 100 times, limit-race-twice 93 to 99 times
		// (LIMIT-FIRE or LIMIT-ARM the rest: a second limit event also looks
		// like an arming that took). limit-race-twice was caught on 96 to
		// 100 seeds while the workload armed every few hundred µs, whatever
		// the mutant's window: an arming in the window makes the second
		// event legal. Since the arming client waits for its event, 100 on
		// a quiet machine; CI's caught 98 with a window of fixed length,
		// and 100 of 100 (blamed 100) under two busy loops since the
		// window waits for the second fetch.
		// The rates are of the seeds with a verdict; a sweep where more
		// than one in twenty had none proves too little to pass.
		decided := seeds - undecided
		if undecided*20 > seeds {
			t.Errorf("%s: %d of %d seeds undecided after two checks, want at most 5%%", info.Name, undecided, seeds)
		}
		if caught*100 < decided*99 {
			t.Errorf("%s: caught on %d of %d decided seeds, want at least 99%%", info.Name, caught, decided)
		}
		if blamed*100 < decided*85 {
			t.Errorf("%s: blamed on %s on %d of %d decided seeds, want at least 85%%", info.Name, info.Rule, blamed, decided)
		}
	}
}

// TestSequentialSuiteMissesRaceMutants: the sequential suite, with its
// default budget, finds every race mutant conformant; only a concurrent
// history shows them.
func TestSequentialSuiteMissesRaceMutants(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sequential suite three times per race mutant")
	}
	for _, d := range emu.RaceMutants {
		for seed := uint64(1); seed <= 3; seed++ {
			rep, err := conformance.Check(context.Background(), emu.New(d), drivers.Config{}, conformance.Options{Seed: seed, Cases: 100})
			if err != nil {
				t.Fatalf("%s seed %d: conformance.Check: %v", d, seed, err)
			}
			if !rep.Conformant() {
				t.Errorf("%s seed %d: the sequential suite found %d failures (first: %s), want none: the mutant should need concurrency", d, seed, len(rep.Failures), rep.Failures[0].Rule)
			}
		}
	}
}

// TestFigures prints issue 11's figures on the emulator, with
// SRQCONFORM_FIGURES=1: operations recorded per second, check time per
// history, and the largest history checked within a second (histories
// of 250 to 2000 operations, three seeds each; the slowest of the three
// counts).
//
//	SRQCONFORM_FIGURES=1 go test -run TestFigures -v ./concurrent
func TestFigures(t *testing.T) {
	if os.Getenv("SRQCONFORM_FIGURES") != "1" {
		t.Skip("set SRQCONFORM_FIGURES=1 to print the figures")
	}
	largest := 0
	for _, n := range []int{250, 500, 1000, 1500, 2000} {
		var slowest time.Duration
		var rate float64
		for seed := uint64(1); seed <= 3; seed++ {
			h, err := concurrent.Run(context.Background(), emu.New(), drivers.Config{}, concurrent.Options{Profile: model.Documented(), Seed: seed, MaxOps: n, Duration: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			r, err := concurrent.Check(h, concurrent.CheckOptions{Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != concurrent.Linearizable {
				t.Fatalf("%d operations, seed %d: %s, want linearizable", n, seed, r.Verdict)
			}
			slowest = max(slowest, r.Time)
			rate += float64(len(h.Ops)) / h.Wall.Seconds() / 3
		}
		t.Logf("%5d operations: recorded at %.0f ops/s, slowest check %v", n, rate, slowest.Round(time.Millisecond))
		if slowest <= time.Second {
			largest = n
		}
	}
	t.Logf("largest history checked within a second (of those tried): %d operations", largest)
}

// TestBehaviourSetsAreLinearizableUnderTheirProfiles: the emulator
// playing rxe, rxe on 6.1 and siw gives histories that their profiles
// linearize (no false violation from a profile's choices). Not mlx5: its
// slots free when the completion is polled (SlotFree FreeAtPoll), and a
// message is one operation from send to poll, so the model frees the slot
// at the message's linearization, which FIFO can force before a post that
// the device refused with the slot still held. Seed 1 shows it (POST-FULL);
// a history that splits the poll from the message is still to be built.
func TestBehaviourSetsAreLinearizableUnderTheirProfiles(t *testing.T) {
	for set, profile := range map[string]string{"rxe": "rxe", "rxe-6.1": "rxe-6.1", "siw": "siw"} {
		p, err := model.ProfileByName(profile)
		if err != nil {
			t.Fatal(err)
		}
		h, err := concurrent.Run(context.Background(), emu.New(), drivers.Config{Options: map[string]string{"deviations": set}}, concurrent.Options{Profile: p, Seed: 1})
		if err != nil {
			t.Fatalf("%s: Run: %v", set, err)
		}
		r, err := concurrent.Check(h, concurrent.CheckOptions{ReduceBudget: -1})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != concurrent.Linearizable {
			t.Errorf("emulator as %s under profile %s: %s, rule %s (%s); want linearizable", set, profile, r.Verdict, r.Rule, r.Complaint)
		}
	}
}
