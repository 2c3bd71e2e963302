package concurrent_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/srqconform/srqconform/concurrent"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

func runEmu(t testing.TB, seed uint64, devs ...emu.Deviation) *concurrent.History {
	t.Helper()
	h, err := concurrent.Run(context.Background(), emu.New(devs...), drivers.Config{}, concurrent.Options{Profile: model.Documented(), Seed: seed})
	if err != nil {
		t.Fatalf("Run(seed %d): %v", seed, err)
	}
	return h
}

// TestEmulatorHistoriesAreLinearizable: the emulator without mutants
// gives histories the model linearizes.
func TestEmulatorHistoriesAreLinearizable(t *testing.T) {
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
