package conformance

import (
	"testing"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// TestCMTransition: a connection-managed QP goes up RESET, INIT, RTR,
// RTS one step at a time, to ERR once connected, to RESET from anywhere.
func TestCMTransition(t *testing.T) {
	ok := map[[2]model.QPState]bool{
		{model.Reset, model.Init}: true, {model.Init, model.RTR}: true, {model.RTR, model.RTS}: true,
		{model.RTR, model.Err}: true, {model.RTS, model.Err}: true, {model.Err, model.Err}: true,
	}
	for _, from := range model.QPStates {
		for _, to := range model.QPStates {
			want := ok[[2]model.QPState{from, to}] || to == model.Reset
			if from == model.SQD || from == model.SQE {
				want = want || to == model.Err
			}
			if got := cmTransition(from, true, to); got != want {
				t.Errorf("cmTransition(%s -> %s) = %v, want %v", from, to, got, want)
			}
		}
	}
	if cmTransition(model.RTS, false, model.Err) || !cmTransition(model.RTS, false, model.Reset) {
		t.Errorf("a QP whose state is not sure may only go to RESET")
	}
	info := drivers.Info{NoOpcodes: drivers.Opcodes(drivers.SendImm, drivers.CmpSwap)}
	if opcodeOK(info, model.SendImm) || opcodeOK(info, model.CmpSwap) || !opcodeOK(info, model.Send) || !opcodeOK(info, model.Write) {
		t.Errorf("opcodeOK with NoOpcodes %b disagrees", info.NoOpcodes)
	}
}

// TestDestroySRQNeedsAConnectedQPInCMMode: a connection-managed driver has
// no verbs QP before RTR or after RESET, so destroy_srq is only tried for
// its refusal when some QP is connected (seen on siw: QPs in RESET and
// INIT did not hold the SRQ, and destroy_srq succeeded).
func TestDestroySRQNeedsAConnectedQPInCMMode(t *testing.T) {
	cm := drivers.Info{CMStates: true}
	for _, c := range []struct {
		info   drivers.Info
		states []model.QPState
		can    bool
	}{
		{cm, []model.QPState{model.Reset, model.Init}, false},
		{cm, []model.QPState{model.Init, model.RTS}, true},
		{cm, []model.QPState{model.Err}, true},
		{drivers.Info{}, []model.QPState{model.Reset}, true},
	} {
		why := unmadeQPs(c.info, model.View{QPStates: c.states})
		if (why == "") != c.can {
			t.Errorf("unmadeQPs(CMStates %v, %v) = %q; want destroy_srq allowed %v", c.info.CMStates, c.states, why, c.can)
		}
	}
}
