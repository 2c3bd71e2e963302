package qemuvm

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An oops as Debian's 6.12 prints it for a NULL dereference in a verb.
const oopsConsole = `[   41.201331] srqconform: some progress line
[   41.522108] BUG: kernel NULL pointer dereference, address: 0000000000000010
[   41.522391] #PF: supervisor read access in kernel mode
[   41.523010] Oops: Oops: 0000 [#1] PREEMPT SMP NOPTI
[   41.523412] CPU: 1 UID: 0 PID: 211 Comm: srqconform Tainted: G           OE      6.12.118+deb13-amd64 #1  Debian 6.12.118-1
[   41.524018] RIP: 0010:rxe_srq_from_attr+0x4c/0x1a0 [rdma_rxe]
[   41.524400] Code: 48 8b 47 10 ...
[   41.526010] Call Trace:
[   41.526100]  <TASK>
[   41.526214]  ? __die+0x23/0x70
[   41.526633]  rxe_modify_srq+0x94/0x140 [rdma_rxe]
[   41.526791]  ib_uverbs_modify_srq+0xb4/0x100 [ib_uverbs]
[   41.526950]  ib_uverbs_handler_UVERBS_METHOD_INVOKE_WRITE+0xd5/0x120 [ib_uverbs]
[   41.527102]  ib_uverbs_cmd_verbs+0xc4e/0xd90 [ib_uverbs]
[   41.527310]  ib_uverbs_ioctl+0xd2/0x160 [ib_uverbs]
[   41.527720]  </TASK>
[   41.528000] Kernel panic - not syncing: Fatal exception
`

func TestFindKernelCrashNamesTheVerbInFlight(t *testing.T) {
	c := FindKernelCrash(oopsConsole)
	require.NotNil(t, c)
	assert.Equal(t, "kernel crash", c.Kind)
	assert.Equal(t, "BUG: kernel NULL pointer dereference, address: 0000000000000010", c.Headline)
	assert.Equal(t, "rxe_srq_from_attr", c.Function)
	assert.Equal(t, "modify_srq", c.Verb)
	assert.True(t, strings.HasPrefix(c.Excerpt, "BUG: kernel NULL"), "excerpt starts at the headline, without timestamps:\n%s", c.Excerpt)
	assert.NotContains(t, c.Excerpt, "progress line")
	assert.Equal(t, "kernel crash in rxe_srq_from_attr during modify_srq: BUG: kernel NULL pointer dereference, address: 0000000000000010", c.Summary())
}

func TestFindKernelCrashInAWorkerAndAHang(t *testing.T) {
	worker := "[ 9.1] general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] SMP\n" +
		"[ 9.2] RIP: 0010:rxe_responder+0x1bc/0x2330 [rdma_rxe]\n[ 9.3] Call Trace:\n[ 9.4]  do_task+0x6e/0x200 [rdma_rxe]\n[ 9.5]  process_one_work+0x177/0x330\n"
	c := FindKernelCrash(worker)
	require.NotNil(t, c)
	assert.Equal(t, "rxe_responder", c.Function)
	assert.Equal(t, "", c.Verb)
	assert.Contains(t, c.Summary(), "no user verb in the call trace")

	hang := "[ 80.0] INFO: task srqconform:201 blocked for more than 30 seconds.\n[ 80.1] Call Trace:\n[ 80.2]  rxe_destroy_qp+0x30/0x90 [rdma_rxe]\n[ 80.3]  ib_destroy_qp_user+0x9a/0x1c0 [ib_core]\n[ 80.4]  ib_uverbs_handler_UVERBS_METHOD_QP_DESTROY+0x3e/0x60 [ib_uverbs]\n"
	c = FindKernelCrash(hang)
	require.NotNil(t, c)
	assert.Equal(t, "hang", c.Kind)
	assert.Equal(t, "method_qp_destroy", c.Verb)

	stall := "[ 60.0] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n[ 60.1] Call Trace:\n[ 60.2]  rxe_queue_resize+0x1a0/0x2b0 [rdma_rxe]\n[ 60.3]  rxe_srq_from_attr+0x80/0xd0 [rdma_rxe]\n[ 60.4]  rxe_modify_srq+0x9a/0x140 [rdma_rxe]\n[ 60.5]  ib_uverbs_modify_srq+0xb4/0x100 [ib_uverbs]\n"
	c = FindKernelCrash(stall)
	require.NotNil(t, c)
	assert.Equal(t, "hang", c.Kind)
	assert.Equal(t, "modify_srq", c.Verb)

	assert.Nil(t, FindKernelCrash("[ 1.0] rdma_rxe: loaded\n[ 2.0] rxe0: qp#17 moved to error state\n"))
}

// TestAGuestThatOnlyOutranItsBoundIsNoHang: with no report on the
// console, a guest killed at its timeout after its program started is
// inconclusive, not a hang; one whose console shows a lockup is a hang.
func TestAGuestThatOnlyOutranItsBoundIsNoHang(t *testing.T) {
	timedOut := &NoEndMarkerError{Reason: "timed out after 15m0s and was killed (the program started but its result block is missing)", TimedOut: true, ProgramStarted: true}
	err := crashOr(timedOut, &Result{})
	var kc *KernelCrashError
	if errors.As(err, &kc) {
		t.Fatalf("crashOr(timed out, no console report) = a %s finding; want the timeout itself", kc.Crash.Kind)
	}
	var nem *NoEndMarkerError
	if !errors.As(err, &nem) || !nem.Inconclusive() {
		t.Fatalf("crashOr(timed out) = %v; want an inconclusive *NoEndMarkerError", err)
	}
	if (&NoEndMarkerError{TimedOut: true}).Inconclusive() {
		t.Errorf("a guest that timed out before its program started is a boot failure, not an inconclusive run")
	}
	lockup := FindKernelCrash("[  61.2] watchdog: BUG: soft lockup - CPU#0 stuck for 26s! [srqconform-rdma:180]\n")
	if err := crashOr(timedOut, &Result{Crash: lockup}); !errors.As(err, &kc) || kc.Crash.Kind != "hang" {
		t.Fatalf("crashOr(timed out, a soft lockup on the console) = %v; want a hang finding", err)
	}
}

// TestACrashWithNoRDMACodeIsMarkedOutsideRDMA: a scheduler oops with no
// RDMA frame and no verb is marked OutsideRDMA (the vm command boots
// again before it calls it a finding); one whose trace passes through
// rdma_rxe, even from a worker, is not.
func TestACrashWithNoRDMACodeIsMarkedOutsideRDMA(t *testing.T) {
	sched := "[ 14.0] Oops: int3: 0000 [#1] SMP NOPTI\n[ 14.1] CPU: 0 UID: 0 PID: 17 Comm: rcu_preempt Not tainted 7.2.13+deb14-amd64 #1\n" +
		"[ 14.2] RIP: 0010:enqueue_task_fair+0x2a/0x6f0\n[ 14.3] Call Trace:\n[ 14.4]  <TASK>\n[ 14.5]  enqueue_task+0x3c/0x100\n[ 14.6]  ttwu_do_activate+0x6e/0x220\n[ 14.7]  try_to_wake_up+0x249/0x640\n[ 14.8]  </TASK>\n" +
		"[ 14.9] Modules linked in: siw ib_uverbs ib_core\n"
	c := FindKernelCrash(sched)
	require.NotNil(t, c)
	assert.True(t, c.OutsideRDMA, "a trace with no RDMA frame (the modules line does not count)")
	assert.Equal(t, "kernel crash in enqueue_task_fair (no RDMA code in the call trace): Oops: int3: 0000 [#1] SMP NOPTI", c.Summary())

	viaRxe := strings.Replace(sched, "[ 14.7]  try_to_wake_up+0x249/0x640\n", "[ 14.7]  try_to_wake_up+0x249/0x640\n[ 14.75]  rxe_sched_task+0x20/0x40 [rdma_rxe]\n", 1)
	c = FindKernelCrash(viaRxe)
	require.NotNil(t, c)
	assert.False(t, c.OutsideRDMA, "a worker's trace through rdma_rxe is RDMA code")
	assert.Contains(t, c.Summary(), "no user verb in the call trace")

	c = FindKernelCrash(oopsConsole)
	require.NotNil(t, c)
	assert.False(t, c.OutsideRDMA)
}
