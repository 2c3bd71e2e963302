// Package cgo is the srqconform driver for real RDMA devices: it drives
// libibverbs through cgo and implements drivers.Driver under the name "cgo".
//
// One file, cwrap.go, uses cgo: it names every C function, type and
// constant the driver uses (C.name as _C_name, and _C2_name for the form
// that also returns errno), each function a thin wrapper that makes the
// one call, as Go's net package keeps its resolver's C in
// cgo_unix_cgo.go. The driver's logic is plain Go against those names.
// It and the logic are built only with
//
//	//go:build linux && cgo && rdma
//
// so the rest of the module builds and tests without a C compiler or
// libibverbs. Without the tag this package holds only the pure-Go helpers
// (the per-region ring allocator and the payload check) and a stub
// (stub.go): New still returns a driver named "cgo", whose Open returns
// ErrNoRDMATag. Build the driver with
//
//	CGO_ENABLED=1 go build -tags rdma ./cmd/srqconform
//
// Design. One Device is one ibv_context. CreateSRQ makes a PD, one
// receive CQ (with a completion channel) shared by every receiver QP, the
// SRQ, one memory region per key over C memory, a target region for RDMA
// Write, Read and atomics, and a buffer region for the peers. Every
// receiver QP has a peer QP of the same type on the same device that sends
// to it over the device's loopback with RoCE (GID) addressing; RC peers are
// (re)connected when the receiver enters RTR and after any failed send.
//
// Work requests, scatter lists and buffers live in C memory: no Go pointer
// is ever stored in C memory (checked with GOEXPERIMENT=cgocheck2). The C
// side is a set of thin helpers for what touches unions (ibv_send_wr,
// ibv_wc, ibv_async_event, ibv_gid) or static inline verbs; the logic is
// in Go.
//
// Where to read: device.go (Open, the device and its attributes), srq.go
// (CreateSRQ, posts, polls and events), qp.go (receiver QPs, their peers
// and delivery), conn.go and cm.go (the verbs and rdma_cm connection
// modes), pool.go (what the next SRQ reuses), probe.go (calls made in a
// child process), then cwrap.go for the calls into C and srqc.c and
// srqcm.c for the C helpers. layout.go and stub.go are the untagged
// parts.
//
// Tests: the tagged tests need a device and skip without one; vm_test.go
// (untagged, SRQCONFORM_VM_TEST=1) runs them inside QEMU guests with rxe0
// for each Debian kernel suite.
package cgo
