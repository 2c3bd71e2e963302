// Package conformance is the suite: it drives a device (a drivers.Driver)
// and the reference model (package model) side by side, one operation at
// a time, and reports every rule the device breaks with a short trace
// that replays.
//
// A run (Check) makes the deterministic scenarios first, one or more per
// rule, then random cases generated from the model's state and biased to
// the edges, as a property test under rapid. Every step is made on the
// model and on the device; where the device's answer is one the model
// does not allow, the step deviates and the trace ends there. A failing
// trace is shrunk, diagnosed (which rule it breaks, and whether relaxing
// that rule explains it), and the run then adopts the device's behaviour
// for that rule (the model relaxes it) and goes on, so that one root cause
// shows as one failing rule. The Report holds a row per rule, the failures
// with their traces, and where the time went. Runs may be made from
// several goroutines at once: each makes and shrinks its own cases.
//
// Where to read:
//
//   - check.go: Options and Check, the run from start to end; report.go:
//     the Report schema; blame.go: the diagnosis across traces (settling a
//     failure on a rule, unifying, shrinking); variants.go: a
//     counterexample's neighbours, which tell apart the rules that
//     explain it alike; rapid.go: the adapter that
//     runs random cases under rapid; testing.go: Test, the same from a go
//     test.
//   - session.go: one session of model and device side by side; exec.go:
//     how a model operation is made on the driver and what was observed;
//     convert.go: the only place the drivers and model types meet (their
//     enums line up value by value, checked by enums_test.go).
//   - scenarios.go: the scenarios, by rule; generate.go: the random cases;
//     features.go: the states a run reached.
//   - trace.go: TraceStep and Trace, and how a trace prints; replay.go and
//     validate.go: replay files (NewReplay, ReadReplay, Replay), which
//     hold a failing trace and are read back strictly.
//   - infer.go: Infer, which finds the profile a device shows; known.go:
//     known failures a CI run accepts; timing.go: the phases a run's time
//     is split into.
//
// Reports are rendered by conformance/render; the command is
// cmd/srqconform.
package conformance
