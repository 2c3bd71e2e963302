package faulty

import (
	"fmt"
	"regexp"
	"sort"
)

// Bug is one driver bug.
type Bug struct {
	// Name is short and unique ("badwr-chunk-relative").
	Name string
	// Description says in one line what the driver does and why the rule
	// statement says the observation is wrong.
	Description string
	// Rule is the label: the ID of the rule whose statement the bug
	// contradicts.
	Rule string
	// Witness is a script on which the bug's transcript differs from the
	// emulator's.
	Witness func(*Script)

	hooks func() *hooks
}

// All returns every bug, sorted by rule and then name.
func All() []Bug {
	var out []Bug
	for _, group := range [][]Bug{postBugs, createBugs, limitBugs, qpBugs, recvBugs} {
		out = append(out, group...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Rule != out[j].Rule {
			return out[i].Rule < out[j].Rule
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Select returns the bugs whose name matches re.
func Select(re *regexp.Regexp) []Bug {
	var out []Bug
	for _, b := range All() {
		if re.MatchString(b.Name) {
			out = append(out, b)
		}
	}
	return out
}

// ByName returns the bug called name.
func ByName(name string) (Bug, error) {
	for _, b := range All() {
		if b.Name == name {
			return b, nil
		}
	}
	return Bug{}, fmt.Errorf("faulty: no bug named %q", name)
}
