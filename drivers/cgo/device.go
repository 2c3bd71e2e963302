//go:build linux && cgo && rdma

package cgo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/srqconform/srqconform/drivers"
)

// driver is the drivers.Driver New returns.
type driver struct{}

// New returns the libibverbs driver "cgo".
func New() drivers.Driver { return driver{} }

// Name returns "cgo".
func (driver) Name() string { return "cgo" }

// device is one open ibv_context. Its mutex guards every SRQ, QP and
// region it made: the async event channel is per context.
type device struct {
	mu       sync.Mutex
	ctx      *_C_struct_ibv_context
	port     int
	gidIndex int
	gid      [16]byte
	mtu      uint32 // enum ibv_mtu of the port's active MTU
	info     drivers.Info
	srqs     []*srq
	idle     *kit // the kit of the last closed SRQ, for the next (pool.go)
	closed   bool
	// asyncNonblock says ctx's async fd is non-blocking: only then may
	// Close drain its events (a read on a blocking one waits forever).
	asyncNonblock bool
	// conn is the connection mode (connVerbs or connRDMACM); in rdma_cm
	// mode ctx is librdmacm's context from cmDevs, and cmAddr the
	// address its listeners bind.
	conn   string
	cmDevs **_C_struct_ibv_context
	cmAddr string
	// iwarp says the transport is iWARP: a Send's completion there does
	// not prove the receiver processed it (deliverCM's witness Read).
	iwarp bool
	// sawLastWQE says the device raised a LAST_WQE_REACHED.
	sawLastWQE bool
	// rechecked counts the sends the peer heard nothing back for that were
	// sent again with the long ACK timer (qp.recheck), stillSilent those
	// of them that heard nothing then either; Close reports them.
	rechecked, stillSilent int
	// lateFull counts the posts that found the SRQ full after a UD message
	// whose completion Deliver stopped waiting for, and were tried again
	// (srq.Post); lateStillFull those that stayed full. Close reports them.
	lateFull, lateStillFull atomic.Int64
	// delivering counts the Delivers in progress (srq.Post's overlap).
	delivering atomic.Int32
	// inCall names the library call the driver is making where one can
	// block (rdma_cm's), for InCall.
	inCall atomic.Pointer[string]
}

var _ drivers.CallTracer = (*device)(nil)

// InCall names the blocking library call in progress, or "".
func (d *device) InCall() string {
	if p := d.inCall.Load(); p != nil {
		return *p
	}
	return ""
}

// enter records that the driver makes call, until the returned function
// runs or a later enter names the next call.
func (d *device) enter(call string) func() {
	d.inCall.Store(&call)
	return func() { d.inCall.Store(nil) }
}

var _ drivers.Device = (*device)(nil)

// Open opens the device cfg names (the first one for ""), checks the port
// is active and reads the GID at cfg.GIDIndex.
func (driver) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("cgo: Open: %w", err)
	}
	port := cfg.Port
	if port == 0 {
		port = 1
	}
	if port < 1 || port > 255 {
		return nil, fmt.Errorf("cgo: Open: port %d, want 1..255", cfg.Port)
	}
	var n _C_int
	list, err := _C2_ibv_get_device_list(&n)
	if list == nil {
		return nil, fmt.Errorf("cgo: ibv_get_device_list returned NULL (errno %v); is the ib_uverbs module loaded?", err)
	}
	defer _C_ibv_free_device_list(list)
	devs := unsafe.Slice(list, int(n))
	var names []string
	var dev *_C_struct_ibv_device
	for _, d := range devs {
		name := _C_GoString(_C_ibv_get_device_name(d))
		names = append(names, name)
		if dev == nil && (cfg.Device == "" || cfg.Device == name) {
			dev = d
		}
	}
	if dev == nil {
		if len(names) == 0 {
			return nil, errors.New("cgo: Open: ibv_get_device_list found no RDMA device (want one, e.g. rdma link add rxe0 type rxe netdev eth0)")
		}
		return nil, fmt.Errorf("cgo: Open: no device %q; ibv_get_device_list found %s", cfg.Device, strings.Join(names, ", "))
	}
	name := _C_GoString(_C_ibv_get_device_name(dev))
	conn, err := cmMode(cfg.Options["conn"], dev.transport_type == _C_IBV_TRANSPORT_IWARP)
	if err != nil {
		return nil, err
	}
	d := &device{port: port, gidIndex: cfg.GIDIndex, conn: conn, iwarp: dev.transport_type == _C_IBV_TRANSPORT_IWARP}
	if conn == connRDMACM {
		if d.cmAddr, err = cmAddr(cfg.Options["cm_addr"]); err != nil {
			return nil, err
		}
		if err := d.openCM(name); err != nil {
			d.Close()
			return nil, err
		}
	} else {
		c, err := _C2_ibv_open_device(dev)
		if c == nil {
			return nil, nullErr(fmt.Sprintf("ibv_open_device(%s)", name), err)
		}
		d.ctx = c
	}
	if err := d.setup(name, dev); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// setup queries the device and port and fills in Info.
func (d *device) setup(name string, dev *_C_struct_ibv_device) error {
	var da _C_struct_ibv_device_attr
	if r := _C_ibv_query_device(d.ctx, &da); r != 0 {
		return verbErr(fmt.Sprintf("ibv_query_device(%s)", name), int(r))
	}
	var pa _C_struct_ibv_port_attr
	if r := _C_srqc_query_port(d.ctx, _C_uint8_t(d.port), &pa); r != 0 {
		return verbErr(fmt.Sprintf("ibv_query_port(%s, port %d)", name, d.port), int(r))
	}
	if pa.state != _C_IBV_PORT_ACTIVE {
		return fmt.Errorf("cgo: ibv_query_port(%s, port %d): state %d, want IBV_PORT_ACTIVE (%d)", name, d.port, int(pa.state), int(_C_IBV_PORT_ACTIVE))
	}
	// First, so that Close can drain the async events of a device whose
	// setup fails below: on a blocking fd that read waits forever.
	if r, err := _C2_srqc_set_nonblock(d.ctx.async_fd); r != 0 {
		return fmt.Errorf("cgo: fcntl(async_fd, O_NONBLOCK) returned %d (%v), want 0", int(r), err)
	}
	d.asyncNonblock = true
	d.mtu = uint32(pa.active_mtu)
	if d.conn == connVerbs { // rdma_cm addresses by IP; the GID table is not used
		if d.gidIndex < 0 || d.gidIndex >= int(pa.gid_tbl_len) {
			return fmt.Errorf("cgo: Open(%s): GID index %d, want 0..%d", name, d.gidIndex, int(pa.gid_tbl_len)-1)
		}
		if r := _C_srqc_query_gid(d.ctx, _C_uint8_t(d.port), _C_int(d.gidIndex), (*_C_uint8_t)(unsafe.Pointer(&d.gid[0]))); r != 0 {
			return verbErr(fmt.Sprintf("ibv_query_gid(%s, port %d, index %d)", name, d.port, d.gidIndex), int(r))
		}
		if d.gid == [16]byte{} {
			return fmt.Errorf("cgo: ibv_query_gid(%s, port %d, index %d) is all zero, want a valid GID (rxe's IPv4-mapped RoCEv2 GID is usually index 1)", name, d.port, d.gidIndex)
		}
	}
	d.info = drivers.Info{
		Name:         name,
		Provider:     provider(name, dev),
		Kernel:       kernelRelease(),
		RDMACore:     rdmaCore(),
		MaxSRQWR:     uint32(da.max_srq_wr),
		MaxSRQSGE:    uint32(da.max_srq_sge),
		MaxQPWR:      uint32(da.max_qp_wr),
		MaxSGE:       uint32(da.max_sge),
		SRQResize:    da.device_cap_flags&_C_IBV_DEVICE_SRQ_RESIZE != 0,
		MaxMessage:   maxMessage,
		MaxUDMessage: mtuBytes(d.mtu),
		MaxSGELength: maxSGELength,
		UD:           d.conn == connVerbs,
		CMStates:     d.conn == connRDMACM,
	}
	if d.info.Provider == "siw" {
		// rdma-core providers/siw/siw.c: siw_post_send refuses both
		// immediate-data opcodes, and siw reports atomic_cap NONE.
		d.info.NoOpcodes = drivers.Opcodes(drivers.SendImm, drivers.WriteImm, drivers.CmpSwap, drivers.FetchAdd)
		d.info.NoOpcodesWhy = "siw has no immediate data (libsiw refuses SEND_WITH_IMM and WRITE_WITH_IMM at post) and no atomics (atomic_cap NONE)"
		// rdma-core providers/siw/siw.c: siw_post_recv indexes the RQ
		// modulo its size, 0 on an SRQ-attached QP: SIGFPE.
		d.info.PostRecvUnsafe = "ibv_post_recv on an SRQ-attached siw QP divides by zero in libsiw (rq_put % num_rqe, num_rqe 0) and kills the process with SIGFPE"
		// rdma-core 691953d8 providers/siw/siw.c push_recv_wqe: a negative
		// num_sge passes "num_sge <= SIW_MAX_SGE" and memcpy copies
		// sizeof(struct ibv_sge) * num_sge bytes: SIGSEGV (seen on 6.1,
		// 6.12 and 7.2).
		d.info.NegativeSGEUnsafe = "ibv_post_srq_recv on siw copies sizeof(struct ibv_sge) times a negative num_sge bytes in libsiw (push_recv_wqe checks num_sge <= 6 only) and kills the process with SIGSEGV"
	}
	return nil
}

// mtuBytes converts enum ibv_mtu to bytes.
func mtuBytes(m uint32) uint32 {
	if m < 1 || m > 5 {
		return 256
	}
	return 128 << m
}

// provider names the provider from the device name ("rxe0" -> "rxe",
// "mlx5_0" -> "mlx5"), or the node type when the name has no prefix.
func provider(name string, dev *_C_struct_ibv_device) string {
	p := strings.TrimRight(name, "0123456789")
	p = strings.TrimSuffix(p, "_")
	if p != "" {
		return p
	}
	return _C_GoString(_C_ibv_node_type_str(dev.node_type))
}

func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// rdmaCore is $SRQCONFORM_RDMA_CORE, or the real file libibverbs was
// loaded from (libibverbs.so.1.14.44.0 is rdma-core 44).
func rdmaCore() string {
	if v := os.Getenv("SRQCONFORM_RDMA_CORE"); v != "" {
		return v
	}
	p := _C_srqc_libibverbs_path()
	if p == nil {
		return "unknown"
	}
	path := _C_GoString(p)
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	return filepath.Base(path)
}

// Info describes the device.
func (d *device) Info() drivers.Info { return d.info }

// Close destroys every SRQ the device made, newest first, then closes
// the device. It is idempotent.
func (d *device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if d.rechecked > 0 {
		// How often a busy machine made the fast ACK timer run out.
		fmt.Fprintf(os.Stderr, "cgo: %d sends the peer heard nothing back for were sent again with the %v ACK timer; %d heard nothing then either\n",
			d.rechecked, ackTime(longAckTimeout), d.stillSilent)
	}
	if n := d.lateFull.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "cgo: %d posts found the SRQ full after a UD message not completed within %v, and were tried again for up to %v; %d stayed full\n",
			n, udSettle, lateBound, d.lateStillFull.Load())
	}
	var errs []error
	for i := len(d.srqs) - 1; i >= 0; i-- {
		errs = append(errs, d.srqs[i].destroy())
	}
	d.srqs = nil
	errs = append(errs, d.idle.release())
	d.idle = nil
	if d.ctx != nil && d.asyncNonblock {
		d.drainEvents()
	}
	switch {
	case d.cmDevs != nil:
		_C_rdma_free_devices(d.cmDevs) // closes librdmacm's contexts
		d.cmDevs, d.ctx = nil, nil
	case d.ctx != nil:
		if r := _C_ibv_close_device(d.ctx); r != 0 {
			errs = append(errs, verbErr(fmt.Sprintf("ibv_close_device(%s)", d.info.Name), int(r)))
		}
		d.ctx = nil
	}
	return errors.Join(errs...)
}

// Async events srqconform watches (enum ibv_event_type).
const (
	evSRQLimit = drivers.EventSRQLimitReached
	evSRQErr   = drivers.EventSRQErr
	evLastWQE  = drivers.EventQPLastWQEReached
	evQPFatal  = drivers.EventQPFatal
	evQPReqErr = drivers.EventQPReqErr
	evQPAccess = drivers.EventQPAccessErr
)

// drainEvents reads every pending async event, acknowledges it and files
// the ones srqconform watches with their SRQ. The caller holds d.mu.
func (d *device) drainEvents() error {
	for {
		var ev _C_struct_srqc_event
		r := _C_srqc_get_async(d.ctx, &ev)
		if r == _C_EAGAIN {
			return nil
		}
		if r != 0 {
			return verbErr("ibv_get_async_event", int(r))
		}
		switch ev._type {
		case _C_IBV_EVENT_SRQ_LIMIT_REACHED, _C_IBV_EVENT_SRQ_ERR:
			t := evSRQLimit
			if ev._type == _C_IBV_EVENT_SRQ_ERR {
				t = evSRQErr
			}
			for _, s := range d.srqs {
				if s.srq == ev.srq {
					s.events = append(s.events, drivers.Event{Type: t, QP: -1})
				}
			}
		case _C_IBV_EVENT_QP_LAST_WQE_REACHED:
			for _, s := range d.srqs {
				if i, ok := s.byQPN[uint32(ev.qpn)]; ok {
					s.events = append(s.events, drivers.Event{Type: evLastWQE, QP: i})
					s.qps[i].lastWQEs++
					d.sawLastWQE = true
				}
			}
		case _C_IBV_EVENT_QP_FATAL, _C_IBV_EVENT_QP_REQ_ERR, _C_IBV_EVENT_QP_ACCESS_ERR:
			// Filed for the SRQ's receivers only: the peers' own errors
			// (a siw sender that met a TERMINATE) are not the SRQ's.
			t := evQPFatal
			switch ev._type {
			case _C_IBV_EVENT_QP_REQ_ERR:
				t = evQPReqErr
			case _C_IBV_EVENT_QP_ACCESS_ERR:
				t = evQPAccess
			}
			for _, s := range d.srqs {
				if i, ok := s.byQPN[uint32(ev.qpn)]; ok {
					s.events = append(s.events, drivers.Event{Type: t, QP: i})
				}
			}
		}
	}
}
