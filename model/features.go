package model

// Feature is a state-space feature: a state, or a sequence of states, a
// driver author would recognise, that real driver bugs depend on. The
// conformance suite counts, in every run, the agreeing steps that reached
// each one, so that a report says what the device was put through.
type Feature struct {
	Name string
	// Why says which driver code the feature exercises and which kind of
	// bug lives there.
	Why string
}

// Features lists the state-space features in report order.
var Features = []Feature{
	{"traffic after RESET->INIT->RTR->RTS (a QP brought back up)",
		"Per-QP state that a reset must clear (responder indices, the LAST_WQE flag, a half-filled WR) survives in drivers that reinitialise only at create; rxe's rxe_qp_reset and siw's QP reset paths are where it lives."},
	{"traffic after ERR",
		"The flush and drop paths: a QP in ERR must take nothing from the shared queue; the 2026 rxe patch 'don't re-execute the current packet after the QP moved to error state' is such a bug."},
	{"traffic in SQD or SQE",
		"Responders that gate fetching on RTS alone stop taking WRs in the drain and send-error states, where the receive side is still up."},
	{"traffic after SQD->RTS",
		"A drain flag that resuming must clear; drivers that set it on SQD and clear it only on RESET stop fetching later."},
	{"limit armed, fired, re-armed",
		"The arm, fire, disarm cycle: drivers keep the armed flag apart from the limit value (siw keeps the value readable after the event), and a second arming must start a fresh cycle."},
	{"limit re-armed with the value that fired",
		"Drivers that skip a modify whose value looks unchanged never re-arm; only the same value after a firing shows it."},
	{"post refused at full",
		"Off-by-one ring-full checks: rxe's queue keeps a sentinel slot, mlx5 counts WQEs against wqe_cnt, siw rounds its ring up to a power of two."},
	{"ring wrapped (more posted than it holds)",
		"Producer and consumer index arithmetic modulo the ring size, which only wraps after more WRs than the ring holds went through it."},
	{"failing WR first in a list",
		"bad_wr reporting and the WRs already posted when a list stops (POST-ORDER, POST-BADWR), at each place in the list a loop can get wrong."},
	{"failing WR mid-list", "As above: the middle of a list."},
	{"failing WR last in a list", "As above: the end of a list, where an off-by-one posts it anyway."},
	{"0-length SGE past the first, filled",
		"Zero-length SGEs mean 2^31 bytes or nothing depending on the driver (mlx5 and rxe differ); a driver that special-cases only the first SGE shows when a later one is filled with a message that needs it."},
	{"3 or more QPs took WRs in one case",
		"The shared fetch path and per-QP caches: tables sized for two QPs, and ordering across QPs (FIFO across QPs), show with three or more."},
	{"resize with WRs outstanding",
		"Resize copies the ring (rxe_queue_resize under rxe_modify_srq; cc28f351155d fixed its checks): outstanding WRs, their order and the counts the limit uses must carry over."},
	{"message one byte under the head WR", "Length checks at the fit boundary, with the UD GRH area counted."},
	{"message exactly the head WR", "As above: exactly the WR's size, the case a strict comparison refuses."},
	{"message one byte over the head WR", "As above: one byte over, the case a loose comparison accepts."},
	{"SRQ posted to or armed with no QP attached",
		"Applications post and arm before they make the SRQ's QPs, and again after they destroy them: a driver that routes an SRQ verb through an attached QP's context, or counts attached QPs, loses it while none is attached."},
}
