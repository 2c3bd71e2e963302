package conformance_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// TestACrashIsACounterexampleOfItsOwn: with sge-off-by-one, POST-SGE fails
// on the SGE limit in some scenarios; a negative num_sge that kills the
// process (as libsiw's does, made in a child process) is kept as its own
// counterexample with its own replay file, not listed among the others.
func TestACrashIsACounterexampleOfItsOwn(t *testing.T) {
	rep, err := conformance.Check(context.Background(), emu.New(), drivers.Config{Options: map[string]string{"deviations": "sge-off-by-one,negative-sge-kills"}},
		conformance.Options{Seed: 1, Cases: -1, Rules: []model.RuleID{model.RulePostSGE}})
	require.NoError(t, err)
	var crash, other int
	for _, f := range rep.Failures {
		if f.Rule != model.RulePostSGE {
			continue
		}
		if f.Source == "scenario: a negative num_sge" {
			crash++
			got := ""
			for _, st := range f.Trace.Steps {
				got += st.Got + "\n"
			}
			assert.Contains(t, got, "the process killed by SIGSEGV")
			assert.Empty(t, f.AlsoIn, "the crash stands alone")
		} else {
			other++
			assert.NotContains(t, f.AlsoIn, "scenario: a negative num_sge")
		}
	}
	assert.Equal(t, 1, crash, "the crash's counterexample")
	assert.Equal(t, 1, other, "one counterexample for the other POST-SGE traces")
}
