// Package mutants generates mutants of the emulator's source (drivers/emu)
// with go/ast: small syntactic changes (a comparison's boundary moved, a
// condition negated, a statement dropped, ...), each labelled with the
// rule the mutated code carries out, as the emulator's rule annotations
// say.
//
// An annotation is a line comment "// rule: ID" or "// rules: ID, ID" in a
// function's (or a package-level var's) doc comment, or on the line before
// a statement, which it then labels instead of the function; "// rule:
// none (why)" marks code no mutant is made of (the deviation switches and
// the bookkeeping of the hand-written mutants). A mutant is labelled with
// the innermost annotation around the code it changes; an early return,
// which skips the whole body, also with every statement annotation in it.
//
// Where to read: label.go (the annotations and CheckLabel), generate.go
// (the mutation operators, Mutant and Set), typecheck.go (dropping the
// mutants that do not compile). cmd/srqmutants runs them.
package mutants
