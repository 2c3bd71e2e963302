package model

import "fmt"

// Errno values used by the verbs (Linux numbering). The model speaks in these
// positive values; the profile's ErrnoSign decides how a post returns them.
const (
	ENOMEM     = 12
	EBUSY      = 16
	EINVAL     = 22
	ENOSYS     = 38
	EOPNOTSUPP = 95
)

// ErrnoName returns the symbolic name of a (possibly negative) errno value.
func ErrnoName(e int) string {
	sign := ""
	if e < 0 {
		sign, e = "-", -e
	}
	switch e {
	case 0:
		return "0"
	case 1:
		if sign == "-" {
			return "-1"
		}
		return "EPERM"
	case ENOMEM:
		return sign + "ENOMEM"
	case EBUSY:
		return sign + "EBUSY"
	case EINVAL:
		return sign + "EINVAL"
	case ENOSYS:
		return sign + "ENOSYS"
	case EOPNOTSUPP:
		return sign + "EOPNOTSUPP"
	}
	return fmt.Sprintf("%s%d", sign, e)
}

// CreateVariant is how an SRQ is created: ibv_create_srq, or one of the
// ibv_create_srq_ex calls String names (numbered as drivers.CreateVariant).
type CreateVariant uint8

// The create variants.
const (
	CreatePlain CreateVariant = iota
	CreateEx
	CreateExCQ
	CreateExBadType
)

// CreateVariants lists every variant.
var CreateVariants = []CreateVariant{CreatePlain, CreateEx, CreateExCQ, CreateExBadType}

var createVariantNames = [...]string{"ibv_create_srq", "ibv_create_srq_ex(PD|TYPE, BASIC)",
	"ibv_create_srq_ex(PD|TYPE|CQ, BASIC)", "ibv_create_srq_ex(PD|TYPE, unknown srq_type)"}

func (v CreateVariant) String() string { return named(createVariantNames[:], v, "CreateVariant") }

// named returns names[v], or kind(v) for a value past the list.
func named[T ~uint8](names []string, v T, kind string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", kind, uint8(v))
}

// RecvCaps is what a QP created with the SRQ asks for in cap.max_recv_wr
// and cap.max_recv_sge (drivers.RecvCaps).
type RecvCaps uint8

// The receive caps the suite asks for.
const (
	RecvCapsZero     RecvCaps = iota // both 0
	RecvCapsAboveWR                  // max_recv_wr the device's max_qp_wr + 1, max_recv_sge 1
	RecvCapsAboveSGE                 // max_recv_wr 1, max_recv_sge the device's max_sge + 1
)

var recvCapsNames = [...]string{"max_recv_wr=0 max_recv_sge=0", "max_recv_wr=max_qp_wr+1", "max_recv_sge=max_sge+1"}

func (c RecvCaps) String() string { return named(recvCapsNames[:], c, "RecvCaps") }

// QPType is the transport of a queue pair attached to the SRQ.
type QPType uint8

// The QP transports the model covers.
const (
	RC QPType = iota
	UD
)

func (t QPType) String() string {
	if t == UD {
		return "UD"
	}
	return "RC"
}

// QPState is a queue pair state as ibv_modify_qp names it.
type QPState uint8

// The QP states. SQE is entered by the device only, never by ibv_modify_qp.
const (
	Reset QPState = iota
	Init
	RTR
	RTS
	SQD
	SQE
	Err
)

// QPStates lists every state, in the order of the state diagram.
var QPStates = []QPState{Reset, Init, RTR, RTS, SQD, SQE, Err}

func (s QPState) String() string {
	return named([]string{"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"}, s, "QPState")
}

// Fetches reports whether a QP in this state takes receive requests from its
// SRQ (rule QP-FETCH-STATES).
func (s QPState) Fetches() bool {
	return s == RTR || s == RTS || s == SQD || s == SQE
}

// Opcode is what the peer's send request carries to the receiving QP.
type Opcode uint8

// The opcodes a peer can send.
const (
	Send Opcode = iota
	SendImm
	WriteImm
	Write
	Read
	CmpSwap
	FetchAdd
)

// Opcodes lists every opcode.
var Opcodes = []Opcode{Send, SendImm, WriteImm, Write, Read, CmpSwap, FetchAdd}

func (o Opcode) String() string {
	return named([]string{"SEND", "SEND_WITH_IMM", "RDMA_WRITE_WITH_IMM", "RDMA_WRITE", "RDMA_READ", "ATOMIC_CMP_AND_SWP", "ATOMIC_FETCH_AND_ADD"}, o, "Opcode")
}

// Consumes reports whether a message with this opcode consumes a receive
// request (rule FETCH-OPCODES).
func (o Opcode) Consumes() bool { return o == Send || o == SendImm || o == WriteImm }

// HasImm reports whether the opcode carries immediate data.
func (o Opcode) HasImm() bool { return o == SendImm || o == WriteImm }

// Scatters reports whether the message's payload lands in the receive
// request's scatter list. RDMA Write with Immediate consumes a request but
// writes its payload to the remote address it names.
func (o Opcode) Scatters() bool { return o == Send || o == SendImm }

// ValidOn reports whether a peer can send this opcode on the transport.
// UD carries only sends (man ibv_post_send, the opcode table).
func (o Opcode) ValidOn(t QPType) bool { return t == RC || o == Send || o == SendImm }

// WCStatus is a work completion status (enum ibv_wc_status numbering).
type WCStatus uint8

// The completion statuses the model can produce.
const (
	WCSuccess     WCStatus = 0
	WCLocLenErr   WCStatus = 1
	WCLocQPOpErr  WCStatus = 2
	WCLocProtErr  WCStatus = 4
	WCWRFlushErr  WCStatus = 5
	WCRemInvReq   WCStatus = 9
	WCRemAccErr   WCStatus = 10
	WCRemOpErr    WCStatus = 11
	WCRetryExc    WCStatus = 12
	WCRNRRetryExc WCStatus = 13
	WCGeneralErr  WCStatus = 21
)

func (s WCStatus) String() string {
	switch s {
	case WCSuccess:
		return "SUCCESS"
	case WCLocLenErr:
		return "LOC_LEN_ERR"
	case WCLocQPOpErr:
		return "LOC_QP_OP_ERR"
	case WCLocProtErr:
		return "LOC_PROT_ERR"
	case WCWRFlushErr:
		return "WR_FLUSH_ERR"
	case WCRemInvReq:
		return "REM_INV_REQ_ERR"
	case WCRemAccErr:
		return "REM_ACCESS_ERR"
	case WCRemOpErr:
		return "REM_OP_ERR"
	case WCRetryExc:
		return "RETRY_EXC_ERR"
	case WCRNRRetryExc:
		return "RNR_RETRY_EXC_ERR"
	case WCGeneralErr:
		return "GENERAL_ERR"
	}
	return fmt.Sprintf("STATUS_%d", uint8(s))
}

// StatusSet is a set of completion statuses, used where the sources allow
// more than one.
type StatusSet uint32

// Statuses builds a StatusSet.
func Statuses(s ...WCStatus) StatusSet {
	var set StatusSet
	for _, x := range s {
		set |= 1 << x
	}
	return set
}

// AnyError is every status except success.
const AnyError StatusSet = ^StatusSet(0) &^ 1

// Has reports whether s is in the set.
func (set StatusSet) Has(s WCStatus) bool { return s < 32 && set&(1<<s) != 0 }

// First returns the lowest status in the set: the model's canonical pick.
func (set StatusSet) First() WCStatus {
	for s := WCStatus(0); s < 32; s++ {
		if set.Has(s) {
			return s
		}
	}
	return WCGeneralErr
}

func (set StatusSet) String() string {
	if set == AnyError {
		return "any error status"
	}
	out := ""
	for s := WCStatus(0); s < 32; s++ {
		if set.Has(s) {
			if out != "" {
				out += " or "
			}
			out += s.String()
		}
	}
	return out
}

// WCOpcode is the opcode of a receive completion.
type WCOpcode uint8

// Receive completion opcodes.
const (
	WCRecv WCOpcode = iota
	WCRecvRDMAWithImm
)

func (o WCOpcode) String() string {
	return named([]string{"RECV", "RECV_RDMA_WITH_IMM"}, o, "WCOpcode")
}

// EventType is an asynchronous event type.
type EventType uint8

// The asynchronous events the model produces.
const (
	EventSRQLimitReached EventType = iota
	EventSRQErr
	EventQPLastWQEReached
	// The affiliated QP error events (QP-ERROR-EVENT).
	EventQPFatal     // IBV_EVENT_QP_FATAL
	EventQPReqErr    // IBV_EVENT_QP_REQ_ERR
	EventQPAccessErr // IBV_EVENT_QP_ACCESS_ERR
)

func (e EventType) String() string {
	return named([]string{"SRQ_LIMIT_REACHED", "SRQ_ERR", "QP_LAST_WQE_REACHED", "QP_FATAL", "QP_REQ_ERR", "QP_ACCESS_ERR"}, e, "EventType")
}

// QPError reports whether e is an affiliated QP error event.
func (e EventType) QPError() bool {
	return e == EventQPFatal || e == EventQPReqErr || e == EventQPAccessErr
}

// PeerStatus is what the sending peer observed for its message.
type PeerStatus uint8

// Peer outcomes. UD senders always see PeerOK: nothing comes back.
const (
	PeerOK    PeerStatus = iota // the send completed successfully
	PeerRNR                     // receiver not ready: RNR retries exceeded
	PeerError                   // any other error completion
	// PeerSilent is no answer within the driver's bound: the peer's
	// transport gave up. It is not the device's error: it is consistent
	// with any outcome the model allows PeerError for (a receiver that
	// drops the message, an error NAK that came late), and with no other
	// (see Inconclusive).
	PeerSilent
)

func (p PeerStatus) String() string {
	return named(peerNames[:], p, "PeerStatus")
}

var peerNames = [...]string{"ok", "rnr", "error", "silent"}

// PeerSet is a set of peer outcomes.
type PeerSet uint8

// Peers builds a PeerSet.
func Peers(p ...PeerStatus) PeerSet {
	var s PeerSet
	for _, x := range p {
		s |= 1 << x
	}
	return s
}

// Has reports whether p is in the set.
func (s PeerSet) Has(p PeerStatus) bool { return s&(1<<p) != 0 }

// First returns the lowest member, the canonical pick.
func (s PeerSet) First() PeerStatus {
	for p := PeerOK; p <= PeerError; p++ {
		if s.Has(p) {
			return p
		}
	}
	return PeerError
}

func (s PeerSet) String() string {
	out := ""
	for p := PeerOK; p <= PeerSilent; p++ {
		if s.Has(p) {
			if out != "" {
				out += " or "
			}
			out += p.String()
		}
	}
	return out
}

// SGE is one scatter entry: a length and the index of the memory key it uses.
// Addresses are the driver's business; the model needs only lengths and keys.
type SGE struct {
	Length uint32
	Key    int
}

// WR is a receive work request.
type WR struct {
	ID uint64
	// NumSGE is the num_sge field as posted. It may differ from len(SGEs)
	// only to express a negative num_sge; otherwise it equals len(SGEs).
	NumSGE int
	SGEs   []SGE
}

// Message is what a peer sends to a receiving QP.
type Message struct {
	Opcode Opcode
	Len    uint32
	Imm    uint32
}

// SRQAttr is struct ibv_srq_attr.
type SRQAttr struct {
	MaxWR    uint32
	MaxSGE   uint32
	SRQLimit uint32
}

func (a SRQAttr) String() string {
	return fmt.Sprintf("max_wr=%d max_sge=%d srq_limit=%d", a.MaxWR, a.MaxSGE, a.SRQLimit)
}

// Completion is a receive work completion as polled from the CQ.
type Completion struct {
	WRID    uint64
	Status  WCStatus
	Opcode  WCOpcode // meaningful only when Status is success
	ByteLen uint32   // meaningful only when Status is success
	HasImm  bool
	Imm     uint32
	QP      int
	// PayloadErr is set by a driver that checked the bytes a successful
	// receive scattered and found them not to be the message's.
	PayloadErr string
}

func (c Completion) String() string {
	if c.Status != WCSuccess {
		return fmt.Sprintf("{wr_id=%s qp=%d %s}", WRIDText(c.WRID), c.QP, c.Status)
	}
	s := fmt.Sprintf("{wr_id=%s qp=%d %s %s byte_len=%d", WRIDText(c.WRID), c.QP, c.Status, c.Opcode, c.ByteLen)
	if c.HasImm {
		s += fmt.Sprintf(" imm=%#x", c.Imm)
	}
	return s + "}"
}

// Event is an asynchronous event. QP is the QP index for QP events, -1 for
// SRQ events.
type Event struct {
	Type EventType
	QP   int
}

func (e Event) String() string {
	if e.QP < 0 {
		return e.Type.String()
	}
	return fmt.Sprintf("%s(qp%d)", e.Type, e.QP)
}

// Caps is what the model needs to know of the device.
type Caps struct {
	MaxSRQWR  uint32 // ibv_device_attr.max_srq_wr
	MaxSRQSGE uint32 // ibv_device_attr.max_srq_sge
	Resize    bool   // IBV_DEVICE_SRQ_RESIZE
}
