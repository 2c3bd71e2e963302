// Command runner is what srqmutants builds once per mutant, with the
// mutated emulator file overlaid (go build -overlay): it runs the
// conformance suite on the emulator for one seed, or random driver
// scripts, and prints the outcome as JSON (package mutants/outcome).
//
//	runner check -seed 1 -budget 5s
//	runner scripts -from 1 -n 2000 -steps 80
//	runner transcript -seed 17 -steps 80
//
// It is one file, main.go; what it prints is package mutants/outcome.
package main
