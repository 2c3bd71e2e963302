// Package emu is an in-process emulated HCA that implements drivers.Driver.
//
// It is written like a device, independently of the reference model: an
// SRQ is a ring of WQE slots with a producer index published by a doorbell
// and a consumer index the responder advances; a CQ and an async event
// queue collect what the responder writes; memory regions are a valid flag
// and a byte buffer each; QPs carry a state and are fed synchronously by
// their peer inside Deliver.
//
// With no switches on the emulator follows the documented SRQ semantics.
// Its switches (type Switch; "deviations" on the command line) turn on the choices real drivers make (behaviours, grouped
// by Sets into rxe, rxe-6.1, mlx5 and siw) or deliberate rule violations
// (mutants) that the conformance suite must catch; Catalogue lists them.
//
// Where to read: deviation.go (every switch, the catalogue and the
// Sets), device.go (New, Open and Info), srq.go (the ring: post, fetch,
// query, modify, the limit, destroy), qp.go (QP states and the
// responder: Deliver, completions and events), then stateful.go and
// race.go (the mutants that need state across calls or threads).
package emu
