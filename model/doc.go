// Package model is the executable reference model of Shared Receive Queue
// semantics: what ibv_post_srq_recv, ibv_query_srq, ibv_modify_srq and the
// receive side of an SRQ-attached QP promise, written as a pure,
// deterministic state machine. A driver author can read it as the
// specification; srqconform checks devices against it.
//
// Where to read:
//
//   - rules.go: the rule catalogue. Every check the model makes cites one of
//     these IDs; each rule names its source and whether it is documented,
//     implementation-defined or driver consensus. seeds.go maps every SRQ
//     statement of the seed documents to rules or to an out-of-scope reason.
//     reports/rules.md is the rendered catalogue.
//   - profile.go and profiles.go: every implementation-defined choice as a
//     named field, with the documented semantics (Documented) and the
//     profiles of rxe, rxe on Linux 6.1, mlx5 and siw, each field with its
//     source and whether anyone verified it.
//   - step.go: the step dispatcher and the Deviation a step returns, then
//     one function per operation, by family: step_resources.go (create,
//     destroy, query, arm, resize, modify), step_post.go (ibv_post_srq_recv
//     and ibv_post_recv), step_arrive.go (a message arriving, the WR it
//     fetches and what it delivers), step_poll.go (completions and events
//     as polled, and the departures diagnosis adopts there). This is the
//     specification.
//   - machine.go: the state (a FIFO of copied WRs, slot accounting, the
//     armed limit, the QPs and their states, the CQ and the event queue).
//
// Open choices. A profile field may allow several values (the documents are
// silent, or a driver's behaviour is unverified). The Model then holds one
// candidate machine per combination still consistent with what was observed,
// splitting a candidate only when a step first depends on a choice. A device
// deviates when no candidate allows its observation; the Deviation names the
// rule at stake. Model.Resolved tells which values a device showed.
//
// Observations. Post returns an errno and a bad_wr index; arrivals return
// what the sending peer saw; completions and asynchronous events are seen
// only when polled (Poll). Statuses are compared as sets where the sources
// allow more than one; events as multisets, since the asynchronous queue
// does not order events of different objects.
package model
