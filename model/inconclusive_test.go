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
	if !errors.As(err, &inc) || inc.Rule != RuleRecvRNR || isDeviation(err) {
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

// TestSilentPeerMayHaveLostTheMessage: a message whose peer heard nothing
// back may never have reached the receiver (every try lost on a busy host).
// The model's error path (a too-large message takes the WR with an error
// and the RC QP enters ERR) and the lost message both stay open, and the
// steps that follow decide: here the WR is still there, the QP still takes
// messages, and the next message completes it.
func TestSilentPeerMayHaveLostTheMessage(t *testing.T) {
	m := fixture(t, Documented())
	mustRun(t, m, post(wr(1, 4)))
	if err := m.Step(send(0, 5), Observation{Peer: PeerSilent}); err != nil {
		t.Fatalf("silent peer for a too-large message: Step returned %v; want nil", err)
	}
	if err := m.Step(send(0, 1), Observation{Peer: PeerOK}); err != nil {
		t.Fatalf("after a silent peer, the next message taken: Step returned %v; want nil (the first message may have been lost)", err)
	}
	got := Observation{Completions: []Completion{{WRID: 1, Status: WCSuccess, Opcode: WCRecv, ByteLen: 1, QP: 0}}}
	if err := m.Step(Poll{}, got); err != nil {
		t.Fatalf("poll after a lost message: Step returned %v; want nil", err)
	}

	// The error path is still open where the device took it.
	m = fixture(t, Documented())
	mustRun(t, m, post(wr(1, 4)))
	if err := m.Step(send(0, 5), Observation{Peer: PeerSilent}); err != nil {
		t.Fatalf("silent peer for a too-large message: Step returned %v; want nil", err)
	}
	if err := m.Step(send(0, 1), Observation{Peer: PeerError}); err != nil {
		t.Fatalf("after a silent peer, a QP in ERR: Step returned %v; want nil", err)
	}
}

// TestSilentDropsDoNotGrowTheCandidates: where the model's own path for a silent
// peer is a message the receiver drops (a QP in RESET), the lost message is
// the same state, and the candidates do not grow with every such step.
func TestSilentDropsDoNotGrowTheCandidates(t *testing.T) {
	m := fixture(t, Documented())
	mustRun(t, m, post(wr(1, 4)))
	mustRun(t, m, send(0, 5)) // too large: the RC QP enters ERR, which drops
	before := m.Candidates()  // the documented profile's open choices
	for i := range 20 {
		if err := m.Step(send(0, 1), Observation{Peer: PeerSilent}); err != nil {
			t.Fatalf("silent peer %d for a QP in ERR: Step returned %v; want nil", i, err)
		}
	}
	if n := m.Candidates(); n != before {
		t.Errorf("after 20 silent drops the model holds %d candidates; want %d, as before them", n, before)
	}
}
