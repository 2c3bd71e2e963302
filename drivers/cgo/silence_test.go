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

// TestRetryFullTakesTheLateWRsSlots: a post that found the SRQ full
// after a UD message the receiver had not yet taken a WR for is tried
// again from bad_wr on once a completion came, and answers as one post of
// the list would have once the slot is free; an SRQ that stays full keeps
// ENOMEM at the WR where it stayed full, within the bound, and is not
// posted to again without a completion; any other failure ends it.
func TestRetryFullTakesTheLateWRsSlots(t *testing.T) {
	for _, tc := range []struct {
		name            string
		r, bad, n       int
		frees           []int // slots each completion frees, one completion per wait
		other           bool  // the retry fails with EINVAL
		gone            bool  // the SRQ is destroyed during the wait
		wantR, wantBad  int
		wantCalls       int
		wantWaitAtLeast time.Duration
	}{
		{name: "a late WR frees one slot for the last WR", r: 12, bad: 3, n: 4, frees: []int{1}, wantR: 0, wantBad: -1, wantCalls: 1},
		{name: "negative errno from an old provider", r: -12, bad: 3, n: 4, frees: []int{1}, wantR: 0, wantBad: -1, wantCalls: 1},
		{name: "two late WRs, one completion each", r: 12, bad: 2, n: 4, frees: []int{1, 0, 0, 1}, wantR: 0, wantBad: -1, wantCalls: 2},
		{name: "one slot for two WRs: bad_wr moves on", r: 12, bad: 2, n: 4, frees: []int{1}, wantR: 12, wantBad: 3, wantCalls: 1, wantWaitAtLeast: 2 * time.Second},
		{name: "never freed: ENOMEM stays, after the whole bound, no post", r: 12, bad: 0, n: 2, wantR: 12, wantBad: 0, wantCalls: 0, wantWaitAtLeast: 2 * time.Second},
		{name: "not full: no retry", r: 22, bad: 1, n: 2, frees: []int{5}, wantR: 22, wantBad: 1, wantCalls: 0},
		{name: "another failure ends it", r: 12, bad: 1, n: 3, frees: []int{1}, other: true, wantR: 22, wantBad: 1, wantCalls: 1},
		{name: "the SRQ went away", r: 12, bad: 1, n: 3, frees: []int{5}, gone: true, wantR: 12, wantBad: 1, wantCalls: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slots, calls, waits := 0, 0, 0
			var waited time.Duration
			post := func(from int) (int, int) {
				calls++
				if tc.other {
					return 22, 0
				}
				for i := from; i < tc.n; i++ {
					if slots == 0 {
						return 12, i - from
					}
					slots--
				}
				return 0, -1
			}
			wait := func(d time.Duration) (bool, bool) {
				waited += d
				waits++
				if waits > len(tc.frees) || tc.frees[waits-1] == 0 {
					return false, !tc.gone
				}
				slots += tc.frees[waits-1]
				return true, !tc.gone
			}
			r, bad := retryFull(tc.r, tc.bad, tc.n, lateBound, post, wait)
			if r != tc.wantR || bad != tc.wantBad {
				t.Errorf("retryFull = %d, %d; want %d, %d", r, bad, tc.wantR, tc.wantBad)
			}
			if calls != tc.wantCalls {
				t.Errorf("retryFull posted %d times, want %d", calls, tc.wantCalls)
			}
			if waited < tc.wantWaitAtLeast || waited > lateBound {
				t.Errorf("retryFull waited %v in all, want at least %v and at most the bound %v", waited, tc.wantWaitAtLeast, lateBound)
			}
		})
	}
}
