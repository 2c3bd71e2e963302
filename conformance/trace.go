package conformance

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/srqconform/srqconform/model"
)

// Step is one numbered step of a trace: the operation, what the model
// allowed (its canonical outcome, or the allowed set when the step failed),
// what the driver did, and the rule at stake when they differ.
type Step struct {
	N       int      `json:"n"`
	Op      model.Op `json:"-"`
	OpText  string   `json:"op"`
	Allowed string   `json:"allowed"`
	Got     string   `json:"got"`
	Rule    string   `json:"rule,omitempty"`
	obs     model.Observation
}

// Trace is a run of steps; a failing trace ends at its failing step.
type Trace struct {
	Steps []Step `json:"steps"`
	// Deviation is set when the last step deviated.
	Deviation *model.Deviation `json:"deviation,omitempty"`
	// Err is set when the harness or device failed (not a deviation).
	Err string `json:"error,omitempty"`
}

// Ops returns the trace's operations in order.
func (t Trace) Ops() []model.Op {
	out := make([]model.Op, len(t.Steps))
	for i, s := range t.Steps {
		out[i] = s.Op
	}
	return out
}

// Failed reports whether the trace ends in a deviation or an error.
func (t Trace) Failed() bool { return t.Deviation != nil || t.Err != "" }

// Text renders the trace as numbered lines.
func (t Trace) Text() string {
	var b strings.Builder
	for _, s := range t.Steps {
		mark := "  "
		if s.Rule != "" {
			mark = "✗ "
		}
		fmt.Fprintf(&b, "%s%3d. %s\n", mark, s.N, s.OpText)
		if s.Rule != "" {
			fmt.Fprintf(&b, "        model allows: %s\n        driver did:   %s\n        rule:         %s\n", s.Allowed, s.Got, s.Rule)
		} else {
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

// DecodeOp turns a replay-file operation back into an operation.
func DecodeOp(o OpJSON) (model.Op, error) {
	mk, ok := opNames[o.Op]
	if !ok {
		return nil, fmt.Errorf("unknown operation %q", o.Op)
	}
	p := mk()
	if len(o.Args) > 0 {
		if err := json.Unmarshal(o.Args, p); err != nil {
			return nil, fmt.Errorf("operation %q: arguments %s: %w", o.Op, o.Args, err)
		}
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
	}
	return nil, fmt.Errorf("operation %q: no decoder", o.Op)
}
