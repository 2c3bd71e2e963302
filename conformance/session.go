package conformance

import (
	"context"
	"errors"
	"fmt"

	"github.com/srqconform/srqconform/model"
)

// session runs operations on the model and the driver side by side and
// records the trace. A step that deviates, or a harness failure, ends the
// session by panicking with stop; run recovers it.
type session struct {
	ctx     context.Context
	profile model.Profile
	model   *model.Model
	x       *executor
	trace   Trace
	ids     uint64 // the last wr_id handed out
	// skip is set when the scenario needs something the driver lacks.
	skip string
}

type stop struct{}

func newSession(ctx context.Context, p model.Profile, x *executor) *session {
	return &session{ctx: ctx, profile: p, model: model.New(p, capsOf(x.info)), x: x}
}

// do performs op on both sides and returns the driver's observation.
func (s *session) do(op model.Op) model.Observation {
	want, err := s.model.Expect(op)
	step := Step{N: len(s.trace.Steps) + 1, Op: op, OpText: op.String()}
	if err != nil {
		s.trace.Err = fmt.Sprintf("step %d %s: the model cannot predict it: %v", step.N, op, err)
		s.trace.Steps = append(s.trace.Steps, step)
		panic(stop{})
	}
	step.Allowed = want.Describe(op)
	got, err := s.x.exec(s.ctx, op, want)
	step.Got = got.Describe(op)
	step.obs = got
	var d *model.Deviation
	if err == nil {
		err = s.model.Step(op, got)
	}
	switch {
	case errors.As(err, &d):
		step.Rule, step.Allowed, step.Got = d.Rule, d.What+" = "+d.Want, d.What+" = "+d.Got
		s.trace.Deviation = d
	case err != nil:
		s.trace.Err = fmt.Sprintf("step %d %s: %v", step.N, op, err)
	}
	s.trace.Steps = append(s.trace.Steps, step)
	if err != nil {
		panic(stop{})
	}
	return got
}

// run executes f in a fresh session and always releases the driver's SRQ.
func run(ctx context.Context, p model.Profile, x *executor, f func(*session)) (tr Trace, skip string) {
	s := newSession(ctx, p, x)
	defer func() {
		if err := x.close(); err != nil && s.trace.Err == "" && s.trace.Deviation == nil {
			s.trace.Err = fmt.Sprintf("closing the SRQ: %v", err)
		}
		tr, skip = s.trace, s.skip
	}()
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stop); !ok {
				panic(r)
			}
		}
	}()
	f(s)
	return
}

// require skips the scenario when cond is false.
func (s *session) require(cond bool, reason string) {
	if !cond {
		s.skip = reason
		panic(stop{})
	}
}
