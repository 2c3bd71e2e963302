// Package drivers defines the interface srqconform drives a device through:
// a small, verbs-shaped view of one device, one SRQ, the QPs attached to it
// and a peer that sends to each QP.
//
// A third party implements Driver for a simulator or another verbs binding
// and hands it to conformance.Check. The contract, in brief:
//
//   - Verbs return what the verb returned: an errno as the provider gives it
//     (sign included, never normalised), and for posts the index of bad_wr.
//     A Go error is for the harness failing (a resource could not be made,
//     a wait that ran out), never for a verb's own failure. CreateSRQ and
//     CreateSRQEx, which return no errno, report the device refusing the
//     SRQ as *Refused with the errno the create set: the model judges it
//     like any result.
//   - An error that wraps ErrCallFailed says the driver's own record of
//     the device's state refused the call (an SRQ it holds closed that the
//     caller has not closed): conformance.Check observes the call as
//     failed, a departure from the call's rule, shrunk and replayed.
//   - A panic in a verb is the driver's crash, a departure from the verb's
//     rule in the same way; a panic or hang in Close stops the run with a
//     harness error that names the call, and keeps the report.
//   - Every call is synchronous from the caller's view: when Deliver returns,
//     the receiving side has processed or dropped the message as far as the
//     driver can tell. PollCQ and PollEvents never block.
//   - Close releases everything the SRQ or device made, in reverse order,
//     and is safe after any failure and when called twice.
//   - The driver copies WRs it is given; the caller scribbles them after a
//     post returns to prove it.
//
// Numbering of the enums follows libibverbs (enum ibv_qp_state, ibv_wc_status,
// ibv_wc_opcode for receives, ibv_event_type) so that a binding can cast.
//
// Where to read: driver.go is the whole package, in the order a run uses
// it: Driver and Config, Info, Device, SRQ, QP, then the value types and
// enums. The implementations are drivers/emu (an emulator), drivers/faulty
// (held-out bugs wrapped around it) and drivers/cgo (libibverbs).
package drivers
