package model

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The enumerations a replay file or a history holds are written by name
// ("State": "RTS"), and read by name or, as files written before, by
// number ("State": 3). A number the type does not know is kept for the
// reader's checks to name (validateDecoded in package conformance).

func (t QPType) MarshalJSON() ([]byte, error) { return enumMarshal(t, []QPType{RC, UD}) }
func (t *QPType) UnmarshalJSON(b []byte) error {
	return enumUnmarshal(b, t, []QPType{RC, UD}, "QP type")
}
func (s QPState) MarshalJSON() ([]byte, error)  { return enumMarshal(s, QPStates) }
func (s *QPState) UnmarshalJSON(b []byte) error { return enumUnmarshal(b, s, QPStates, "QP state") }
func (o Opcode) MarshalJSON() ([]byte, error)   { return enumMarshal(o, Opcodes) }
func (o *Opcode) UnmarshalJSON(b []byte) error  { return enumUnmarshal(b, o, Opcodes, "opcode") }

// enumMarshal writes v as its name when it is one of known, else as its
// number.
func enumMarshal[T interface {
	~uint8
	fmt.Stringer
}](v T, known []T) ([]byte, error) {
	for _, k := range known {
		if k == v {
			return json.Marshal(v.String())
		}
	}
	return json.Marshal(uint8(v))
}

// enumUnmarshal reads a name of known, or a number.
func enumUnmarshal[T interface {
	~uint8
	fmt.Stringer
}](b []byte, v *T, known []T, kind string) error {
	var name string
	if err := json.Unmarshal(b, &name); err != nil {
		var n uint8
		if err := json.Unmarshal(b, &n); err != nil {
			return err
		}
		*v = T(n)
		return nil
	}
	names := make([]string, len(known))
	for i, k := range known {
		if k.String() == name {
			*v = k
			return nil
		}
		names[i] = k.String()
	}
	return fmt.Errorf("unknown %s %q: want one of %s", kind, name, strings.Join(names, ", "))
}
