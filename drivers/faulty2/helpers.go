package faulty2

import (
	"context"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
)

// errno values the bugs return.
const (
	eAGAIN     = 11
	eNOMEM     = 12
	eBUSY      = 16
	eINVAL     = 22
	eOPNOTSUPP = 95
)

// grhBytes is the GRH area at the start of a UD receive buffer.
const grhBytes = 40

// mtu is the path MTU of the emulated port (its largest UD message).
const mtu = 4096

// emuInfo is the plain emulator's device attributes.
var emuInfo = func() drivers.Info {
	dev, err := emu.New().Open(context.Background(), drivers.Config{})
	if err != nil {
		panic("faulty2: opening the emulator: " + err.Error())
	}
	defer dev.Close()
	return dev.Info()
}()

// postUntil posts wrs[:k] and, when that succeeds, fails with errno on
// WR k, as a driver whose check refuses WR k does.
func postUntil(s *srq, wrs []drivers.RecvWR, k int, errno int) (int, int) {
	if k >= len(wrs) {
		return s.innerPost(wrs)
	}
	if e, bad := s.innerPost(wrs[:k]); e != 0 {
		return e, bad
	}
	return errno, k
}

// postOneShort posts wrs to a ring that holds one WR fewer than capacity:
// the WR that would make capacity outstanding fails with ENOMEM.
func postOneShort(s *srq, wrs []drivers.RecvWR, capacity uint32) (int, int) {
	k := firstWR(wrs, func(i int, _ drivers.RecvWR) bool { return s.outstanding()+i+1 >= int(capacity) })
	return postUntil(s, wrs, k, eNOMEM)
}

// firstWR returns the index of the first WR of wrs for which bad holds,
// given its position in the list; len(wrs) when none.
func firstWR(wrs []drivers.RecvWR, bad func(i int, w drivers.RecvWR) bool) int {
	for i, w := range wrs {
		if bad(i, w) {
			return i
		}
	}
	return len(wrs)
}

// sends says whether msg is a Send or a Send with Immediate: the opcodes
// that scatter into the WR.
func sends(msg drivers.Message) bool {
	return msg.Opcode == drivers.Send || msg.Opcode == drivers.SendImm
}

// consumes says whether msg takes a WR.
func consumes(msg drivers.Message) bool {
	return sends(msg) || msg.Opcode == drivers.WriteImm
}

// fetches says whether the QP's state lets it take WRs.
func (q *qp) fetches() bool {
	switch q.state {
	case drivers.RTR, drivers.RTS, drivers.SQD, drivers.SQE:
		return true
	}
	return false
}

// dropped is what the peer hears when the QP drops a message: an error on
// RC, nothing on UD.
func (q *qp) dropped() drivers.PeerStatus {
	if q.typ == drivers.RC {
		return drivers.PeerError
	}
	return drivers.PeerOK
}

// need is the number of bytes msg needs in a WR on q (the GRH area
// included on UD).
func (q *qp) need(msg drivers.Message) uint64 {
	if q.typ == drivers.UD && sends(msg) {
		return uint64(msg.Len) + grhBytes
	}
	return uint64(msg.Len)
}

// head returns the shadow of the WR the next consuming message takes.
func (s *srq) head() (wr, bool) {
	if len(s.fifo) == 0 || s.errored {
		return wr{}, false
	}
	return s.fifo[0], true
}

// failDelivered delivers msg on q and, when it completed successfully,
// turns that completion into one with status st, as a driver that refused
// the WR would: an RC QP moves to ERR and its peer hears an error.
func (q *qp) failDelivered(ctx context.Context, msg drivers.Message, st drivers.WCStatus) (drivers.PeerStatus, error) {
	s := q.s
	n := len(s.cq)
	ps, err := q.innerDeliver(ctx, msg)
	if err != nil || len(s.cq) != n+1 || s.cq[n].Status != drivers.WCSuccess {
		return ps, err
	}
	s.cq[n] = drivers.Completion{WRID: s.cq[n].WRID, Status: st, QP: q.idx}
	if q.typ == drivers.RC {
		q.innerModify(drivers.Err)
	}
	return q.dropped(), nil
}

// refuseFit is a deliver hook for a driver whose fit check is wrong: a
// Send or Send with Immediate to a fetching QP for which refuses holds of
// the head WR completes with LOC_LEN_ERR (failDelivered); everything else
// is delivered as the emulator does.
func refuseFit(refuses func(q *qp, w wr, msg drivers.Message) bool) func(context.Context, *qp, drivers.Message) (drivers.PeerStatus, error) {
	return func(ctx context.Context, q *qp, msg drivers.Message) (drivers.PeerStatus, error) {
		if w, ok := q.s.head(); ok && sends(msg) && q.fetches() && refuses(q, w, msg) {
			return q.failDelivered(ctx, msg, drivers.WCLocLenErr)
		}
		return q.innerDeliver(ctx, msg)
	}
}

// editCompletion is a completion hook that changes each completion in
// place with edit.
func editCompletion(edit func(s *srq, f fetch, c *drivers.Completion)) func(*srq, fetch, drivers.Completion) []drivers.Completion {
	return func(s *srq, f fetch, c drivers.Completion) []drivers.Completion {
		edit(s, f, &c)
		return []drivers.Completion{c}
	}
}

// dropEvents is an event hook that drops the events drop says to.
func dropEvents(drop func(s *srq, e drivers.Event) bool) func(*srq, drivers.Event) []drivers.Event {
	return func(s *srq, e drivers.Event) []drivers.Event {
		if drop(s, e) {
			return nil
		}
		return []drivers.Event{e}
	}
}

// onLimitEvent is an event hook that calls seen on each limit event and
// passes every event on.
func onLimitEvent(seen func()) func(*srq, drivers.Event) []drivers.Event {
	return func(_ *srq, e drivers.Event) []drivers.Event {
		if e.Type == drivers.EventSRQLimitReached {
			seen()
		}
		return []drivers.Event{e}
	}
}

// editQuery is a query hook: the emulator's query with edit applied to a
// successful answer.
func editQuery(edit func(s *srq, a *drivers.SRQAttr)) func(*srq) (drivers.SRQAttr, int) {
	return func(s *srq) (drivers.SRQAttr, int) {
		a, e := s.in.Query()
		if e == 0 {
			edit(s, &a)
		}
		return a, e
	}
}

// armThenFetch is a witness: max_wr 8, three WRs posted, the limit armed
// at 3, and one Send on a QP of type t, which leaves fewer WRs than the
// limit; then the events.
func armThenFetch(t drivers.QPType) func(*Script) {
	return func(s *Script) {
		q := s.Ready(8, 1, t)
		s.PostN(3, 1, 64)
		s.Limit(3)
		s.Send(q, 8)
		s.Events()
	}
}

// tooLong is a witness: one WR of 16 bytes and a Send of 64 on a QP of
// type t; then the completions and the events.
func tooLong(t drivers.QPType) func(*Script) {
	return func(s *Script) {
		q := s.Ready(4, 1, t)
		s.PostN(1, 1, 16)
		s.Send(q, 64)
		s.Poll()
		s.Events()
	}
}
