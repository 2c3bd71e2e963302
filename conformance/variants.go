package conformance

import (
	"slices"
	"time"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// maxVariants bounds the variants of one counterexample that vary runs on
// the device.
const maxVariants = 24

// vary re-blames a minimized counterexample that other rule sets explain
// as well as its own (Diagnosis.Also, none refuted), by its neighbours:
// the traces that change one value of one step (an SGE's length or key, a
// message's length or opcode, a QP's type, a limit, a size) or read the
// SRQ's attributes right after an arming or a resize, run on the device.
// A neighbour the device passes refutes a set whose departure would have
// come again from the same state (checker.refutes). Each neighbour that
// departs too is a failure the device shows, and one root cause is one
// rule: a set that explains more of those neighbours, with the rules the
// run had relaxed, accounts for the device with fewer broken promises
// than one that needs another rule for them. The blame moves to the set
// not refuted that explains the most, when that is strictly more than its
// own set explains, or to the first set not refuted when its own set is;
// a set of more rules, or of more catch-alls (model.Generic), than its
// own is never chosen. Only a synchronous device (drivers.Info.Synchronous,
// the emulator and drivers built on it) is asked: its runs repeat. It
// reports whether the blame moved.
func (c *checker) vary(f *Failure) bool {
	d := f.Trace.Diagnosis
	if d == nil || len(d.Rules) == 0 || len(d.Also) == 0 || !c.work.PairsLeft() || c.ctx.Err() != nil {
		return false
	}
	if !c.x.info.Synchronous {
		// A device whose completions and events come in their own time
		// (real hardware, rxe, siw) may show an intermittent bug in one
		// run and not the next: a neighbour it passed is weak evidence,
		// and each costs seconds there.
		return false
	}
	sets := [][]model.RuleID{d.Rules}
	for _, set := range d.Also {
		if len(set) <= len(d.Rules) && catchAlls(set) <= catchAlls(d.Rules) &&
			!slices.ContainsFunc(d.Refuted, func(r []model.RuleID) bool { return slices.Equal(r, set) }) {
			sets = append(sets, set)
		}
	}
	if len(sets) < 2 {
		return false
	}
	base := f.Replay.Relaxed
	clock := c.work.Clock()
	began := time.Now()
	deadline := began.Add(c.shrinkFor())
	defer func() { c.shrinkLeft -= time.Since(began) }()
	explained := make([]int, len(sets))
	var passed []passer
	for _, n := range neighbours(f.Trace.Ops()) {
		if time.Now().After(deadline) || c.ctx.Err() != nil || !c.work.PairsLeft() {
			break
		}
		if !makeable(c.x.info, n.ops) {
			continue
		}
		c.x.timing.enter(StageDiagnosis)
		t, skip, _ := run(c.ctx, c.opts.Profile, base, c.x, func(s *session) {
			for _, op := range n.ops {
				s.do(op)
			}
		})
		c.rep.StepsRun += len(t.Steps)
		switch {
		case t.Err != "" || skip != "" || t.Inconclusive != nil || t.Interrupted:
		case t.Deviation == nil:
			passed = append(passed, passer{tr: t, at: n.at, shift: n.shift})
		default:
			for i, set := range sets {
				if replayOnModel(c.opts.Profile, c.caps, append(slices.Clone(base), set...), t, clock) == nil {
					explained[i]++
				}
			}
		}
	}
	// A set a passing neighbour refutes is out; among those left, the
	// one that explains the most failing neighbours, the diagnosis's
	// order deciding a tie, unless its own set is left and explains as
	// many.
	best := -1
	var refuted [][]model.RuleID
	for i, set := range sets {
		if c.refutes(f, set, passed) {
			refuted = append(refuted, set)
		} else if best < 0 || explained[i] > explained[best] {
			best = i
		}
	}
	if best <= 0 {
		return false
	}
	set := sets[best]
	var also [][]model.RuleID
	for _, s := range append([][]model.RuleID{d.Rules}, d.Also...) {
		if !slices.Equal(s, set) && !slices.ContainsFunc(refuted, func(r []model.RuleID) bool { return slices.Equal(r, s) }) {
			also = append(also, s)
		}
	}
	c.moveBlame(f, set, also, refuted)
	return true
}

// neighbour is a trace that differs from a counterexample's operations in
// its step at (0-based): changed (shift 0), or a step put in there (1).
type neighbour struct {
	ops       []model.Op
	at, shift int
}

// neighbours returns the traces that query the SRQ right after an arming
// or a resize, then those that differ from ops in one value of one step,
// the last steps first (the nearest the failure), at most maxVariants of
// them. Every step counts: each rule set departs at a step of its own.
func neighbours(ops []model.Op) []neighbour {
	var out []neighbour
	with := func(i int, op model.Op) {
		if len(out) < maxVariants {
			cand := slices.Clone(ops)
			cand[i] = op
			out = append(out, neighbour{ops: cand, at: i})
		}
	}
	// query reads the SRQ's attributes right after step i: whether an
	// arming or a resize took, which the steps after it may leave open.
	query := func(i int) {
		if _, next := ops[min(i+1, len(ops)-1)].(model.Query); !next && len(out) < maxVariants {
			out = append(out, neighbour{ops: slices.Insert(slices.Clone(ops), i+1, model.Op(model.Query{})), at: i + 1, shift: 1})
		}
	}
	// The queries first: one run each tells whether an arming or a
	// resize took, which a limit that never fires leaves open, and the
	// time left for neighbours may be short.
	for i := len(ops) - 1; i >= 0; i-- {
		switch ops[i].(type) {
		case model.Arm, model.Resize:
			query(i)
		}
	}
	for i := len(ops) - 1; i >= 0; i-- {
		switch o := ops[i].(type) {
		case model.Post:
			for w, wr := range o.WRs {
				for g, sge := range wr.SGEs {
					for _, v := range sgeVariants(sge) {
						wrs := slices.Clone(o.WRs)
						wrs[w].SGEs = slices.Clone(wr.SGEs)
						wrs[w].SGEs[g] = v
						with(i, model.Post{WRs: wrs})
					}
				}
			}
		case model.Arrive:
			for _, m := range msgVariants(o.Msg) {
				n := o
				n.Msg = m
				with(i, n)
			}
		case model.CreateQP:
			n := o
			n.Type = model.RC
			if o.Type == model.RC {
				n.Type = model.UD
			}
			with(i, n)
		case model.Arm:
			with(i, model.Arm{Limit: o.Limit + 1})
			if o.Limit > 1 {
				with(i, model.Arm{Limit: o.Limit - 1})
			}
		case model.Resize:
			with(i, model.Resize{MaxWR: o.MaxWR + 1})
			if o.MaxWR > 1 {
				with(i, model.Resize{MaxWR: o.MaxWR - 1})
			}
		}
	}
	return out
}

// sgeVariants are an SGE's neighbours: another length (an empty SGE
// given bytes, a non-empty one half or twice and one as long), and a
// valid key for an invalid one.
func sgeVariants(g model.SGE) []model.SGE {
	var out []model.SGE
	if g.Length == 0 {
		out = append(out, model.SGE{Length: 64, Key: g.Key})
	} else {
		out = append(out, model.SGE{Length: 2*g.Length + 1, Key: g.Key})
		if g.Length > 1 {
			out = append(out, model.SGE{Length: g.Length / 2, Key: g.Key})
		}
	}
	if g.Key != 0 {
		out = append(out, model.SGE{Length: g.Length, Key: 0})
	}
	return out
}

// msgVariants are a message's neighbours: longer, shorter, empty, and a
// Send with or without immediate data for the other.
func msgVariants(m model.Message) []model.Message {
	out := []model.Message{{Opcode: m.Opcode, Len: m.Len + m.Len/2 + 1, Imm: m.Imm}}
	if m.Len > 1 {
		out = append(out, model.Message{Opcode: m.Opcode, Len: m.Len / 2, Imm: m.Imm})
	}
	if m.Len > 0 {
		out = append(out, model.Message{Opcode: m.Opcode, Len: 0, Imm: m.Imm})
	}
	switch m.Opcode {
	case model.Send:
		out = append(out, model.Message{Opcode: model.SendImm, Len: m.Len, Imm: m.Imm})
	case model.SendImm:
		out = append(out, model.Message{Opcode: model.Send, Len: m.Len, Imm: m.Imm})
	}
	return out
}

// makeable says whether the generator could have made ops' messages (a
// neighbour may not): each no longer than its QP type's largest message,
// of an opcode the device sends, and on UD a Send, with or without
// immediate data, sent whole.
func makeable(info drivers.Info, ops []model.Op) bool {
	var types []model.QPType
	for _, op := range ops {
		switch o := op.(type) {
		case model.CreateQP:
			types = append(types, o.Type)
		case model.Arrive:
			if o.QP >= len(types) || !opcodeOK(info, o.Msg.Opcode) {
				return false
			}
			limit := info.MaxMessage
			if types[o.QP] == model.UD {
				limit = info.MaxUDMessage
				if o.FirstPacketOnly || o.Msg.Opcode != model.Send && o.Msg.Opcode != model.SendImm {
					return false
				}
			}
			if o.Msg.Len > limit {
				return false
			}
		}
	}
	return true
}
