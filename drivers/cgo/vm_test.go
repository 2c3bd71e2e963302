package cgo_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/srqconform/srqconform/qemuvm"
)

// TestVM builds this package's tests with -tags rdma (and again with
// GOEXPERIMENT=cgocheck2) and runs them inside a QEMU guest with rxe0 for
// each Debian suite. It runs only with SRQCONFORM_VM_TEST=1 and needs
// what the vm package needs (qemu-system-x86, busybox-static, iproute2,
// libibverbs-dev, ibverbs-providers, a C compiler).
//
//	SRQCONFORM_VM_TEST=1 go test -v -run TestVM ./drivers/cgo
//
// SRQCONFORM_VM_SUITES (comma-separated) narrows the suites,
// SRQCONFORM_VM_RUN is the guest's -test.run (default: all),
// SRQCONFORM_VM_BENCH its -test.bench (default: none),
// SRQCONFORM_VM_ARGS extra guest test flags (space-separated, e.g.
// "-cases=100 -seed=7"), SRQCONFORM_VM_VARIANTS the builds (default
// "plain,cgocheck2"), SRQCONFORM_VM_ACCEL the accelerator (auto, kvm
// or tcg; default auto).
//
// Each guest run ends a little before go test's -timeout, so a slow
// guest fails with its serial log rather than go test's panic.
func TestVM(t *testing.T) {
	if os.Getenv("SRQCONFORM_VM_TEST") != "1" {
		t.Skip("set SRQCONFORM_VM_TEST=1 to run the cgo driver's tests in QEMU guests with rxe0")
	}
	suites := qemuvm.Suites()
	if s := os.Getenv("SRQCONFORM_VM_SUITES"); s != "" {
		suites = strings.Split(s, ",")
	}
	args := []string{"-test.v", "-test.run", envOr("SRQCONFORM_VM_RUN", ".")}
	if b := os.Getenv("SRQCONFORM_VM_BENCH"); b != "" {
		args = append(args, "-test.bench", b, "-test.benchtime", envOr("SRQCONFORM_VM_BENCHTIME", "1s"))
	}
	args = append(args, strings.Fields(os.Getenv("SRQCONFORM_VM_ARGS"))...)
	// The guest holds libibverbs under its soname only; tell the driver
	// which rdma-core file the host resolved.
	var env []string
	if real, err := filepath.EvalSymlinks("/usr/lib/x86_64-linux-gnu/libibverbs.so.1"); err == nil {
		env = append(env, "SRQCONFORM_RDMA_CORE="+filepath.Base(real))
	}
	accel := os.Getenv("SRQCONFORM_VM_ACCEL")
	if accel != "" && !slices.Contains(qemuvm.Accels(), accel) {
		t.Fatalf("SRQCONFORM_VM_ACCEL=%q; expected one of %s", accel, strings.Join(qemuvm.Accels(), ", "))
	}
	variants := strings.Split(envOr("SRQCONFORM_VM_VARIANTS", "plain,cgocheck2"), ",")
	t.Setenv("CGO_ENABLED", "1")
	for _, variant := range variants {
		for _, suite := range suites {
			t.Run(variant+"/"+suite, func(t *testing.T) {
				if variant == "cgocheck2" {
					t.Setenv("GOEXPERIMENT", "cgocheck2")
				}
				// The conformance test is held to the suite's profile but for
				// the kernel bugs CI already knows (.ci/known, as for run -known).
				guestArgs, extra := args, map[string]string{}
				if known := filepath.Join("..", "..", ".ci", "known", "rxe-"+suite+".txt"); fileExists(known) {
					extra["/known.txt"] = known
					guestArgs = append(slices.Clone(args), "-known=/known.txt")
				}
				ctx, cancel := context.WithTimeout(context.Background(), runBound(t, 40*time.Minute))
				defer cancel()
				var log strings.Builder
				start := time.Now()
				res, err := qemuvm.RunGoTest(ctx, qemuvm.Options{
					Kernel:     qemuvm.SuiteKernel(suite),
					Env:        env,
					Timeout:    35 * time.Minute,
					Accel:      accel,
					CacheDir:   os.Getenv("SRQCONFORM_VM_CACHE"),
					Log:        &log,
					ExtraFiles: extra,
				}, ".", guestArgs, "-tags=rdma")
				if err != nil {
					if res != nil {
						t.Logf("serial log:\n%s", res.SerialLog)
					}
					t.Fatalf("qemuvm.RunGoTest(%s, %s): %v\nlog:\n%s", suite, variant, err, log.String())
				}
				t.Logf("%s (%s), rdma-core %s, %s: go test exit %d, boot+run %v, whole run %v (%v with the build)\n%s",
					suite, res.KernelRelease, res.RDMACoreVersion, variant, res.ExitCode, res.BootTime, res.WallTime, time.Since(start), res.Output)
				if len(res.Stderr) > 0 {
					t.Logf("stderr:\n%s", res.Stderr)
				}
				if res.ExitCode != 0 {
					t.Errorf("go test in the %s guest (%s, %s) exited %d, want 0", suite, res.KernelRelease, variant, res.ExitCode)
				}
			})
		}
	}
}

// runBound returns d, or less when go test's deadline comes sooner:
// the time left but for 30 s to kill QEMU and report.
func runBound(t *testing.T, d time.Duration) time.Duration {
	if dl, ok := t.Deadline(); ok {
		if left := time.Until(dl) - 30*time.Second; left < d {
			return max(left, time.Second)
		}
	}
	return d
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
