package qemuvm

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// maxSRQSGEPatch changes what rxe reports as max_srq_sge, so that a guest
// shows whether it runs the patched module; written with kernel-tree
// paths.
const maxSRQSGEPatch = `--- a/drivers/infiniband/sw/rxe/rxe_param.h
+++ b/drivers/infiniband/sw/rxe/rxe_param.h
@@ -79,7 +79,7 @@
 	RXE_MAX_AH_INDEX		= RXE_MAX_AH,
 	RXE_MAX_SRQ_WR			= DEFAULT_MAX_VALUE,
 	RXE_MIN_SRQ_WR			= 1,
-	RXE_MAX_SRQ_SGE			= 27,
+	RXE_MAX_SRQ_SGE			= 13,
 	RXE_MIN_SRQ_SGE			= 1,
 	RXE_MAX_FMR_PAGE_LIST_LEN	= 512,
`

// ucontextBugPatch makes opening the device crash the kernel; written
// relative to the driver's directory.
const ucontextBugPatch = `--- a/rxe_verbs.c
+++ b/rxe_verbs.c
@@ -216,6 +216,7 @@
 	struct rxe_ucontext *uc = to_ruc(ibuc);
 	int err;
 
+	BUG();
 	err = rxe_add_to_pool(&rxe->uc_pool, uc);
 	if (err)
 		rxe_err_dev(rxe, "unable to create uc\n");
`

// TestIntegrationPatchedModule builds rdma_rxe.ko with a patch, boots
// with it and sees the patch's effect in ibv_devinfo; then a patch that
// crashes the kernel when a program opens the device, which Run reports
// as a KernelCrashError naming the verb. It runs on trixie (or the first
// of SRQCONFORM_VM_SUITES) with SRQCONFORM_VM_TEST=1, and needs what
// SiwModule needs the first time (root, mmdebstrap, the mirror).
func TestIntegrationPatchedModule(t *testing.T) {
	if os.Getenv("SRQCONFORM_VM_TEST") != "1" {
		t.Skip("set SRQCONFORM_VM_TEST=1 to boot kernels under QEMU")
	}
	devinfo, err := exec.LookPath("ibv_devinfo")
	if err != nil {
		t.Fatalf("ibv_devinfo not found (install ibverbs-utils): %v", err)
	}
	suite := "trixie"
	if os.Getenv("SRQCONFORM_VM_SUITES") != "" {
		suite = testSuites()[0]
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var log strings.Builder
	opts := Options{
		Kernel:   SuiteKernel(suite),
		Program:  devinfo,
		Args:     []string{"-v", "-d", "rxe0"},
		Accel:    testAccel(t),
		CacheDir: os.Getenv("SRQCONFORM_VM_CACHE"),
		Log:      &log,
		Patches:  []string{write("max-srq-sge.patch", maxSRQSGEPatch)},
	}
	res := mustRun(ctx, t, opts, &log)
	if res.Patched == nil || len(res.Patched.Patches) != 1 || res.Patched.Patches[0].Strip != 5 {
		t.Fatalf("Run with a kernel-tree patch: Result.Patched = %+v; want one patch applied with -p5", res.Patched)
	}
	if !strings.Contains(string(res.Output), "max_srq_sge:\t\t\t13") && !strings.Contains(string(res.Output), "max_srq_sge: 13") {
		t.Errorf("ibv_devinfo -v on the patched rdma_rxe.ko: want max_srq_sge 13 (the patch's), got:\n%s", res.Output)
	}
	t.Logf("patched module: %s in %v (cached %v); boot %v", res.Patched.Module, res.Patched.Total, res.Patched.Cached, res.BootTime)

	opts.Patches = []string{write("ucontext-bug.patch", ucontextBugPatch)}
	res, err = Run(ctx, opts)
	var kc *KernelCrashError
	if !errors.As(err, &kc) {
		t.Fatalf("Run with a patch that BUG()s in rxe_alloc_ucontext: %v; want a *KernelCrashError\nlog:\n%s", err, log.String())
	}
	if kc.Crash.Kind != "kernel crash" || kc.Crash.Function != "rxe_alloc_ucontext" || !strings.Contains(kc.Crash.Verb, "context") {
		t.Errorf("crash = %q (kind %q, function %q, verb %q); want a kernel crash in rxe_alloc_ucontext during the get-context verb\n%s",
			kc.Crash.Summary(), kc.Crash.Kind, kc.Crash.Function, kc.Crash.Verb, kc.Crash.Excerpt)
	}
	if res == nil || res.Crash == nil {
		t.Errorf("Run returned Result %+v; want its Crash set too", res)
	}
}
