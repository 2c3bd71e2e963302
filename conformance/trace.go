package conformance

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/srqconform/srqconform/model"
)

// TraceStep is one numbered step of a trace: the operation, what the model
// allowed (its canonical outcome, or the allowed set when the step failed),
// what the driver did, and the rule at stake when they differ.
type TraceStep struct {
	N       int          `json:"n"`
	Op      model.Op     `json:"-"`
	OpText  string       `json:"op"`
	Allowed string       `json:"allowed"`
	Got     string       `json:"got"`
	Rule    model.RuleID `json:"rule,omitempty"`
	// Evidence marks a poll made after the deviation, for the diagnosis
	// only: it is recorded, not checked.
	Evidence bool `json:"evidence,omitempty"`
	obs      model.Observation
	// want is what the model expected; lazy says which of the texts are
	// still to be written from Op, want and obs (fillTexts): the steps of
	// a passing case are never read.
	want model.Observation
	lazy lazyTexts
}

// wantSource is what a trace's model was made from, so that fillTexts can
// replay the trace to learn the canonical outcomes the harness did not
// need while it ran (lazyWant).
type wantSource struct {
	prof    model.Profile
	caps    model.Caps
	relaxed []model.RuleID
}

// lazyTexts marks the texts of a TraceStep that are still to be written.
type lazyTexts uint8

const (
	lazyOp lazyTexts = 1 << iota
	lazyAllowed
	lazyGot
	// lazyWant: want itself was not computed (the harness needed no
	// canonical outcome to perform the step, model.Predictable); Allowed
	// is written from a replay of the trace (Trace.fillWants).
	lazyWant
)

// fillTexts writes the texts of the trace's steps that were left to be
// written when needed.
func (t *Trace) fillTexts() {
	t.fillWants()
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.lazy&lazyOp != 0 {
			s.OpText = s.Op.String()
		}
		if s.lazy&lazyAllowed != 0 {
			s.Allowed = s.want.Describe(s.Op)
		}
		if s.lazy&lazyGot != 0 {
			s.Got = s.obs.Describe(s.Op)
		}
		s.lazy = 0
	}
}

// fillWants learns the canonical outcomes of the steps marked lazyWant by
// replaying the trace on a fresh model made as the session's was: the model
// is deterministic, so each step's want is what Expect would have said
// then. The replay stops at the first step the model refuses; no step it
// needs a want for comes after that one.
func (t *Trace) fillWants() {
	lazy := false
	for i := range t.Steps {
		lazy = lazy || t.Steps[i].lazy&lazyWant != 0
	}
	if !lazy || t.src == nil {
		return
	}
	m, err := model.NewRelaxed(t.src.prof, t.src.caps, t.src.relaxed)
	if err != nil {
		return
	}
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Evidence {
			continue
		}
		if s.lazy&lazyWant != 0 {
			s.lazy &^= lazyWant
			if w, err := m.Expect(s.Op); err == nil {
				s.want, s.lazy = w, s.lazy|lazyAllowed
			}
		}
		if m.Step(s.Op, s.obs) != nil {
			return
		}
	}
}

// Trace is a run of steps; a failing trace ends at its failing step, and
// then at most one evidence step.
type Trace struct {
	Steps []TraceStep `json:"steps"`
	// Deviation is set when a step deviated; its Rule is the rule whose
	// check noticed it.
	Deviation *model.Deviation `json:"deviation,omitempty"`
	// Diagnosis names the rules the trace shows broken (see
	// model.Diagnose); set on failures in a report.
	Diagnosis *model.Diagnosis `json:"diagnosis,omitempty"`
	// Inconclusive is set when a step's observation was silence where the
	// model needs the device's answer (model.Inconclusive): the trace
	// ends there and is neither a pass nor a failure.
	Inconclusive *model.Inconclusive `json:"inconclusive,omitempty"`
	// Err is set when the harness or device failed (not a deviation).
	Err string `json:"error,omitempty"`
	// Interrupted is set when the run was cancelled during this trace.
	Interrupted bool `json:"interrupted,omitempty"`

	unpredictable bool // the model could not predict a step
	// src makes the trace's model again, for the texts (fillWants).
	src *wantSource
}

// Observed returns what the device answered at each of the trace's
// steps, evidence steps aside, in the words of model.Observation.Describe:
// two devices given the same operations answered alike where these are
// equal.
func (t Trace) Observed() []string {
	out := make([]string, 0, len(t.Steps))
	for _, s := range t.Steps {
		if !s.Evidence {
			out = append(out, s.obs.Describe(s.Op))
		}
	}
	return out
}

// Ops returns the trace's operations in order, without evidence steps.
func (t Trace) Ops() []model.Op {
	out := make([]model.Op, 0, len(t.Steps))
	for _, s := range t.Steps {
		if !s.Evidence {
			out = append(out, s.Op)
		}
	}
	return out
}

// modelSteps returns the trace's operations with what the device did.
func (t Trace) modelSteps() []model.Step {
	out := make([]model.Step, len(t.Steps))
	for i, s := range t.Steps {
		out[i] = model.Step{Op: s.Op, Obs: s.obs}
	}
	return out
}

// checkedSteps returns the trace's steps as the model takes them, without
// the evidence steps after its failing step.
func (t Trace) checkedSteps() []model.Step {
	return t.modelSteps()[:t.checkedLen()]
}

// checkedLen is the number of the trace's steps before the evidence steps
// that follow its failing step.
func (t Trace) checkedLen() int {
	n := len(t.Steps)
	for n > 0 && t.Steps[n-1].Evidence {
		n--
	}
	return n
}

// diagnose names the rules a failing trace shows broken, beyond those
// already relaxed.
func (t Trace) diagnose(p model.Profile, caps model.Caps, relaxed []model.RuleID) model.Diagnosis {
	if t.Deviation == nil {
		return model.Diagnosis{}
	}
	return model.Diagnose(p, caps, relaxed, t.modelSteps())
}

// CutNote is what the reports say of a diagnosis its allowance cut short
// (model.Diagnosis.Cut): its work, or the run's time to stop diagnosing.
const CutNote = "inconclusive: the diagnosis spent its allowance of work, or of time, before it tried every rule and pair; one not tried might explain the trace as well"

// Failed reports whether the trace ends in a deviation or an error.
func (t Trace) Failed() bool { return t.Deviation != nil || t.Err != "" }

// Alternatives says which other rules explain the trace as well as the
// diagnosis, and why the diagnosis named its own: "" when none do.
func Alternatives(d model.Diagnosis) string {
	sets := func(ss [][]model.RuleID) string {
		alts := make([]string, len(ss))
		for i, a := range ss {
			alts[i] = strings.Join(model.RuleNames(a), " and ") + " broken"
		}
		return strings.Join(alts, ", or ")
	}
	var out []string
	if len(d.Refuted) > 0 {
		out = append(out, fmt.Sprintf("it fitted as well: %s, which the device refuted, run with a step before that departure left out or changed, from the same state", sets(d.Refuted)))
	}
	if len(d.Also) > 0 {
		out = append(out, fmt.Sprintf("this trace alone fits as well: %s; it cannot tell them apart, and the diagnosis names %s as the more specific (model.Specificity)",
			sets(d.Also), strings.Join(model.RuleNames(d.Rules), " and ")))
	}
	return strings.Join(out, "; ")
}

// Extent says where the trace departs and how long it is: "departs at
// step 2 of 2 checked, then 9 evidence steps (not checked)". The step is
// the diagnosis's departure, else the step whose check failed.
func (t Trace) Extent() string {
	checked, at := 0, 0
	for _, s := range t.Steps {
		if s.Evidence {
			continue
		}
		checked++
		if s.Rule != 0 && at == 0 {
			at = s.N
		}
	}
	if d := t.Diagnosis; d != nil && d.DepartedAt > 0 {
		at = d.DepartedAt
	}
	if at == 0 {
		return fmt.Sprintf("%d steps", len(t.Steps))
	}
	s := fmt.Sprintf("departs at step %d of %d checked", at, checked)
	if n := len(t.Steps) - checked; n > 0 {
		s += fmt.Sprintf(", then %d evidence steps (not checked)", n)
	}
	return s
}

// Text renders the trace as numbered lines: the step where the device
// departed (under the diagnosis) is marked "»", the step whose check
// noticed it "✗", an evidence poll after it "+", and an inconclusive last
// step "?".
func (t Trace) Text() string {
	var b strings.Builder
	if d := t.Diagnosis; d != nil {
		if len(d.Rules) > 0 {
			fmt.Fprintf(&b, "  diagnosis: %s broken; departed at step %d, visible at step %d (noticed by the %s check)\n",
				strings.Join(model.RuleNames(d.Rules), " and "), d.DepartedAt, d.VisibleAt, d.NoticedBy)
			if alt := Alternatives(*d); alt != "" {
				fmt.Fprintf(&b, "  %s\n", alt)
			}
		} else if d.Unexplained && d.NoticedBy == 0 {
			fmt.Fprintf(&b, "  diagnosis: none; the model could not replay this trace to its end (step %d)\n", d.VisibleAt)
		} else if d.Unexplained {
			fmt.Fprintf(&b, "  diagnosis: no rule, nor pair of rules, explains this trace; the %s check noticed it at step %d\n", d.NoticedBy, d.VisibleAt)
		}
		if d.Cut {
			fmt.Fprintf(&b, "  %s\n", CutNote)
		}
	}
	for _, s := range t.Steps {
		mark := "  "
		inconclusive := s.Rule != 0 && t.Inconclusive != nil && s.N == len(t.Steps)
		switch {
		case inconclusive:
			mark = "? "
		case s.Rule != 0:
			mark = "✗ "
		case s.Evidence:
			mark = "+ "
		case t.Diagnosis != nil && t.Diagnosis.DepartedAt == s.N && t.Diagnosis.DepartedAt != t.Diagnosis.VisibleAt:
			mark = "» "
		}
		fmt.Fprintf(&b, "%s%3d. %s\n", mark, s.N, s.OpText)
		switch {
		case inconclusive:
			fmt.Fprintf(&b, "        model needs:  %s\n        driver did:   %s\n        inconclusive: no answer within the driver's bound is no evidence for %s\n", s.Allowed, s.Got, s.Rule)
		case s.Rule != 0:
			fmt.Fprintf(&b, "        model allows: %s\n        driver did:   %s\n        noticed by:   %s\n", s.Allowed, s.Got, s.Rule)
		case s.Evidence:
			fmt.Fprintf(&b, "        -> %s   (evidence for the diagnosis, not checked)\n", s.Got)
		default:
			fmt.Fprintf(&b, "        -> %s\n", s.Got)
		}
	}
	if t.Err != "" {
		fmt.Fprintf(&b, "  harness error: %s\n", t.Err)
	}
	return b.String()
}

// opNames maps each operation's JSON tag to a constructor.
var opNames = map[string]func() model.Op{
	"create_srq":        func() model.Op { return &model.CreateSRQ{} },
	"create_qp":         func() model.Op { return &model.CreateQP{} },
	"post_srq_recv":     func() model.Op { return &model.Post{} },
	"post_recv":         func() model.Op { return &model.PostRecv{} },
	"query_srq":         func() model.Op { return &model.Query{} },
	"modify_srq_limit":  func() model.Op { return &model.Arm{} },
	"modify_srq_max_wr": func() model.Op { return &model.Resize{} },
	"modify_qp":         func() model.Op { return &model.ModifyQP{} },
	"dereg_mr":          func() model.Op { return &model.Invalidate{} },
	"arrive":            func() model.Op { return &model.Arrive{} },
	"arrive_rest":       func() model.Op { return &model.ArriveRest{} },
	"poll":              func() model.Op { return &model.Poll{} },
	"inject_srq_error":  func() model.Op { return &model.InjectSRQError{} },
	"inject_sqe":        func() model.Op { return &model.InjectSQE{} },
	"create_srq_other":  func() model.Op { return &model.CreateOther{} },
	"destroy_qp":        func() model.Op { return &model.DestroyQP{} },
	"destroy_srq":       func() model.Op { return &model.DestroySRQ{} },
}

func opTag(op model.Op) string {
	switch op.(type) {
	case model.CreateSRQ:
		return "create_srq"
	case model.CreateQP:
		return "create_qp"
	case model.Post:
		return "post_srq_recv"
	case model.PostRecv:
		return "post_recv"
	case model.Query:
		return "query_srq"
	case model.Arm:
		return "modify_srq_limit"
	case model.Resize:
		return "modify_srq_max_wr"
	case model.ModifyQP:
		return "modify_qp"
	case model.Invalidate:
		return "dereg_mr"
	case model.Arrive:
		return "arrive"
	case model.ArriveRest:
		return "arrive_rest"
	case model.Poll:
		return "poll"
	case model.InjectSRQError:
		return "inject_srq_error"
	case model.InjectSQE:
		return "inject_sqe"
	case model.CreateOther:
		return "create_srq_other"
	case model.DestroyQP:
		return "destroy_qp"
	case model.DestroySRQ:
		return "destroy_srq"
	}
	return ""
}

// OpJSON is an operation as a replay file stores it.
type OpJSON struct {
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// EncodeOp turns an operation into its replay-file form.
func EncodeOp(op model.Op) (OpJSON, error) {
	tag := opTag(op)
	if tag == "" {
		return OpJSON{}, fmt.Errorf("encode %T: not a replayable operation", op)
	}
	args, err := json.Marshal(op)
	if err != nil {
		return OpJSON{}, fmt.Errorf("encode %s: %w", tag, err)
	}
	if string(args) == "{}" {
		args = nil
	}
	return OpJSON{Op: tag, Args: args}, nil
}

// DecodeOp turns a replay-file operation back into an operation. It
// refuses unknown argument fields and enumerated values the model does not
// know (see validateOp).
func DecodeOp(o OpJSON) (model.Op, error) {
	mk, ok := opNames[o.Op]
	if !ok {
		return nil, fmt.Errorf("unknown operation %q", o.Op)
	}
	p := mk()
	if len(o.Args) == 0 && reflect.TypeOf(p).Elem().NumField() > 0 {
		// EncodeOp writes args for every operation that has fields.
		return nil, fmt.Errorf("operation %q has no args: want its arguments, e.g. %s", o.Op, example(p))
	}
	if len(o.Args) > 0 {
		if err := decodeArgs(o.Args, p); err != nil {
			return nil, fmt.Errorf("operation %q: %w", o.Op, err)
		}
	}
	if err := validateDecoded(p); err != nil {
		return nil, fmt.Errorf("operation %q: %w", o.Op, err)
	}
	switch v := p.(type) {
	case *model.CreateSRQ:
		return *v, nil
	case *model.CreateQP:
		return *v, nil
	case *model.Post:
		return *v, nil
	case *model.PostRecv:
		return *v, nil
	case *model.Query:
		return *v, nil
	case *model.Arm:
		return *v, nil
	case *model.Resize:
		return *v, nil
	case *model.ModifyQP:
		return *v, nil
	case *model.Invalidate:
		return *v, nil
	case *model.Arrive:
		return *v, nil
	case *model.ArriveRest:
		return *v, nil
	case *model.Poll:
		return *v, nil
	case *model.InjectSRQError:
		return *v, nil
	case *model.InjectSQE:
		return *v, nil
	case *model.CreateOther:
		return *v, nil
	case *model.DestroyQP:
		return *v, nil
	case *model.DestroySRQ:
		return *v, nil
	}
	return nil, fmt.Errorf("operation %q: no decoder", o.Op)
}

// example is an operation's zero value as replay-file args.
func example(p any) string {
	b, err := json.Marshal(p)
	if err != nil {
		return "{...}"
	}
	return string(b)
}

// Unpredictable reports whether the trace stopped because the model could
// not predict a step: the operations are not a trace the model accepts in
// that state (a replay file's fault), not a failure of the harness or the
// device. Err then says which step.
func (t Trace) Unpredictable() bool { return t.unpredictable }
