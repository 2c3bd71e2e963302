package faulty2

import (
	"fmt"
	"regexp"
	"sort"

	"github.com/srqconform/srqconform/drivers"
)

// Bug is one held-out driver bug.
type Bug struct {
	// Name is short and unique ("ring-wrap-loses-slot").
	Name string
	// Rule is the label: the ID of the one rule whose statement the bug
	// contradicts.
	Rule string
	// Description says in one line what the driver does and why the
	// rule's statement says it is wrong.
	Description string
	// Subtle says the bug needs more than the plain run of Trivial to
	// show: state built up over several operations, one QP type, one
	// opcode, a list, a resize.
	Subtle bool
	// Witness is a script on which the bug's transcript differs from the
	// plain emulator's.
	Witness func(*Script)

	hooks func() *hooks
	info  func(drivers.Info) drivers.Info
}

// groups are the bugs by area, in the files that define them.
var groups = [][]Bug{postBugs, attrBugs, limitBugs, qpBugs, recvBugs}

// All returns every bug, sorted by rule and then name.
func All() []Bug {
	var out []Bug
	for _, g := range groups {
		out = append(out, g...)
	}
	sortBugs(out)
	return out
}

// Third returns the third batch of bugs (bugs_third.go), written from the
// rule statements alone and kept out of All, sorted by rule and then name.
func Third() []Bug {
	out := append([]Bug(nil), thirdBugs...)
	sortBugs(out)
	return out
}

// Fourth returns the fourth batch of bugs (bugs_fourth.go), written from
// the rule statements alone and kept out of All, sorted by rule and then
// name.
func Fourth() []Bug {
	out := append([]Bug(nil), fourthBugs...)
	sortBugs(out)
	return out
}

// Fifth returns the fifth batch of bugs (bugs_fifth.go), written from the
// rule statements alone and kept out of All, sorted by rule and then name.
func Fifth() []Bug {
	out := append([]Bug(nil), fifthBugs...)
	sortBugs(out)
	return out
}

// Sixth returns the sixth batch of bugs (bugs_sixth.go), written by a
// helper from the rule statements, the profiles, the driver interface and
// the emulator alone and kept out of All, sorted by rule and then name.
func Sixth() []Bug {
	out := append([]Bug(nil), sixthBugs...)
	sortBugs(out)
	return out
}

// sortBugs sorts bugs by rule and then name.
func sortBugs(out []Bug) {
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Rule != out[j].Rule {
			return out[i].Rule < out[j].Rule
		}
		return out[i].Name < out[j].Name
	})
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

// ByName returns the bug called name, of All, Third, Fourth, Fifth or
// Sixth.
func ByName(name string) (Bug, error) {
	for _, b := range append(append(append(append(All(), Third()...), Fourth()...), Fifth()...), Sixth()...) {
		if b.Name == name {
			return b, nil
		}
	}
	return Bug{}, fmt.Errorf("faulty2: no bug named %q", name)
}
