package conformance_test

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// BenchmarkDifferential measures differential steps per second: random
// cases run on the model and the emulator side by side, every observation
// compared.
func BenchmarkDifferential(b *testing.B) {
	for _, p := range []model.Profile{model.Documented(), model.RXE()} {
		b.Run(p.Name, func(b *testing.B) {
			set := ""
			if p.Name != "documented" {
				set = p.Name
			}
			steps := 0
			for i := 0; b.Loop(); i++ {
				rep, err := conformance.Check(context.Background(), emu.New(), drivers.Config{Options: map[string]string{"deviations": set}},
					conformance.Options{Profile: p, Cases: 50, Seed: uint64(i + 1), Rules: []model.RuleID{model.RuleQPCreate}})
				// One scenario runs, so the profile's departures go unshown
				// (findings); only deviations would be wrong here.
				if err != nil || len(rep.Failures) > 0 {
					b.Fatalf("run %d: err %v, report %+v", i, err, rep)
				}
				steps += rep.StepsRun
			}
			b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}

// BenchmarkCoverage measures how much of the state space random cases
// reach per second of budget on the emulator (documented behaviour): each
// iteration is one run of the given time budget with its own seed, with a
// single scenario so that the random cases do the reaching. It reports the
// state-space features (FeatureNames) and rules reached per run, the share
// of runs that reached all of both, and how often the rarest feature and
// the rarest rule check were hit per second of budget (the median feature
// too): a deep generator raises the rare rates, not only the count reached.
func BenchmarkCoverage(b *testing.B) {
	for _, budget := range []time.Duration{100 * time.Millisecond, time.Second} {
		b.Run("budget="+budget.String(), func(b *testing.B) {
			var features, rules, full, runs, steps int
			hits := map[string]int{}
			checks := map[model.RuleID]int{}
			for i := 0; b.Loop(); i++ {
				rep, err := conformance.Check(context.Background(), emu.New(), drivers.Config{},
					conformance.Options{Cases: -1, Duration: budget, Seed: uint64(i + 1), Rules: []model.RuleID{model.RuleQPCreate}})
				if err != nil || len(rep.Failures) > 0 {
					b.Fatalf("run %d: err %v, failures %+v", i, err, rep.Failures)
				}
				for _, name := range conformance.FeatureNames {
					if n := rep.Features[name]; n > 0 {
						features++
						hits[name] += n
					}
				}
				reachedAll := true
				for _, r := range rep.Rules {
					checks[r.Rule.ID] += r.Checks
					if r.Checks > 0 {
						rules++
					} else if r.Status != conformance.NotApplicable {
						reachedAll = false
					}
				}
				if reachedAll && len(rep.Features) == len(conformance.FeatureNames) {
					full++
				}
				runs++
				steps += rep.StepsRun
			}
			spent := budget.Seconds() * float64(runs)
			var rates []float64
			rarestF, rarestR := "", ""
			for _, name := range conformance.FeatureNames {
				r := float64(hits[name]) / spent
				if len(rates) == 0 || r < slices.Min(rates) {
					rarestF = name
				}
				rates = append(rates, r)
			}
			slices.Sort(rates)
			minRule := math.Inf(1)
			for id, n := range checks {
				if r := float64(n) / spent; r < minRule {
					minRule, rarestR = r, id.String()
				}
			}
			b.Logf("rarest feature %q, rarest rule %s", rarestF, rarestR)
			for _, name := range conformance.FeatureNames {
				b.Logf("%8.1f/s  %s", float64(hits[name])/spent, name)
			}
			b.ReportMetric(float64(features)/float64(runs), "features/run")
			b.ReportMetric(float64(rules)/float64(runs), "rules/run")
			b.ReportMetric(100*float64(full)/float64(runs), "%full")
			b.ReportMetric(rates[0], "rarest-feature/s")
			b.ReportMetric(rates[len(rates)/2], "median-feature/s")
			b.ReportMetric(minRule, "rarest-rule/s")
			b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}
