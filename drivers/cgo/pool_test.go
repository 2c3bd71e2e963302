//go:build linux && cgo && rdma

package cgo

import (
	"context"
	"syscall"
	"testing"

	"github.com/srqconform/srqconform/drivers"
)

// TestTheNextSRQTakesTheLastOnesRegions: a closed SRQ leaves its PD,
// regions, CQ and peers to the next; a key the case deregistered comes
// back registered with a new key, the CQ comes back empty, and sends land
// through reused peers into reused regions as through new ones.
func TestTheNextSRQTakesTheLastOnesRegions(t *testing.T) {
	d := open(t)
	ctx := context.Background()
	s1, qps := setup(t, d, drivers.SRQAttr{MaxWR: 8, MaxSGE: 2}, drivers.RC, 2)
	post(t, s1, wr(1, 64, 64), wr(2, 64, 64))
	if p := deliver(t, qps[0], drivers.Message{Opcode: drivers.Send, Len: 100, Pattern: 3}); p != 0 {
		t.Fatalf("send: peer status %d", p)
	}
	// Left in the CQ on purpose: the next SRQ must not see it.
	if p := deliver(t, qps[1], drivers.Message{Opcode: drivers.Send, Len: 10, Pattern: 4}); p != 0 {
		t.Fatalf("send: peer status %d", p)
	}
	if err := s1.InvalidateKey(1); err != nil {
		t.Fatal(err)
	}
	first := s1.(*srq)
	k, pd, oldKey := first.kit, first.pd, first.keys[1].lkey
	peer0 := qps[0].(*qp).peer
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}

	s2, qps2 := setup(t, d, drivers.SRQAttr{MaxWR: 8, MaxSGE: 2}, drivers.RC, 2)
	second := s2.(*srq)
	if second.kit != k || second.pd != pd {
		t.Fatalf("second SRQ: kit %p, PD %p; want the first's %p, %p", second.kit, second.pd, k, pd)
	}
	if second.keys[1].mr == nil || second.keys[1].lkey == oldKey {
		t.Errorf("key 1 after its deregistration: mr %v, lkey %#x (before %#x); want registered again with a new key", second.keys[1].mr, second.keys[1].lkey, oldKey)
	}
	reused := false
	for _, q := range qps2 {
		reused = reused || q.(*qp).peer == peer0
	}
	if !reused {
		t.Errorf("no QP of the second SRQ took the first's idle peer")
	}
	if cs, err := s2.PollCQ(0); err != nil || len(cs) != 0 {
		t.Fatalf("PollCQ on the second SRQ = %+v, %v; want nothing (the first's completion was drained)", cs, err)
	}
	post(t, s2, wr(7, 64, 64))
	if p := deliver(t, qps2[1], drivers.Message{Opcode: drivers.Send, Len: 100, Pattern: 9}); p != 0 {
		t.Fatalf("send through a reused peer: peer status %d", p)
	}
	cs := pollN(t, s2, 1)
	if want := (drivers.Completion{WRID: 7, ByteLen: 100, QP: 1, Pattern: 9, HasPattern: true}); cs[0] != want {
		t.Errorf("completion %+v, want %+v (bytes checked in both regions)", cs[0], want)
	}
	if _, _, err := d.CreateSRQ(ctx, drivers.SRQAttr{MaxWR: 4, MaxSGE: 1}, 2); err != nil {
		t.Fatalf("a third SRQ beside the second (new regions): %v", err)
	}
}

// TestPostRecvInAChildProcess makes ibv_post_recv on an SRQ-attached QP in
// a child process, as PostRecv does where Info.PostRecvUnsafe says the
// call kills: the child's answer comes back, or the signal that killed it.
func TestPostRecvInAChildProcess(t *testing.T) {
	d := open(t)
	info := d.Info()
	r, bad, err := postRecvInChild(info.Name, 7)
	if err != nil {
		t.Fatal(err)
	}
	if sig, ok := drivers.KilledBy(r); ok {
		t.Logf("%s: the child was killed by %s", info.Name, drivers.SignalName(sig))
		if info.PostRecvUnsafe == "" || sig != syscall.SIGFPE {
			t.Errorf("killed by %s, but Info.PostRecvUnsafe is %q", drivers.SignalName(sig), info.PostRecvUnsafe)
		}
		return
	}
	// bad_wr 0 is the first WR; -1 is NULL, which rxe leaves
	// (the PostRecvBadWR profile field).
	if r == 0 || bad != 0 && bad != -1 {
		t.Errorf("ibv_post_recv on an SRQ-attached QP in a child = %s, bad_wr %d; want a refusal with bad_wr 0 or NULL", errnoName(r), bad)
	}
	if info.PostRecvUnsafe != "" {
		t.Errorf("Info.PostRecvUnsafe says %q, but the child was not killed", info.PostRecvUnsafe)
	}
	if _, _, err := postRecvInChild("no-such-device", 7); err == nil {
		t.Errorf("a child on a device that does not exist: no error")
	}
}

// TestPostSRQRecvInAChildProcess makes ibv_post_srq_recv of a WR with a
// negative num_sge in a child process, as Post does where
// Info.NegativeSGEUnsafe says the call kills: the child's answer comes
// back (EINVAL on a provider that checks num_sge), or the signal that
// killed it.
func TestPostSRQRecvInAChildProcess(t *testing.T) {
	d := open(t)
	info := d.Info()
	r, bad, err := postSRQRecvInChild(info.Name, 9, -1)
	if err != nil {
		t.Fatal(err)
	}
	if sig, ok := drivers.KilledBy(r); ok {
		t.Logf("%s: the child was killed by %s", info.Name, drivers.SignalName(sig))
		if info.NegativeSGEUnsafe == "" {
			t.Errorf("killed by %s, but Info.NegativeSGEUnsafe is empty", drivers.SignalName(sig))
		}
		return
	}
	if r == 0 || bad != 0 {
		t.Errorf("ibv_post_srq_recv of num_sge -1 in a child = %s, bad_wr %d; want a refusal with bad_wr 0", errnoName(r), bad)
	}
	if info.NegativeSGEUnsafe != "" {
		t.Errorf("Info.NegativeSGEUnsafe says %q, but the child was not killed", info.NegativeSGEUnsafe)
	}
	// A valid WR goes in, in the child's SRQ.
	if r, bad, err := postSRQRecvInChild(info.Name, 10, 1); err != nil || r != 0 || bad != -1 {
		t.Errorf("ibv_post_srq_recv of num_sge 1 in a child = %s, bad_wr %d, %v; want 0, none", errnoName(r), bad, err)
	}
	if _, _, err := postSRQRecvInChild("no-such-device", 9, -1); err == nil {
		t.Errorf("a child on a device that does not exist: no error")
	}
}

// TestInCallNamesTheCallInProgress: a hang's error names the rdma_cm call
// the driver is in (drivers.CallTracer); none once it returned.
func TestInCallNamesTheCallInProgress(t *testing.T) {
	d := &device{}
	if got := d.InCall(); got != "" {
		t.Errorf("InCall() on a fresh device = %q, want \"\"", got)
	}
	leave := d.enter("rdma_destroy_id(peer 3)")
	if got := d.InCall(); got != "rdma_destroy_id(peer 3)" {
		t.Errorf("InCall() inside the call = %q, want rdma_destroy_id(peer 3)", got)
	}
	leave()
	if got := d.InCall(); got != "" {
		t.Errorf("InCall() after the call = %q, want \"\"", got)
	}
}
