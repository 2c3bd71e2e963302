package model

import (
	"errors"
	"testing"
)

// TestSilentPeerIsNotTheDevicesError: a peer that heard nothing back is
// inconclusive where the model needs the receiver's answer (an RNR NAK on
// an empty SRQ, the ACK of a message taken), and consistent where the
// model allows an error (a receiver in ERR drops the message); it is never
// a deviation, which the same step observed as PeerError is.
func TestSilentPeerIsNotTheDevicesError(t *testing.T) {
	var inc *Inconclusive
	err := fixture(t, Documented()).Step(send(0, 1), Observation{Peer: PeerSilent})
	if !errors.As(err, &inc) || inc.Rule != "RECV-RNR" || isDeviation(err) {
		t.Fatalf("silent peer on an empty SRQ: Step returned %v; want *Inconclusive for RECV-RNR", err)
	}
	if err := fixture(t, Documented()).Step(send(0, 1), Observation{Peer: PeerError}); ruleOf(err) != "RECV-RNR" {
		t.Fatalf("error peer on an empty SRQ: Step returned %v; want a RECV-RNR deviation", err)
	}

	m := fixture(t, Documented())
	mustRun(t, m, post(wr(1, 4)))
	if err := m.Step(send(0, 1), Observation{Peer: PeerSilent}); !IsInconclusive(err) {
		t.Fatalf("silent peer for a message taken: Step returned %v; want *Inconclusive", err)
	}

	m = fixture(t, Documented())
	mustRun(t, m, post(wr(1, 4)))
	mustRun(t, m, send(0, 5)) // too large: the RC QP enters ERR
	if err := m.Step(send(0, 1), Observation{Peer: PeerSilent}); err != nil {
		t.Fatalf("silent peer for a QP in ERR, which drops: Step returned %v; want nil", err)
	}
	if got := PeerSilent.String(); got != "silent" {
		t.Errorf("PeerSilent.String() = %q, want \"silent\"", got)
	}
	if got := Peers(PeerRNR, PeerSilent).String(); got != "rnr or silent" {
		t.Errorf("Peers(PeerRNR, PeerSilent).String() = %q, want \"rnr or silent\"", got)
	}
}
