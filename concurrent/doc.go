// Package concurrent runs concurrent workloads on an SRQ (several threads
// posting, several QPs receiving, QP state changes and limit arming while
// traffic flows, a poller of its own) and checks the recorded history for
// linearizability against the reference model (package model) with
// porcupine: some order of the operations, each taking effect between its
// call and its return, must be a sequence the model accepts.
//
// A consuming message is one operation, from the sender's post to the
// moment its completion was seen; it carries its number as immediate data,
// so its completion names it. An operation whose outcome the harness could
// not learn (a timeout) is an "info" operation: it may or may not have
// taken effect, and its return is the end of time.
//
// Where to read: history.go (an Operation and a History: what is
// recorded), workload.go (Options and Run: the threads and what they
// record), check.go (Check: the porcupine adapter, the rule a violation
// is blamed on and the reduction of a violating history), report.go (the
// report of a run of several histories). The model's own stepping is in
// package model.
package concurrent
