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

// TestPostRecvNeedsAMadeQPInCMMode: in rdma_cm mode post_recv reaches the
// device only for a connected QP, unless the driver makes the call in a
// child process on a QP of its own.
func TestPostRecvNeedsAMadeQPInCMMode(t *testing.T) {
	v := model.View{QPStates: []model.QPState{model.Init, model.RTS}}
	if unmadeQP(drivers.Info{CMStates: true}, v, 0) == "" {
		t.Errorf("post_recv on a QP in INIT in rdma_cm mode: allowed, want n/a")
	}
	if why := unmadeQP(drivers.Info{CMStates: true}, v, 1); why != "" {
		t.Errorf("post_recv on a connected QP in rdma_cm mode: %q, want allowed", why)
	}
	if why := unmadeQP(drivers.Info{CMStates: true, PostRecvUnsafe: "crashes"}, v, 0); why != "" {
		t.Errorf("post_recv made in a child: %q, want allowed", why)
	}
	if why := unmadeQP(drivers.Info{}, v, 0); why != "" {
		t.Errorf("post_recv with verbs connections: %q, want allowed", why)
	}
}
