package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/srqconform/srqconform/qemuvm"
)

// schedOops is a guest console with a scheduler oops and no RDMA code
// in its trace, the kind a loaded TCG host produced in CI.
const schedOops = "[ 14.0] Oops: int3: 0000 [#1] SMP NOPTI\n[ 14.2] RIP: 0010:enqueue_task_fair+0x2a/0x6f0\n[ 14.3] Call Trace:\n[ 14.5]  enqueue_task+0x3c/0x100\n[ 14.7]  try_to_wake_up+0x249/0x640\n"

// rxeOops is one in a verb of the driver.
const rxeOops = "[ 41.5] BUG: kernel NULL pointer dereference, address: 0000000000000010\n[ 41.6] RIP: 0010:rxe_query_srq+0x10/0x40 [rdma_rxe]\n[ 41.7] Call Trace:\n[ 41.8]  ib_uverbs_query_srq+0x90/0x100 [ib_uverbs]\n"

// fakeBoots returns the given outcomes in turn, counting the boots.
func fakeBoots(outcomes ...string) (func(context.Context, qemuvm.Options) (*qemuvm.Result, error), *int) {
	n := 0
	return func(context.Context, qemuvm.Options) (*qemuvm.Result, error) {
		o := outcomes[n]
		n++
		res := &qemuvm.Result{SerialLog: o}
		if o == "" {
			res.Output = []byte("ok")
			return res, nil
		}
		res.Crash = qemuvm.FindKernelCrash(o)
		return res, &qemuvm.KernelCrashError{Crash: res.Crash}
	}, &n
}

// TestACrashOutsideTheRDMAStackBootsAgain: a scheduler oops with no RDMA
// frame does not decide the verdict (the second boot does), one that
// comes back is reported, and a crash in the driver is reported at once.
func TestACrashOutsideTheRDMAStackBootsAgain(t *testing.T) {
	for _, tc := range []struct {
		name      string
		outcomes  []string
		wantBoots int
		wantCrash string // "" when the result is the clean second boot
	}{
		{"scheduler oops, then clean", []string{schedOops, ""}, 2, ""},
		{"scheduler oops twice", []string{schedOops, schedOops}, 2, "enqueue_task_fair"},
		{"scheduler oops, then a driver crash", []string{schedOops, rxeOops}, 2, "rxe_query_srq"},
		{"driver crash", []string{rxeOops, ""}, 1, "rxe_query_srq"},
		{"clean", []string{""}, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			boot, n := fakeBoots(tc.outcomes...)
			c := &vmConfig{boot: boot}
			var stderr bytes.Buffer
			res, err := c.runGuest(context.Background(), qemuvm.Options{}, &stderr)
			if *n != tc.wantBoots {
				t.Errorf("runGuest booted %d times; want %d (stderr %q)", *n, tc.wantBoots, stderr.String())
			}
			crash := outsideOrAny(res, err)
			switch {
			case tc.wantCrash == "" && crash != nil:
				t.Errorf("runGuest = crash %q; want the clean boot's result", crash.Summary())
			case tc.wantCrash != "" && (crash == nil || crash.Function != tc.wantCrash):
				t.Errorf("runGuest = crash %v, err %v; want a crash in %s", crash, err, tc.wantCrash)
			}
			if tc.wantBoots == 2 && !strings.Contains(stderr.String(), "crashed outside the RDMA stack") {
				t.Errorf("stderr does not say why it booted again: %q", stderr.String())
			}
		})
	}
}

// outsideOrAny is the crash a run returned, if any.
func outsideOrAny(res *qemuvm.Result, err error) *qemuvm.KernelCrash {
	if err != nil {
		if kc, ok := err.(*qemuvm.KernelCrashError); ok {
			return kc.Crash
		}
	}
	if res != nil {
		return res.Crash
	}
	return nil
}
