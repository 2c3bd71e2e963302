package emu

import (
	"context"
	"fmt"
	"sync"

	"github.com/srqconform/srqconform/drivers"
)

// Device limits.
const (
	maxSRQWR     = 16384
	maxSRQSGE    = 6
	maxQPWR      = 16384
	maxQPSGE     = 6
	maxMessage   = 1 << 20
	maxUDMessage = 4096
	grhBytes     = 40
	zeroLenBytes = 1 << 31 // what an SGE of length 0 holds by default
)

// errno values the verbs return.
const (
	eNOMEM      = 12
	eBUSY       = 16
	eINVAL      = 22
	eOPNOTSUPP  = 95
	deviceName  = "emu0"
	driverName  = "emu"
	optionDevs  = "deviations"
	optionUsage = `Options["deviations"]`
)

// Completion statuses (enum ibv_wc_status).
const (
	wcSuccess    = drivers.WCSuccess
	wcLocLenErr  = drivers.WCLocLenErr
	wcLocProtErr = drivers.WCLocProtErr
	wcFlushErr   = drivers.WCWRFlushErr
)

// Receive completion opcodes.
const (
	wcRecv        = drivers.WCRecv
	wcRecvRDMAImm = drivers.WCRecvRDMAWithImm
)

// Async events.
const (
	evSRQLimit = drivers.EventSRQLimitReached
	evSRQErr   = drivers.EventSRQErr
	evLastWQE  = drivers.EventQPLastWQEReached
	evQPFatal  = drivers.EventQPFatal
	evQPAccess = drivers.EventQPAccessErr
)

// Peer statuses.
const (
	peerOK  = drivers.PeerOK
	peerRNR = drivers.PeerRNR
	peerErr = drivers.PeerError
)

// driver is the drivers.Driver New returns.
type driver struct {
	devs []Switch
}

// New returns the emulator driver with the deviations devs switched on.
// Names are checked by Open, which also merges the comma-separated
// Options["deviations"] (deviation or set names) after devs.
// rule: none (keeps the deviation switches)
func New(devs ...Switch) drivers.Driver {
	return &driver{devs: append([]Switch(nil), devs...)}
}

// Name returns "emu".
// rule: none (the driver's name)
func (*driver) Name() string { return driverName }

// Open opens the single emulated device "emu0".
// rule: none (device selection and the deviation switches)
func (d *driver) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("emu: Open: %w", err)
	}
	if cfg.Device != "" && cfg.Device != deviceName {
		return nil, fmt.Errorf("emu: Open(device %q): no such device, the emulator has only %q", cfg.Device, deviceName)
	}
	devs := append(append([]Switch(nil), d.devs...), splitOption(cfg.Options[optionDevs])...)
	c, err := resolve(devs)
	if err != nil {
		return nil, fmt.Errorf("emu: Open with %s=%q: %w", optionUsage, cfg.Options[optionDevs], err)
	}
	return &device{cfg: c}, nil
}

// device is one emulated HCA. Its mutex guards every SRQ, QP, ring and
// queue it made.
type device struct {
	mu     sync.Mutex
	cfg    *config
	closed bool
	srqs   []*srq
	// spare holds the byte buffers of destroyed SRQs' regions, for the
	// next SRQ's regions (takeBuf): each case of a run makes a new SRQ.
	spare [][]byte
}

// Bounds on what spare keeps: a few buffers of a few pages.
const (
	mostSpareBufs  = 32
	mostSpareBytes = 64 << 10
)

// takeBuf returns an empty buffer for a region; the caller holds mu.
// rule: RECV-COMPLETION
func (d *device) takeBuf() []byte {
	n := len(d.spare)
	if n == 0 {
		return nil
	}
	b := d.spare[n-1]
	d.spare[n-1], d.spare = nil, d.spare[:n-1]
	return b[:0]
}

// keepBuf keeps b for a later region, within the bounds; the caller holds
// mu.
// rule: RECV-COMPLETION
func (d *device) keepBuf(b []byte) {
	if cap(b) > 0 && cap(b) <= mostSpareBytes && len(d.spare) < mostSpareBufs {
		d.spare = append(d.spare, b)
	}
}

// Info describes the device as the deviations shape it.
// rules: CREATE-MAX, RESIZE-OPTIONAL
func (d *device) Info() drivers.Info {
	return drivers.Info{
		Name:            deviceName,
		Provider:        driverName,
		MaxSRQWR:        maxSRQWR,
		MaxSRQSGE:       maxSRQSGE,
		MaxQPWR:         maxQPWR,
		MaxSGE:          maxQPSGE,
		SRQResize:       !d.cfg.has(ResizeUnsupported),
		MaxMessage:      maxMessage,
		MaxUDMessage:    maxUDMessage,
		UD:              !d.cfg.has(NoUD),
		InjectSRQError:  true,
		InjectSQE:       true,
		PartialDelivery: true,
		Synchronous:     true,
	}
}

// Switches returns the names of the switches that are on, sorted, with
// their values. It is not part of drivers.Device; reach it through a type
// assertion to interface{ Switches() []string }.
// rule: none (names the deviation switches)
func (d *device) Switches() []string { return d.cfg.names() }

// CreateSRQ creates an SRQ with its CQ, event queue and keys memory regions.
// rule: CREATE-ATTR
func (d *device) CreateSRQ(ctx context.Context, attr drivers.SRQAttr, keys int) (drivers.SRQ, drivers.SRQAttr, error) {
	if err := ctx.Err(); err != nil {
		return nil, drivers.SRQAttr{}, fmt.Errorf("emu: CreateSRQ: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, drivers.SRQAttr{}, fmt.Errorf("emu: CreateSRQ(%+v) on a closed device: %w", attr, drivers.ErrCallFailed)
	}
	if e := d.cfg.createErrno(attr, drivers.CreatePlain); e != 0 {
		return nil, drivers.SRQAttr{}, &drivers.Refused{Call: fmt.Sprintf("emu: CreateSRQ(max_wr=%d, max_sge=%d)", attr.MaxWR, attr.MaxSGE), Errno: e}
	}
	if keys < 0 {
		return nil, drivers.SRQAttr{}, fmt.Errorf("emu: CreateSRQ(keys=%d): the number of memory regions must be >= 0", keys)
	}
	s := &srq{dev: d, cfg: d.cfg, maxSGE: attr.MaxSGE, regions: make([]region, keys)}
	// rule: RECV-BAD-KEY
	for i := range s.regions {
		s.regions[i].valid, s.regions[i].buf = true, d.takeBuf()
	}
	capacity, hold := s.sizes(attr.MaxWR)
	s.capacity, s.hold = capacity, hold
	// rule: POST-FULL
	s.ring = make([]wqe, ringSize(hold))
	if attr.SRQLimit != 0 && d.cfg.has(LimitAtCreate) {
		if attr.SRQLimit > capacity {
			return nil, drivers.SRQAttr{}, fmt.Errorf("emu: CreateSRQ(max_wr=%d, srq_limit=%d): EINVAL, srq_limit above the capacity %d", attr.MaxWR, attr.SRQLimit, capacity)
		}
		s.arm(attr.SRQLimit)
	}
	reported := capacity
	if d.cfg.has(CreateReportsLess) && reported > 1 {
		reported--
	}
	// rule: DESTROY-BUSY
	d.srqs = append(d.srqs, s)
	return s, drivers.SRQAttr{MaxWR: reported, MaxSGE: attr.MaxSGE, SRQLimit: attr.SRQLimit}, nil
}

// CreateSRQEx is CreateSRQ through ibv_create_srq_ex: CreateEx and, unless
// the provider has no create_srq_ex (no-create-srq-ex), CreateExCQ make the
// same SRQ.
// rule: CREATE-EX
func (d *device) CreateSRQEx(ctx context.Context, attr drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQ, drivers.SRQAttr, error) {
	if e := d.cfg.createErrno(attr, v); e != 0 {
		return nil, drivers.SRQAttr{}, &drivers.Refused{Call: fmt.Sprintf("emu: CreateSRQEx(max_wr=%d, max_sge=%d, variant %d)", attr.MaxWR, attr.MaxSGE, v), Errno: e}
	}
	return d.CreateSRQ(ctx, attr, keys)
}

// createErrno is the errno creating an SRQ with attr the way v says fails
// with, or 0: EINVAL outside the device's limits, and, where the provider
// has no create_srq_ex, EOPNOTSUPP for whatever libibverbs hands to it.
// rule: CREATE-MAX
func (c *config) createErrno(attr drivers.SRQAttr, v drivers.CreateVariant) int {
	above := attr.MaxWR > maxSRQWR || attr.MaxSGE > maxSRQSGE
	atMax := attr.MaxWR == maxSRQWR && attr.MaxSGE == maxSRQSGE
	switch {
	case attr.MaxWR == 0 || attr.MaxSGE == 0:
		return eINVAL
	// rule: CREATE-EX
	case (v == drivers.CreateExCQ || v == drivers.CreateExBadType) && c.has(NoCreateSRQEx):
		return eOPNOTSUPP
	case v == drivers.CreateExBadType && !c.has(CreateExBadTypeAccepted):
		return eINVAL
	case v > drivers.CreateExBadType:
		return eINVAL
	case above && !c.has(CreateAboveMaxAccepted):
		return eINVAL
	case atMax && c.has(CreateAtMaxRefused):
		return eINVAL
	}
	return 0
}

// Close destroys every SRQ the device made. It is idempotent.
// rule: DESTROY-BUSY
func (d *device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	for i := len(d.srqs) - 1; i >= 0; i-- {
		d.srqs[i].destroy()
	}
	d.srqs = nil
	d.closed = true
	return nil
}

// roundupPow2 returns the smallest power of two >= x (1 for x <= 1).
// rule: POST-FULL
func roundupPow2(x uint32) uint32 {
	p := uint32(1)
	for p < x {
		p <<= 1
	}
	return p
}

// ringSize is the number of slots of a ring that lets hold WQEs be in use:
// a power of two with room for one more (capacity-one-over) and a sentinel.
// rule: POST-FULL
func ringSize(hold uint32) uint32 {
	return roundupPow2(hold + 2)
}
