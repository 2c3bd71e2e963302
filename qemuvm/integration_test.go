package qemuvm

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testAccel returns Options.Accel for the integration tests:
// SRQCONFORM_VM_ACCEL (auto, kvm or tcg), or "" (auto) when unset.
func testAccel(t *testing.T) string {
	t.Helper()
	a := os.Getenv("SRQCONFORM_VM_ACCEL")
	if err := checkAccel(a); err != nil {
		t.Fatalf("SRQCONFORM_VM_ACCEL=%q: %v", a, err)
	}
	return a
}

// testSuites returns the suites the integration tests run on:
// SRQCONFORM_VM_SUITES (comma-separated), or every suite.
func testSuites() []string {
	if s := os.Getenv("SRQCONFORM_VM_SUITES"); s != "" {
		return strings.Split(s, ",")
	}
	return Suites()
}

// mustRun is Run, failing the test with the serial console and the
// runner's log when the guest gives no result.
func mustRun(ctx context.Context, t *testing.T, opts Options, log *strings.Builder) *Result {
	t.Helper()
	res, err := Run(ctx, opts)
	if err != nil {
		if res != nil {
			t.Logf("serial log:\n%s", res.SerialLog)
		}
		t.Fatalf("Run(%s, provider %q): %v\nlog:\n%s", opts.Kernel, opts.Provider, err, log.String())
	}
	return res
}

// TestIntegrationSuites boots each Debian suite's kernel and runs
// ibv_devinfo -d rxe0 inside. It needs network access to the Debian
// mirror (first run), qemu-system-x86, busybox-static, ibverbs-utils,
// ibverbs-providers and iproute2, and runs only with
// SRQCONFORM_VM_TEST=1. SRQCONFORM_VM_SUITES (comma-separated)
// narrows the suites; SRQCONFORM_VM_CACHE overrides the cache;
// SRQCONFORM_VM_ACCEL (auto, kvm or tcg) picks the accelerator for
// every integration test.
func TestIntegrationSuites(t *testing.T) {
	if os.Getenv("SRQCONFORM_VM_TEST") != "1" {
		t.Skip("set SRQCONFORM_VM_TEST=1 to boot kernels under QEMU")
	}
	devinfo, err := exec.LookPath("ibv_devinfo")
	if err != nil {
		t.Fatalf("ibv_devinfo not found (install ibverbs-utils): %v", err)
	}
	for _, suite := range testSuites() {
		t.Run(suite, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			var log strings.Builder
			opts := Options{
				Kernel:   SuiteKernel(suite),
				Program:  devinfo,
				Args:     []string{"-d", "rxe0"},
				Accel:    testAccel(t),
				CacheDir: os.Getenv("SRQCONFORM_VM_CACHE"),
				Log:      &log,
			}
			// Resolve and fetch first, so the boot timing below is
			// boot plus run only.
			if _, err := PrepareKernel(ctx, opts); err != nil {
				t.Fatalf("PrepareKernel(%s): %v\nlog:\n%s", suite, err, log.String())
			}
			res := mustRun(ctx, t, opts, &log)
			out := string(res.Output)
			if res.ExitCode != 0 || !strings.Contains(out, "rxe0") || !strings.Contains(out, "PORT_ACTIVE") {
				t.Fatalf("ibv_devinfo -d rxe0 in %s (%s): exit %d, want 0 with rxe0 and PORT_ACTIVE; stdout:\n%s\nstderr:\n%s\nserial:\n%s",
					suite, res.KernelRelease, res.ExitCode, out, res.Stderr, res.SerialLog)
			}
			if !res.LinkAdded {
				t.Errorf("rdma link add reported failure although rxe0 appeared")
			}
			t.Logf("suite=%s release=%s packages=%s accel=%s boot+run=%s wall=%s rdma-core=%s modules=%s",
				suite, res.KernelRelease, strings.Join(res.Kernel.Packages, ","), res.Accel,
				res.BootTime.Round(10*time.Millisecond), res.WallTime.Round(10*time.Millisecond),
				res.RDMACoreVersion, strings.Join(res.Modules, ","))
		})
	}
}

// TestIntegrationGoTest builds a small Go test package and runs its
// test binary in a bookworm guest with RunGoTest, checking that the
// test sees rxe0 in sysfs and that testdata came along.
func TestIntegrationGoTest(t *testing.T) {
	if os.Getenv("SRQCONFORM_VM_TEST") != "1" {
		t.Skip("set SRQCONFORM_VM_TEST=1 to boot kernels under QEMU")
	}
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/rxeprobe\n\ngo 1.22\n")
	write("testdata/hello.txt", "hello from testdata\n")
	write("probe_test.go", `package rxeprobe

import (
	"os"
	"testing"
)

func TestRXE(t *testing.T) {
	b, err := os.ReadFile("/sys/class/infiniband/rxe0/ports/1/state")
	if err != nil {
		t.Fatal(err)
	}
	td, err := os.ReadFile("testdata/hello.txt")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("port state %q; %s", b, td)
}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := RunGoTest(ctx, Options{Kernel: SuiteKernel("bookworm"), Accel: testAccel(t), CacheDir: os.Getenv("SRQCONFORM_VM_CACHE")},
		dir, []string{"-test.v"})
	if err != nil {
		t.Fatalf("RunGoTest: %v", err)
	}
	out := string(res.Output)
	if res.ExitCode != 0 || !strings.Contains(out, "ACTIVE") || !strings.Contains(out, "hello from testdata") || !strings.Contains(out, "PASS") {
		t.Fatalf("go test in guest: exit %d, want 0 with ACTIVE, testdata and PASS; output:\n%s\nserial:\n%s", res.ExitCode, out, res.SerialLog)
	}
	t.Logf("kernel %s, boot+run %s; test output:\n%s", res.KernelRelease, res.BootTime.Round(10*time.Millisecond), out)
}

// TestIntegrationOutputAndErrors checks, on bookworm, that stdout comes
// back byte for byte (all 256 byte values, CR/LF, marker-like text),
// that stderr and the exit code are reported, and that a guest whose
// program never finishes, silently, yields a NoEndMarkerError after the
// timeout and not a StallError.
func TestIntegrationOutputAndErrors(t *testing.T) {
	if os.Getenv("SRQCONFORM_VM_TEST") != "1" {
		t.Skip("set SRQCONFORM_VM_TEST=1 to boot kernels under QEMU")
	}
	bb, err := findBusybox("")
	if err != nil {
		t.Fatal(err)
	}
	cache, accel := os.Getenv("SRQCONFORM_VM_CACHE"), testAccel(t)
	t.Run("binary", func(t *testing.T) {
		var data []byte
		for i := 0; i < 3; i++ {
			for b := 0; b < 256; b++ {
				data = append(data, byte(b))
			}
		}
		data = append(data, "\r\n@@SRQVM 0000 END stdout 0\n\x00"...)
		f := filepath.Join(t.TempDir(), "data.bin")
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), Options{
			Kernel: SuiteKernel("bookworm"), CacheDir: cache, Accel: accel,
			Program:    bb,
			Args:       []string{"sh", "-c", "cat /data/data.bin; echo to-stderr >&2; exit 7"},
			ExtraFiles: map[string]string{"/data/data.bin": f},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(res.Output, data) {
			t.Errorf("output differs: got %d bytes %q..., want %d bytes", len(res.Output), res.Output[:min(len(res.Output), 40)], len(data))
		}
		if res.ExitCode != 7 || string(res.Stderr) != "to-stderr\n" {
			t.Errorf("exit %d stderr %q, want 7 and \"to-stderr\\n\"", res.ExitCode, res.Stderr)
		}
		t.Logf("boot+run %s", res.BootTime.Round(10*time.Millisecond))
	})
	t.Run("timeout", func(t *testing.T) {
		res, err := Run(context.Background(), Options{
			Kernel: SuiteKernel("bookworm"), CacheDir: cache, Accel: accel,
			Program: bb, Args: []string{"sleep", "600"},
			Timeout: 30 * time.Second,
			// Shorter than Timeout: a program that is silent once
			// started must run into Timeout, not be taken for a stall.
			StallTimeout: 20 * time.Second,
		})
		var nem *NoEndMarkerError
		if !errors.As(err, &nem) || !strings.Contains(err.Error(), "timed out after 30s") {
			t.Fatalf("Run with a hanging program = %v, want NoEndMarkerError after 30s", err)
		}
		if res == nil || !strings.Contains(res.SerialLog, "START") {
			t.Errorf("serial log should show the program started")
		}
		t.Logf("error: %v", err)
	})
}

// TestIntegrationCustomKernel boots trixie's kernel as if it were a
// user-built one (image path plus modules directory).
func TestIntegrationCustomKernel(t *testing.T) {
	if os.Getenv("SRQCONFORM_VM_TEST") != "1" {
		t.Skip("set SRQCONFORM_VM_TEST=1 to boot kernels under QEMU")
	}
	devinfo, err := exec.LookPath("ibv_devinfo")
	if err != nil {
		t.Fatalf("ibv_devinfo not found (install ibverbs-utils): %v", err)
	}
	ctx := context.Background()
	cache := os.Getenv("SRQCONFORM_VM_CACHE")
	pk, err := PrepareKernel(ctx, Options{Kernel: SuiteKernel("trixie"), CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, Options{Kernel: CustomKernel(pk.Image, pk.ModulesDir), Program: devinfo, Args: []string{"-d", "rxe0"}, Accel: testAccel(t)})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.Contains(string(res.Output), "PORT_ACTIVE") || res.KernelRelease != pk.Release {
		t.Fatalf("custom kernel: exit %d release %s (want %s); output:\n%s", res.ExitCode, res.KernelRelease, pk.Release, res.Output)
	}
	t.Logf("custom kernel %s: boot+run %s", res.KernelRelease, res.BootTime.Round(10*time.Millisecond))
}
