// Package outcome holds the records the mutant runner
// (cmd/srqmutants/runner) prints as JSON and the sweep (cmd/srqmutants)
// reads.
//
// It is one file, outcome.go: SeedRun (a suite run on one seed) and
// Scripts (a run of random driver scripts).
package outcome
