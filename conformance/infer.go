package conformance

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// The marks an inferred profile's notes start with.
const (
	// MarkShown starts the note of a field the runs narrowed: some value
	// the model knows was ruled out by what the device did.
	MarkShown = "shown"
	// MarkNotShown starts the note of a field no run told apart: it still
	// allows every value.
	MarkNotShown = "not shown"
)

// neverProbed lists the fields inference leaves open on purpose, and why.
var neverProbed = map[string]string{
	"NegativeSGE": "inference never posts a negative num_sge: a provider that does not check it would copy a huge length",
}

// FieldResult is what inference found for one profile field.
type FieldResult struct {
	Field string `json:"field"`
	// Values are the values the device's behaviour still allows, as a
	// profile file writes them.
	Values []string `json:"values"`
	// Shown says the runs ruled out some value the model knows.
	Shown bool `json:"shown"`
	// How says which runs narrowed the field, or why it was not.
	How string `json:"how"`
}

// Inference is the outcome of Infer.
type Inference struct {
	// Profile is the profile the device showed. Its notes start with
	// MarkShown or MarkNotShown; it loads like any profile file.
	Profile model.Profile `json:"-"`
	Fields  []FieldResult `json:"fields"`
	// Runs counts the runs of the suite inference made.
	Runs int `json:"runs"`
	// Report is the last run: the whole suite (scenarios and random
	// cases) against Profile. A device that deviates from it broke a rule
	// that no choice of values excuses. It is nil when Interrupted.
	Report *Report `json:"report"`
	// Interrupted says a signal stopped inference: Profile is what the
	// runs finished until then showed, every other field left open.
	Interrupted bool `json:"interrupted,omitempty"`
}

// InferCases is how many random cases each run of Infer makes when
// Options sets neither Cases nor Duration.
const InferCases = 100

// Infer runs the suite on the device with every implementation-defined
// field open (model.Open) and returns the profile the device showed.
// opts.Profile and opts.Rules are ignored; opts.Seed (0: one is picked) is
// used by every run, and opts.Cases random cases by every run after the
// first phase. logf, when not nil, is told of every step. When ctx is
// cancelled it returns the partial inference (Interrupted, the fields the
// finished runs narrowed) with the error.
//
// It goes in four phases, each sound on its own: a value is dropped only
// when a run shows the device cannot have it.
//
//  1. The scenarios, with every field open, until Report.Resolved no
//     longer narrows the profile. Each pass decides more fields, so the
//     next pass tells apart values whose effects the last one could not
//     (a check order shows only once the SGE limit is known). Random cases
//     are not run here: with every field open their long traces fork past
//     the model's candidate bound, and Check resolves fields from
//     scenarios only.
//  2. Every field still open, one value at a time: the suite with random
//     cases against the profile with that value decided. The value is
//     ruled out when a run fails and the profile before the step accepts
//     the failing trace (so the failure is that value's doing).
//  3. The completion-status sets, which the model does not fork on: each
//     starts empty and takes in every status the device showed for it
//     (a status deviation that the open set accepts) until none is new.
//     A set the runs never reached, or whose runs stopped on a harness
//     error, stays "any error status".
//  4. The whole suite against the inferred profile: Inference.Report.
func Infer(ctx context.Context, drv drivers.Driver, cfg drivers.Config, opts Options, logf func(format string, a ...any)) (*Inference, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	opts.Profile = model.Open()
	opts.Rules = nil
	opts.Progress = nil
	if opts.Cases == 0 && opts.Duration == 0 {
		opts.Cases = InferCases // each of its many runs a count, not a budget
	}
	opts.defaults()
	x := &inferrer{ctx: ctx, drv: drv, cfg: cfg, opts: opts, logf: logf, inf: &Inference{}, how: map[string]string{}, open: model.Open()}
	x.p = x.open
	err := x.scenarios()
	if err == nil && opts.Cases > 0 {
		err = x.probeFields()
	}
	if err == nil {
		err = x.statuses()
	}
	if err == nil {
		err = x.last()
	}
	if errors.Is(err, errInferStopped) {
		// The partial inference: p holds only what finished runs showed.
		x.inf.Interrupted = true
		x.inf.describe(x.p, x.open, x.how, drv.Name(), cfg, x.info, opts)
		return x.inf, fmt.Errorf("infer: stopped after %d runs: %w", x.inf.Runs, context.Cause(ctx))
	}
	if err != nil {
		return nil, err
	}
	x.inf.describe(x.p, x.open, x.how, drv.Name(), cfg, x.info, opts)
	logf("%d of %d fields shown in %d runs", x.inf.shown(), len(x.inf.Fields), x.inf.Runs)
	return x.inf, nil
}

// inferrer is one inference in progress: the profile narrowed so far
// (p, from open) and how each field was narrowed.
type inferrer struct {
	ctx     context.Context
	drv     drivers.Driver
	cfg     drivers.Config
	opts    Options
	logf    func(format string, a ...any)
	inf     *Inference
	how     map[string]string // field -> what narrowed it
	open, p model.Profile
	info    drivers.Info // the device, as the last scenario pass saw it
}

// errInferStopped is what an inference phase returns when ctx was
// cancelled during one of its runs.
var errInferStopped = errors.New("infer: stopped")

// probeShrink is the shrink time of the probes of phases 2 and 3: they
// only need to know whether a run fails, and shrinking a failing random
// case would cost time for nothing.
const probeShrink = time.Millisecond

// run makes one run of the suite against p: cases random cases (< 0:
// scenarios only), shrinking for at most shrink. Its error is
// errInferStopped when ctx was cancelled during the run.
func (x *inferrer) run(p model.Profile, cases int, shrink time.Duration) (*Report, error) {
	o := x.opts
	o.Profile, o.Cases, o.ShrinkTime = p, cases, shrink
	if cases < 0 {
		o.Duration = 0 // scenarios only
	}
	x.inf.Runs++
	rep, err := Check(x.ctx, x.drv, x.cfg, o)
	if x.ctx.Err() != nil {
		return rep, errInferStopped
	}
	return rep, err
}

// scenarios is phase 1: the scenarios, every field open, to a fixed
// point.
func (x *inferrer) scenarios() error {
	for pass := 1; ; pass++ {
		rep, err := x.run(x.p, -1, x.opts.ShrinkTime)
		if errors.Is(err, errInferStopped) {
			return err
		}
		if err != nil {
			return fmt.Errorf("infer: scenarios, pass %d: %w", pass, err)
		}
		x.info = rep.Device
		if len(rep.Failures) > 0 {
			x.logf("pass %d: %d rules failed under the open profile (the last run will show them)", pass, len(rep.Failures))
		}
		next, changed, err := narrow(x.p, rep.Resolved)
		if err != nil {
			return fmt.Errorf("infer: scenarios, pass %d: %w", pass, err)
		}
		x.logf("pass %d: scenarios with %d fields open narrowed %d", pass, len(x.p.OpenFields()), len(changed))
		for _, f := range changed {
			x.how[f] = "scenarios"
		}
		if len(changed) == 0 {
			return nil
		}
		x.p = next
	}
}

// probeFields is phase 2: it rules out the values of every field still
// open one at a time, with random cases.
func (x *inferrer) probeFields() error {
	caps := capsOf(x.info)
	for _, f := range x.p.OpenFields() {
		if neverProbed[f] != "" {
			continue
		}
		var keep []string
		for _, v := range x.p.FieldTexts(f) {
			q := x.p
			if err := q.SetField(f, []string{v}); err != nil {
				return fmt.Errorf("infer: %w", err)
			}
			rep, err := x.run(q, x.opts.Cases, probeShrink)
			if errors.Is(err, errInferStopped) {
				return err
			}
			if err != nil {
				x.logf("%s = %s: inconclusive, the run stopped: %v", f, v, err)
				keep = append(keep, v)
				continue
			}
			if fail := refutes(rep, x.p, caps); fail != nil {
				x.logf("%s = %s: ruled out by %s (%s)", f, v, fail.Source, fail.Trace.Deviation)
				continue
			}
			keep = append(keep, v)
		}
		if len(keep) == 0 {
			return fmt.Errorf("infer: every value of %s was ruled out (%s): the device fits no profile the model knows", f, strings.Join(x.p.FieldTexts(f), " | "))
		}
		if len(keep) < len(x.p.FieldTexts(f)) {
			if err := x.p.SetField(f, keep); err != nil {
				return fmt.Errorf("infer: %w", err)
			}
			if x.how[f] == "" {
				x.how[f] = "random cases"
			} else {
				x.how[f] += " and random cases"
			}
		}
	}
	return nil
}

// statuses is phase 3: the completion-status sets.
func (x *inferrer) statuses() error {
	statusType := reflect.TypeFor[model.StatusSet]()
	for _, f := range model.FieldNames() {
		if reflect.ValueOf(x.p).FieldByName(f).Type() != statusType {
			continue
		}
		set, err := x.statusSet(f)
		if err != nil {
			return err
		}
		if set != 0 {
			reflect.ValueOf(&x.p).Elem().FieldByName(f).Set(reflect.ValueOf(set))
			x.how[f] = "the completions' statuses"
		}
	}
	return nil
}

// statusSet grows the status set of field f from empty by every status
// the device shows for it, until none is new; 0 leaves the field open.
func (x *inferrer) statusSet(f string) (model.StatusSet, error) {
	var set model.StatusSet
	for range 32 {
		q := x.p
		reflect.ValueOf(&q).Elem().FieldByName(f).Set(reflect.ValueOf(set))
		rep, err := x.run(q, x.opts.Cases, probeShrink)
		if errors.Is(err, errInferStopped) {
			return 0, err
		}
		if err != nil {
			// The set found so far may miss statuses: leave it open.
			x.logf("%s: inconclusive after %q, the run stopped: %v", f, set.String(), err)
			return 0, nil
		}
		s, ok, err := newStatus(rep, x.p, capsOf(rep.Device))
		if err != nil {
			return 0, fmt.Errorf("infer: %s: %w", f, err)
		}
		if !ok {
			break
		}
		if set.Has(s) {
			return 0, fmt.Errorf("infer: %s: the device showed %s again though the set allows it: the model's status check is not the one it reports", f, s)
		}
		x.logf("%s: the device showed %s", f, s)
		set |= model.Statuses(s)
	}
	return set, nil
}

// last is phase 4: the whole suite against the inferred profile, into
// inf.Report.
func (x *inferrer) last() error {
	rep, err := x.run(x.p, x.opts.Cases, x.opts.ShrinkTime)
	if errors.Is(err, errInferStopped) {
		return err
	}
	if err != nil {
		return fmt.Errorf("infer: the last run, against the inferred profile: %w", err)
	}
	x.inf.Report = rep
	return nil
}

// InferredShown reports whether an inferred profile's note marks its field
// shown; ok is false when the note carries neither mark.
func InferredShown(n model.Note) (shown, ok bool) {
	switch {
	case strings.HasPrefix(n.Source, MarkShown+": "):
		return true, true
	case strings.HasPrefix(n.Source, MarkNotShown+": "):
		return false, true
	}
	return false, false
}

// narrow returns p with each open field cut down to the values resolved
// allows, keeping p's order, and the fields that changed.
func narrow(p model.Profile, resolved map[string][]string) (model.Profile, []string, error) {
	var changed []string
	for _, f := range p.OpenFields() {
		vals, ok := resolved[f]
		if !ok {
			continue
		}
		old := p.FieldTexts(f)
		var keep []string
		for _, v := range old {
			if slices.Contains(vals, v) {
				keep = append(keep, v)
			}
		}
		if len(keep) == 0 {
			return p, nil, fmt.Errorf("no value of %s fits every scenario (%s allowed, the scenarios resolved %q)", f, strings.Join(old, " | "), vals)
		}
		if len(keep) == len(old) {
			continue
		}
		if err := p.SetField(f, keep); err != nil {
			return p, nil, err
		}
		changed = append(changed, f)
	}
	return p, changed, nil
}

// refutes returns a failure of rep that the wider profile p accepts: the
// narrowing rep ran under is to blame for it. A failure p also rejects is
// a deviation whatever the narrowed field holds.
func refutes(rep *Report, p model.Profile, caps model.Caps) *Failure {
	for i, f := range rep.Failures {
		if replayOnModel(p, caps, f.Replay.Relaxed, f.Trace, nil) == nil {
			return &rep.Failures[i]
		}
	}
	return nil
}

// newStatus returns the status of a completion-status deviation in rep that
// the wider profile p accepts.
func newStatus(rep *Report, p model.Profile, caps model.Caps) (model.WCStatus, bool, error) {
	f := refutes(rep, p, caps)
	if f == nil {
		return 0, false, nil
	}
	d := f.Trace.Deviation
	if !strings.HasSuffix(d.What, " status") {
		return 0, false, fmt.Errorf("%s: a narrower status set failed on %s = %s, not on a status", f.Source, d.What, d.Got)
	}
	for s := model.WCStatus(0); s < 32; s++ {
		if s.String() == d.Got {
			return s, true, nil
		}
	}
	return 0, false, fmt.Errorf("%s: status %q is not one the model names", f.Source, d.Got)
}

// describe sets inf.Profile to p, named "inferred", with a note per field
// saying whether the runs showed it (how says by which runs), and
// inf.Fields to the same.
func (inf *Inference) describe(p, open model.Profile, how map[string]string, driver string, cfg drivers.Config, info drivers.Info, opts Options) {
	where := fmt.Sprintf("srqconform infer on driver %s, device %s (%s)", driver, info.Name, info.Provider)
	if d := cfg.Options["deviations"]; d != "" {
		where += ", deviations " + d
	}
	where += fmt.Sprintf(", seed %d, %d random cases", opts.Seed, max(opts.Cases, 0))
	if inf.Interrupted {
		where += fmt.Sprintf(", interrupted during run %d: the fields not yet probed stay open", inf.Runs)
	}
	p.Name = "inferred"
	p.Description = "The profile " + where + " showed; each note says whether the runs told the field's values apart."
	p.Notes = map[string]model.Note{}
	inf.Fields = nil
	for _, f := range model.FieldNames() {
		r := FieldResult{Field: f, Values: p.FieldTexts(f)}
		r.Shown = !slices.Equal(r.Values, open.FieldTexts(f))
		switch {
		case r.Shown:
			r.How = how[f]
			p.Notes[f] = model.Note{Source: fmt.Sprintf("%s: %s narrowed it to what the device did (%s)", MarkShown, r.How, where), Verified: true}
		case neverProbed[f] != "":
			r.How = neverProbed[f]
			p.Notes[f] = model.Note{Source: fmt.Sprintf("%s: %s (%s)", MarkNotShown, r.How, where)}
		default:
			r.How = "no run told the values apart"
			p.Notes[f] = model.Note{Source: fmt.Sprintf("%s: %s (%s)", MarkNotShown, r.How, where)}
		}
		inf.Fields = append(inf.Fields, r)
	}
	inf.Profile = p
}

// shown counts the fields the runs narrowed.
func (inf *Inference) shown() int {
	n := 0
	for _, r := range inf.Fields {
		if r.Shown {
			n++
		}
	}
	return n
}
