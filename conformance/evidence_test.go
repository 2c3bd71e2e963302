package conformance_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// TestEvidenceTakesTheHeadWithAFreshQP: when every QP the model had settled
// is in ERR, the evidence after a deviation brings a fresh QP to RTR and
// lets it take the head of the SRQ. Without it this trace (found by the
// catch sweep, resize-limit-miscount on seed 90) is explained as well by a
// post that dropped its first WR (POST-ORDER) as by the limit event the
// mutant raises too early (LIMIT-FIRE), and the tie went to POST-ORDER.
func TestEvidenceTakesTheHeadWithAFreshQP(t *testing.T) {
	bad := model.WR{ID: 3, NumSGE: -1}
	ops := []model.Op{
		model.CreateSRQ{MaxWR: 7, MaxSGE: 1},
		model.CreateQP{Type: model.RC},
		model.Post{WRs: []model.WR{{ID: 1}}},
		model.Post{WRs: []model.WR{{ID: 2, NumSGE: 1, SGEs: []model.SGE{{Length: 0, Key: 1}}}, bad, bad, bad}},
		model.ModifyQP{QP: 0, State: model.Init},
		model.ModifyQP{QP: 0, State: model.RTR},
		model.Resize{MaxWR: 7},
		model.Arm{Limit: 1},
		model.Arrive{QP: 0, Msg: model.Message{Opcode: model.Send, Len: 1}},
		model.Poll{},
	}
	tr, err := conformance.Replay(context.Background(), emu.New(emu.ResizeLimitMiscount), drivers.Config{}, model.Documented(), nil, ops, conformance.Options{})
	require.NoError(t, err)
	require.NotNil(t, tr.Deviation, "the mutant's early limit event should deviate:\n%s", tr.Text())
	require.NotNil(t, tr.Diagnosis)
	assert.Equal(t, []string{"LIMIT-FIRE"}, tr.Diagnosis.Rules, "%s", tr.Text())
	fresh := slices.ContainsFunc(tr.Steps, func(s conformance.Step) bool {
		c, ok := s.Op.(model.CreateQP)
		return s.Evidence && ok && c.Type == model.RC
	})
	assert.True(t, fresh, "no fresh QP among the evidence steps:\n%s", tr.Text())
}
