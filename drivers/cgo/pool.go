//go:build linux && cgo && rdma

package cgo

import (
	"errors"
	"fmt"

	"github.com/srqconform/srqconform/drivers"
)

// kit is what an SRQ's case is built on besides the SRQ itself: a PD with
// the memory regions (the keys' regions, the RDMA target and the peers'
// buffer), the shared receive CQ with its completion channel, and the idle
// peers and send CQs of QPs already destroyed. Registering the regions is
// most of what creating an SRQ costs on a software device (rxe pins and
// maps every page: two 16 MiB regions took about 0.4 to 0.7 s a case under
// QEMU TCG, reports/rxe-trixie-phases.md), and nothing the suite checks
// depends on them being new: posts poison the ranges they hand out, and
// every byte checked is one a message wrote. The CQ is handed on only
// empty, with no completion event pending (device.putKit drains both once
// the QPs and the SRQ are gone, so nothing can add to them). So a device
// keeps the kit of its last closed SRQ and the next SRQ takes it
// (device.takeKit).
type kit struct {
	pd     *_C_struct_ibv_pd
	keys   []*region
	target *region
	peer   *region
	ch     *_C_struct_ibv_comp_channel
	cq     *_C_struct_ibv_cq
	// peers holds idle peers by QP type, and sendCQs idle send CQs of
	// receivers: creating them was a third of create_qp under TCG, and a
	// peer is reset and connected afresh before it sends (qp.connectPeer).
	peers   map[drivers.QPType][]peer
	sendCQs []*_C_struct_ibv_cq
}

// peer is a peer QP with its CQ and, on UD, its address handle to the
// port's own GID.
type peer struct {
	qp *_C_struct_ibv_qp
	cq *_C_struct_ibv_cq
	ah *_C_struct_ibv_ah
}

// destroy destroys the address handle, the QP and the CQ.
func (p peer) destroy() error {
	var errs []error
	if p.ah != nil {
		if r := _C_ibv_destroy_ah(p.ah); r != 0 {
			errs = append(errs, verbErr("ibv_destroy_ah(idle peer)", int(r)))
		}
	}
	if p.qp != nil {
		if r := _C_ibv_destroy_qp(p.qp); r != 0 {
			errs = append(errs, verbErr("ibv_destroy_qp(idle peer)", int(r)))
		}
	}
	if p.cq != nil {
		if r := _C_ibv_destroy_cq(p.cq); r != 0 {
			errs = append(errs, verbErr("ibv_destroy_cq(idle peer's CQ)", int(r)))
		}
	}
	return errors.Join(errs...)
}

// takePeer returns an idle peer of type t, if there is one.
func (rs *kit) takePeer(t drivers.QPType) (peer, bool) {
	ps := rs.peers[t]
	if len(ps) == 0 {
		return peer{}, false
	}
	p := ps[len(ps)-1]
	rs.peers[t] = ps[:len(ps)-1]
	return p, true
}

// putPeer keeps p for a later QP of type t.
func (rs *kit) putPeer(t drivers.QPType, p peer) {
	if rs.peers == nil {
		rs.peers = map[drivers.QPType][]peer{}
	}
	rs.peers[t] = append(rs.peers[t], p)
}

// takeSendCQ returns an idle, empty send CQ, if there is one.
func (rs *kit) takeSendCQ() *_C_struct_ibv_cq {
	if len(rs.sendCQs) == 0 {
		return nil
	}
	cq := rs.sendCQs[len(rs.sendCQs)-1]
	rs.sendCQs = rs.sendCQs[:len(rs.sendCQs)-1]
	return cq
}

// putSendCQ empties cq and keeps it for a later receiver; a CQ that
// cannot be polled is destroyed instead.
func (rs *kit) putSendCQ(cq *_C_struct_ibv_cq) error {
	var wc _C_struct_ibv_wc
	for {
		r := _C_ibv_poll_cq(cq, 1, &wc)
		if r == 0 {
			rs.sendCQs = append(rs.sendCQs, cq)
			return nil
		}
		if r < 0 {
			if d := _C_ibv_destroy_cq(cq); d != 0 {
				return verbErr("ibv_destroy_cq(a receiver's send CQ that ibv_poll_cq refused)", int(d))
			}
			return nil
		}
	}
}

// regionAccess is the access of the keys' regions and the RDMA target.
const regionAccess = _C_int(_C_IBV_ACCESS_LOCAL_WRITE | _C_IBV_ACCESS_REMOTE_WRITE | _C_IBV_ACCESS_REMOTE_READ | _C_IBV_ACCESS_REMOTE_ATOMIC)

// takeKit returns a kit with at least keys key regions, every one
// registered (a region a case deregistered is registered again, so it has
// a new key) and its allocator emptied: the idle set when the device has
// one (CQ drained, peers reset), else a new one. The caller holds d.mu
// and owns what it gets.
func (d *device) takeKit(keys int) (*kit, error) {
	rs := d.idle
	d.idle = nil
	if rs == nil {
		rs = &kit{}
		pd, err := _C2_ibv_alloc_pd(d.ctx)
		if pd == nil {
			return nil, nullErr("ibv_alloc_pd", err)
		}
		rs.pd = pd
	}
	err := rs.fill(keys)
	if err == nil && rs.cq == nil {
		err = rs.makeCQ(d.ctx)
	}
	if err != nil {
		return nil, errors.Join(err, rs.release())
	}
	return rs, nil
}

// makeCQ creates the completion channel (non-blocking) and the shared
// receive CQ on it.
func (rs *kit) makeCQ(ctx *_C_struct_ibv_context) error {
	var err error
	if rs.ch, err = _C2_ibv_create_comp_channel(ctx); rs.ch == nil {
		return nullErr("ibv_create_comp_channel", err)
	}
	if r, err := _C2_srqc_set_nonblock(rs.ch.fd); r != 0 {
		return fmt.Errorf("cgo: fcntl(comp channel fd, O_NONBLOCK) returned %d (%v), want 0", int(r), err)
	}
	if rs.cq, err = _C2_ibv_create_cq(ctx, cqDepth, nil, rs.ch, 0); rs.cq == nil {
		return nullErr(fmt.Sprintf("ibv_create_cq(%d entries)", cqDepth), err)
	}
	return nil
}

// drainCQ empties the CQ and acknowledges every pending completion event,
// so that the next SRQ starts with neither. It fails when the CQ cannot be
// polled (an overrun CQ is in error): such a CQ is not handed on.
func (rs *kit) drainCQ() error {
	if rs.cq == nil {
		return nil
	}
	var wc _C_struct_ibv_wc
	for {
		r := _C_ibv_poll_cq(rs.cq, 1, &wc)
		if r < 0 {
			return fmt.Errorf("cgo: ibv_poll_cq(receive CQ, draining it for the next SRQ) returned %d, want >= 0", int(r))
		}
		if r == 0 {
			break
		}
	}
	for {
		r := _C_srqc_get_cq_event(rs.ch, 0)
		if r < 0 {
			return fmt.Errorf("cgo: ibv_get_cq_event(receive CQ, draining it for the next SRQ) returned %d, want 0 or an event", int(r))
		}
		if r == 0 {
			return nil
		}
	}
}

// fill registers what is missing and empties every allocator.
func (rs *kit) fill(keys int) error {
	for k := len(rs.keys); k < keys; k++ {
		r, err := register(rs.pd, regionSize, regionAccess, fmt.Sprintf("key %d", k))
		if err != nil {
			return err
		}
		rs.keys = append(rs.keys, r)
	}
	var err error
	if rs.target == nil {
		if rs.target, err = register(rs.pd, targetSize, regionAccess, "RDMA target"); err != nil {
			return err
		}
	}
	if rs.peer == nil {
		if rs.peer, err = register(rs.pd, peerBufSize, _C_IBV_ACCESS_LOCAL_WRITE, "peer buffer"); err != nil {
			return err
		}
	}
	for _, r := range append([]*region{rs.target, rs.peer}, rs.keys...) {
		if err := r.reregister(rs.pd); err != nil {
			return err
		}
		r.alloc = ring{size: r.size}
	}
	return nil
}

// reregister registers a deregistered region's memory again.
func (r *region) reregister(pd *_C_struct_ibv_pd) error {
	if r.mr != nil {
		return nil
	}
	mr, err := _C2_ibv_reg_mr(pd, r.buf, _C_size_t(r.size), r.access)
	if mr == nil {
		return nullErr(fmt.Sprintf("ibv_reg_mr(%s again, %d bytes, access %#x)", r.what, r.size, int(r.access)), err)
	}
	r.mr, r.lkey, r.rkey = mr, uint32(mr.lkey), uint32(mr.rkey)
	return nil
}

// release deregisters and frees every region, then deallocates the PD,
// going on after a failure.
func (rs *kit) release() error {
	if rs == nil {
		return nil
	}
	var errs []error
	for _, ps := range rs.peers {
		for _, p := range ps {
			errs = append(errs, p.destroy())
		}
	}
	rs.peers = nil
	for _, cq := range rs.sendCQs {
		if r := _C_ibv_destroy_cq(cq); r != 0 {
			errs = append(errs, verbErr("ibv_destroy_cq(idle send CQ)", int(r)))
		}
	}
	rs.sendCQs = nil
	errs = append(errs, rs.peer.release(), rs.target.release())
	for i := len(rs.keys) - 1; i >= 0; i-- {
		errs = append(errs, rs.keys[i].release())
	}
	rs.keys, rs.peer, rs.target = nil, nil, nil
	if rs.cq != nil {
		if r := _C_ibv_destroy_cq(rs.cq); r != 0 {
			errs = append(errs, verbErr("ibv_destroy_cq(receive CQ)", int(r)))
		}
		rs.cq = nil
	}
	if rs.ch != nil {
		if r := _C_ibv_destroy_comp_channel(rs.ch); r != 0 {
			errs = append(errs, verbErr("ibv_destroy_comp_channel", int(r)))
		}
		rs.ch = nil
	}
	if rs.pd != nil {
		if r := _C_ibv_dealloc_pd(rs.pd); r != 0 {
			errs = append(errs, verbErr("ibv_dealloc_pd", int(r)))
		}
		rs.pd = nil
	}
	return errors.Join(errs...)
}

// putKit keeps rs for the next SRQ when the device is open and keeps
// none yet, and releases it otherwise. The caller holds d.mu.
func (d *device) putKit(rs *kit) error {
	if rs == nil {
		return nil
	}
	if d.closed || d.idle != nil {
		return rs.release()
	}
	if err := rs.drainCQ(); err != nil {
		return errors.Join(err, rs.release())
	}
	d.idle = rs
	return nil
}
