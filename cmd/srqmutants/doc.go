// Command srqmutants measures the conformance suite on mutants of the
// emulator nobody wrote by hand: it generates them from drivers/emu
// (package mutants), builds each into a small runner with go build
// -overlay (no copy of the tree), runs the suite on it per seed as
// srqconform run does by default, searches the mutants no seed catches
// for a witness script (package drivescript) that tells them from the
// emulator, and reports per mutant and in figures. A mutant a script tells
// apart is then run through the suite's own scenarios and first 200 random
// cases per seed, and every case it passed again on the emulator: where
// the two answer a step differently, the model accepted the mutant's
// answer, and the mutant is "allowed by the profile" (the step is its
// witness), not escaped.
//
//	srqmutants [-seeds 1,2,3] [-budget 5s] [-sample N] [-parallel 2]
//	           [-format md|json] [-o FILE] [-scripts 2000] [-steps 80]
//	           [-mutants ID,ID]
//	srqmutants -review VERDICTS.json -report SWEEP.json
//
// With -review it sweeps nothing: it compares the blame of a sweep report
// (-format json) with an independent reviewer's verdicts on some of its
// mutants (a JSON list of {id, observable, broken, primary, primary_tie,
// why}: the rules whose statements the mutant breaks, and the one a
// driver author should be told of) and prints how the caught runs' blame
// meets the label, the reviewer's primary rule and the rules the reviewer
// found broken (review.go).
//
// Bad flags: one line on stderr, exit 2. A sweep that cannot run (the
// generator or the unmutated runner failing) exits 1. Interrupted
// (SIGINT, SIGTERM), it writes what it has and exits 130. Low figures
// are no failure: the command measures.
//
// Where to read: main.go (flags and run), sweep.go (generate, build,
// run each mutant and search witnesses), figures.go (the report),
// review.go (-review). The
// runner it builds is cmd/srqmutants/runner.
package main
