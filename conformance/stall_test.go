package conformance

import (
	"context"
	"flag"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// rxeMTU is the emulator with rxe's path MTU of 1024 bytes (the largest
// UD message), below the 4096-byte messages the generator draws.
type rxeMTU struct{ drivers.Device }

func (d rxeMTU) Info() drivers.Info {
	i := d.Device.Info()
	i.MaxUDMessage = 1024
	return i
}

// rapidChecks holds rapidMu and sets rapid's number of checks to n for a
// test that calls rapid.Check itself (a run before it may have left the
// flag at its own number of cases: setRapid); the function it returns
// sets the flag back and lets go of rapidMu.
func rapidChecks(t *testing.T, n int) func() {
	rapidMu.Lock()
	checks := flag.Lookup("rapid.checks")
	require.NotNil(t, checks)
	was := checks.Value.String()
	require.NoError(t, flag.Set("rapid.checks", strconv.Itoa(n)))
	return func() {
		_ = flag.Set("rapid.checks", was)
		rapidMu.Unlock()
	}
}

// TestRandomCasesMakeOnlyStepsTheHarnessCanMake: the generator issues no
// step that session.cannot refuses (an RC RDMA Write with Immediate longer
// than one packet to an SRQ that may have no WR, among others) on a
// device that supports every verb, so no random case is cut short.
func TestRandomCasesMakeOnlyStepsTheHarnessCanMake(t *testing.T) {
	defer rapidChecks(t, 100)()
	ctx := context.Background()
	dev, err := emu.New().Open(ctx, drivers.Config{})
	require.NoError(t, err)
	defer dev.Close()
	x := newExecutor(rxeMTU{dev}, Options{})
	p := model.Documented()
	rapid.Check(t, func(t *rapid.T) {
		tr, skip, _ := run(ctx, p, nil, x, func(s *session) { genCase(t, s, 40) })
		require.False(t, tr.Failed(), "the emulator should pass:\n%s", tr.Text())
		require.Empty(t, skip, "a random case made a step the harness cannot make:\n%s", tr.Text())
	})
}

// TestAWriteWithImmediateThatWouldStallTheResponderIsNotSent: replayed, an
// RC RDMA Write with Immediate of more than one packet to an SRQ with no
// WR stops the replay with an error naming the step (the harness's peer
// cannot retry its refused last packet: stallsResponder); one packet
// long, or with a WR to take, it is sent.
func TestAWriteWithImmediateThatWouldStallTheResponderIsNotSent(t *testing.T) {
	ctx := context.Background()
	dev, err := emu.New().Open(ctx, drivers.Config{})
	require.NoError(t, err)
	mtu := dev.Info().MaxUDMessage
	require.NoError(t, dev.Close())
	require.NotZero(t, mtu)
	up := []model.Op{
		model.CreateSRQ{MaxWR: 4, MaxSGE: 1}, model.CreateQP{Type: model.RC},
		model.ModifyQP{QP: 0, State: model.Init}, model.ModifyQP{QP: 0, State: model.RTR}, model.ModifyQP{QP: 0, State: model.RTS},
	}
	post := model.Post{WRs: []model.WR{{ID: 1, NumSGE: 1, SGEs: []model.SGE{{Length: 3 * mtu}}}}}
	arrive := func(n uint32) model.Op {
		return model.Arrive{QP: 0, Msg: model.Message{Opcode: model.WriteImm, Len: n}}
	}
	write := model.Arrive{QP: 0, Msg: model.Message{Opcode: model.Write, Len: 64}}
	replay := func(ops ...model.Op) (Trace, error) {
		return Replay(ctx, emu.New(), drivers.Config{}, model.Documented(), nil, append(append([]model.Op{}, up...), ops...), Options{})
	}

	_, err = replay(arrive(2*mtu), write)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "step 6 (")
	assert.Contains(t, err.Error(), "RDMA Write with Immediate")

	for name, ops := range map[string][]model.Op{
		"one packet":  {arrive(mtu), write},
		"a WR posted": {post, arrive(2 * mtu), write},
	} {
		tr, err := replay(ops...)
		require.NoError(t, err, name)
		assert.False(t, tr.Failed(), "%s:\n%s", name, tr.Text())
		assert.Len(t, tr.Steps, len(up)+len(ops), name)
	}
}
