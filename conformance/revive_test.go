package conformance

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// TestRandomCasesAskARevivedQPToSkipRTR: some random case brings a QP that
// was up back through RESET to INIT and asks it for RTS or SQD at once, a
// transition the QP must refuse. A driver that keeps a QP's connection
// across the reset may take the shortcut (faulty's recycled-init-to-rts
// escaped 10,000 cases a seed when revived QPs only went INIT -> RTR).
func TestRandomCasesAskARevivedQPToSkipRTR(t *testing.T) {
	defer rapidChecks(t, 300)()
	ctx := context.Background()
	dev, err := emu.New().Open(ctx, drivers.Config{})
	require.NoError(t, err)
	defer dev.Close()
	x := newExecutor(dev, Options{})
	skips := 0
	rapid.Check(t, func(t *rapid.T) {
		tr, _, _ := run(ctx, model.Documented(), nil, x, func(s *session) { genCase(t, s, 40) })
		require.False(t, tr.Failed(), "the emulator should pass:\n%s", tr.Text())
		up, last := map[int]bool{}, map[int][]model.QPState{}
		for _, op := range tr.Ops() {
			m, ok := op.(model.ModifyQP)
			if !ok {
				continue
			}
			l := append(last[m.QP], m.State)
			if n := len(l); n >= 3 && up[m.QP] && l[n-3] == model.Reset && l[n-2] == model.Init && (m.State == model.RTS || m.State == model.SQD) {
				skips++
			}
			if m.State == model.RTS {
				up[m.QP] = true
			}
			last[m.QP] = l
		}
	})
	require.Positive(t, skips, "no case asked a revived QP in INIT for RTS or SQD")
}
