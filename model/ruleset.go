package model

import (
	"fmt"
	"math/bits"
)

// ruleSet is a set of rule IDs: a bit per catalogue rule, so that marking
// the checks a step ran (machine.touch) allocates nothing; an ID outside
// the catalogue is kept in a list.
type ruleSet struct {
	bits  [2]uint64
	other []RuleID
}

// ruleBit numbers the catalogue's rules for ruleSet.
var ruleBit = func() map[string]int {
	if len(catalogue) > 128 {
		panic(fmt.Sprintf("model: %d rules in the catalogue: ruleSet holds 128", len(catalogue)))
	}
	out := make(map[string]int, len(catalogue))
	for i, r := range catalogue {
		out[r.ID.String()] = i
	}
	return out
}()

// add puts rule in s.
func (s *ruleSet) add(rule RuleID) {
	if i, ok := ruleBit[rule.String()]; ok {
		s.bits[i/64] |= 1 << (i % 64)
		return
	}
	for _, r := range s.other {
		if r == rule {
			return
		}
	}
	s.other = append(clip(s.other), rule)
}

// union adds every rule of t to s.
func (s *ruleSet) union(t *ruleSet) {
	for i := range s.bits {
		s.bits[i] |= t.bits[i]
	}
	for _, r := range t.other {
		s.add(r)
	}
}

// each calls f once for every rule in s.
func (s *ruleSet) each(f func(rule RuleID)) {
	for w, b := range s.bits {
		for b != 0 {
			i := bits.TrailingZeros64(b)
			b &^= 1 << i
			f(catalogue[w*64+i].ID)
		}
	}
	for _, r := range s.other {
		f(r)
	}
}
