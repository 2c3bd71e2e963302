package model

import (
	"slices"
	"testing"
)

// TestRuleSetHoldsWhatWasAdded adds catalogue rules (first, last, and
// across the word boundary) and IDs outside the catalogue, twice each,
// and checks that each and union give each of them once.
func TestRuleSetHoldsWhatWasAdded(t *testing.T) {
	ids := []RuleID{catalogue[0].ID, catalogue[len(catalogue)-1].ID, RuleID(63), RuleID(64), RuleID(255)}
	var a, b ruleSet
	for _, id := range ids {
		a.add(id)
		a.add(id)
	}
	b.add(ids[0])
	b.union(&a)
	for _, s := range []*ruleSet{&a, &b} {
		var got []RuleID
		s.each(func(r RuleID) { got = append(got, r) })
		slices.Sort(got)
		want := slices.Clone(ids)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("ruleSet holds %v, want %v", got, want)
		}
	}
}

// TestOpenCountCountsTheOpenFields checks the model's count of open
// fields against OpenFields, on every named profile and on each with every
// rule's fields opened (NewRelaxed).
func TestOpenCountCountsTheOpenFields(t *testing.T) {
	var ids []RuleID
	for _, r := range catalogue {
		ids = append(ids, r.ID)
	}
	for _, p := range append(slices.Clone(namedProfiles), Documented()) {
		q := p
		relaxFields(&q, ids)
		for _, x := range []Profile{p, q} {
			if got, want := openCount(&x), len(x.OpenFields()); got != want {
				t.Errorf("%s: openCount %d, want %d (%v)", x.Name, got, want, x.OpenFields())
			}
		}
	}
}
