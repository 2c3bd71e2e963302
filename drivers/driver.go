package drivers

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// ErrUnsupported is returned by optional operations a driver cannot do
// (injecting device-internal events, holding a message half-delivered).
var ErrUnsupported = errors.New("not supported by this driver")

// ErrCallFailed is wrapped by the error of a call a driver fails by its
// own record of the device's state: an SRQ or QP it holds closed or
// destroyed, a message it holds half delivered, where the caller has not
// closed, destroyed or left it so. The suite makes each call on objects it
// made and has not destroyed, in a state its model covers, so it takes
// such an error as the device's answer: the call failed, a departure from
// the rule the call keeps, shrunk and replayed like any other. Any other
// error (a wait that ran out, a peer that could not connect, an argument
// outside the interface) is the harness's and stops the run: a driver
// wraps ErrCallFailed only where no timer and no harness resource decides
// the failure.
var ErrCallFailed = errors.New("the driver's own state refuses the call")

// Driver opens devices.
type Driver interface {
	// Name is the driver's name as the command line knows it ("emu", "cgo").
	Name() string
	// Open opens the device cfg names.
	Open(ctx context.Context, cfg Config) (Device, error)
}

// Config selects a device. Port and GIDIndex follow perftest's -i and -x.
type Config struct {
	Device   string            // ibv_devinfo name; "" picks the first device
	Port     int               // 1-based port number; 0 means 1
	GIDIndex int               // GID table index for RoCE addressing
	Options  map[string]string // driver-specific settings
}

// Info describes an open device.
type Info struct {
	Name     string // device name (rxe0, mlx5_0, emu0)
	Provider string // provider or implementation (rxe, mlx5, emu)
	Kernel   string // kernel release, where it matters
	RDMACore string // rdma-core / libibverbs version, where it matters
	// Patches names the patches the kernel driver was rebuilt with (vm
	// -patch), each as "NAME sha256:HEX", comma-separated in the order
	// applied; "" for the kernel's own driver.
	Patches   string `json:",omitempty"`
	MaxSRQWR  uint32 // ibv_device_attr.max_srq_wr
	MaxSRQSGE uint32 // ibv_device_attr.max_srq_sge
	MaxQPWR   uint32 // ibv_device_attr.max_qp_wr
	MaxSGE    uint32 // ibv_device_attr.max_sge
	// SRQResize is IBV_DEVICE_SRQ_RESIZE.
	SRQResize bool
	// MaxMessage is the largest message the peer sends on RC; MaxUDMessage
	// the largest on UD (the path MTU).
	MaxMessage, MaxUDMessage uint32
	// MaxSGELength is the largest SGE length the driver can back with
	// registered memory (an SGE must describe memory inside its region);
	// 0 means any 32-bit length, as an emulator can.
	MaxSGELength uint32
	// UD says whether UD QPs can be created.
	UD bool
	// Optional capabilities: operations that otherwise return ErrUnsupported.
	InjectSRQError, InjectSQE, PartialDelivery bool
	// Synchronous says every completion and event exists by the time the
	// call that caused it returns (an emulator): polls then never wait.
	Synchronous bool
	// CMStates says QPs reach RTS only through a connection manager
	// (iWARP; the cgo driver's rdma_cm mode): Modify takes a new QP
	// RESET -> INIT -> RTR -> RTS, the connection being made at RTR, and
	// to RESET (dropping the connection) or ERR; the suite moves QPs
	// along those paths only and marks what needs others n/a.
	CMStates bool
	// NoOpcodes are opcodes the peer cannot send on this device, and
	// NoOpcodesWhy says why; the suite does not send them.
	NoOpcodes    OpcodeSet
	NoOpcodesWhy string
	// PostRecvUnsafe, when set, says why ibv_post_recv on an SRQ-attached
	// QP must not be called in this process (it kills it). The driver's
	// PostRecv then makes the call in a child process, on a QP made there
	// the same way, and returns KilledErrno plus the signal when that
	// child was killed; the random cases leave PostRecv out (a process
	// per call), the scenarios make it.
	PostRecvUnsafe string
	// NegativeSGEUnsafe, when set, says why ibv_post_srq_recv of a WR with
	// a negative num_sge must not be called in this process (the provider
	// does not check it, and the copy it makes kills the process). The
	// driver's Post then makes a list of one such WR in a child process,
	// on an SRQ made there, and returns KilledErrno plus the signal when
	// that child was killed (ProbeFailed for a longer list); the random
	// cases leave such WRs out, the scenarios post them.
	NegativeSGEUnsafe string
}

// CallTracer is implemented by a device that can name the library call it
// is making, or "" when none: a harness whose verb did not return in time
// names that call in its error, so that a hang says where it is.
type CallTracer interface {
	InCall() string
}

// Refused is the error CreateSRQ and CreateSRQEx return when the device
// refused to make the SRQ (ibv_create_srq returned NULL): Errno is the
// errno the call set, as the call gave it, or -1 where it set none. The
// harness holds it to the model as the create's result; any other error
// stops the run as the harness's own failure.
type Refused struct {
	Call  string
	Errno int
}

func (e *Refused) Error() string {
	return fmt.Sprintf("%s refused: errno %d, want an object", e.Call, e.Errno)
}

// KilledErrno is added to a signal's number to make the errno a driver
// returns for a call that killed the process making it (see
// Info.PostRecvUnsafe). No errno comes near it.
const KilledErrno = 1 << 16

// ProbeFailed is the errno a driver returns when it could not make such a
// call in a child process at all (the harness failing, not the verb); it
// says why on standard error.
const ProbeFailed = KilledErrno

// KilledBy returns the signal a KilledErrno-based errno names.
func KilledBy(errno int) (syscall.Signal, bool) {
	if errno <= KilledErrno || errno > KilledErrno+64 {
		return 0, false
	}
	return syscall.Signal(errno - KilledErrno), true
}

// SignalName names the signals that kill a process with a bug ("SIGFPE"),
// and any other by number.
func SignalName(sig syscall.Signal) string {
	names := map[syscall.Signal]string{syscall.SIGFPE: "SIGFPE", syscall.SIGSEGV: "SIGSEGV", syscall.SIGBUS: "SIGBUS",
		syscall.SIGABRT: "SIGABRT", syscall.SIGILL: "SIGILL", syscall.SIGKILL: "SIGKILL", syscall.SIGTRAP: "SIGTRAP"}
	if n, ok := names[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}

// Device is an open device.
type Device interface {
	Info() Info
	// CreateSRQ creates an SRQ and registers keys memory regions for its
	// WRs (key i of a WR names region i). It returns the attributes
	// written back by ibv_create_srq.
	CreateSRQ(ctx context.Context, attr SRQAttr, keys int) (SRQ, SRQAttr, error)
	// CreateSRQEx is CreateSRQ with the SRQ made by ibv_create_srq_ex the
	// way v says (CreateEx or CreateExCQ). It returns ErrUnsupported where
	// the driver cannot make the call.
	CreateSRQEx(ctx context.Context, attr SRQAttr, keys int, v CreateVariant) (SRQ, SRQAttr, error)
	Close() error
}

// SRQ is one shared receive queue with its CQ, async event channel,
// memory regions and the QPs attached to it.
type SRQ interface {
	// Post is ibv_post_srq_recv with the list wrs. It returns the provider's
	// return value and the index of bad_wr, or -1 when bad_wr was not set.
	Post(wrs []RecvWR) (errno int, badWR int)
	// Query is ibv_query_srq.
	Query() (SRQAttr, int)
	// ModifyLimit is ibv_modify_srq with IBV_SRQ_LIMIT.
	ModifyLimit(limit uint32) int
	// Resize is ibv_modify_srq with IBV_SRQ_MAX_WR.
	Resize(maxWR uint32) int
	// CreateQP creates a QP of type t attached to the SRQ, in RESET, with a
	// peer connected to it. QPs are numbered from 0 in creation order.
	CreateQP(ctx context.Context, t QPType) (QP, error)
	// CreateQPCaps is CreateQP with cap.max_recv_wr and cap.max_recv_sge
	// as caps says. When ibv_create_qp fails it returns no QP and the
	// errno, and the QP takes no number. It returns ErrUnsupported where
	// the driver cannot make the call. The suite creates every QP through
	// it (RecvCapsZero for a plain create), so that a refused create is
	// checked against QP-CREATE; it calls CreateQP only where this
	// returns ErrUnsupported.
	CreateQPCaps(ctx context.Context, t QPType, caps RecvCaps) (QP, int, error)
	// InvalidateKey deregisters memory region key.
	InvalidateKey(key int) error
	// PollCQ returns up to max completions available now (max <= 0: all).
	PollCQ(max int) ([]Completion, error)
	// PollEvents returns the asynchronous events available now, already
	// acknowledged.
	PollEvents() ([]Event, error)
	// InjectSRQError puts the SRQ in error, or returns ErrUnsupported.
	InjectSRQError() error
	// CreateOther creates a second SRQ with attr on this SRQ's PD (and,
	// for CreateExCQ, with this SRQ's CQ), the way v says, and destroys
	// it at once when it was created. It returns 0, or the errno the
	// create set; ErrUnsupported where the driver cannot make the call.
	CreateOther(attr SRQAttr, v CreateVariant) (errno int, err error)
	// Destroy is ibv_destroy_srq on the SRQ alone, with its QPs, CQ and
	// regions left as they are. It returns the verb's return value. When
	// it fails the SRQ stays usable; when it succeeds PollCQ and
	// PollEvents still work, other verbs on the SRQ are refused, and
	// Close releases the rest without destroying the SRQ again. It
	// returns ErrUnsupported where the driver cannot do it.
	Destroy() (errno int, err error)
	// Close destroys the QPs, peers, SRQ, regions and CQ.
	Close() error
}

// ConnectionFailer is implemented by QPs whose Modify makes or breaks a
// connection (Info.CMStates): ConnectionErr returns the error of the last
// Modify when the connection failed for a reason of the harness's own
// (rdma_cm could not connect the peer), and nil otherwise. The suite
// reports it as a harness error: the device did not refuse the transition.
type ConnectionFailer interface {
	ConnectionErr() error
}

// ErrRacer is implemented by QPs whose driver can move the QP to ERR while
// messages to it are in flight, as another thread of an application does:
// the only way to meet a responder in the middle of a message (the corpus
// entry of 15ae32c4a355). The concurrent workload uses it where it is
// there.
type ErrRacer interface {
	// DeliverRacingErr has the peer post msgs (at most MaxRacingMessages,
	// UD only) one after the other without waiting, then, spin later,
	// calls ibv_modify_qp to ERR on the QP, and returns once every send
	// completed: what each sender heard, in msgs' order, and the modify's
	// return value. The messages the QP took before it entered ERR are
	// processed as Deliver's are; those after are dropped. It returns
	// ErrUnsupported where the driver cannot (an RC QP, say), having sent
	// nothing.
	DeliverRacingErr(ctx context.Context, msgs []Message, spin time.Duration) ([]PeerStatus, int, error)
}

// MaxRacingMessages is the most messages DeliverRacingErr sends at once:
// the depth of a peer's send queue. The longer the burst, the longer a
// software device's responder works through it, and the likelier the move
// to ERR meets it in the middle.
const MaxRacingMessages = 8

// QP is a receiving QP attached to the SRQ, with its peer.
type QP interface {
	// Modify is ibv_modify_qp to state (the driver supplies the attributes
	// each transition needs). It returns the verb's return value.
	Modify(state QPState) int
	// PostRecv is ibv_post_recv on the QP's own receive queue.
	PostRecv(wr RecvWR) (errno int, badWR int)
	// Deliver has the peer send msg and returns what the peer's send
	// completion said, once the receiver has processed or dropped it
	// (PeerSilent when no answer came within the driver's bound).
	Deliver(ctx context.Context, msg Message) (PeerStatus, error)
	// DeliverFirstPacket sends only the first packet of msg, leaving the
	// QP filling a WR; DeliverRest sends the rest and returns what the
	// peer heard of the whole message (a device that took no WR for the
	// first packet answers as it would a whole message; the rest of a
	// message never started is out of sequence).
	DeliverFirstPacket(ctx context.Context, msg Message) error
	DeliverRest(ctx context.Context) (PeerStatus, error)
	// InjectSQE moves the QP from RTS to SQE as a send error would.
	InjectSQE() error
	// Destroy is ibv_destroy_qp on the QP, after its peer is destroyed.
	// It returns the verb's return value (a driver may report a failure as
	// an error instead: the QP is then in no known state); once it
	// succeeds the QP is no longer attached to the SRQ and takes no
	// further call. It returns ErrUnsupported where the driver cannot.
	Destroy() (errno int, err error)
}

// CreateVariant is how an SRQ is created.
type CreateVariant uint8

// Create variants.
const (
	// CreatePlain is ibv_create_srq.
	CreatePlain CreateVariant = iota
	// CreateEx is ibv_create_srq_ex with comp_mask IBV_SRQ_INIT_ATTR_PD |
	// IBV_SRQ_INIT_ATTR_TYPE and srq_type IBV_SRQT_BASIC.
	CreateEx
	// CreateExCQ is CreateEx with IBV_SRQ_INIT_ATTR_CQ and a CQ as well.
	CreateExCQ
	// CreateExBadType is CreateEx with an srq_type no libibverbs knows
	// (IBV_SRQT_TM + 1).
	CreateExBadType
)

// SRQAttr is struct ibv_srq_attr.
type SRQAttr struct{ MaxWR, MaxSGE, SRQLimit uint32 }

// SGE is a scatter entry: a length and the memory region (key index) it
// lies in. The driver chooses addresses.
type SGE struct {
	Length uint32
	Key    int
}

// RecvWR is struct ibv_recv_wr. NumSGE is what is posted; it may be
// negative, and is otherwise len(SGEs).
type RecvWR struct {
	ID     uint64
	NumSGE int
	SGEs   []SGE
}

// RecvCaps is what a QP created with the SRQ asks for in cap.max_recv_wr
// and cap.max_recv_sge (CreateQP asks for 0 and 0).
type RecvCaps uint8

// Receive caps.
const (
	// RecvCapsZero is max_recv_wr 0 and max_recv_sge 0.
	RecvCapsZero RecvCaps = iota
	// RecvCapsAboveWR is max_recv_wr Info().MaxQPWR+1 and max_recv_sge 1.
	RecvCapsAboveWR
	// RecvCapsAboveSGE is max_recv_wr 1 and max_recv_sge Info().MaxSGE+1.
	RecvCapsAboveSGE
)

// QPType is the transport.
type QPType uint8

// Transports.
const (
	RC QPType = iota
	UD
)

// QPState is enum ibv_qp_state.
type QPState uint8

// QP states.
const (
	Reset QPState = iota
	Init
	RTR
	RTS
	SQD
	SQE
	Err
)

func (s QPState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("QPState(%d)", uint8(s))
}

var stateNames = []string{"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"}

// Opcode is the peer's send opcode.
type Opcode uint8

// Opcodes.
const (
	Send Opcode = iota
	SendImm
	WriteImm
	Write
	Read
	CmpSwap
	FetchAdd
)

// OpcodeSet is a set of opcodes, bit 1<<op for each.
type OpcodeSet uint16

// Opcodes returns the set of ops.
func Opcodes(ops ...Opcode) OpcodeSet {
	var s OpcodeSet
	for _, o := range ops {
		s |= 1 << o
	}
	return s
}

// Has says whether op is in the set.
func (s OpcodeSet) Has(op Opcode) bool { return s&(1<<op) != 0 }

// Message is one message the peer sends. Payload bytes are Pattern, Pattern+1,
// ... (mod 256), so a driver can check where they landed.
type Message struct {
	Opcode  Opcode
	Len     uint32
	Imm     uint32
	Pattern byte
}

// WCStatus is enum ibv_wc_status. A binding casts the provider's value;
// the constants name the statuses the model (model.WCStatus) knows.
type WCStatus uint8

// Completion statuses, numbered as enum ibv_wc_status.
const (
	WCSuccess     WCStatus = 0  // IBV_WC_SUCCESS
	WCLocLenErr   WCStatus = 1  // IBV_WC_LOC_LEN_ERR
	WCLocQPOpErr  WCStatus = 2  // IBV_WC_LOC_QP_OP_ERR
	WCLocProtErr  WCStatus = 4  // IBV_WC_LOC_PROT_ERR
	WCWRFlushErr  WCStatus = 5  // IBV_WC_WR_FLUSH_ERR
	WCRemInvReq   WCStatus = 9  // IBV_WC_REM_INV_REQ_ERR
	WCRemAccErr   WCStatus = 10 // IBV_WC_REM_ACCESS_ERR
	WCRemOpErr    WCStatus = 11 // IBV_WC_REM_OP_ERR
	WCRetryExc    WCStatus = 12 // IBV_WC_RETRY_EXC_ERR
	WCRNRRetryExc WCStatus = 13 // IBV_WC_RNR_RETRY_EXC_ERR
	WCGeneralErr  WCStatus = 21 // IBV_WC_GENERAL_ERR
)

// WCOpcode is the receive completion opcode, renumbered from enum
// ibv_wc_opcode's 128 and 129.
type WCOpcode uint8

// Receive completion opcodes.
const (
	WCRecv            WCOpcode = iota // IBV_WC_RECV
	WCRecvRDMAWithImm                 // IBV_WC_RECV_RDMA_WITH_IMM
)

// Completion is a receive work completion.
type Completion struct {
	WRID    uint64
	Status  WCStatus
	Opcode  WCOpcode
	ByteLen uint32
	HasImm  bool
	Imm     uint32
	QP      int // index of the receiving QP
	// PayloadErr is set by drivers that check the bytes of a successful
	// completion and found them out of place.
	PayloadErr string
	// Pattern is the first byte of a successful receive's message (after
	// any GRH area), where the driver read it back (HasPattern): the
	// Pattern of the Message that made the completion, so a completion
	// without immediate data still names its message.
	Pattern    byte
	HasPattern bool
}

// EventType numbers the async events srqconform watches (renumbered from
// enum ibv_event_type).
type EventType uint8

// Async events.
const (
	EventSRQLimitReached  EventType = iota // IBV_EVENT_SRQ_LIMIT_REACHED
	EventSRQErr                            // IBV_EVENT_SRQ_ERR
	EventQPLastWQEReached                  // IBV_EVENT_QP_LAST_WQE_REACHED
	// The affiliated QP errors.
	EventQPFatal     // IBV_EVENT_QP_FATAL
	EventQPReqErr    // IBV_EVENT_QP_REQ_ERR (invalid request)
	EventQPAccessErr // IBV_EVENT_QP_ACCESS_ERR (local access violation)
)

// Event is an acknowledged async event; QP is -1 for SRQ events.
type Event struct {
	Type EventType
	QP   int
}

// PeerStatus is what the peer's send completion said: 0 success, 1 RNR
// retries exceeded, 2 any other error, 3 no answer within the driver's
// bound (PeerSilent).
type PeerStatus uint8

// Peer statuses.
const (
	PeerOK    PeerStatus = 0 // the send completed successfully
	PeerRNR   PeerStatus = 1 // the receiver answered RNR until the retries ran out
	PeerError PeerStatus = 2 // the device answered with an error (an error NAK, an error completion)
	// PeerSilent is silence, not an answer: the peer's transport gave up
	// waiting (IBV_WC_RETRY_EXC_ERR: no ACK, NAK or RNR NAK came back).
	// A driver whose fast timers ran out checks again with a much larger
	// bound before it reports PeerSilent, where that can be done without
	// changing what the receiver sees (see the cgo driver's Deliver); a
	// driver that cannot tell silence from an error reports PeerError.
	// The suite takes PeerSilent as what it is: no evidence. Where the
	// model needs the device's answer (RNR, success) the step is
	// inconclusive, never a failure.
	PeerSilent PeerStatus = 3
)
