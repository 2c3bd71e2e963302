package cgo

import (
	"syscall"
	"time"

	"github.com/srqconform/srqconform/drivers"
)

// Work completion statuses the peer's send completion is read for (enum
// ibv_wc_status; qp.go checks them against libibverbs when it compiles).
const (
	wcSuccess       = 0
	wcRetryExceeded = 12 // IBV_WC_RETRY_EXC_ERR: no ACK, NAK or RNR NAK came back in time
	wcRNRExceeded   = 13 // IBV_WC_RNR_RETRY_EXC_ERR: the receiver answered RNR until the retries ran out
)

// psnMask keeps a packet sequence number to its 24 bits.
const psnMask = 1<<24 - 1

// peerOutcome maps the status of the peer's send completion to what the
// peer saw, telling the device's answers apart from silence: success, an
// RNR NAK (RNR retries exceeded) and every other error completion (an
// error NAK, a local error) are the device's; IBV_WC_RETRY_EXC_ERR is the
// peer's own transport giving up because nothing came back within its ACK
// timer, which on a busy machine is also what a late answer looks like
// (InfiniBand Architecture Specification, volume 1, chapter 9, the
// reliable service's transport timer and retry counter; rxe completes the
// WR so in rxe_comp.c when its retries run out).
func peerOutcome(status int) drivers.PeerStatus {
	switch status {
	case wcSuccess:
		return drivers.PeerOK
	case wcRNRExceeded:
		return drivers.PeerRNR
	case wcRetryExceeded:
		return drivers.PeerSilent
	}
	return drivers.PeerError
}

// receives says whether a QP in state st processes incoming messages
// (RTR and every state after it but ERR); one in RESET, INIT or ERR drops
// them without an answer, so the peer's silence is its answer.
func receives(st drivers.QPState) bool {
	return st == drivers.RTR || st == drivers.RTS || st == drivers.SQD || st == drivers.SQE
}

// canResend says whether an RC message the peer heard nothing back for
// can be sent again at its own first PSN, first, with longer timers, so
// that the receiver sees no more than the transport's own retransmission:
// the peer's PSN is known (known), the receiver still receives (fetches),
// and it expects either first (it took nothing: it answers anew, an RNR
// NAK or the ACK) or first+n (it took the n-PSN message: the resend is a
// duplicate, which a responder acknowledges again without taking a second
// WR: InfiniBand Architecture Specification, volume 1, chapter 9,
// duplicate requests; rxe_resp.c check_psn and duplicate_request). rq is the receiver's expected PSN as ibv_query_qp reads it.
// Anything else (a receiver in ERR, which would raise LAST_WQE_REACHED
// again for every packet on rxe 6.5 and later; a PSN that fits neither)
// leaves the silence as it is.
func canResend(known, fetches bool, first, n, rq uint32) bool {
	if !known || !fetches {
		return false
	}
	rq &= psnMask
	return rq == first&psnMask || rq == (first+n)&psnMask
}

// psnCount is how many PSNs a message of length bytes takes on a path of
// mtu bytes: one per packet, an RDMA Read one per response packet, an
// atomic one (InfiniBand Architecture Specification, volume 1, chapter 9,
// packet sequence numbers).
func psnCount(op drivers.Opcode, length, mtu uint32) uint32 {
	if op == drivers.CmpSwap || op == drivers.FetchAdd || length == 0 || mtu == 0 {
		return 1
	}
	return (length + mtu - 1) / mtu
}

// ackTime is the local ACK timeout an IBV_QP_TIMEOUT value t stands for:
// 4.096 us * 2^t (InfiniBand Architecture Specification, volume 1,
// chapter 9, the transport timer), rounded to the millisecond.
func ackTime(t uint) time.Duration {
	return (4096 * time.Nanosecond << t).Round(time.Millisecond)
}

// lateBound bounds how long a post that found the SRQ full is tried
// again after a UD message whose receive completion did not show within
// udSettle (Deliver): 40 times udSettle. Such a message's responder may
// take a WR after Deliver stopped waiting, so a full SRQ before it ran is
// the wait's doing, not the device's answer.
const lateBound = 2 * time.Second

// isFull says whether r, what ibv_post_srq_recv returned, is ENOMEM: a
// positive errno, or a negative one from an rdma-core provider before
// 80df17ced.
func isFull(r int) bool { return r == int(syscall.ENOMEM) || r == -int(syscall.ENOMEM) }

// retryFull finishes a post of n WRs that found the SRQ full at WR bad
// (r is what the post returned), as one post of the list would have
// finished had the receiver's late WRs been taken first. It waits for a
// sign that a slot may have freed (a new receive completion) and then
// posts the WRs from bad on again, until they all go in, the post fails
// otherwise, or its waits add up to bound. A post is tried again only
// after such a sign, so that it takes no more of the regions than the
// late messages free. post(from) posts the list's WRs from index from on
// and returns what ibv_post_srq_recv returned, with bad_wr's index in
// that tail (-1 for none); wait(d) waits up to d and says whether a
// completion came and whether the SRQ is still there to post to. It
// returns 0 and -1 once every WR went in; otherwise the last result, with
// bad_wr's index in the whole list.
func retryFull(r, bad, n int, bound time.Duration, post func(from int) (int, int), wait func(time.Duration) (woke, alive bool)) (int, int) {
	const slice = 50 * time.Millisecond
	for waited := time.Duration(0); isFull(r) && bad >= 0 && bad < n && waited < bound; waited += slice {
		woke, alive := wait(slice)
		if !alive {
			break
		}
		if !woke {
			continue
		}
		r2, bad2 := post(bad)
		switch {
		case r2 == 0:
			return 0, -1
		case bad2 < 0:
			return r2, bad // failed without saying where: nothing more went in
		}
		r, bad = r2, bad+bad2
	}
	return r, bad
}
