package faulty

import "github.com/srqconform/srqconform/drivers"

// errno values and numbers the bugs use (positive, as the emulator returns
// them).
const (
	eNOMEM = 12
	eBUSY  = 16
	eINVAL = 22
	eNOSPC = 28

	peerOK  = drivers.PeerOK
	peerRNR = drivers.PeerRNR
	peerErr = drivers.PeerError

	evLimit   = drivers.EventSRQLimitReached
	evSRQErr  = drivers.EventSRQErr
	evLastWQE = drivers.EventQPLastWQEReached
	evFatal   = drivers.EventQPFatal

	wcLocLenErr = drivers.WCLocLenErr
	wcFlushErr  = drivers.WCWRFlushErr
	wcRecv      = drivers.WCRecv
	wcRDMAImm   = drivers.WCRecvRDMAWithImm
	grh         = 40
)

// consumes says whether op takes a receive WR.
func consumes(op drivers.Opcode) bool {
	return op == drivers.Send || op == drivers.SendImm || op == drivers.WriteImm
}

// fetching says whether a QP in st takes WRs from the SRQ.
func fetching(st drivers.QPState) bool {
	return st == drivers.RTR || st == drivers.RTS || st == drivers.SQD || st == drivers.SQE
}

// postUntil posts wrs[:i] and, when that succeeds, fails WR i with errno.
func postUntil(s *srq, wrs []drivers.RecvWR, i, errno int) (int, int) {
	i = max(0, min(i, len(wrs)))
	if e, bad := s.post(wrs[:i]); e != 0 {
		return e, bad
	}
	if i == len(wrs) {
		return 0, -1
	}
	return errno, i
}

// sgeBad says whether w fails the num_sge check against max_sge m.
func sgeBad(w drivers.RecvWR, m uint32) bool { return w.NumSGE < 0 || w.NumSGE > int(m) }

// innerLimit is the limit the emulator's query reads.
func (s *srq) innerLimit() uint32 {
	a, e := s.in.Query()
	if e != 0 {
		return 0
	}
	return a.SRQLimit
}

// dropped is what the peer hears when a QP of type t drops a message.
func dropped(t drivers.QPType) drivers.PeerStatus {
	if t == drivers.RC {
		return peerErr
	}
	return peerOK
}

// noFetch is what the peer hears when a fetching QP of type t takes no WR
// (receiver not ready on RC, dropped on UD).
func noFetch(t drivers.QPType) drivers.PeerStatus {
	if t == drivers.RC {
		return peerRNR
	}
	return peerOK
}

// capacityOf is the number of bytes w's SGEs hold, and whether every SGE
// has a non-zero length.
func capacityOf(w drivers.RecvWR) (total uint64, plain bool) {
	plain = true
	for _, g := range w.SGEs[:max(0, min(w.NumSGE, len(w.SGEs)))] {
		if g.Length == 0 {
			plain = false
		}
		total += uint64(g.Length)
	}
	return total, plain
}

// bug makes a Bug.
func bug(name, rule, desc string, w func(*Script), h func() *hooks) Bug {
	return Bug{Name: name, Rule: rule, Description: desc, Witness: w, hooks: h}
}

// editPost makes the hooks of a bug that posts as the emulator does and
// then changes what the post returns.
func editPost(edit func(s *srq, wrs []drivers.RecvWR, e, bad int) (int, int)) func() *hooks {
	return func() *hooks {
		return &hooks{post: func(s *srq, wrs []drivers.RecvWR) (int, int) {
			e, bad := s.post(wrs)
			return edit(s, wrs, e, bad)
		}}
	}
}

// editQuery makes the hooks of a bug that changes what a successful query
// returns.
func editQuery(edit func(s *srq, a *drivers.SRQAttr)) func() *hooks {
	return func() *hooks {
		return &hooks{query: func(s *srq) (drivers.SRQAttr, int) {
			a, e := s.in.Query()
			if e == 0 {
				edit(s, &a)
			}
			return a, e
		}}
	}
}
