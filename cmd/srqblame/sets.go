package main

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/faulty"
	"github.com/srqconform/srqconform/drivers/faulty2"
)

// bug is one held-out bug as srqblame measures it, whatever set it comes
// from.
type bug struct {
	Name        string
	Rule        string // the label: the rule the bug breaks
	Description string
	driver      func() drivers.Driver
}

// defaultSet is the set measured when -set is not given.
const defaultSet = "faulty"

// sets are the bug sets -set names: each returns its bugs in its own order.
var sets = map[string]func() []bug{
	"faulty": func() []bug {
		var out []bug
		for _, b := range faulty.All() {
			out = append(out, bug{Name: b.Name, Rule: b.Rule, Description: b.Description, driver: b.Driver})
		}
		return out
	},
	"faulty2": func() []bug { return fromFaulty2(faulty2.All()) },
	"faulty3": func() []bug { return fromFaulty2(faulty2.Third()) },
	"faulty4": func() []bug { return fromFaulty2(faulty2.Fourth()) },
	"faulty5": func() []bug { return fromFaulty2(faulty2.Fifth()) },
	"faulty6": func() []bug { return fromFaulty2(faulty2.Sixth()) },
}

// fromFaulty2 makes bugs of a batch of drivers/faulty2.
func fromFaulty2(bs []faulty2.Bug) []bug {
	out := make([]bug, 0, len(bs))
	for _, b := range bs {
		out = append(out, bug{Name: b.Name, Rule: b.Rule, Description: b.Description, driver: b.Driver})
	}
	return out
}

// setSource names where set's bugs are defined, for a report's title.
func setSource(set string) string {
	switch set {
	case "faulty3":
		return "drivers/faulty2, Third"
	case "faulty4":
		return "drivers/faulty2, Fourth"
	case "faulty5":
		return "drivers/faulty2, Fifth"
	case "faulty6":
		return "drivers/faulty2, Sixth"
	}
	return "drivers/" + set
}

// setNames lists the sets, sorted.
func setNames() []string {
	var names []string
	for n := range sets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// selectBugs returns the bugs of set whose name matches re.
func selectBugs(set string, re *regexp.Regexp) ([]bug, error) {
	all, ok := sets[set]
	if !ok {
		return nil, fmt.Errorf("%w: -set %q, want one of %s", errUsage, set, strings.Join(setNames(), ", "))
	}
	return slices.DeleteFunc(all(), func(b bug) bool { return !re.MatchString(b.Name) }), nil
}
