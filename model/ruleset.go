package model

import "math/bits"

// ruleSet is a set of rule IDs: a bit per RuleID value (a uint8), so that
// marking the checks a step ran (machine.touch) allocates nothing.
type ruleSet struct {
	bits [4]uint64
}

// add puts rule in s.
func (s *ruleSet) add(rule RuleID) { s.bits[rule/64] |= 1 << (rule % 64) }

// union adds every rule of t to s.
func (s *ruleSet) union(t *ruleSet) {
	for i := range s.bits {
		s.bits[i] |= t.bits[i]
	}
}

// each calls f once for every rule in s, in RuleID order.
func (s *ruleSet) each(f func(rule RuleID)) {
	for w, b := range s.bits {
		for b != 0 {
			i := bits.TrailingZeros64(b)
			b &^= 1 << i
			f(RuleID(w*64 + i))
		}
	}
}

// has reports whether rule is in s.
func (s *ruleSet) has(rule RuleID) bool { return s.bits[rule/64]&(1<<(rule%64)) != 0 }
