package emu

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Switch names one switchable departure of the emulator from the
// documented SRQ semantics (a "deviation" on the command line: -deviations,
// srqconform deviations). A behaviour plays a choice a real driver makes;
// a mutant breaks a rule on purpose so that the suite can be shown to catch
// it. Switches that take a value carry it after "=", as in
// "oversize-rc-status=2"; see Switch.With.
//
// It is not model.Deviation, the error a model step returns when a device
// departs from the profile it is held to.
type Switch string

// Kinds of switch, as SwitchInfo.Kind reports them.
const (
	KindBehaviour = "behaviour"
	KindMutant    = "mutant"
)

// Behaviours: choices real drivers make.
const (
	ErrnoNegative            Switch = "errno-negative"
	ErrnoMinusOne            Switch = "errno-minus-one"
	CheckSGEFirst            Switch = "check-sge-first"
	SGEAgainstDevice         Switch = "sge-against-device"
	RejectZeroSGE            Switch = "reject-zero-sge"
	CapacityPow2             Switch = "capacity-pow2"
	CapacityHidden           Switch = "capacity-hidden"
	QueryTwice               Switch = "query-twice"
	QueryUnsupported         Switch = "query-unsupported"
	FreeAtPoll               Switch = "free-at-poll"
	LimitAtCreate            Switch = "limit-at-create"
	LimitBoundStrict         Switch = "limit-bound-strict"
	ArmFiresAtOnce           Switch = "arm-fires-at-once"
	LimitKept                Switch = "limit-kept"
	ZeroLengthZero           Switch = "zero-length-zero"
	BufferBeforeRTR          Switch = "buffer-before-rtr"
	OversizeRCStatus         Switch = "oversize-rc-status"
	OversizeUDStatus         Switch = "oversize-ud-status"
	OversizeUDKills          Switch = "oversize-ud-kills"
	KeyCheckTouched          Switch = "key-check-touched"
	KeyErrorStatus           Switch = "key-error-status"
	KeyErrorUDKills          Switch = "key-error-ud-kills"
	ResizeUnsupported        Switch = "resize-unsupported"
	ResizeBelowLimitRejected Switch = "resize-below-limit-rejected"
	NoLastWQE                Switch = "no-last-wqe"
	ErrorEvents              Switch = "error-events"
	NoFlush                  Switch = "no-flush"
	NoUD                     Switch = "no-ud"
	PostRecvBadWRNull        Switch = "post-recv-badwr-null"
	LastWQEPerPacket         Switch = "last-wqe-per-packet"
	CapacityPow2Unreported   Switch = "capacity-pow2-unreported"
	NoCreateSRQEx            Switch = "no-create-srq-ex"
	RecvWRChecked            Switch = "recv-wr-checked"
	RecvCapsChecked          Switch = "recv-caps-checked"
	EmptyTerminates          Switch = "empty-terminates"
)

// Mutants: deliberate rule violations.
const (
	PostAllOrNothing        Switch = "post-all-or-nothing"
	BadWROffByOne           Switch = "badwr-off-by-one"
	CapacityOneShort        Switch = "capacity-one-short"
	CapacityOneOver         Switch = "capacity-one-over"
	SGEOffByOne             Switch = "sge-off-by-one"
	NegativeSGEAccepted     Switch = "negative-sge-accepted"
	KeepCallerWR            Switch = "keep-caller-wr"
	PostRecvAccepted        Switch = "post-recv-accepted"
	PostRecvKills           Switch = "post-recv-kills"
	NegativeSGEKills        Switch = "negative-sge-kills"
	FatalOnModify           Switch = "fatal-on-modify"
	PostChecksKey           Switch = "post-checks-key"
	PostRefusedInErr        Switch = "post-refused-in-err"
	CreateReportsLess       Switch = "create-reports-less"
	QueryWrongSGE           Switch = "query-wrong-sge"
	QueryLimitStale         Switch = "query-limit-stale"
	LimitZeroKeeps          Switch = "limit-zero-keeps"
	LimitBoundMissing       Switch = "limit-bound-missing"
	LimitAtEqual            Switch = "limit-at-equal"
	LimitNever              Switch = "limit-never"
	LimitNotDisarmed        Switch = "limit-not-disarmed"
	LimitReadsArmed         Switch = "limit-reads-armed"
	ResizeIgnoresCount      Switch = "resize-ignores-count"
	ResizeNoChange          Switch = "resize-no-change"
	ResizeClearsLimit       Switch = "resize-clears-limit"
	ResizeAlwaysFails       Switch = "resize-always-fails"
	ResizeAcceptsZero       Switch = "resize-accepts-zero"
	TransitionsLax          Switch = "transitions-lax"
	InitFetches             Switch = "init-fetches"
	ErrFetches              Switch = "err-fetches"
	SQDNoFetch              Switch = "sqd-no-fetch"
	SQENoFetch              Switch = "sqe-no-fetch"
	LastWQETwice            Switch = "last-wqe-twice"
	FlushSuccess            Switch = "flush-success"
	SRQErrorFetches         Switch = "srq-error-fetches"
	SRQErrorSilent          Switch = "srq-error-silent"
	LIFO                    Switch = "lifo"
	DoubleComplete          Switch = "double-complete"
	WriteConsumes           Switch = "write-consumes"
	WriteImmNoConsume       Switch = "write-imm-no-consume"
	WrongByteLen            Switch = "wrong-byte-len"
	WrongQP                 Switch = "wrong-qp"
	WRIDTruncated           Switch = "wrid-truncated"
	ImmDropped              Switch = "imm-dropped"
	WriteImmScatters        Switch = "write-imm-scatters"
	FitStrict               Switch = "fit-strict"
	NumSGE0FitsOne          Switch = "numsge0-fits-one"
	UDNoGRH                 Switch = "ud-no-grh"
	OversizeTruncates       Switch = "oversize-truncates"
	OversizeRCSurvives      Switch = "oversize-rc-survives"
	BadKeyIgnored           Switch = "bad-key-ignored"
	RNRSilent               Switch = "rnr-silent"
	SlotLeak                Switch = "slot-leak"
	DestroyIgnoresQPs       Switch = "destroy-ignores-qps"
	CreateAboveMaxAccepted  Switch = "create-above-max-accepted"
	CreateAtMaxRefused      Switch = "create-at-max-refused"
	CreateExBadTypeAccepted Switch = "create-ex-bad-type-accepted"
	QPChecksRecvSGE         Switch = "qp-checks-recv-sge"
)

// With returns d carrying the value n ("oversize-rc-status=2"). Only the
// switches whose SwitchInfo.Description says they take a value accept
// one.
// rule: none (the deviation switches)
func (d Switch) With(n int) Switch {
	return Switch(fmt.Sprintf("%s=%d", d.base(), n))
}

// base is the name without any "=value".
// rule: none (the deviation switches)
func (d Switch) base() Switch {
	if i := strings.IndexByte(string(d), '='); i >= 0 {
		return d[:i]
	}
	return d
}

// SwitchInfo describes one switch in the catalogue.
type SwitchInfo struct {
	Name Switch
	// Kind is KindBehaviour or KindMutant.
	Kind string
	// Rule is, for a mutant, the ID of the rule it breaks; for a behaviour,
	// "profile:" and the name of the model.Profile field whose value it
	// plays, "rule:" and the ID of the rule whose latitude it uses, or
	// "info:" and the drivers.Info field it clears (a capability the
	// device lacks, which no profile field holds). labels_test.go checks
	// every name.
	Rule        string
	Description string
	// Also lists, for a mutant that truly breaks more than one rule, the
	// other rules it breaks.
	Also []string
}

// Breaks returns every rule a mutant breaks: Rule, then Also.
// rule: none (the deviation switches)
func (d SwitchInfo) Breaks() []string { return append([]string{d.Rule}, d.Also...) }

// valued lists the deviations that take a value, with the value the bare
// name stands for (the one the newest rxe uses).
var valued = map[Switch]int{
	OversizeRCStatus: 2,
	OversizeUDStatus: 9,
	KeyErrorStatus:   2,
}

var baseCatalogue = []SwitchInfo{
	{ErrnoNegative, KindBehaviour, "profile:PostErrno", "siw: post verbs return -errno instead of errno", nil},
	{ErrnoMinusOne, KindBehaviour, "profile:PostErrno", "mlx4: post verbs return -1 instead of errno", nil},
	{CheckSGEFirst, KindBehaviour, "profile:CheckOrder", "mlx5: num_sge is checked before the full queue, so a WR failing both gets EINVAL", nil},
	{SGEAgainstDevice, KindBehaviour, "profile:SGELimit", "siw: num_sge is checked against the device maximum 6, not the SRQ's max_sge", nil},
	{RejectZeroSGE, KindBehaviour, "profile:ZeroSGE", "siw: a WR with num_sge 0 is rejected with EINVAL", nil},
	{CapacityPow2, KindBehaviour, "profile:Capacity", "rxe, mlx5: create and resize report and hold roundup_pow2(max_wr+1)-1 WRs; resize rejects only if that rounded capacity is below the outstanding count", nil},
	{CapacityHidden, KindBehaviour, "profile:Capacity", "siw: create reports the requested max_wr but the ring holds roundup_pow2(max_wr)", nil},
	{QueryTwice, KindBehaviour, "profile:Query", "mlx5: query reports max_wr as 2*capacity+1", nil},
	{QueryUnsupported, KindBehaviour, "profile:Query", "siw: query returns EOPNOTSUPP (95)", nil},
	{FreeAtPoll, KindBehaviour, "profile:SlotFree", "mlx5: a fetched WQE's slot frees only when its completion is polled", nil},
	{LimitAtCreate, KindBehaviour, "profile:LimitAtCreate", "rxe: a non-zero srq_limit at create arms the limit", nil},
	{LimitBoundStrict, KindBehaviour, "profile:LimitBound", "a limit >= capacity is rejected with EINVAL, not only > capacity (mlx4/mlx5 compare against their internal size)", nil},
	{ArmFiresAtOnce, KindBehaviour, "profile:ArmBelow", "arming with a limit above the outstanding count raises the limit event at once and disarms", nil},
	{LimitKept, KindBehaviour, "profile:LimitAfterFire", "siw: after the limit event the SRQ is disarmed but query still reads the old limit", nil},
	{ZeroLengthZero, KindBehaviour, "profile:ZeroLength", "rxe, siw: an SGE of length 0 holds 0 bytes, not 2^31", nil},
	{BufferBeforeRTR, KindBehaviour, "profile:BeforeRTR", "mlx5: messages arriving in RESET or INIT are buffered (peer status 0) and processed on reaching RTR; moving to RESET or ERR discards them", nil},
	{OversizeRCStatus, KindBehaviour, "profile:OversizeRCStatus", "takes a value (oversize-rc-status=N, bare name N=2): an RC message larger than the WQE completes with status N instead of LOC_LEN_ERR; rxe 2, mlx5 1", nil},
	{OversizeUDStatus, KindBehaviour, "profile:OversizeUDStatus", "takes a value (oversize-ud-status=N, bare name N=9): a UD message larger than the WQE completes with status N instead of LOC_LEN_ERR; rxe 9, rxe-6.1 2, mlx5 1", nil},
	{OversizeUDKills, KindBehaviour, "profile:OversizeUDQP", "rxe-6.1: a UD message larger than the WQE moves the UD QP to ERR", nil},
	{KeyCheckTouched, KindBehaviour, "profile:KeyCheck", "rxe: only SGEs that bytes land in have their key checked (empty SGEs and 0-byte messages check none)", nil},
	{KeyErrorStatus, KindBehaviour, "profile:KeyErrorStatus", "takes a value (key-error-status=N, bare name N=2): an invalid key completes with status N instead of LOC_PROT_ERR; rxe 2", nil},
	{KeyErrorUDKills, KindBehaviour, "profile:KeyErrorUDQP", "rxe: an invalid key on a UD QP moves it to ERR", nil},
	{ResizeUnsupported, KindBehaviour, "profile:Resize", "mlx5, siw: resize returns EINVAL and Info().SRQResize is false", nil},
	{ResizeBelowLimitRejected, KindBehaviour, "profile:ResizeBelowLimit", "rxe: resize to a max_wr below the armed limit returns EINVAL", nil},
	{NoLastWQE, KindBehaviour, "profile:LastWQE", "rxe-6.1: entering ERR raises no QP_LAST_WQE_REACHED event", nil},
	{ErrorEvents, KindBehaviour, "profile:ErrorEvent", "siw: a receive error that moves an RC QP to ERR raises QP_FATAL (message too long) or QP_ACCESS_ERR (bad key)", nil},
	{PostRecvBadWRNull, KindBehaviour, "profile:PostRecvBadWR", "rxe: ibv_post_recv on an SRQ-attached QP returns EINVAL with bad_wr not set", nil},
	{LastWQEPerPacket, KindBehaviour, "profile:LastWQERepeat", "rxe >= 6.5: every packet reaching a QP in ERR raises QP_LAST_WQE_REACHED again (two per RC send: the peer retries once), as does modify ERR->ERR", nil},
	{CapacityPow2Unreported, KindBehaviour, "profile:Capacity", "rxe-6.1: create reports the requested max_wr but holds roundup_pow2(max_wr+1)-1; query reports the held number", nil},
	{NoFlush, KindBehaviour, "profile:FlushInProgress", "rxe >= 6.4: a WQE being filled when the QP enters ERR vanishes without a completion", nil},
	{NoUD, KindBehaviour, "info:UD", "siw: no UD QPs (Info().UD false, CreateQP(UD) fails)", nil},
	{RecvWRChecked, KindBehaviour, "profile:QPRecvCaps", "mlx5: a QP created with the SRQ and max_recv_wr above max_qp_wr fails with EINVAL (max_recv_sge is ignored)", nil},
	{EmptyTerminates, KindBehaviour, "profile:EmptySRQRC", "siw: a consuming message meeting an empty SRQ on RC terminates the connection: the peer sees an error and the QP enters ERR (iWARP has no RNR)", nil},
	{RecvCapsChecked, KindBehaviour, "profile:QPRecvCaps", "siw: a QP created with the SRQ and max_recv_wr or max_recv_sge above the device's limits fails with EINVAL", nil},
	{NoCreateSRQEx, KindBehaviour, "rule:CREATE-EX", "rxe, siw: the provider has no create_srq_ex, so an ibv_create_srq_ex with the CQ bit or an unknown srq_type fails with EOPNOTSUPP (mlx5: the CQ is ignored, the type is EINVAL)", nil},

	{PostAllOrNothing, KindMutant, "POST-ORDER", "a failing list posts nothing", nil},
	{BadWROffByOne, KindMutant, "POST-BADWR", "bad_wr is reported one past the failing WR", nil},
	{CapacityOneShort, KindMutant, "POST-FULL", "ENOMEM once capacity-1 slots are in use", nil},
	{CapacityOneOver, KindMutant, "POST-FULL", "capacity+1 WRs can be outstanding", nil},
	{SGEOffByOne, KindMutant, "POST-SGE", "num_sge == max_sge+1 is accepted", nil},
	{NegativeSGEAccepted, KindMutant, "POST-SGE", "a negative num_sge is posted as 0 SGEs", nil},
	{KeepCallerWR, KindMutant, "POST-COPY", "the slot keeps a reference to the caller's WR and reads wr_id and SGEs at fetch time", nil},
	{PostRecvAccepted, KindMutant, "POST-QP-RQ", "PostRecv on an SRQ-attached QP returns 0", nil},
	{PostRecvKills, KindMutant, "POST-QP-RQ", "PostRecv on an SRQ-attached QP kills the process (SIGFPE, as libsiw's does), reported as a real driver reports it from a child process", nil},
	{NegativeSGEKills, KindMutant, "POST-SGE", "a post with a negative num_sge kills the process (SIGSEGV, as libsiw's memcpy does), reported as a real driver reports it from a child process", nil},
	{FatalOnModify, KindMutant, "QP-ERROR-EVENT", "a QP the application moves to ERR raises QP_FATAL, though no error occurred", nil},
	{PostChecksKey, KindMutant, "POST-NO-KEY-CHECK", "post fails EINVAL on an SGE naming an invalidated key", nil},
	{PostRefusedInErr, KindMutant, "POST-ANY-STATE", "post fails EINVAL while any QP is in ERR", nil},
	{CreateReportsLess, KindMutant, "CREATE-ATTR", "create reports max_wr-1 when max_wr > 1", nil},
	{QueryWrongSGE, KindMutant, "QUERY-ATTR", "query reports max_sge+1", nil},
	{QueryLimitStale, KindMutant, "QUERY-LIMIT", "query reports the first limit ever armed", nil},
	{LimitZeroKeeps, KindMutant, "LIMIT-DISARM", "ModifyLimit(0) returns 0 but the limit stays armed", nil},
	{LimitBoundMissing, KindMutant, "LIMIT-BOUND", "any limit is accepted", nil},
	{LimitAtEqual, KindMutant, "LIMIT-FIRE", "the limit fires when the count is <= the limit", nil},
	{LimitNever, KindMutant, "LIMIT-FIRE", "the limit never fires", nil},
	{LimitNotDisarmed, KindMutant, "LIMIT-ONCE", "the limit fires at every fetch below it (query reads 0 after the first)", nil},
	{LimitReadsArmed, KindMutant, "LIMIT-AFTER-FIRE", "after firing the limit stays armed and reads its value", []string{"LIMIT-ONCE"}},
	{ResizeIgnoresCount, KindMutant, "RESIZE-BELOW-COUNT", "resize below the outstanding count is accepted and drops the newest WQEs", nil},
	{ResizeNoChange, KindMutant, "RESIZE-CAPACITY", "resize returns 0 but the capacity is unchanged", nil},
	{ResizeClearsLimit, KindMutant, "MODIFY-ONLY-MASKED", "resize disarms the limit", nil},
	{ResizeAlwaysFails, KindMutant, "RESIZE-OPTIONAL", "resize returns EINVAL though SRQResize is advertised", nil},
	{ResizeAcceptsZero, KindMutant, "RESIZE-BOUNDS", "resize to 0 is accepted", nil},
	{TransitionsLax, KindMutant, "QP-TRANSITIONS", "RTS->RTR and RESET->RTR are accepted", nil},
	{InitFetches, KindMutant, "QP-NOFETCH-STATES", "a QP in INIT fetches WQEs", nil},
	{ErrFetches, KindMutant, "QP-NOFETCH-STATES", "a QP in ERR fetches WQEs", nil},
	{SQDNoFetch, KindMutant, "QP-FETCH-STATES", "a QP in SQD fetches nothing (messages dropped as in RESET)", nil},
	{SQENoFetch, KindMutant, "QP-FETCH-STATES", "a QP in SQE fetches nothing (messages dropped as in RESET)", nil},
	{LastWQETwice, KindMutant, "QP-LAST-WQE", "entering ERR raises QP_LAST_WQE_REACHED twice", nil},
	{FlushSuccess, KindMutant, "QP-FLUSH-INPROGRESS", "the WQE being filled when the QP enters ERR completes with SUCCESS", nil},
	{SRQErrorFetches, KindMutant, "SRQ-ERR-NOFETCH", "an SRQ in error still hands out WQEs", nil},
	{SRQErrorSilent, KindMutant, "SRQ-ERR-EVENT", "entering SRQ error raises no event", nil},
	{LIFO, KindMutant, "FETCH-FIFO", "the newest WQE is fetched first", nil},
	{DoubleComplete, KindMutant, "FETCH-ONCE", "every 3rd successful completion is written twice", nil},
	{WriteConsumes, KindMutant, "FETCH-OPCODES", "an RDMA Write consumes a WQE and completes it", nil},
	{WriteImmNoConsume, KindMutant, "FETCH-OPCODES", "an RDMA Write with immediate consumes nothing", nil},
	{WrongByteLen, KindMutant, "RECV-COMPLETION", "byte_len is the WQE's capacity", nil},
	{WrongQP, KindMutant, "RECV-COMPLETION", "every completion names QP 0", nil},
	{WRIDTruncated, KindMutant, "RECV-COMPLETION", "completions carry only the low 32 bits of wr_id", nil},
	{ImmDropped, KindMutant, "RECV-IMM", "a Send with immediate completes without the immediate", nil},
	{WriteImmScatters, KindMutant, "RECV-WRITE-IMM", "a Write with immediate must fit the WQE like a Send", nil},
	{FitStrict, KindMutant, "RECV-FIT", "a message must be shorter than the WQE's capacity (len == capacity fails)", nil},
	{NumSGE0FitsOne, KindMutant, "RECV-NUMSGE0", "a WQE with no SGEs takes a 1-byte message", nil},
	{UDNoGRH, KindMutant, "UD-GRH", "UD receives need no 40 bytes for the GRH and byte_len excludes them", nil},
	{OversizeTruncates, KindMutant, "RECV-TOO-LARGE", "a message larger than the WQE completes with SUCCESS and byte_len = capacity", nil},
	{OversizeRCSurvives, KindMutant, "RECV-TOO-LARGE", "an RC QP stays in its state after a too-large message", nil},
	{BadKeyIgnored, KindMutant, "RECV-BAD-KEY", "invalidated keys are not checked at receive", nil},
	{RNRSilent, KindMutant, "RECV-RNR", "an RC peer gets status 0 when the SRQ is empty", nil},
	{SlotLeak, KindMutant, "SLOT-FREE", "every 4th fetched WQE's slot never frees", nil},
	{DestroyIgnoresQPs, KindMutant, "DESTROY-BUSY", "ibv_destroy_srq succeeds while QPs are attached", nil},
	{CreateAboveMaxAccepted, KindMutant, "CREATE-MAX", "creating an SRQ above max_srq_wr or max_srq_sge succeeds", nil},
	{CreateAtMaxRefused, KindMutant, "CREATE-MAX", "creating an SRQ exactly at max_srq_wr and max_srq_sge fails with EINVAL", nil},
	{CreateExBadTypeAccepted, KindMutant, "CREATE-EX", "ibv_create_srq_ex with an unknown srq_type succeeds", nil},
	{QPChecksRecvSGE, KindMutant, "QP-SRQ-CAPS", "a QP created with the SRQ and max_recv_sge above max_sge fails with EINVAL, though max_recv_wr is ignored", nil},
}

// catalogue is every deviation: the base ones, the stateful and race
// mutants, then PeerGivesUp (the peer's, not the device's).
var catalogue = append(append(append(baseCatalogue, statefulCatalogue...), raceCatalogue...), silenceCatalogue...)

var byName = func() map[Switch]SwitchInfo {
	m := make(map[Switch]SwitchInfo, len(catalogue))
	for _, d := range catalogue {
		m[d.Name] = d
	}
	return m
}()

// Catalogue returns every deviation the emulator knows, the device's
// behaviours first, PeerGivesUp (its peer's) last.
// Each Name is usable as it stands; those that take a value stand for the
// value their Description gives.
// rule: none (the deviation switches)
func Catalogue() []SwitchInfo {
	return append([]SwitchInfo(nil), catalogue...)
}

// Sets returns the named behaviour sets that play real drivers: "rxe" (the
// newest rdma_rxe), "rxe-6.1", "mlx5" and "siw". Any of these names is also
// accepted wherever a deviation is.
// rule: none (the deviation switches)
func Sets() map[string][]Switch {
	rxeCommon := []Switch{
		PostRecvBadWRNull, LimitAtCreate, ZeroLengthZero, OversizeRCStatus.With(2),
		KeyCheckTouched, KeyErrorStatus.With(2), KeyErrorUDKills, ResizeBelowLimitRejected, NoCreateSRQEx,
	}
	clone := func(extra ...Switch) []Switch {
		return append(append([]Switch(nil), rxeCommon...), extra...)
	}
	return map[string][]Switch{
		"rxe":     append(clone(OversizeUDStatus.With(9), NoFlush, LastWQEPerPacket), CapacityPow2),
		"rxe-6.1": append(clone(OversizeUDStatus.With(2), OversizeUDKills, NoLastWQE), CapacityPow2Unreported),
		"mlx5": {
			CheckSGEFirst, CapacityPow2, QueryTwice, FreeAtPoll, BufferBeforeRTR,
			OversizeRCStatus.With(1), OversizeUDStatus.With(1), ResizeUnsupported, RecvWRChecked,
		},
		"siw": {
			ErrnoNegative, SGEAgainstDevice, RejectZeroSGE, CapacityHidden, QueryUnsupported,
			LimitKept, ZeroLengthZero, ResizeUnsupported, NoUD, NoCreateSRQEx, RecvCapsChecked,
			EmptyTerminates, LimitAtCreate, KeyErrorStatus.With(21), NoLastWQE, ErrorEvents, // 21: IBV_WC_GENERAL_ERR
		},
	}
}

// conflicts lists pairs of deviations that cannot both be on.
var conflicts = [][2]Switch{
	{ErrnoNegative, ErrnoMinusOne},
	{CapacityPow2, CapacityHidden},
	{CapacityPow2, CapacityPow2Unreported},
	{CapacityHidden, CapacityPow2Unreported},
}

// config is a resolved set of deviations.
type config struct {
	on     map[Switch]bool
	values map[Switch]int
}

// rule: none (the deviation switches)
func (c *config) has(d Switch) bool { return c.on[d] }

// value returns the value given to d, or def when d is off.
// rule: none (the deviation switches)
func (c *config) value(d Switch, def int) int {
	if !c.on[d] {
		return def
	}
	return c.values[d]
}

// names lists the deviations that are on, sorted, values included.
// rule: none (the deviation switches)
func (c *config) names() []string {
	var out []string
	for d := range c.on {
		if v, ok := c.values[d]; ok {
			out = append(out, string(d.With(v)))
		} else {
			out = append(out, string(d))
		}
	}
	sort.Strings(out)
	return out
}

// validNames is the list an unknown-name error quotes.
// rule: none (the deviation switches)
func validNames() string {
	var names []string
	for _, d := range catalogue {
		n := string(d.Name)
		if _, ok := valued[d.Name]; ok {
			n += "[=N]"
		}
		names = append(names, n)
	}
	var sets []string
	for s := range Sets() {
		sets = append(sets, s)
	}
	sort.Strings(sets)
	return "sets " + strings.Join(sets, ", ") + "; deviations " + strings.Join(names, ", ")
}

// resolve expands set names, parses values and checks for unknown names
// and conflicts. A later value for the same deviation replaces an earlier.
// rule: none (the deviation switches)
func resolve(devs []Switch) (*config, error) {
	c := &config{on: map[Switch]bool{}, values: map[Switch]int{}}
	sets := Sets()
	var add func(d Switch) error
	add = func(d Switch) error {
		d = Switch(strings.TrimSpace(string(d)))
		if d == "" {
			return nil
		}
		if set, ok := sets[string(d)]; ok {
			for _, e := range set {
				if err := add(e); err != nil {
					return err
				}
			}
			return nil
		}
		b := d.base()
		if _, ok := byName[b]; !ok {
			return fmt.Errorf("emu: unknown deviation %q; valid: %s", d, validNames())
		}
		def, takes := valued[b]
		if b != d {
			if !takes {
				return fmt.Errorf("emu: deviation %q takes no value, got %q", b, d)
			}
			v, err := strconv.Atoi(string(d[len(b)+1:]))
			if err != nil || v < 0 || v > 255 {
				return fmt.Errorf("emu: deviation %q: value must be a completion status 0..255, got %q", b, d[len(b)+1:])
			}
			def = v
		}
		c.on[b] = true
		if takes {
			c.values[b] = def
		}
		return nil
	}
	for _, d := range devs {
		if err := add(d); err != nil {
			return nil, err
		}
	}
	for _, p := range conflicts {
		if c.on[p[0]] && c.on[p[1]] {
			return nil, fmt.Errorf("emu: deviations %q and %q cannot both be on", p[0], p[1])
		}
	}
	return c, nil
}

// splitOption splits a comma-separated deviations option.
// rule: none (the deviation switches)
func splitOption(s string) []Switch {
	var out []Switch
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, Switch(f))
		}
	}
	return out
}
