package emu_test

import (
	"testing"

	"github.com/srqconform/srqconform/drivers"
)

// TestAMessageOverSeveralSGEsOfOneKeyLandsWhole: a message scattered over
// SGEs of one key that each lie past the region's room so far lands
// whole, every byte where its SGE says: scatter makes the region's room
// for all of them before it writes any, so a later SGE's room does not
// lose an earlier one's bytes.
func TestAMessageOverSeveralSGEsOfOneKeyLandsWhole(t *testing.T) {
	r := newRig(t, drivers.SRQAttr{MaxWR: 4, MaxSGE: 3}, 2)
	q := r.qp(drivers.RC, drivers.RTR)
	sges := []drivers.SGE{{Length: 64, Key: 0}, {Length: 4096, Key: 0}, {Length: 1 << 20, Key: 0}}
	if e, _ := r.srq.Post(r.wrs(1, sges...)); e != 0 {
		t.Fatalf("Post of one WR = errno %d, want 0", e)
	}
	n := uint32(64 + 4096 + 5000)
	if st := r.send(q, drivers.Send, n); st != drivers.PeerOK {
		t.Fatalf("Send of %d bytes: peer %v, want ok", n, st)
	}
	cs := r.poll()
	if len(cs) != 1 || cs[0].Status != drivers.WCSuccess || cs[0].ByteLen != n || cs[0].PayloadErr != "" {
		t.Fatalf("completions %+v, want one success of %d bytes with its payload where its SGEs say", cs, n)
	}
}
