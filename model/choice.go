package model

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// Choice is a profile field: the set of values a driver may show for one
// implementation-defined behaviour. A Choice with one value is decided; one
// with several means the sources allow each, and the model keeps a candidate
// for every value until observations rule it out.
type Choice[T comparable] struct{ vals []T }

// One returns a decided Choice.
func One[T comparable](v T) Choice[T] { return Choice[T]{vals: []T{v}} }

// Either returns a Choice that allows each of vs.
func Either[T comparable](vs ...T) Choice[T] { return Choice[T]{vals: vs} }

// Get returns the value of a decided Choice, or the first allowed value.
func (c Choice[T]) Get() T {
	if len(c.vals) == 0 {
		var zero T
		return zero
	}
	return c.vals[0]
}

// Values returns the allowed values.
func (c Choice[T]) Values() []T { return append([]T(nil), c.vals...) }

// Allows reports whether v is one of the allowed values.
func (c Choice[T]) Allows(v T) bool {
	for _, x := range c.vals {
		if x == v {
			return true
		}
	}
	return false
}

// Decided reports whether exactly one value is allowed.
func (c Choice[T]) Decided() bool { return len(c.vals) == 1 }

// Equal reports whether both allow the same values in the same order.
func (c Choice[T]) Equal(o Choice[T]) bool {
	return reflect.DeepEqual(c.vals, o.vals)
}

func (c Choice[T]) String() string {
	parts := make([]string, len(c.vals))
	for i, v := range c.vals {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, " | ")
}

// MarshalJSON writes a decided Choice as its value and an open one as a list.
func (c Choice[T]) MarshalJSON() ([]byte, error) {
	if len(c.vals) == 1 {
		return json.Marshal(c.vals[0])
	}
	return json.Marshal(c.vals)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Choice[T]) UnmarshalJSON(b []byte) error {
	var one T
	if err := json.Unmarshal(b, &one); err == nil {
		c.vals = []T{one}
		return nil
	}
	var many []T
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	if len(many) == 0 {
		return fmt.Errorf("empty choice")
	}
	c.vals = many
	return nil
}

func (c Choice[T]) width() int       { return len(c.vals) }
func (c Choice[T]) pick(i int) any   { return Choice[T]{vals: []T{c.vals[i]}} }
func (c Choice[T]) describe() string { return c.String() }
func (c Choice[T]) texts() []string {
	out := make([]string, len(c.vals))
	for i, v := range c.vals {
		out[i] = fmt.Sprint(v)
	}
	return out
}

// choice is the untyped view of a Choice that Expand and the reports use.
type choice interface {
	width() int
	pick(i int) any
	describe() string
	texts() []string
}
