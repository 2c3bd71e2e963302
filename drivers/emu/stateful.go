package emu

// Stateful mutants: rule violations that show only after a history the
// short random cases of old rarely built (issue 8): a QP brought back up
// through RESET, a limit armed again after it fired, a resize with WRs
// outstanding, a ring that wrapped, a QP resumed from SQD, three QPs
// sharing the SRQ. Each keeps the state a careless driver would keep.
const (
	LastWQEOncePerQP    Switch = "last-wqe-once-per-qp"
	RearmSameIgnored    Switch = "rearm-same-ignored"
	ResizeLimitMiscount Switch = "resize-limit-miscount"
	WrapFullLate        Switch = "wrap-full-late"
	SQDAgainNoFetch     Switch = "sqd-again-no-fetch"
	ThirdQPWrongQP      Switch = "third-qp-wrong-qp"
)

// StatefulMutants lists the stateful mutants.
var StatefulMutants = []Switch{LastWQEOncePerQP, RearmSameIgnored, ResizeLimitMiscount, WrapFullLate, SQDAgainNoFetch, ThirdQPWrongQP}

// statefulCatalogue describes the stateful mutants.
var statefulCatalogue = []SwitchInfo{
	{LastWQEOncePerQP, KindMutant, "QP-LAST-WQE", "the QP's last-WQE flag survives RESET: a QP brought back up raises no QP_LAST_WQE_REACHED when it enters ERR again", nil},
	{RearmSameIgnored, KindMutant, "LIMIT-ARM", "arming with the value that last fired is taken as unchanged: it returns 0, but the SRQ stays disarmed and query reads 0", nil},
	{ResizeLimitMiscount, KindMutant, "LIMIT-FIRE", "after a resize that carried WRs over, the limit count leaves those WRs out, so the limit fires early", nil},
	{WrapFullLate, KindMutant, "POST-FULL", "once the producer index has wrapped the ring, the full check is off by one: max_wr+1 WRs can be outstanding", nil},
	{SQDAgainNoFetch, KindMutant, "QP-FETCH-STATES", "a QP's drained flag is never cleared: back in SQD a second time, it fetches nothing (RNR on RC, dropped on UD)", nil},
	{ThirdQPWrongQP, KindMutant, "RECV-COMPLETION", "completions name the QP through a two-entry table: the third and later QPs to fetch are reported as the first", nil},
}

// stateful is the state the stateful mutants keep, per SRQ.
type stateful struct {
	lastFired uint32       // the limit value that fired last (rearm-same-ignored)
	carried   uint32       // WRs a resize carried over (resize-limit-miscount)
	qpSlots   []int        // QPs in the order they first fetched (third-qp-wrong-qp)
	lastWQE   map[int]bool // QPs that raised LAST_WQE once (last-wqe-once-per-qp)
	drained   map[int]bool // QPs that left SQD once (sqd-again-no-fetch)
}

// limitCount is the count the limit is compared with.
// rule: LIMIT-FIRE
func (s *srq) limitCount() uint32 {
	n := s.outstanding()
	if s.cfg.has(ResizeLimitMiscount) {
		n -= min(n, s.st.carried)
	}
	return n
}

// wrapped says the producer index has gone round the ring.
// rule: none (wrap-full-late only)
func (s *srq) wrapped() bool { return s.wraps > 0 }

// reportedQP is the QP number a completion of QP idx carries.
// rule: RECV-COMPLETION
func (s *srq) reportedQP(idx int) int {
	if !s.cfg.has(ThirdQPWrongQP) {
		return idx
	}
	// rule: none (third-qp-wrong-qp only)
	for i, q := range s.st.qpSlots {
		if q == idx {
			if i >= 2 {
				return s.st.qpSlots[0]
			}
			return idx
		}
	}
	s.st.qpSlots = append(s.st.qpSlots, idx)
	if len(s.st.qpSlots) > 2 {
		return s.st.qpSlots[0]
	}
	return idx
}

// setKey sets m[k] = v, making m if it is nil.
// rule: none (stateful mutants' bookkeeping)
func setKey(m map[int]bool, k int, v bool) map[int]bool {
	if m == nil {
		m = map[int]bool{}
	}
	m[k] = v
	return m
}
