package model

import (
	"fmt"
	"reflect"
	"slices"
)

// Relaxation: every rule can be relaxed. A relaxed rule's checks are widened
// to admit the misbehaviours the rule forbids, as extra candidate outcomes,
// the way an open profile field admits each of its values. A model with a
// set of rules relaxed accepts every device that breaks at most those rules
// (in the ways the rules' fault modes describe) and keeps every other rule.
//
// Each rule's fault mode is stated where its check is made, by one of:
//   - touch: the rule's check ran (coverage), nothing is widened;
//   - may / choose: a hidden departure (a WR fetched out of order, a slot
//     that never frees); the candidate forks into the faithful branch and the
//     faulty ones, and later observations decide;
//   - excuse: a visible departure in the observation itself (a wrong
//     bad_wr, a missing event); the model adopts what the device did.
//
// An implementation-defined rule is relaxed also by opening the profile
// fields it names to every value (relaxFields).
//
// The diagnosis of a failing trace (Diagnose) is the smallest set of rules
// whose relaxation makes the trace consistent.

// FaultUse is one departure a candidate took: the step (1-based) and the
// rule whose fault mode explains it.
type FaultUse struct {
	Step int    `json:"step"`
	Rule RuleID `json:"rule"`
}

// faultFork is raised by a fault point of a relaxed rule that the current
// script has not decided: the model re-runs the step once per branch.
type faultFork struct{ n int }

// relaxSet is the set of relaxed rule IDs, shared read-only by candidates.
type relaxSet map[RuleID]bool

// touch records that rule's check ran in this step.
func (m *machine) touch(rule RuleID) {
	m.touched.add(rule)
}

// relaxed reports whether rule is relaxed.
func (m *machine) relaxed(rule RuleID) bool {
	m.asked.add(rule)
	return m.relax != nil && m.relax[rule]
}

// relaxedBroad reports whether rule is relaxed and may admit a departure
// in any shape where it shows (not Model.Narrow).
func (m *machine) relaxedBroad(rule RuleID) bool { return !m.narrow && m.relaxed(rule) }

// choose is a fault point with n branches: 0 is the faithful behaviour, the
// others the departures rule's fault mode allows. It marks the check as run.
func (m *machine) choose(rule RuleID, n int) int {
	m.touch(rule)
	if n < 2 || !m.relaxed(rule) || m.faithful {
		return 0
	}
	var i int
	if m.cursor < len(m.script) {
		i = m.script[m.cursor]
	} else {
		panic(faultFork{n: n})
	}
	m.cursor++
	if i > 0 {
		m.depart(rule)
	} else {
		m.declines = append(clip(m.declines), rule)
	}
	return i
}

// mixed scores how inconsistently a candidate used its hidden departures:
// for each rule, the lesser of the times it took the departure and the
// times it kept to the rule at a fault point. A real device's departure is
// mostly systematic (it truncates every oversize message, or none), so a
// beam that must drop candidates drops the most mixed first: dropping by
// fault count alone discards the device that departs every time.
func (m *machine) mixed() int {
	took := map[RuleID]int{}
	for _, f := range m.faults {
		took[f.Rule]++
	}
	kept := map[RuleID]int{}
	for _, r := range m.declines {
		kept[r]++
	}
	score := 0
	for r, n := range took {
		score += min(n, kept[r])
	}
	return score
}

// branch forks n ways on what a departure already taken leaves open (what a
// device does with a WR whose contents the model lost). It records no
// departure of its own.
func (m *machine) branch(n int) int {
	if m.faithful {
		return 0
	}
	if m.cursor < len(m.script) {
		i := m.script[m.cursor]
		m.cursor++
		return i
	}
	panic(faultFork{n: n})
}

// may is a two-way fault point: true takes the departure.
func (m *machine) may(rule RuleID) bool { return m.choose(rule, 2) == 1 }

// depart records a departure of rule at this step. A fault point
// (choose, excuse) records its own; a caller records one more where a
// branch counts as two departures, so that a trace another rule explains
// with one goes to that rule.
func (m *machine) depart(rule RuleID) {
	m.faults = append(clip(m.faults), FaultUse{Step: m.stepN, Rule: rule})
}

// excuse is called where an observation differs from what rule requires:
// when the rule is relaxed the departure is recorded and the caller adopts
// the observation; otherwise the caller reports the deviation.
func (m *machine) excuse(rule RuleID) bool {
	m.touch(rule)
	if !m.relaxed(rule) || m.faithful {
		return false
	}
	m.depart(rule)
	return true
}

// FieldOwner names, for every profile field, the rule a device breaks when
// it departs from the profile on that field. Relaxing the rule opens the
// field; a behaviour set held to a profile it departs from fails exactly
// the owners of the fields where it departs.
// It is derived from each rule's Facts.Owns.
var FieldOwner = fieldOwners()

func fieldOwners() map[string]RuleID {
	own := map[string]RuleID{}
	for _, r := range catalogue {
		for _, f := range r.Owns {
			own[f] = r.ID
		}
	}
	return own
}

// relaxFields opens, in p, every profile field the rules own to each of
// its values, and widens the status sets to every status. It returns, for
// each choice field it opened, how many values the profile itself allows:
// a candidate that takes a later value has departed.
func relaxFields(p *Profile, rules []RuleID) map[string]int {
	own := map[string]int{}
	for field, owner := range FieldOwner {
		if slices.Contains(rules, owner) {
			if c, ok := reflect.ValueOf(*p).FieldByName(field).Interface().(choice); ok {
				own[field] = c.width()
			}
			openField(p, field)
		}
	}
	return own
}

// decided records a departure when a candidate takes a value of an opened
// field that the profile itself does not allow.
func (m *machine) decided(field string, i int) {
	if n, ok := m.ownWidth[field]; ok && i >= n {
		m.depart(FieldOwner[field])
	}
}

// openField sets field name of p to every value its type has (fieldKinds),
// keeping the profile's own values first so that the canonical outcome is
// unchanged.
func openField(p *Profile, name string) {
	v := reflect.ValueOf(p).Elem().FieldByName(name)
	if !v.IsValid() {
		return
	}
	if s, ok := v.Interface().(StatusSet); ok {
		v.Set(reflect.ValueOf(s | AnyError))
		return
	}
	k, ok := fieldKinds[v.Type()]
	if !ok {
		panic(fmt.Sprintf("model: no value list for profile field %s of type %s", name, v.Type()))
	}
	vals := p.values(name)
	for _, x := range k.values {
		if !slices.Contains(vals, x) {
			vals = append(vals, x)
		}
	}
	v.Set(reflect.ValueOf(k.build(vals)))
}

// Field is a set of the parts of what a message leaves behind that a
// rule of receiving governs: a completion's fields and the peer's outcome.
type Field uint8

// The fields of a message's outcome.
const (
	FieldStatus  Field = 1 << iota // the completion's status (and what it does to the QP)
	FieldOpcode                    // the completion's opcode
	FieldByteLen                   // the completion's byte_len
	FieldImm                       // the completion's immediate
	FieldPayload                   // the bytes scattered into the WR's SGEs
	FieldPeer                      // what the sender hears
)

// governs lists, for each rule that a message's completion can have at
// stake (cqe.stake), the fields its statement constrains. A rule about
// whether a message is processed at all (the QP state rules, which
// opcodes consume) governs what the sender hears; a rule about whether
// it fits governs the status, the length, where the bytes go and the
// sender's outcome; the immediate's rules govern the immediate.
var governs = map[RuleID]Field{
	RuleQPNoFetchStates: FieldPeer,
	RuleQPFetchStates:   FieldPeer,
	RuleFetchOpcodes:    FieldPeer,
	RuleSRQErrNoFetch:   FieldPeer,
	RuleRecvImm:         FieldImm,
	RuleRecvWriteImm:    FieldStatus | FieldOpcode | FieldByteLen | FieldImm | FieldPayload | FieldPeer,
	RuleUDGRH:           FieldStatus | FieldByteLen | FieldPayload | FieldPeer,
	RuleSGELen0:         FieldStatus | FieldByteLen | FieldPayload | FieldPeer,
	RuleRecvNumSGE0:     FieldStatus | FieldByteLen | FieldPayload | FieldPeer,
	RuleRecvFit:         FieldStatus | FieldByteLen | FieldPayload | FieldPeer,
	RuleRecvBadKey:      FieldStatus | FieldPayload | FieldPeer,
	RuleRecvTooLarge:    FieldStatus | FieldByteLen | FieldPayload | FieldPeer,
}

// Governs reports whether rule's statement constrains every one of the
// given fields of a message's outcome.
func Governs(rule RuleID, fields Field) bool { return governs[rule]&fields == fields }
