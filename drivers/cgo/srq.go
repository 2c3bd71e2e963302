//go:build linux && cgo && rdma

package cgo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/srqconform/srqconform/drivers"
)

// Sizes of what CreateSRQ makes.
const (
	cqDepth     = 4096     // the shared receive CQ
	regionSize  = 16 << 20 // each key's memory region
	targetSize  = 64 << 10 // the RDMA Write/Read/atomic target
	peerBufSize = 64 << 10 // the peers' send and read buffer
	pollBatch   = 64       // completions per ibv_poll_cq
	// staleKey is the lkey posted for a key index that names no region.
	staleKey = 0xffffffff
	// poison fills a WR's SGE ranges when it is posted, so that bytes that
	// did not land are visible.
	poison = 0x5a
	// scribbleByte overwrites the WR list and SGE arrays after a post.
	scribbleByte = _C_SRQC_SCRIBBLE
)

// region is a memory region over C memory.
type region struct {
	buf    unsafe.Pointer
	size   uint64
	mr     *_C_struct_ibv_mr
	lkey   uint32 // kept after deregistration: posts use the stale key
	rkey   uint32
	alloc  ring
	what   string
	access _C_int
}

// register allocates size bytes and registers them with access.
func register(pd *_C_struct_ibv_pd, size uint64, access _C_int, what string) (*region, error) {
	buf, err := cmemalign(uintptr(size))
	if err != nil {
		return nil, err
	}
	mr, err := _C2_ibv_reg_mr(pd, buf, _C_size_t(size), access)
	if mr == nil {
		cfree(buf)
		return nil, nullErr(fmt.Sprintf("ibv_reg_mr(%s, %d bytes, access %#x)", what, size, int(access)), err)
	}
	return &region{buf: buf, size: size, mr: mr, lkey: uint32(mr.lkey), rkey: uint32(mr.rkey), alloc: ring{size: size}, what: what, access: access}, nil
}

// addr is the device address of offset off.
func (r *region) addr(off uint64) uint64 { return uint64(uintptr(r.buf)) + off }

// dereg deregisters the region and keeps its memory.
func (r *region) dereg() error {
	if r == nil || r.mr == nil {
		return nil
	}
	ret := _C_ibv_dereg_mr(r.mr)
	r.mr = nil
	if ret != 0 {
		return verbErr(fmt.Sprintf("ibv_dereg_mr(%s)", r.what), int(ret))
	}
	return nil
}

// release deregisters the region if needed and frees its memory.
func (r *region) release() error {
	if r == nil {
		return nil
	}
	err := r.dereg()
	cfree(r.buf)
	r.buf = nil
	return err
}

// cmem is a block of C memory and its size.
type cmem struct {
	p    unsafe.Pointer
	size uintptr
}

// srq is one SRQ with its PD, receive CQ, regions and QPs. Its fields are
// guarded by dev.mu, but for those Post touches (see postMu).
type srq struct {
	dev    *device
	pd     *_C_struct_ibv_pd
	ch     *_C_struct_ibv_comp_channel
	cq     *_C_struct_ibv_cq
	srq    *_C_struct_ibv_srq
	keys   []*region // kit's first keys, as many as the SRQ was created with
	target *region
	peer   *region
	kit    *kit // the PD, regions, CQ and idle peers, lent by the device
	wcs    *_C_struct_ibv_wc
	out    *_C_struct_srqc_wc

	qps   []*qp
	byQPN map[uint32]int // receiver qp_num -> QP index
	// stash holds completions read from the CQ before PollCQ asked for
	// them: those left when a connection-managed receiver was destroyed,
	// read while its number still named it (a new QP may be given the
	// number), and those qp.noteLate read to see which WRs are still
	// outstanding. PollCQ returns them first.
	stash []drivers.Completion
	// posted holds, per wr_id, the SGE layouts of the WRs posted with it
	// and not yet completed, oldest first.
	posted ledger
	// lateUD counts the UD messages whose receive completion did not show
	// within udSettle while their receiver received and WRs were
	// outstanding (qp.noteLate): a post that finds the SRQ full after one
	// tries again for up to lateBound, and clears it.
	lateUD int
	// overlapped says a post once ran alongside another post or a
	// Deliver (a concurrent history): posts then never wait for late UD
	// messages, whose WRs the history's checker places by itself.
	overlapped bool
	posting    int // posts in progress
	// lists is C memory for WR lists, reused: one allocation per list
	// size, not one per post (cgo crossings are dear, more so under
	// emulation). A list is taken for each post, so posts can overlap.
	lists []cmem

	// Post does not take dev.mu, so that posts from several threads run
	// at once and alongside everything else (Deliver holds dev.mu while
	// it waits on the network). postMu guards what a post touches: lists,
	// posted, the regions' allocators and lkeys. life is held for reading
	// by a post for its ibv_post_srq_recv, and for writing by whoever ends
	// the SRQ. Locks are taken in the order dev.mu, life, postMu.
	postMu sync.Mutex
	life   sync.RWMutex
	events []drivers.Event
	closed bool
	sends  uint64 // peer send wr_ids
	cm     *cm    // rdma_cm mode: the listener every peer connects to
}

var _ drivers.SRQ = (*srq)(nil)

// CreateSRQ creates the shared receive CQ and the SRQ, on a PD with the
// keys regions, the target and peer regions (those of the last closed SRQ
// when the device kept them: device.takeKit).
func (d *device) CreateSRQ(ctx context.Context, attr drivers.SRQAttr, keys int) (drivers.SRQ, drivers.SRQAttr, error) {
	return d.createSRQ(ctx, attr, keys, drivers.CreatePlain)
}

// CreateSRQEx is CreateSRQ with the SRQ made by ibv_create_srq_ex the way v
// says.
func (d *device) CreateSRQEx(ctx context.Context, attr drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQ, drivers.SRQAttr, error) {
	return d.createSRQ(ctx, attr, keys, v)
}

func (d *device) createSRQ(ctx context.Context, attr drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQ, drivers.SRQAttr, error) {
	if err := ctx.Err(); err != nil {
		return nil, drivers.SRQAttr{}, fmt.Errorf("cgo: CreateSRQ: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, drivers.SRQAttr{}, fmt.Errorf("cgo: CreateSRQ(%+v) on a closed device: %w", attr, drivers.ErrCallFailed)
	}
	if keys < 0 {
		return nil, drivers.SRQAttr{}, fmt.Errorf("cgo: CreateSRQ(keys=%d): want >= 0 regions", keys)
	}
	s := &srq{dev: d, byQPN: map[uint32]int{}, posted: ledger{}}
	got, err := s.create(attr, keys, v)
	if err != nil {
		return nil, drivers.SRQAttr{}, errors.Join(err, s.destroy())
	}
	d.srqs = append(d.srqs, s)
	return s, got, nil
}

func (s *srq) create(attr drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQAttr, error) {
	d := s.dev
	k, err := d.takeKit(keys)
	if err != nil {
		return drivers.SRQAttr{}, err
	}
	s.kit, s.pd, s.keys, s.target, s.peer, s.ch, s.cq = k, k.pd, k.keys[:keys], k.target, k.peer, k.ch, k.cq
	a := _C_struct_ibv_srq_attr{max_wr: _C_uint32_t(attr.MaxWR), max_sge: _C_uint32_t(attr.MaxSGE), srq_limit: _C_uint32_t(attr.SRQLimit)}
	if s.srq, err = _C2_srqc_create_srq(d.ctx, s.pd, s.cq, _C_int(v), &a); s.srq == nil {
		// The device refused: its errno is the create's result, which the
		// model checks (CREATE-ATTR), not the harness failing.
		e := -1
		var no syscall.Errno
		if errors.As(err, &no) && no != 0 {
			e = int(no)
		}
		return drivers.SRQAttr{}, &drivers.Refused{Call: fmt.Sprintf("cgo: %s(max_wr %d, max_sge %d, srq_limit %d)", variantName(v), attr.MaxWR, attr.MaxSGE, attr.SRQLimit), Errno: e}
	}
	got := drivers.SRQAttr{MaxWR: uint32(a.max_wr), MaxSGE: uint32(a.max_sge), SRQLimit: uint32(a.srq_limit)}
	if d.conn == connRDMACM {
		if err := s.startCM(); err != nil {
			return drivers.SRQAttr{}, err
		}
	}
	s.wcs = (*_C_struct_ibv_wc)(cmalloc(pollBatch * _C_sizeof_struct_ibv_wc))
	s.out = (*_C_struct_srqc_wc)(cmalloc(pollBatch * _C_sizeof_struct_srqc_wc))
	return got, nil
}

// variantName names the call a create variant makes.
func variantName(v drivers.CreateVariant) string {
	switch v {
	case drivers.CreatePlain:
		return "ibv_create_srq"
	case drivers.CreateEx:
		return "ibv_create_srq_ex(PD|TYPE, BASIC)"
	case drivers.CreateExCQ:
		return "ibv_create_srq_ex(PD|TYPE|CQ, BASIC)"
	}
	return fmt.Sprintf("ibv_create_srq_ex(variant %d)", v)
}

// CreateOther creates a second SRQ on the PD (and CQ) the way v says, and
// destroys it at once; a destroy that fails is the harness's error.
func (s *srq) CreateOther(attr drivers.SRQAttr, v drivers.CreateVariant) (int, error) {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if s.dead() {
		return 0, fmt.Errorf("cgo: CreateOther on a closed or destroyed SRQ: %w", drivers.ErrCallFailed)
	}
	a := _C_struct_ibv_srq_attr{max_wr: _C_uint32_t(attr.MaxWR), max_sge: _C_uint32_t(attr.MaxSGE)}
	defer lockOthers()()
	other, err := _C2_srqc_create_srq(s.dev.ctx, s.pd, s.cq, _C_int(v), &a)
	if other == nil {
		var e syscall.Errno
		if !errors.As(err, &e) || e == 0 {
			return 0, nullErr(variantName(v)+" of another SRQ, without errno", err)
		}
		return int(e), nil
	}
	if r := _C_ibv_destroy_srq(other); r != 0 {
		return 0, verbErr(variantName(v)+" then ibv_destroy_srq of the other SRQ", int(r))
	}
	return 0, nil
}

// lockOthers takes a lock that processes of this program share (flock on
// a file in the temporary directory) and returns its release. Another SRQ
// (CREATE-MAX's are made at the device's limits) takes queue buffers of
// the kernel's that several runs at once (run -parallel) ran out of. Four children on
// rxe in a 1 GiB guest lost runs to the OOM killer, in rxe's
// vmalloc_user, while each made one. Without the lock file the create
// goes ahead unlocked.
func lockOthers() func() {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "srqconform-other-srq.lock"), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return func() {}
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX) != nil {
		f.Close()
		return func() {}
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}

// dead says the SRQ takes no verb: closed, or destroyed by Destroy (which
// leaves s.srq nil so that nothing reaches freed memory or frees it twice).
func (s *srq) dead() bool { return s.closed || s.srq == nil }

// Destroy is ibv_destroy_srq on the SRQ alone. Pending async events are
// read and acknowledged first (libibverbs waits for the acknowledgement of
// every event it reported). On failure the SRQ stays; on success s.srq is
// cleared, so Close destroys the QPs, CQ, regions and PD but not the SRQ.
func (s *srq) Destroy() (int, error) {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	s.life.Lock()
	defer s.life.Unlock()
	s.postMu.Lock()
	defer s.postMu.Unlock()
	if s.dead() {
		return 0, fmt.Errorf("cgo: Destroy on a closed or destroyed SRQ: %w", drivers.ErrCallFailed)
	}
	if err := s.dev.drainEvents(); err != nil {
		return 0, err
	}
	r := int(_C_ibv_destroy_srq(s.srq))
	if r == 0 {
		s.srq = nil
	}
	return r, nil
}

// Close destroys the QPs and peers, the SRQ, the CQ, the regions and the
// PD. It is idempotent.
func (s *srq) Close() error {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	return s.destroy()
}

// destroy releases everything in reverse order of creation, going on
// after a failure; the caller holds dev.mu.
func (s *srq) destroy() error {
	s.life.Lock()
	defer s.life.Unlock()
	s.postMu.Lock()
	defer s.postMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	if s.dev.ctx != nil {
		errs = append(errs, s.dev.drainEvents())
	}
	for i := len(s.qps) - 1; i >= 0; i-- {
		errs = append(errs, s.qps[i].destroy())
	}
	s.qps = nil
	errs = append(errs, s.cm.stop())
	s.cm = nil
	if s.srq != nil {
		if r := _C_ibv_destroy_srq(s.srq); r != 0 {
			errs = append(errs, verbErr("ibv_destroy_srq", int(r)))
		}
		s.srq = nil
	}
	if errors.Join(errs...) == nil {
		// Everything on the PD is gone: the next SRQ may have it.
		errs = append(errs, s.dev.putKit(s.kit))
	} else {
		errs = append(errs, s.kit.release())
	}
	s.kit, s.keys, s.peer, s.target, s.pd, s.ch, s.cq = nil, nil, nil, nil, nil, nil, nil
	cfree(unsafe.Pointer(s.wcs))
	cfree(unsafe.Pointer(s.out))
	for _, m := range s.lists {
		cfree(m.p)
	}
	s.lists = nil
	s.wcs, s.out = nil, nil
	s.posted, s.events = nil, nil
	return errors.Join(errs...)
}

// takeList returns C memory for a WR list of size bytes: a block freed
// by an earlier post when one is large enough, else a new one. The caller
// holds postMu.
func (s *srq) takeList(size uintptr) cmem {
	for i, m := range s.lists {
		if m.size >= size {
			s.lists = append(s.lists[:i], s.lists[i+1:]...)
			return m
		}
	}
	size = max(size, 4096)
	return cmem{p: cmalloc(size), size: size}
}

// putList scribbles l and keeps its memory for the next post; the caller
// holds postMu. The provider must have copied the list.
func (s *srq) putList(l *wrList) {
	l.free()
	s.lists = append(s.lists, l.block)
}

// wrList is a receive WR list and its SGE arrays in C memory.
type wrList struct {
	block  cmem // where mem comes from
	mem    unsafe.Pointer
	size   uintptr
	wrs    []_C_struct_ibv_recv_wr
	places [][]place // per WR, the SGEs the device may read
}

// build lays out wrs in C memory: each SGE gets its own range of its
// key's region (poisoned), the stale lkey for an invalidated key, and
// staleKey at address 0 for a key that names no region.
func (s *srq) build(wrs []drivers.RecvWR) (*wrList, error) {
	n := len(wrs)
	nsge := 0
	for _, w := range wrs {
		nsge += max(1, len(w.SGEs), w.NumSGE)
	}
	wrSize := uintptr(_C_sizeof_struct_ibv_recv_wr)
	sgeSize := uintptr(_C_sizeof_struct_ibv_sge)
	l := &wrList{size: max(uintptr(n)*wrSize+uintptr(nsge)*sgeSize, 1)}
	l.block = s.takeList(l.size)
	l.mem = l.block.p
	// The last list was scribbled: start from zero (next, addr, padding).
	clear(unsafe.Slice((*byte)(l.mem), l.size))
	if n == 0 {
		return l, nil
	}
	l.wrs = unsafe.Slice((*_C_struct_ibv_recv_wr)(l.mem), n)
	sgeBase := unsafe.Add(l.mem, uintptr(n)*wrSize)
	next := 0
	// Per key, the bytes a WR needs and where its block starts; reused.
	need := make([]uint64, len(s.keys))
	base := make([]uint64, len(s.keys))
	for i, w := range wrs {
		count := max(1, len(w.SGEs), w.NumSGE)
		sges := unsafe.Slice((*_C_struct_ibv_sge)(unsafe.Add(sgeBase, uintptr(next)*sgeSize)), count)
		next += count
		wr := &l.wrs[i]
		wr.wr_id = _C_uint64_t(w.ID)
		wr.sg_list = &sges[0]
		wr.num_sge = _C_int(w.NumSGE)
		if i+1 < n {
			wr.next = &l.wrs[i+1]
		}
		// Per key, the WR's SGEs get consecutive ranges of one block.
		used := max(0, min(w.NumSGE, len(w.SGEs)))
		clear(need)
		for _, g := range w.SGEs[:used] {
			if g.Key >= 0 && g.Key < len(s.keys) {
				need[g.Key] += stride(g.Length)
			}
		}
		for k, b := range need {
			if b == 0 {
				continue
			}
			off, ok := s.keys[k].alloc.alloc(b)
			if !ok {
				return nil, fmt.Errorf("cgo: Post: WR %d needs %d bytes of key %d, more than its %d-byte region", i, b, k, s.keys[k].size)
			}
			base[k] = off
		}
		var ps []place
		for j, g := range w.SGEs {
			sges[j].length = _C_uint32_t(g.Length)
			known := g.Key >= 0 && g.Key < len(s.keys)
			sges[j].lkey = staleKey
			if known {
				sges[j].lkey = _C_uint32_t(s.keys[g.Key].lkey)
			}
			if j >= used {
				continue
			}
			if !known {
				ps = append(ps, place{key: -1, length: g.Length, stride: stride(g.Length)})
				continue
			}
			r := s.keys[g.Key]
			off := base[g.Key]
			base[g.Key] += stride(g.Length)
			sges[j].addr = _C_uint64_t(r.addr(off))
			// Poison what can land, so the payload check sees only new bytes.
			_C_memset(unsafe.Add(r.buf, off), poison, _C_size_t(min(stride(g.Length), maxLanding)))
			ps = append(ps, place{key: g.Key, off: off, length: g.Length, stride: stride(g.Length)})
		}
		l.places = append(l.places, ps)
	}
	return l, nil
}

// free scribbles the list and its SGE arrays: the provider must have
// copied them. Their memory goes back to the SRQ (putList).
func (l *wrList) free() {
	_C_memset(l.mem, scribbleByte, _C_size_t(l.size))
}

// first is the head of the list, nil when empty.
func (l *wrList) first() *_C_struct_ibv_recv_wr {
	if len(l.wrs) == 0 {
		return nil
	}
	return &l.wrs[0]
}

// Post is ibv_post_srq_recv. The WRs before bad_wr (all of them on
// success) are remembered by wr_id for the payload check.
func (s *srq) Post(wrs []drivers.RecvWR) (int, int) {
	s.life.RLock()
	defer s.life.RUnlock()
	s.postMu.Lock()
	if s.dead() {
		s.postMu.Unlock()
		return int(_C_EINVAL), min(0, len(wrs)-1)
	}
	if u := s.dev.info.NegativeSGEUnsafe; u != "" && slices.ContainsFunc(wrs, func(w drivers.RecvWR) bool { return w.NumSGE < 0 }) {
		s.postMu.Unlock()
		if len(wrs) != 1 {
			fmt.Fprintf(os.Stderr, "cgo: Post of %d WRs, one with a negative num_sge: only a list of one such WR can be made in a child process (%s)\n", len(wrs), u)
			return drivers.ProbeFailed, 0
		}
		r, bad, err := postSRQRecvInChild(s.dev.info.Name, wrs[0].ID, wrs[0].NumSGE)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return drivers.ProbeFailed, 0
		}
		if r != 0 {
			return r, bad
		}
		// The child's post returned: this process can make it too, and
		// must, for its SRQ to hold what the device took.
		s.postMu.Lock()
		if s.dead() {
			s.postMu.Unlock()
			return int(_C_EINVAL), 0
		}
	}
	if s.posting > 0 || s.dev.delivering.Load() > 0 {
		s.overlapped = true
	}
	s.posting++
	r, bad := s.postList(wrs)
	if isFull(r) && s.lateUD > 0 && !s.overlapped {
		// A UD message Deliver stopped waiting for may not have taken its
		// WR yet: the SRQ is full until its responder runs.
		s.lateUD = 0
		s.dev.lateFull.Add(1)
		// The sign of a freed slot is a completion event: the CQ was
		// armed before the UD send (qp.sendWR), and is armed again after
		// each event for the next late message. No other thread polls
		// or sends here (not overlapped); life, held, keeps the channel.
		wait := func(d time.Duration) (bool, bool) {
			s.postMu.Unlock()
			woke := _C_srqc_get_cq_event(s.ch, _C_int(d/time.Millisecond)) > 0
			if woke {
				_C_srqc_req_notify_cq(s.cq)
			}
			s.postMu.Lock()
			return woke, !s.dead()
		}
		r, bad = retryFull(r, bad, len(wrs), lateBound, func(from int) (int, int) { return s.postList(wrs[from:]) }, wait)
		if isFull(r) {
			s.dev.lateStillFull.Add(1)
		}
	}
	s.posting--
	s.postMu.Unlock()
	return r, bad
}

// postList posts wrs with one ibv_post_srq_recv and returns what it
// returned and bad_wr's index (-1 for none). The WRs before bad_wr (all
// of them on success) are remembered by wr_id for the payload check. The
// caller holds postMu; it is let go during the call.
func (s *srq) postList(wrs []drivers.RecvWR) (int, int) {
	l, err := s.build(wrs)
	if err != nil {
		s.postMu.Unlock()
		panic(err) // a driver bug: regions are sized for any WR
	}
	// Remembered before the call: another thread may poll a completion
	// of these WRs before this one returns.
	for i := range wrs {
		s.posted.remember(wrs[i].ID, l.places[i])
	}
	srqp := s.srq
	s.postMu.Unlock()
	var bad _C_int
	// Posts, then scribbles the list in the same C call; no lock of ours
	// is held, so posts overlap.
	r := _C_srqc_post_srq_recv(srqp, l.first(), _C_int(len(wrs)), &bad, l.mem, _C_size_t(l.size))
	committed := len(wrs)
	if bad >= 0 {
		committed = min(int(bad), len(wrs))
	}
	if r != 0 && bad < 0 {
		committed = 0 // failed without saying where: assume nothing went in
	}
	s.postMu.Lock()
	for i := len(wrs) - 1; i >= committed; i-- {
		// Forget the layouts of the WRs that did not go in (the last one
		// remembered for their wr_id: this post's).
		s.posted.forget(wrs[i].ID)
	}
	s.putList(l)
	return int(r), int(bad)
}

// Query is ibv_query_srq.
func (s *srq) Query() (drivers.SRQAttr, int) {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if s.dead() {
		return drivers.SRQAttr{}, int(_C_EINVAL)
	}
	var a _C_struct_ibv_srq_attr
	r := _C_ibv_query_srq(s.srq, &a)
	return drivers.SRQAttr{MaxWR: uint32(a.max_wr), MaxSGE: uint32(a.max_sge), SRQLimit: uint32(a.srq_limit)}, int(r)
}

// ModifyLimit is ibv_modify_srq(IBV_SRQ_LIMIT).
func (s *srq) ModifyLimit(limit uint32) int {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if s.dead() {
		return int(_C_EINVAL)
	}
	var a _C_struct_ibv_srq_attr
	a.srq_limit = _C_uint32_t(limit)
	return int(_C_ibv_modify_srq(s.srq, &a, _C_IBV_SRQ_LIMIT))
}

// Resize is ibv_modify_srq(IBV_SRQ_MAX_WR).
func (s *srq) Resize(maxWR uint32) int {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if s.dead() {
		return int(_C_EINVAL)
	}
	var a _C_struct_ibv_srq_attr
	a.max_wr = _C_uint32_t(maxWR)
	return int(_C_ibv_modify_srq(s.srq, &a, _C_IBV_SRQ_MAX_WR))
}

// InvalidateKey deregisters region key; its memory stays until Close.
func (s *srq) InvalidateKey(key int) error {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	s.postMu.Lock() // the region's lkey
	defer s.postMu.Unlock()
	if s.dead() {
		return fmt.Errorf("cgo: InvalidateKey(%d) on a closed or destroyed SRQ: %w", key, drivers.ErrCallFailed)
	}
	if key < 0 || key >= len(s.keys) {
		return fmt.Errorf("cgo: InvalidateKey(%d): want 0..%d", key, len(s.keys)-1)
	}
	return s.keys[key].dereg()
}

// PollCQ is ibv_poll_cq on the shared receive CQ. A successful receive of
// a Send has its bytes checked where its WR's SGEs point.
func (s *srq) PollCQ(maxN int) ([]drivers.Completion, error) {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	s.postMu.Lock() // posted and the regions
	defer s.postMu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("cgo: PollCQ on a closed SRQ: %w", drivers.ErrCallFailed)
	}
	n := len(s.stash)
	if maxN > 0 {
		n = min(n, maxN)
	}
	out := slices.Clone(s.stash[:n])
	s.stash = s.stash[n:]
	if err := s.drainCQ(&out, maxN); err != nil {
		return out, err
	}
	return out, nil
}

// drainCQ appends to out what the receive CQ holds, up to maxN in all
// (0: everything). The caller holds dev.mu and postMu.
func (s *srq) drainCQ(out *[]drivers.Completion, maxN int) error {
	for maxN <= 0 || len(*out) < maxN {
		batch := pollBatch
		if maxN > 0 {
			batch = min(batch, maxN-len(*out))
		}
		r := int(_C_srqc_poll_cq(s.cq, _C_int(batch), s.wcs, s.out))
		if err := checkPolled(r, batch); err != nil {
			return err
		}
		for _, w := range unsafe.Slice(s.out, r) {
			*out = append(*out, s.completion(w))
		}
		if r < batch {
			break
		}
	}
	return nil
}

// completion converts one work completion (toCompletion checks it).
func (s *srq) completion(w _C_struct_srqc_wc) drivers.Completion {
	qpOf := func(n uint32) (receiver, bool) {
		i, ok := s.byQPN[n]
		if !ok || i < 0 || i >= len(s.qps) {
			return receiver{}, false
		}
		return receiver{i, s.qps[i].typ}, true
	}
	return toCompletion(wc{wrID: uint64(w.wr_id), status: uint32(w.status), opcode: uint32(w.opcode), byteLen: uint32(w.byte_len),
		flags: uint32(w.wc_flags), qpNum: uint32(w.qp_num), imm: uint32(w.imm)}, qpOf, s.posted, func(key int, off, n uint64) []byte {
		return cbytes(s.keys[key].buf, off, n)
	})
}

// PollEvents returns the async events pending for this SRQ and its QPs,
// each already acknowledged.
func (s *srq) PollEvents() ([]drivers.Event, error) {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("cgo: PollEvents on a closed SRQ: %w", drivers.ErrCallFailed)
	}
	err := s.dev.drainEvents()
	ev := s.events
	s.events = nil
	return ev, err
}

// InjectSRQError is not possible through verbs.
func (s *srq) InjectSRQError() error { return drivers.ErrUnsupported }
