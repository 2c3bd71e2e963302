// Package drivescript drives a drivers.Driver through random operation
// scripts, without the model, and records what the device returned: a
// transcript per script, and its digest. Two drivers that differ on some
// script (a mutant and the emulator it came from) show it as a differing
// digest; two that agree on many scripts are taken as equivalent.
//
// A script is a function of its seed: it creates an SRQ (of 1 to 16 WRs,
// sometimes through ibv_create_srq_ex) with up to three QPs of either type
// and brings them up, then makes random steps over every verb of
// drivers.SRQ and drivers.QP (posts of valid and invalid lists, deliveries
// of every opcode and size around the fit, partial deliveries, polls,
// queries, limits, resizes, QP state changes, key invalidation, injected
// errors, destroys and creates), and drains the CQ and the event queue.
// No verb is called on an SRQ or QP that Destroy took: that is undefined,
// and the suite never does it, so a mutant that differs only there is
// equivalent. A transcript records what the rules promise of a result,
// not more: bad_wr only for a post that failed, and for ibv_post_recv
// to a QP with an SRQ only that it was refused (POST-QP-RQ names no
// errno).
//
// It is one file, drivescript.go: Transcript (one script's run and what
// it recorded), Digest and FirstDifference (comparing two runs), then
// the steps.
package drivescript
