package model

import (
	"errors"
	"fmt"
)

// Deviation is an observation the model does not allow.
type Deviation struct {
	// Rule is the rule whose check noticed the difference. Which rule the
	// device broke is the diagnosis's to say: see Diagnose.
	Rule RuleID
	What string // the part of the observation that differs
	Want string // what the model allows
	Got  string // what was observed

	step int         // the step (1-based) that deviated
	diag *diagSource // what Diagnose replays
	// want and got are the values dev was given, until fill formats
	// them into Want and Got: most deviations a relaxed model meets are
	// a candidate's, dropped unread, and formatting each one was a tenth
	// of a long diagnosis's time.
	want, got any
	lazy      bool
}

// fill formats the values dev was given into Want and Got, once. The
// model calls it on the deviation it returns (Model.advance), while
// the values it holds are still as they were at the check.
func (d *Deviation) fill() {
	if d.lazy {
		d.Want, d.Got, d.want, d.got, d.lazy = fmt.Sprint(d.want), fmt.Sprint(d.got), nil, nil, false
	}
}

func (d *Deviation) Error() string {
	d.fill()
	return fmt.Sprintf("[%s] %s = %s, wanted %s", d.Rule, d.What, d.Got, d.Want)
}

// ErrNotModelled is returned for an operation the model cannot predict under
// the profile (for example a negative num_sge on a provider that does not
// check it) or that is invalid in the current state (a harness error).
var ErrNotModelled = errors.New("operation not modelled")

func unmodelled(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrNotModelled, fmt.Sprintf(format, a...))
}

func dev(rule RuleID, what string, want, got any) *Deviation {
	return &Deviation{Rule: rule, What: what, want: want, got: got, lazy: true}
}

// step applies op. With got == nil it takes the canonical outcome and returns
// it; otherwise it checks got and advances as got determines. On error the
// machine must be discarded. The rule a Deviation names is the rule whose
// check noticed the difference; which rule the device broke is the
// diagnosis's to say (Diagnose).
func (m *machine) step(op Op, got *Observation) (Observation, error) {
	m.readyInErr = 0
	if _, ok := op.(CreateSRQ); !ok && !m.created {
		return Observation{}, unmodelled("%s before create_srq", op.Name())
	}
	if _, ok := op.(Poll); !ok && m.destroyed {
		return Observation{}, unmodelled("%s after destroy_srq succeeded", op.Name())
	}
	if got != nil && got.Ended() {
		return m.crashed(op, got)
	}
	switch o := op.(type) {
	case CreateSRQ:
		return m.createSRQ(o, got)
	case CreateQP:
		return m.createQP(o, got)
	case Post:
		return m.post(o, got)
	case PostRecv:
		return m.postRecv(o, got)
	case Query:
		return m.query(got)
	case Arm:
		return m.arm(o, got)
	case Resize:
		obs, err := m.resizeSRQ(o, got)
		if err == nil && got != nil && got.Errno != 0 {
			m.failedTouched(RuleModifyOnlyMasked)
		}
		return obs, err
	case ModifyQP:
		return m.modifyQP(o, got)
	case Invalidate:
		if o.Key < 0 || o.Key >= len(m.keys) {
			return Observation{}, unmodelled("key %d out of range", o.Key)
		}
		m.keys[o.Key] = false
		return m.plainResult(RuleRecvBadKey, 0, got)
	case Arrive:
		return m.arrive(o, got)
	case ArriveRest:
		return m.arriveRest(o, got)
	case Poll:
		return m.poll(o, got)
	case CreateOther:
		return m.createOther(o, got)
	case DestroyQP:
		return m.destroyQP(o, got)
	case DestroySRQ:
		return m.destroySRQ(got)
	case InjectSRQError:
		m.touch(RuleSRQErrEvent)
		if !m.srqErr && m.relaxedBroad(RuleSRQErrEvent) && m.may(RuleSRQErrEvent) {
			// SRQ-ERR-EVENT governs the entry into the error state the
			// event marks: relaxed, the SRQ may not have entered it at
			// all, so no event comes and fetching goes on.
			return m.plainResult(RuleSRQErrEvent, 0, got)
		}
		if !m.srqErr { // the event marks entering the error state
			m.srqErr = true
			m.fire(EventSRQErr, -1)
		}
		return m.plainResult(RuleSRQErrEvent, 0, got)
	case InjectSQE:
		if err := m.checkQP(o.QP); err != nil {
			return Observation{}, err
		}
		if s := m.qps.at(o.QP).state; s != RTS {
			return Observation{}, unmodelled("inject_sqe on qp%d in %s: only RTS enters SQE", o.QP, s)
		}
		m.qps.setState(o.QP, SQE)
		return m.plainResult(RuleQPFetchStates, 0, got)
	}
	return Observation{}, unmodelled("unknown operation %T", op)
}

// errnoIn checks a verb whose return value must satisfy ok (want
// describes it); canonical is the model's own pick. A relaxed rule's
// departure is adopted; the verb changes nothing the model tracks.
func (m *machine) errnoIn(rule RuleID, canonical int, want string, ok func(int) bool, got *Observation) (Observation, error) {
	m.touch(rule)
	obs := Observation{Errno: canonical, BadWR: -1}
	if got == nil {
		return obs, nil
	}
	if !ok(got.Errno) && !m.excuse(rule) {
		return obs, dev(rule, "return value", want, ErrnoName(got.Errno))
	}
	obs.Errno = got.Errno
	return obs, nil
}

// plainResult checks a verb that returns only an errno.
func (m *machine) plainResult(rule RuleID, want int, got *Observation) (Observation, error) {
	obs := Observation{Errno: want, BadWR: -1}
	if got == nil {
		return obs, nil
	}
	if got.Errno != want {
		return obs, dev(rule, "return value", ErrnoName(want), ErrnoName(got.Errno))
	}
	return *got, nil
}

// failResult checks a verb that must fail with any errno; nothing changes.
func failResult(rule RuleID, canonical int, got *Observation) (Observation, error) {
	obs := Observation{Errno: canonical, BadWR: -1}
	if got == nil {
		return obs, nil
	}
	if got.Errno == 0 {
		return obs, dev(rule, "return value", "an error", "0 (success)")
	}
	return *got, nil
}

// errnoDiffers reports whether the observed errno of a verb contradicts
// want (0: success, else a failure of any errno), so that a caller can
// excuse the difference.
func errnoDiffers(want int, got *Observation) bool {
	if got == nil {
		return false
	}
	if want == 0 {
		return got.Errno != 0
	}
	return got.Errno == 0
}

// CallRule is the rule whose promise a call of op keeps by returning at
// all: the rule that governs what the call returns (for a message, what
// receiving it does). A driver that crashes in the call departs from it.
func CallRule(op Op) RuleID {
	switch o := op.(type) {
	case CreateSRQ:
		return createRefusedRule(o)
	case CreateOther:
		if o.Variant != CreatePlain {
			return RuleCreateEx
		}
		return RuleCreateMax
	case CreateQP:
		return RuleQPCreate
	case Post:
		return RulePostReturn
	case PostRecv:
		return RulePostQPRQ
	case Query:
		return RuleQueryAttr
	case Arm:
		return RuleLimitArm
	case Resize:
		return RuleResizeCapacity
	case ModifyQP, InjectSQE:
		return RuleQPTransitions
	case Invalidate:
		return RuleRecvBadKey
	case Arrive, ArriveRest:
		return RuleRecvCompletion
	case Poll:
		return RulePollMax
	case DestroyQP, DestroySRQ:
		return RuleDestroyBusy
	case InjectSRQError:
		return RuleSRQErrEvent
	}
	return RuleRecvCompletion
}

// crashed checks a call the driver crashed in or failed
// (Observation.Crashed, Failed): a departure from the call's rule
// (CallRule). Relaxed, the crash or failure is that rule's, and nothing
// after it is modelled: the trace ends with the call.
func (m *machine) crashed(op Op, got *Observation) (Observation, error) {
	rule := CallRule(op)
	if o, ok := op.(CreateOther); ok && m.aboveLimits(o) {
		rule = RuleCreateMax // above the limits, whichever verb: as createOther
	}
	did := "crashed (" + got.Crashed + ")"
	if got.Crashed == "" {
		did = "failed (" + got.Failed + ")"
	}
	err := dev(rule, "call", "returns", did)
	if m.asPlainCreate(op) || m.excuse(rule) {
		return *got, nil
	}
	return Observation{BadWR: -1}, err
}

// asPlainCreate says whether a create through ibv_create_srq_ex (BASIC)
// that crashed or failed is the plain create's departure, as its refusal
// is (exAsPlain, refusedAsPlainOther): CREATE-EX promises only that the ex
// form makes what ibv_create_srq makes, so where the plain form's rule is
// relaxed, an ex form that fails as the plain one presumably does keeps
// CREATE-EX. Counted as two departures, so that alone it stays
// CREATE-EX's.
func (m *machine) asPlainCreate(op Op) bool {
	switch o := op.(type) {
	case CreateSRQ:
		return o.Variant == CreateEx && m.exAsPlain()
	case CreateOther:
		return !m.aboveLimits(o) && (o.Variant == CreateEx || o.Variant == CreateExCQ) && m.refusedAsPlainOther(&Observation{Errno: -1})
	}
	return false
}
