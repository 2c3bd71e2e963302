package model

import (
	"errors"
	"slices"
)

// StateBefore returns the states the model may be in before step k
// (1-based) of steps, replayed with the relaxed rules: one fingerprint per
// candidate, the profile choices made included, sorted and without
// repeats. False when the replay fails before step k, or k is out of
// range. Two traces with the same states before an operation are, to the
// model, the same device at that point: what a deterministic device does
// next there does not depend on which trace led to it. The replay charges
// w (nil: unbounded); one that w stops is false.
func StateBefore(p Profile, c Caps, relaxed []RuleID, steps []Step, k int, w *Meter) ([]uint64, bool) {
	if k < 1 || k > len(steps)+1 {
		return nil, false
	}
	m, err := NewRelaxed(p, c, relaxed)
	if err != nil {
		return nil, false
	}
	for _, s := range steps[:k-1] {
		if m.advanceBy(s, w) != nil {
			return nil, false
		}
	}
	fps := make([]uint64, 0, len(m.cands))
	for _, cand := range m.cands {
		fps = append(fps, cand.hashState(fingerprintSeed, true))
	}
	slices.Sort(fps)
	return slices.Compact(fps), true
}

// DepartureRecurs reports whether the trace other is consistent with
// the rules relaxed (besides those already relaxed) when the rules depart
// at its step at (1-based) as they depart at step k of trace, which they
// explain: after step at only the candidates that took a departure of one
// of the rules there, into a state that a candidate explaining trace took
// at step k, go on. It is false when none did (the device did what the
// rules promise there, or departed otherwise), or when what follows in
// other fails under the departure taken. It is true, telling nothing,
// when no candidate departing at step k explains trace.
//
// It is how a diagnosis tells apart rules that explain a trace equally
// well (Diagnosis.Also): the device run again without one step of the
// trace is a second trace. If it reaches the state the first had before
// the step where a rule departed, a deterministic device breaking that
// rule departs there again, the same way; where it does not, or the trace
// that follows does not fit what the departure left, the rule is not what
// broke.
//
// The replays charge w (nil: unbounded); where w stops them, it is true,
// telling nothing.
func DepartureRecurs(p Profile, c Caps, relaxed []RuleID, trace []Step, k int, other []Step, at int, rules []RuleID, w *Meter) bool {
	if k < 1 || k > len(trace) || at < 1 || at > len(other) {
		return true
	}
	all := append(slices.Clone(relaxed), rules...)
	departed := func(cand *machine, step int) bool {
		return slices.ContainsFunc(cand.faults, func(f FaultUse) bool {
			return f.Step == step && slices.Contains(rules, f.Rule)
		})
	}
	m, err := NewRelaxed(p, c, all)
	if err != nil {
		return true
	}
	for _, s := range trace[:k] {
		if m.advanceBy(s, w) != nil {
			return true
		}
	}
	var states []uint64 // after step k, of the candidates that explain trace
	for _, cand := range m.cands {
		if !departed(cand, k) {
			continue
		}
		one := m.Clone()
		one.cands = []*machine{cand.clone()}
		fp := cand.hashState(fingerprintSeed, true)
		ok := true
		for _, s := range trace[k:] {
			if err := one.advanceBy(s, w); err != nil {
				if errors.Is(err, errDiagnosisEffort) {
					return true
				}
				ok = false
				break
			}
		}
		if ok {
			states = append(states, fp)
		}
	}
	if len(states) == 0 {
		return true
	}
	o, err := NewRelaxed(p, c, all)
	if err != nil {
		return true
	}
	for i, s := range other {
		if err := o.advanceBy(s, w); err != nil {
			return errors.Is(err, errDiagnosisEffort)
		}
		if i+1 != at {
			continue
		}
		o.cands = slices.DeleteFunc(o.cands, func(cand *machine) bool {
			return !departed(cand, at) || !slices.Contains(states, cand.hashState(fingerprintSeed, true))
		})
		if len(o.cands) == 0 {
			return false
		}
	}
	return true
}
