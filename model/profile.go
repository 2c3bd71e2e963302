package model

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
)

// The value types of the profile's fields. Each is a string so that reports
// and JSON show the choice by name.
type (
	// ErrnoSign is how ibv_post_srq_recv and ibv_post_recv return an error.
	ErrnoSign string
	// CheckOrder is which check wins when a WR has too many SGEs and meets a
	// full queue.
	CheckOrder string
	// SGELimit is what num_sge is checked against when posting.
	SGELimit string
	// Acceptance says whether an input is accepted or rejected.
	Acceptance string
	// CapacityReport is how create reports max_wr.
	CapacityReport string
	// CapacityRule is how many WRs can really be outstanding.
	CapacityRule string
	// QueryRule is what ibv_query_srq does and reports for max_wr.
	QueryRule string
	// SlotFree is when a fetched WR's slot becomes free for posting again.
	SlotFree string
	// LimitAfterFire is what srq_limit reads after the limit event.
	LimitAfterFire string
	// ArmBelow is when the event fires if the limit is armed above the
	// current number of WRs.
	ArmBelow string
	// LimitBound is the largest limit ibv_modify_srq accepts.
	LimitBound string
	// ZeroLength is what an SGE length of 0 means.
	ZeroLength string
	// BeforeRTR is what happens to messages arriving at a QP in RESET or INIT.
	BeforeRTR string
	// Fate is what happens to the receiving QP after an error completion.
	Fate string
	// KeyCheck is which SGEs' keys are checked when a WR is filled.
	KeyCheck string
	// ResizeSupport is whether IBV_SRQ_MAX_WR works.
	ResizeSupport string
	// Raised says whether an event is raised.
	Raised string
	// BadWRReport is what bad_wr says when ibv_post_recv is refused.
	BadWRReport string
	// Repeat is how often an event may come for one cause.
	Repeat string
	// EmptyRC is what a consuming message meeting an empty SRQ on an RC
	// QP does.
	EmptyRC string
	// RecvCapsCheck is what ibv_create_qp does with cap.max_recv_wr and
	// cap.max_recv_sge when the QP is created with an SRQ.
	RecvCapsCheck string
)

// Values of the profile's fields.
const (
	ErrnoPositive ErrnoSign = "positive errno"
	ErrnoNegative ErrnoSign = "negative errno"
	ErrnoMinusOne ErrnoSign = "-1"

	FullFirst CheckOrder = "full queue checked first (ENOMEM)"
	SGEFirst  CheckOrder = "num_sge checked first (EINVAL)"

	SGEAgainstSRQ    SGELimit = "SRQ's reported max_sge"
	SGEAgainstDevice SGELimit = "device's max_srq_sge"

	Accepted Acceptance = "accepted"
	Rejected Acceptance = "rejected"

	ReportAtLeast   CapacityReport = "at least the request"
	ReportPow2Less1 CapacityReport = "roundup_pow2(max_wr+1)-1"
	ReportUnchanged CapacityReport = "not written back"

	CapacityExact   CapacityRule = "exactly the reported max_wr"
	CapacityAtLeast CapacityRule = "at least the reported max_wr"
	CapacityPow2    CapacityRule = "roundup_pow2(max_wr+1)-1, whatever is reported"

	QuerySame       QueryRule = "reports the created max_wr"
	QueryAtLeast    QueryRule = "reports at least the created max_wr"
	QueryENOSYS     QueryRule = "unsupported (ENOSYS)"
	QueryEOPNOTSUPP QueryRule = "unsupported (EOPNOTSUPP)"

	FreeAtFetch SlotFree = "at fetch"
	FreeAtPoll  SlotFree = "when the completion is polled"

	LimitReadsZero LimitAfterFire = "reads 0"
	LimitKept      LimitAfterFire = "keeps its value (disarmed)"

	FireAtNextFetch ArmBelow = "at the next fetch"
	FireAtOnce      ArmBelow = "at once, when armed"

	LimitUpToCapacity  LimitBound = "limit <= max_wr"
	LimitBelowCapacity LimitBound = "limit < max_wr"

	ZeroIs2GiB ZeroLength = "2^31 bytes"
	ZeroIsZero ZeroLength = "0 bytes"

	Dropped  BeforeRTR = "dropped"
	Buffered BeforeRTR = "buffered until RTR"

	ToErr     Fate = "QP moves to ERR"
	Unchanged Fate = "QP state unchanged"

	CheckAllSGEs     KeyCheck = "every SGE of the WR"
	CheckTouchedSGEs KeyCheck = "only SGEs the message reaches"

	ResizeAsAdvertised ResizeSupport = "as IBV_DEVICE_SRQ_RESIZE says"
	ResizeUnsupported  ResizeSupport = "unsupported"

	Raise   Raised = "raised"
	NoRaise Raised = "not raised"

	BadWRFirst BadWRReport = "bad_wr names the WR"
	BadWRNull  BadWRReport = "bad_wr not set"

	OncePerEntry Repeat = "once per entry into ERR"
	PerPacket    Repeat = "again for every packet reaching the QP in ERR"

	EmptyRNR       EmptyRC = "receiver-not-ready: the sender retries or fails with RNR, the QP stays up"
	EmptyTerminate EmptyRC = "the receiver terminates the connection: the sender's WRs end in error, the QP enters ERR"

	RecvCapsIgnored     RecvCapsCheck = "ignored"
	RecvCapsWRChecked   RecvCapsCheck = "max_recv_wr checked against max_qp_wr (EINVAL)"
	RecvCapsBothChecked RecvCapsCheck = "max_recv_wr and max_recv_sge checked against the device (EINVAL)"
)

// Note records where a profile field's value comes from.
type Note struct {
	Source   string
	Verified bool // someone ran a device and saw it
}

// Profile names every implementation-defined choice a driver makes. The
// documented semantics are Documented(); a driver conforms to a profile.
// Choices with more than one value are open: the model accepts each.
type Profile struct {
	Name        string
	Description string

	PostErrno   Choice[ErrnoSign]
	CheckOrder  Choice[CheckOrder]
	SGELimit    Choice[SGELimit]
	ZeroSGE     Choice[Acceptance] // num_sge == 0 on post
	NegativeSGE Choice[Acceptance] // num_sge < 0 on post

	CapacityReport Choice[CapacityReport]
	Capacity       Choice[CapacityRule]
	Query          Choice[QueryRule]
	SlotFree       Choice[SlotFree]

	LimitAtCreate  Choice[Acceptance] // accepted: a non-zero srq_limit at create arms
	LimitBound     Choice[LimitBound]
	ArmBelow       Choice[ArmBelow]
	LimitAfterFire Choice[LimitAfterFire]

	ZeroLength Choice[ZeroLength]
	BeforeRTR  Choice[BeforeRTR]

	// EmptySRQRC: a consuming message meeting an empty SRQ on RC.
	EmptySRQRC Choice[EmptyRC]

	OversizeRCStatus StatusSet
	OversizeRCQP     Choice[Fate]
	OversizeUDStatus StatusSet
	OversizeUDQP     Choice[Fate]

	KeyCheck       Choice[KeyCheck]
	KeyErrorStatus StatusSet
	KeyErrorRCQP   Choice[Fate]
	KeyErrorUDQP   Choice[Fate]

	Resize           Choice[ResizeSupport]
	ResizeBelowLimit Choice[Acceptance] // resize to fewer WRs than the armed limit

	PostRecvBadWR Choice[BadWRReport] // ibv_post_recv on an SRQ-attached QP
	// QPRecvCaps: the receive caps of a QP created with the SRQ.
	QPRecvCaps Choice[RecvCapsCheck]

	LastWQE         Choice[Raised] // IBV_EVENT_QP_LAST_WQE_REACHED on entering ERR
	LastWQERepeat   Choice[Repeat]
	FlushInProgress Choice[Raised] // a WR being filled completes with WR_FLUSH_ERR on ERR
	// ErrorEvent: an affiliated error event on an RC QP that a receive
	// error completion moves to ERR (QP_FATAL for a message too long,
	// QP_ACCESS_ERR for a bad key).
	ErrorEvent Choice[Raised]

	// Notes maps a field name to its source. Every field has one.
	Notes map[string]Note
}

// FieldNames lists the profile's choice fields in declaration order.
func FieldNames() []string {
	t := reflect.TypeFor[Profile]()
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name == "Name" || f.Name == "Description" || f.Name == "Notes" {
			continue
		}
		names = append(names, f.Name)
	}
	return names
}

// Field returns a field's value as text, for reports.
func (p Profile) Field(name string) string {
	v := reflect.ValueOf(p).FieldByName(name)
	if !v.IsValid() {
		return "?"
	}
	if c, ok := v.Interface().(choice); ok {
		return c.describe()
	}
	return fmt.Sprint(v.Interface())
}

// values returns the values a field allows, as text.
func (p Profile) values(name string) []string {
	if c, ok := reflect.ValueOf(p).FieldByName(name).Interface().(choice); ok {
		return c.texts()
	}
	return []string{p.Field(name)}
}

// OpenFields lists the fields whose choice allows more than one value.
func (p Profile) OpenFields() []string {
	var out []string
	v := reflect.ValueOf(p)
	for _, name := range FieldNames() {
		if c, ok := v.FieldByName(name).Interface().(choice); ok && c.width() > 1 {
			out = append(out, name)
		}
	}
	return out
}

// With returns p with field name taken from other, or an error when no
// such field exists.
func (p Profile) With(name string, other Profile) (Profile, error) {
	dst := reflect.ValueOf(&p).Elem().FieldByName(name)
	if !dst.IsValid() || name == "Name" || name == "Description" || name == "Notes" {
		return p, fmt.Errorf("profile has no field %q", name)
	}
	dst.Set(reflect.ValueOf(other).FieldByName(name))
	return p, nil
}

// Departures lists the fields where p allows only behaviours the documented
// profile does not: the declared deviations a device must show. A field
// that narrows a documented choice (one of several documented values, a
// status within a documented set, a capacity report that is at least the
// request), or that stays open to the documented value, is not a departure.
func (p Profile) Departures() []string {
	d := Documented()
	var out []string
	pv, dv := reflect.ValueOf(p), reflect.ValueOf(d)
	for _, name := range FieldNames() {
		switch a := pv.FieldByName(name).Interface().(type) {
		case StatusSet:
			if a&dv.FieldByName(name).Interface().(StatusSet) == 0 {
				out = append(out, name)
			}
		case Choice[CapacityReport]:
			// Every report rule gives at least the request.
		default:
			allowed := d.values(name)
			if !slices.ContainsFunc(p.values(name), func(v string) bool { return slices.Contains(allowed, v) }) {
				out = append(out, name)
			}
		}
	}
	return out
}

// Deviations lists the fields where p differs from the documented semantics.
func (p Profile) Deviations() []string {
	d := Documented()
	var out []string
	for _, name := range FieldNames() {
		if p.Field(name) != d.Field(name) {
			out = append(out, name)
		}
	}
	return out
}

// Expand returns one decided profile for every combination of the open
// choices in p. The model runs one candidate per decided profile.
func (p Profile) Expand() []Profile {
	out := []Profile{p}
	t := reflect.TypeFor[Profile]()
	for i := range t.NumField() {
		var next []Profile
		for _, q := range out {
			v := reflect.ValueOf(&q).Elem().Field(i)
			c, ok := v.Interface().(choice)
			if !ok || c.width() <= 1 {
				next = append(next, q)
				continue
			}
			for k := range c.width() {
				r := q
				reflect.ValueOf(&r).Elem().Field(i).Set(reflect.ValueOf(c.pick(k)))
				next = append(next, r)
			}
		}
		out = next
	}
	return out
}

// Profiles returns the named profiles, keyed by name.
func Profiles() map[string]Profile {
	m := map[string]Profile{}
	for _, p := range []Profile{Documented(), RXE(), RXE61(), MLX5(), SIW()} {
		m[p.Name] = p
	}
	return m
}

// ProfileNames returns the names of the named profiles, sorted, with the
// documented profile first.
func ProfileNames() []string {
	var names []string
	for n := range Profiles() {
		if n != "documented" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return append([]string{"documented"}, names...)
}

// ProfileByName returns a named profile.
func ProfileByName(name string) (Profile, error) {
	p, ok := Profiles()[name]
	if !ok {
		return Profile{}, fmt.Errorf("unknown profile %q: want one of %v", name, ProfileNames())
	}
	return p, nil
}
