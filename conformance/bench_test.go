package conformance_test

import (
	"context"
	"testing"

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
					conformance.Options{Profile: p, Cases: 50, Seed: uint64(i + 1), Rules: []string{"QP-CREATE"}})
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
