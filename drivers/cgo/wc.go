package cgo

import (
	"fmt"

	"github.com/srqconform/srqconform/drivers"
)

// Receive completion opcodes (enum ibv_wc_opcode) and flags (enum
// ibv_wc_flags).
const (
	wcRecv        = 128 // IBV_WC_RECV
	wcRecvRDMAImm = 129 // IBV_WC_RECV_RDMA_WITH_IMM
	wcWithImm     = 1 << 1
)

// What a completion's status or opcode becomes when the device's value is
// none its enum knows: a value no rule allows, instead of what a cast to
// eight bits would make of it (status 256 would read as success).
const (
	unknownStatus = drivers.WCStatus(0xff)
	unknownOpcode = drivers.WCOpcode(0xff)
	// lastStatus is the highest enum ibv_wc_status value
	// (IBV_WC_TM_RNDV_INCOMPLETE).
	lastStatus = 23
)

// wc is one work completion as ibv_poll_cq wrote it (struct srqc_wc), in
// Go types. Nothing in it is trusted: toCompletion checks every field
// against what was posted before using it.
type wc struct {
	wrID                                       uint64
	status, opcode, byteLen, flags, qpNum, imm uint32
}

// receiver is what a qp_num may name: an SRQ-attached QP of the SRQ.
type receiver struct {
	idx int
	typ drivers.QPType
}

// ledger holds, per wr_id, the SGE layouts of the WRs posted with it and
// not yet completed, oldest first.
type ledger map[uint64][][]place

// remember records the layout of a WR about to be posted.
func (l ledger) remember(id uint64, p []place) { l[id] = append(l[id], p) }

// forget drops the newest layout of id: its WR did not go in.
func (l ledger) forget(id uint64) {
	switch q := l[id]; {
	case len(q) == 1:
		delete(l, id)
	case len(q) > 1:
		l[id] = q[:len(q)-1]
	}
}

// take returns and drops the oldest layout of id, or false when no WR of
// that wr_id is outstanding (a wr_id the device made up, or one posted
// through PostRecv).
func (l ledger) take(id uint64) ([]place, bool) {
	q := l[id]
	switch len(q) {
	case 0:
		return nil, false
	case 1:
		delete(l, id)
	default:
		l[id] = q[1:]
	}
	return q[0], true
}

// toCompletion converts w into what the suite sees, checking each field
// before it is used: a qp_num qpOf does not know is QP -1, a status or
// opcode no enum value names is unknownStatus or unknownOpcode, a wr_id
// that was never posted (or a QP unknown) skips the payload check (its
// layout is taken all the same), and a successful receive of a Send
// has its byte_len checked against what the WR's SGEs hold before its bytes
// are read (read returns n bytes of region key at off). The model rejects
// each nonsense value as a departure of RECV-COMPLETION.
func toCompletion(w wc, qpOf func(qpNum uint32) (receiver, bool), posted ledger, read func(key int, off, n uint64) []byte) drivers.Completion {
	c := drivers.Completion{WRID: w.wrID, Status: unknownStatus, Opcode: unknownOpcode, ByteLen: w.byteLen, QP: -1}
	if w.status <= lastStatus {
		c.Status = drivers.WCStatus(w.status)
	}
	switch w.opcode {
	case wcRecv:
		c.Opcode = 0
	case wcRecvRDMAImm:
		c.Opcode = 1
	}
	if w.flags&wcWithImm != 0 {
		c.HasImm, c.Imm = true, w.imm
	}
	r, known := qpOf(w.qpNum)
	if known {
		c.QP = r.idx
	}
	places, ok := posted.take(c.WRID)
	if !ok || !known || c.Status != drivers.WCSuccess || w.opcode != wcRecv {
		return c // no layout, or no QP to say whether a GRH comes first
	}
	grh := uint32(0)
	if r.typ == drivers.UD {
		grh = grhBytes
	}
	msg, bad := checkPayload(places, c.ByteLen, grh, read)
	c.PayloadErr = bad
	if len(msg) > 0 {
		c.Pattern, c.HasPattern = msg[0], true
	}
	return c
}

// checkPolled checks the count ibv_poll_cq returned for a batch of n.
func checkPolled(r, n int) error {
	if r < 0 || r > n {
		return fmt.Errorf("cgo: ibv_poll_cq(receive CQ, %d entries) returned %d, want 0 to %d", n, r, n)
	}
	return nil
}
