package cgo

import (
	"testing"
	"time"

	"github.com/srqconform/srqconform/drivers"
)

// TestPeerOutcomeTellsSilenceFromAnswers: a transport that gave up
// (IBV_WC_RETRY_EXC_ERR) is silence, not the device's error; the
// device's own answers keep their outcomes.
func TestPeerOutcomeTellsSilenceFromAnswers(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   drivers.PeerStatus
	}{
		{0, drivers.PeerOK},      // IBV_WC_SUCCESS
		{13, drivers.PeerRNR},    // IBV_WC_RNR_RETRY_EXC_ERR: the receiver's RNR NAK
		{12, drivers.PeerSilent}, // IBV_WC_RETRY_EXC_ERR: no answer at all
		{9, drivers.PeerError},   // IBV_WC_REM_INV_REQ_ERR: an error NAK
		{10, drivers.PeerError},  // IBV_WC_REM_ACCESS_ERR
		{11, drivers.PeerError},  // IBV_WC_REM_OP_ERR
		{5, drivers.PeerError},   // IBV_WC_WR_FLUSH_ERR: the peer's own queue flushed
		{21, drivers.PeerError},  // IBV_WC_GENERAL_ERR
	} {
		if got := peerOutcome(tc.status); got != tc.want {
			t.Errorf("peerOutcome(%d) = %d, want %d", tc.status, got, tc.want)
		}
	}
}

func TestCanResendOnlyWhatTheReceiverSeesAsARetransmission(t *testing.T) {
	for _, tc := range []struct {
		name           string
		known, fetches bool
		first, n, rq   uint32
		want           bool
	}{
		{"took nothing (an RNR NAK came late)", true, true, 100, 1, 100, true},
		{"took the message (its ACK came late)", true, true, 100, 3, 103, true},
		{"PSN wraps", true, true, psnMask, 2, 1, true},
		{"receiver in ERR, RESET or INIT drops", true, false, 100, 1, 100, false},
		{"peer's PSN unknown (rdma_cm chose it)", false, true, 100, 1, 100, false},
		{"receiver expects a PSN that fits neither", true, true, 100, 1, 102, false},
	} {
		if got := canResend(tc.known, tc.fetches, tc.first, tc.n, tc.rq); got != tc.want {
			t.Errorf("%s: canResend(%v, %v, %d, %d, %d) = %v, want %v", tc.name, tc.known, tc.fetches, tc.first, tc.n, tc.rq, got, tc.want)
		}
	}
}

func TestPSNCount(t *testing.T) {
	for _, tc := range []struct {
		op          drivers.Opcode
		length, mtu uint32
		want        uint32
	}{
		{drivers.Send, 0, 1024, 1},
		{drivers.Send, 1024, 1024, 1},
		{drivers.Send, 1025, 1024, 2},
		{drivers.WriteImm, 16384, 4096, 4},
		{drivers.Read, 3000, 1024, 3},
		{drivers.FetchAdd, 8, 256, 1},
	} {
		if got := psnCount(tc.op, tc.length, tc.mtu); got != tc.want {
			t.Errorf("psnCount(%d, %d, %d) = %d, want %d", tc.op, tc.length, tc.mtu, got, tc.want)
		}
	}
}

func TestReceives(t *testing.T) {
	for st := drivers.Reset; st <= drivers.Err; st++ {
		want := st != drivers.Reset && st != drivers.Init && st != drivers.Err
		if got := receives(st); got != want {
			t.Errorf("receives(%s) = %v, want %v", st, got, want)
		}
	}
}

func TestAckTime(t *testing.T) {
	for _, tc := range []struct {
		t    uint
		want time.Duration
	}{{13, 34 * time.Millisecond}, {17, 537 * time.Millisecond}} {
		if got := ackTime(tc.t); got != tc.want {
			t.Errorf("ackTime(%d) = %v, want %v", tc.t, got, tc.want)
		}
	}
}
