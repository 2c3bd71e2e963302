package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// ReplayFormat names the replay file format and its version.
const ReplayFormat = "srqconform-replay/1"

// ReplayFile is a saved trace: enough to re-run it on the same driver and
// device under the same profile.
type ReplayFile struct {
	Format  string         `json:"format"`
	Driver  string         `json:"driver"`
	Config  drivers.Config `json:"config"`
	Profile string         `json:"profile"`
	// ProfileFile holds the profile itself, in the profile file format
	// (JSON), when it is not a built-in one (a -profile FILE, an inferred
	// profile): its name alone would not find it again.
	ProfileFile json.RawMessage `json:"profile_file,omitempty"`
	Rule        model.RuleID    `json:"rule,omitempty"`
	Source      string          `json:"source,omitempty"`
	// Relaxed lists the rules the run had already diagnosed broken when
	// this trace failed: the replay adopts the device's behaviour for them
	// too, as the run did.
	Relaxed []model.RuleID `json:"relaxed,omitempty"`
	Ops     []OpJSON       `json:"ops"`
}

// NewReplay builds a replay file for ops run under profile p; a profile
// that is not a built-in one is written into the file whole.
func NewReplay(driver string, cfg drivers.Config, p model.Profile, rule model.RuleID, source string, ops []model.Op) (ReplayFile, error) {
	rf := ReplayFile{Format: ReplayFormat, Driver: driver, Config: cfg, Profile: p.Name, Rule: rule, Source: source}
	b, err := model.EmbedProfile(p)
	if err != nil {
		return rf, fmt.Errorf("replay file: %w", err)
	}
	rf.ProfileFile = b
	for _, op := range ops {
		o, err := EncodeOp(op)
		if err != nil {
			return rf, err
		}
		rf.Ops = append(rf.Ops, o)
	}
	return rf, nil
}

// maxReplayOps bounds a replay file; shrunk traces are far shorter.
const maxReplayOps = 100000

// ReadReplay parses and validates a replay file.
func ReadReplay(r io.Reader) (*ReplayFile, []model.Op, error) {
	dec := json.NewDecoder(io.LimitReader(r, 64<<20))
	dec.DisallowUnknownFields()
	var rf ReplayFile
	if err := dec.Decode(&rf); err != nil {
		return nil, nil, fmt.Errorf("replay file is not valid JSON of format %s: %w", ReplayFormat, err)
	}
	if dec.More() {
		return nil, nil, errors.New("replay file has data after its JSON object")
	}
	if rf.Format != ReplayFormat {
		return nil, nil, fmt.Errorf("replay file format is %q, want %q", rf.Format, ReplayFormat)
	}
	if _, err := rf.ProfileOf(); err != nil {
		return nil, nil, err
	}
	if rf.Rule != 0 {
		if !rf.Rule.Valid() {
			return nil, nil, fmt.Errorf("replay file: rule %q is not in the catalogue (srqconform rules lists it)", rf.Rule)
		}
	}
	if rf.Config.Port < 0 || rf.Config.GIDIndex < 0 {
		return nil, nil, fmt.Errorf("replay file: config has Port %d and GIDIndex %d, want 0 or more (Port 0: port 1)", rf.Config.Port, rf.Config.GIDIndex)
	}
	for _, r := range rf.Relaxed {
		if !r.Valid() {
			return nil, nil, fmt.Errorf("replay file: relaxed rule %q is not in the catalogue", r)
		}
	}
	if len(rf.Ops) == 0 || len(rf.Ops) > maxReplayOps {
		return nil, nil, fmt.Errorf("replay file has %d operations, want 1 to %d", len(rf.Ops), maxReplayOps)
	}
	ops := make([]model.Op, len(rf.Ops))
	for i, o := range rf.Ops {
		op, err := DecodeOp(o)
		if err != nil {
			return nil, nil, fmt.Errorf("replay file operation %d: %w", i+1, err)
		}
		if _, ok := op.(model.CreateSRQ); ok != (i == 0) {
			return nil, nil, fmt.Errorf("replay file operation %d is %s: create_srq must come first, and only once", i+1, o.Op)
		}
		ops[i] = op
	}
	if err := checkQPsExist(ops); err != nil {
		return nil, nil, fmt.Errorf("replay file %w", err)
	}
	return &rf, ops, nil
}

// ProfileOf returns the profile the trace was run under: the one the file
// holds (ProfileFile), else the built-in profile the file names.
func (rf *ReplayFile) ProfileOf() (model.Profile, error) {
	return model.EmbeddedProfile("replay file", rf.Profile, rf.ProfileFile)
}

// ErrStepNotMade is wrapped by Replay's error when a step of the trace is
// one the harness cannot make on the device (the verb is unsupported, a
// QP it needs was not created, or the step would test the harness, not
// the device); the trace up to that step is returned with it.
var ErrStepNotMade = errors.New("cannot be made")

// Replay re-runs a saved trace on the device drv opens, with the rules in
// relaxed adopted from the device, and returns the new trace: a failing one,
// diagnosed, when the deviation reproduces. A step that cannot be made
// ends it with an error wrapping ErrStepNotMade.
func Replay(ctx context.Context, drv drivers.Driver, cfg drivers.Config, p model.Profile, relaxed []model.RuleID, ops []model.Op, opts Options) (tr Trace, err error) {
	opts.Profile = p
	opts.defaults()
	dev, err := drv.Open(ctx, cfg)
	if err != nil {
		return Trace{}, fmt.Errorf("open %s device %q: %w", drv.Name(), cfg.Device, err)
	}
	var x *executor
	defer func() {
		if x != nil && x.hung != "" {
			return // the hung call may hold the device: leave it to the process's exit
		}
		if cerr := dev.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s device: %w", drv.Name(), cerr)
		}
	}()
	x = newExecutor(dev, opts)
	defer x.guard.release()
	var skip string
	if !x.guarded(func() {
		tr, skip, _ = run(ctx, p, relaxed, x, func(s *session) {
			for _, op := range ops {
				s.do(op)
			}
		})
	}) {
		return Trace{}, harness("the driver did not return from %s: it hangs", x.hung)
	}
	if skip != "" && !tr.Failed() {
		n := min(len(tr.Steps), len(ops)-1)
		return tr, fmt.Errorf("replay: step %d (%s) %w on this %s device: %s", n+1, ops[n], ErrStepNotMade, drv.Name(), skip)
	}
	if tr.Deviation != nil {
		d := tr.diagnose(p, capsOf(x.info), relaxed)
		tr.Diagnosis = &d
	}
	return tr, nil
}
