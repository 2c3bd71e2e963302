package conformance_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/drivers/faulty2"
)

func mustBug(t *testing.T, name string) drivers.Driver {
	b, err := faulty2.ByName(name)
	require.NoError(t, err)
	return b.Driver()
}

// TestRunsOfTwoGoroutinesMakeRandomCasesAtTheSameTime: two runs started
// together, each with a time budget, both make random cases and both
// shrink what they find. rapid's settings are process-wide; a run that
// held them for its whole random stage made the other wait past its own
// budget, which then made no case at all (srqblame -parallel 2 missed
// bugs that way).
func TestRunsOfTwoGoroutinesMakeRandomCasesAtTheSameTime(t *testing.T) {
	for _, tc := range []struct {
		name string
		drv  drivers.Driver
		fail bool
	}{
		{"a conforming emulator", emu.New(), false},
		{"a bug random cases catch", mustBug(t, "send-imm-reports-write-imm"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var wg sync.WaitGroup
			reps := make([]*conformance.Report, 2)
			errs := make([]error, 2)
			for i := range reps {
				wg.Add(1)
				go func() {
					defer wg.Done()
					reps[i], errs[i] = conformance.Check(context.Background(), tc.drv, drivers.Config{},
						conformance.Options{Seed: uint64(i + 1), Duration: 3 * time.Second})
				}()
			}
			wg.Wait()
			for i, rep := range reps {
				require.NoError(t, errs[i], "run %d", i)
				assert.Positive(t, rep.CasesRun, "run %d made no random case", i)
				random := 0
				for _, f := range rep.Failures {
					if strings.HasPrefix(f.Source, "random case") {
						random++
					}
				}
				if tc.fail {
					assert.Positive(t, random, "run %d: no random case failed: %v", i, rep.Failures)
				} else {
					assert.Empty(t, rep.Failures, "run %d", i)
				}
			}
		})
	}
}
