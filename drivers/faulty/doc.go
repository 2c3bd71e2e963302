// Package faulty holds a held-out set of SRQ driver bugs: each wraps the
// conforming emulator (emu.New) through the public drivers interfaces and
// changes what some calls return or do, the way a careless driver would.
//
// The bugs were written from the rule statements (model/rules.go) and the
// driver interface alone, to measure how well a conformance run blames the
// rule a bug breaks. Every bug names that rule (its label) and carries a
// witness: a short script of driver calls on which the bug's transcript
// differs from the emulator's.
//
// Where to read: bug.go (Bug, All, Select), wrap.go (the wrapper every
// bug hooks into), then the bugs by the verbs they touch (bugs_post.go,
// bugs_srq.go, bugs_limit.go, bugs_qp.go, bugs_recv.go) and script.go
// (the witness scripts and Run). helpers.go holds what the bugs share.
package faulty
