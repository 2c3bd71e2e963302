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
// lets it take the WRs the model holds, one empty Send each (up to four).
// Without it these traces (found by the catch sweep, resize-limit-miscount
// on seeds 90 and 86) are explained as well by a post that dropped WRs it
// should have kept (POST-ORDER) as by the limit event the mutant raises
// too early (LIMIT-FIRE), and the tie went to POST-ORDER. In the second
// the head WR is the same either way: only the WRs behind it tell.
func TestEvidenceTakesTheHeadWithAFreshQP(t *testing.T) {
	bad := model.WR{ID: 3, NumSGE: -1}
	traces := map[string][]model.Op{
		"seed 90": {
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
		},
		"seed 86": {
			model.CreateSRQ{MaxWR: 31, MaxSGE: 1},
			model.CreateQP{Type: model.RC},
			model.Post{WRs: []model.WR{{ID: 1}, {ID: 2}}},
			model.Post{WRs: []model.WR{{ID: 35, NumSGE: 1, SGEs: []model.SGE{{Length: 1 << 30}}}, {ID: 36}, bad, bad}},
			model.ModifyQP{QP: 0, State: model.Init},
			model.ModifyQP{QP: 0, State: model.RTR},
			model.Resize{MaxWR: 32},
			model.Arm{Limit: 2},
			model.Arrive{QP: 0, Msg: model.Message{Opcode: model.Send, Len: 1}},
			model.Poll{},
		},
	}
	for name, ops := range traces {
		tr, err := conformance.Replay(context.Background(), emu.New(emu.ResizeLimitMiscount), drivers.Config{}, model.Documented(), nil, ops, conformance.Options{})
		require.NoError(t, err, name)
		require.NotNil(t, tr.Deviation, "%s: the mutant's early limit event should deviate:\n%s", name, tr.Text())
		require.NotNil(t, tr.Diagnosis, name)
		assert.Equal(t, []model.RuleID{model.RuleLimitFire}, tr.Diagnosis.Rules, "%s:\n%s", name, tr.Text())
		fresh := slices.ContainsFunc(tr.Steps, func(s conformance.TraceStep) bool {
			c, ok := s.Op.(model.CreateQP)
			return s.Evidence && ok && c.Type == model.RC
		})
		assert.True(t, fresh, "%s: no fresh QP among the evidence steps:\n%s", name, tr.Text())
	}
}
