package model

import (
	"fmt"
	"strconv"
)

// Op is one operation on the SRQ under test. Every operation a driver can
// perform has a type here; Inject* operations are device-internal events that
// only the model and drivers able to inject them support.
type Op interface {
	// Name is the verb or event, as reports print it.
	Name() string
	fmt.Stringer
}

// CreateSRQ is ibv_create_srq, or ibv_create_srq_ex with comp_mask PD |
// TYPE and srq_type BASIC when Variant is CreateEx (rule CREATE-EX: the
// same SRQ). Its observation carries the attributes written back.
type CreateSRQ struct {
	MaxWR, MaxSGE, Limit uint32
	Variant              CreateVariant `json:",omitempty"`
}

// CreateOther creates a second SRQ on the PD of the SRQ under test, the way
// Variant says, and destroys it at once when it was created. Its
// observation is the errno the create set, 0 on success (rules CREATE-MAX,
// CREATE-EX).
type CreateOther struct {
	MaxWR, MaxSGE uint32
	Variant       CreateVariant `json:",omitempty"`
}

// CreateQP creates a QP of the given type attached to the SRQ, in RESET,
// together with a connected peer that can send to it, asking for the
// receive caps RecvCaps says. QPs are numbered from 0 in creation order; a
// create that fails makes none.
type CreateQP struct {
	Type     QPType
	RecvCaps RecvCaps `json:",omitempty"`
}

// Post is ibv_post_srq_recv with a list of WRs.
type Post struct{ WRs []WR }

// PostRecv is ibv_post_recv on an attached QP's own receive queue.
type PostRecv struct {
	QP int
	WR WR
}

// Query is ibv_query_srq.
type Query struct{}

// Arm is ibv_modify_srq with IBV_SRQ_LIMIT. Limit 0 disarms.
type Arm struct{ Limit uint32 }

// Resize is ibv_modify_srq with IBV_SRQ_MAX_WR. No driver writes the new
// size back; a Query afterwards reads it.
type Resize struct{ MaxWR uint32 }

// ModifyQP is ibv_modify_qp to a new state.
type ModifyQP struct {
	QP    int
	State QPState
}

// Invalidate deregisters the memory region behind a key.
type Invalidate struct{ Key int }

// Arrive is the peer sending one message to a QP. With FirstPacketOnly the
// message's first packet arrives and the rest is held back until
// ArriveRest, so the QP is left filling a WR.
type Arrive struct {
	QP              int
	Msg             Message
	FirstPacketOnly bool
}

// ArriveRest delivers the rest of a message a QP is filling.
type ArriveRest struct{ QP int }

// Poll polls the receive CQ for up to Max completions (0: all) and collects
// every pending asynchronous event. Scope narrows it to one of the two, as
// a concurrent history reads them: from different threads, at different
// times (package linearize).
type Poll struct {
	Max   int
	Scope PollScope `json:",omitempty"`
}

// PollScope says what a Poll reads.
type PollScope uint8

// The scopes of a Poll.
const (
	// PollAll reads completions and every pending event: an event the
	// model raised must have come.
	PollAll PollScope = iota
	// PollCQ reads completions only; events stay pending.
	PollCQ
	// PollEventsArrived reads the events that have come so far: any
	// sub-multiset of the pending events (the rest may still be on their
	// way), and nothing the model did not raise.
	PollEventsArrived
)

// DestroyQP is ibv_destroy_qp on an attached QP (and its peer). The QP's
// number is not reused; a destroyed QP takes no further operation.
type DestroyQP struct{ QP int }

// DestroySRQ is ibv_destroy_srq on the SRQ under test. It fails, leaving
// the SRQ as it was, while a QP is attached (rule DESTROY-BUSY); once it
// succeeds only polls of the CQ, which outlives the SRQ, remain.
type DestroySRQ struct{}

// InjectSRQError puts the SRQ in its error state, as a device does on a
// catastrophic error.
type InjectSRQError struct{}

// InjectSQE moves an RTS QP to SQE, as a device does on a send error.
type InjectSQE struct{ QP int }

// Name implementations.
func (CreateSRQ) Name() string      { return "create_srq" }
func (CreateQP) Name() string       { return "create_qp" }
func (Post) Name() string           { return "post_srq_recv" }
func (PostRecv) Name() string       { return "post_recv" }
func (Query) Name() string          { return "query_srq" }
func (Arm) Name() string            { return "modify_srq(LIMIT)" }
func (Resize) Name() string         { return "modify_srq(MAX_WR)" }
func (ModifyQP) Name() string       { return "modify_qp" }
func (Invalidate) Name() string     { return "dereg_mr" }
func (Arrive) Name() string         { return "arrive" }
func (ArriveRest) Name() string     { return "arrive_rest" }
func (Poll) Name() string           { return "poll" }
func (CreateOther) Name() string    { return "create_srq(other)" }
func (DestroyQP) Name() string      { return "destroy_qp" }
func (DestroySRQ) Name() string     { return "destroy_srq" }
func (InjectSRQError) Name() string { return "inject_srq_error" }
func (InjectSQE) Name() string      { return "inject_sqe" }

func (o CreateSRQ) String() string {
	s := fmt.Sprintf("create_srq max_wr=%d max_sge=%d srq_limit=%d", o.MaxWR, o.MaxSGE, o.Limit)
	if o.Variant != CreatePlain {
		s += " via " + o.Variant.String()
	}
	return s
}
func (o CreateOther) String() string {
	return fmt.Sprintf("create another SRQ max_wr=%d max_sge=%d via %s, destroyed at once", o.MaxWR, o.MaxSGE, o.Variant)
}
func (o CreateQP) String() string {
	if o.RecvCaps != RecvCapsZero {
		return "create_qp " + o.Type.String() + " " + o.RecvCaps.String()
	}
	return "create_qp " + o.Type.String()
}
func (o Post) String() string {
	// Appended, not formatted: the harness writes every step's operation
	// into its trace, and a post's text was a tenth of a run's time.
	b := append(make([]byte, 0, 64), "post_srq_recv ["...)
	for i, w := range o.WRs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = w.appendText(b)
	}
	return string(append(b, ']'))
}
func (o PostRecv) String() string { return fmt.Sprintf("post_recv qp%d %s", o.QP, o.WR) }
func (Query) String() string      { return "query_srq" }
func (o Arm) String() string      { return fmt.Sprintf("modify_srq srq_limit=%d", o.Limit) }
func (o Resize) String() string   { return fmt.Sprintf("modify_srq max_wr=%d", o.MaxWR) }
func (o ModifyQP) String() string { return fmt.Sprintf("modify_qp qp%d -> %s", o.QP, o.State) }
func (o Invalidate) String() string {
	return fmt.Sprintf("dereg_mr key%d", o.Key)
}
func (o Arrive) String() string {
	s := fmt.Sprintf("arrive qp%d %s len=%d", o.QP, o.Msg.Opcode, o.Msg.Len)
	if o.Msg.Opcode.HasImm() {
		s += fmt.Sprintf(" imm=%#x", o.Msg.Imm)
	}
	if o.FirstPacketOnly {
		s += " (first packet only)"
	}
	return s
}
func (o ArriveRest) String() string { return fmt.Sprintf("arrive_rest qp%d", o.QP) }
func (o Poll) String() string {
	switch o.Scope {
	case PollCQ:
		return fmt.Sprintf("poll cq max=%d", o.Max)
	case PollEventsArrived:
		return "poll events"
	}
	return fmt.Sprintf("poll max=%d", o.Max)
}
func (o DestroyQP) String() string    { return fmt.Sprintf("destroy_qp qp%d", o.QP) }
func (DestroySRQ) String() string     { return "destroy_srq" }
func (InjectSRQError) String() string { return "inject_srq_error" }
func (o InjectSQE) String() string    { return fmt.Sprintf("inject_sqe qp%d", o.QP) }

func (w WR) String() string { return string(w.appendText(nil)) }

// appendText appends w's String to b.
func (w WR) appendText(b []byte) []byte {
	b = append(append(b, "wr"...), WRIDText(w.ID)...)
	if w.NumSGE != len(w.SGEs) {
		b = strconv.AppendInt(append(b, " num_sge="...), int64(w.NumSGE), 10)
	}
	b = append(b, '{')
	for i, s := range w.SGEs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendUint(b, uint64(s.Length), 10)
		b = strconv.AppendInt(append(b, "@key"...), int64(s.Key), 10)
	}
	return append(b, '}')
}

// WRIDText writes a wr_id for a reader: in decimal up to 2^32, else in hex
// in groups of four digits (0xe0e0_0000_0000_0000), where its pattern
// shows and its digits can be compared.
func WRIDText(id uint64) string {
	if id < 1<<32 {
		return strconv.FormatUint(id, 10)
	}
	h := fmt.Sprintf("%016x", id)
	return "0x" + h[0:4] + "_" + h[4:8] + "_" + h[8:12] + "_" + h[12:16]
}

// Observation is everything an operation lets an observer see. Fields an
// operation does not produce stay zero; BadWR is -1 when there is none.
type Observation struct {
	Errno       int          `json:"errno"`
	BadWR       int          `json:"bad_wr"`
	Attr        SRQAttr      `json:"attr"`
	Peer        PeerStatus   `json:"peer"`
	Completions []Completion `json:"completions,omitempty"`
	Events      []Event      `json:"events,omitempty"`
	// Killed names the signal that killed the process making the call
	// (a driver that knows a call can crash makes it in a child process
	// and reports how that child ended); "" when the call returned.
	Killed string `json:"killed,omitempty"`
	// Crashed says the call did not return: a driver written in Go
	// panicked in it (the panic's value, as text). Nothing else of the
	// observation was seen, and the trace ends with the call.
	Crashed string `json:"crashed,omitempty"`
	// Failed says the call returned the driver's own failure
	// (drivers.ErrCallFailed: an object it holds closed that the caller
	// has not closed, a message it holds half delivered that the caller
	// finished), as text. As with Crashed, nothing else was seen, and the
	// trace ends with the call.
	Failed string `json:"failed,omitempty"`
}

// Ended says the call neither returned a result nor was refused: the
// driver crashed in it or failed it (Crashed, Failed).
func (o Observation) Ended() bool { return o.Crashed != "" || o.Failed != "" }

// Describe prints the parts of an observation that matter for op.
func (o Observation) Describe(op Op) string {
	if o.Killed != "" {
		return "the process making the call was killed by " + o.Killed
	}
	if o.Crashed != "" {
		return "the driver crashed in the call: " + o.Crashed
	}
	if o.Failed != "" {
		return "the driver failed the call: " + o.Failed
	}
	switch op.(type) {
	case Post, PostRecv:
		if o.Errno == 0 {
			return "0"
		}
		return fmt.Sprintf("%s, bad_wr=%d%s", ErrnoName(o.Errno), o.BadWR, badWRName(op, o.BadWR))
	case CreateSRQ, Query:
		if o.Errno != 0 {
			return ErrnoName(o.Errno)
		}
		return "0, " + o.Attr.String()
	case Arrive, ArriveRest:
		return "peer " + o.Peer.String()
	case Poll:
		return fmt.Sprintf("completions %v, events %v", o.Completions, o.Events)
	}
	return ErrnoName(o.Errno)
}

// badWRName names the WR a post's bad_wr index points at, as " (wrN)", the
// way the model's expectation does; "" when it points at none.
func badWRName(op Op, i int) string {
	var wrs []WR
	switch o := op.(type) {
	case Post:
		wrs = o.WRs
	case PostRecv:
		wrs = []WR{o.WR}
	}
	if i < 0 || i >= len(wrs) {
		return ""
	}
	return " (wr" + WRIDText(wrs[i].ID) + ")"
}
