package model

import (
	"fmt"
	"math"
	"slices"
	"sync"
)

// RuleID names a rule of the catalogue. Its values are the constants in
// ruleids.go (RulePostOrder for "POST-ORDER", ...), generated from the
// catalogue; an untyped string constant does not convert to it, so a
// misspelled rule ID in Go source is a compile error. The zero RuleID is
// no rule. The constants are numbered in the order of their names, so
// ordering RuleIDs orders their names. A RuleID reads and writes as its
// name in JSON, YAML and text (MarshalText, UnmarshalText); ParseRuleID
// turns a name from outside (a flag, a file) into one. A new rule needs
// its constant and its name in ruleids.go, in the order of the names (the
// ruleids tool that wrote the file writes them from the catalogue), and
// its catalogue entry with its Facts.
type RuleID uint8

// String returns the rule's name ("POST-ORDER"), "" for the zero RuleID,
// and RuleID(n) for a value that names no rule.
func (id RuleID) String() string {
	if int(id) < len(ruleNames) {
		return ruleNames[id]
	}
	if name, ok := foreign.name(id); ok {
		return name
	}
	return fmt.Sprintf("RuleID(%d)", uint8(id))
}

// Valid reports whether id names a rule of the catalogue.
func (id RuleID) Valid() bool { return id != 0 && int(id) < len(ruleNames) }

// ParseRuleID returns the RuleID named name, or an error when no rule of
// the catalogue has that name.
func ParseRuleID(name string) (RuleID, error) {
	if i := slices.Index(ruleNames[1:], name); i >= 0 {
		return RuleID(i + 1), nil
	}
	return 0, fmt.Errorf("model.ParseRuleID(%q): no rule of the catalogue has that name (see srqconform rules)", name)
}

// MarshalText writes the rule's name; the zero RuleID writes as "".
func (id RuleID) MarshalText() ([]byte, error) {
	if _, ok := foreign.name(id); !ok && id != 0 && !id.Valid() {
		return nil, fmt.Errorf("model.RuleID.MarshalText: %d names no rule", uint8(id))
	}
	return []byte(id.String()), nil
}

// UnmarshalText reads a rule's name; "" reads as the zero RuleID. A name
// the catalogue does not have (a report of an older tree, a replay file
// naming a rule since renamed) reads as a RuleID that is not Valid and
// writes back as the same name, so that such files read and write as
// they did when rule IDs were strings; whoever reads a file from outside
// checks Valid (ReadReplay does).
func (id *RuleID) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*id = 0
		return nil
	}
	if r, err := ParseRuleID(string(b)); err == nil {
		*id = r
		return nil
	}
	r, err := foreign.intern(string(b))
	if err != nil {
		return err
	}
	*id = r
	return nil
}

// RuleNames returns the names of ids, in their order.
func RuleNames(ids []RuleID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// foreign holds the names read from files that the catalogue does not
// have, numbered after the catalogue's.
var foreign foreignNames

type foreignNames struct {
	mu    sync.Mutex
	names []string
}

func (f *foreignNames) name(id RuleID) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := int(id) - len(ruleNames)
	if i < 0 || i >= len(f.names) {
		return "", false
	}
	return f.names[i], true
}

func (f *foreignNames) intern(name string) (RuleID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := slices.Index(f.names, name); i >= 0 {
		return RuleID(len(ruleNames) + i), nil
	}
	if len(ruleNames)+len(f.names) > math.MaxUint8 {
		return 0, fmt.Errorf("model.RuleID.UnmarshalText(%q): more than %d rule names the catalogue does not have", name, math.MaxUint8-len(ruleNames))
	}
	f.names = append(f.names, name)
	return RuleID(len(ruleNames) + len(f.names) - 1), nil
}
