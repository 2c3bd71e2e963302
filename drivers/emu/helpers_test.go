package emu_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
)

var ctx = context.Background()

// rig is one open device with one SRQ.
type rig struct {
	t      *testing.T
	dev    drivers.Device
	srq    drivers.SRQ
	attr   drivers.SRQAttr // as create wrote it back
	nextID uint64
}

// newRig opens the emulator with devs and creates an SRQ.
func newRig(t *testing.T, attr drivers.SRQAttr, keys int, devs ...emu.Switch) *rig {
	t.Helper()
	dev, err := emu.New(devs...).Open(ctx, drivers.Config{})
	if err != nil {
		t.Fatalf("Open with deviations %v = %v, want nil error", devs, err)
	}
	t.Cleanup(func() { _ = dev.Close() })
	s, got, err := dev.CreateSRQ(ctx, attr, keys)
	if err != nil {
		t.Fatalf("CreateSRQ(%+v, %d) = %v, want nil error", attr, keys, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return &rig{t: t, dev: dev, srq: s, attr: got, nextID: 1}
}

// stdRig is newRig with max_wr 4, max_sge 2 and 4 keys.
func stdRig(t *testing.T, devs ...emu.Switch) *rig {
	t.Helper()
	return newRig(t, drivers.SRQAttr{MaxWR: 4, MaxSGE: 2}, 4, devs...)
}

// qp creates a QP of type typ and moves it to st.
func (r *rig) qp(typ drivers.QPType, st drivers.QPState) drivers.QP {
	r.t.Helper()
	q, err := r.srq.CreateQP(ctx, typ)
	if err != nil {
		r.t.Fatalf("CreateQP(%d) = %v, want nil error", typ, err)
	}
	r.move(q, st)
	return q
}

// paths are the legal ways from RESET to each state.
var paths = map[drivers.QPState][]drivers.QPState{
	drivers.Reset: nil,
	drivers.Init:  {drivers.Init},
	drivers.RTR:   {drivers.Init, drivers.RTR},
	drivers.RTS:   {drivers.Init, drivers.RTR, drivers.RTS},
	drivers.SQD:   {drivers.Init, drivers.RTR, drivers.RTS, drivers.SQD},
	drivers.SQE:   {drivers.Init, drivers.RTR, drivers.RTS},
	drivers.Err:   {drivers.Init, drivers.Err},
}

// move takes a QP in RESET to st.
func (r *rig) move(q drivers.QP, st drivers.QPState) {
	r.t.Helper()
	for _, s := range paths[st] {
		if e := q.Modify(s); e != 0 {
			r.t.Fatalf("Modify(%s) on the way to %s = %d, want 0", s, st, e)
		}
	}
	if st == drivers.SQE {
		if err := q.InjectSQE(); err != nil {
			r.t.Fatalf("InjectSQE() = %v, want nil", err)
		}
	}
}

// wrs returns n WRs with fresh IDs, each with the SGEs sges.
func (r *rig) wrs(n int, sges ...drivers.SGE) []drivers.RecvWR {
	out := make([]drivers.RecvWR, n)
	for i := range out {
		out[i] = drivers.RecvWR{ID: r.nextID, NumSGE: len(sges), SGEs: append([]drivers.SGE(nil), sges...)}
		r.nextID++
	}
	return out
}

// post posts wrs and formats what came back as "errno bad".
func (r *rig) post(wrs ...drivers.RecvWR) string {
	e, bad := r.srq.Post(wrs)
	return fmt.Sprintf("%d %d", e, bad)
}

// sge64 is a 64-byte SGE in key 0.
var sge64 = drivers.SGE{Length: 64, Key: 0}

// postN posts single 64-byte WRs until one fails or n are posted and
// returns how many were posted.
func (r *rig) postN(n int) int {
	for i := range n {
		if e, _ := r.srq.Post(r.wrs(1, sge64)); e != 0 {
			return i
		}
	}
	return n
}

// fill posts until the SRQ refuses and returns how many it took.
func (r *rig) fill() int { return r.postN(1 << 16) }

// send delivers msg on q.
func (r *rig) send(q drivers.QP, op drivers.Opcode, n uint32) drivers.PeerStatus {
	r.t.Helper()
	st, err := q.Deliver(ctx, drivers.Message{Opcode: op, Len: n, Imm: 0xabc, Pattern: 7})
	if err != nil {
		r.t.Fatalf("Deliver(opcode %d, len %d) = %v, want nil error", op, n, err)
	}
	return st
}

// poll returns every completion.
func (r *rig) poll() []drivers.Completion {
	r.t.Helper()
	cs, err := r.srq.PollCQ(0)
	if err != nil {
		r.t.Fatalf("PollCQ(0) = %v, want nil error", err)
	}
	return cs
}

// cqeStr formats one completion.
func cqeStr(c drivers.Completion) string {
	s := fmt.Sprintf("id=%d st=%d op=%d len=%d qp=%d", c.WRID, c.Status, c.Opcode, c.ByteLen, c.QP)
	if c.HasImm {
		s += fmt.Sprintf(" imm=%#x", c.Imm)
	}
	if c.PayloadErr != "" {
		s += " payload=" + c.PayloadErr
	}
	return "{" + s + "}"
}

// pollStr polls and formats every completion.
func (r *rig) pollStr() string {
	r.t.Helper()
	var parts []string
	for _, c := range r.poll() {
		parts = append(parts, cqeStr(c))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// evStr polls and formats every event.
func (r *rig) evStr() string {
	r.t.Helper()
	ev, err := r.srq.PollEvents()
	if err != nil {
		r.t.Fatalf("PollEvents() = %v, want nil error", err)
	}
	var parts []string
	for _, e := range ev {
		switch e.Type {
		case 0:
			parts = append(parts, fmt.Sprintf("limit(%d)", e.QP))
		case 1:
			parts = append(parts, fmt.Sprintf("srqerr(%d)", e.QP))
		case 2:
			parts = append(parts, fmt.Sprintf("lastwqe(%d)", e.QP))
		default:
			parts = append(parts, fmt.Sprintf("event%d(%d)", e.Type, e.QP))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// drain sends 0-byte messages on q until the peer stops succeeding and
// returns the wr_ids completed, in order.
func (r *rig) drain(q drivers.QP) []uint64 {
	r.t.Helper()
	var ids []uint64
	for range 1 << 16 {
		st := r.send(q, drivers.Send, 0)
		cs := r.poll()
		for _, c := range cs {
			ids = append(ids, c.WRID)
		}
		if st != 0 || len(cs) == 0 {
			break
		}
	}
	return ids
}

// query formats Query's result as "max_wr max_sge limit errno".
func (r *rig) query() string {
	a, e := r.srq.Query()
	return fmt.Sprintf("%d %d %d %d", a.MaxWR, a.MaxSGE, a.SRQLimit, e)
}
