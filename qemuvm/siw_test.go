package qemuvm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestKernelCompiler(t *testing.T) {
	for in, want := range map[string]string{
		"ARCH = x86\nCC = gcc-12\nSRCARCH = x86\n": "gcc-12",
		"CC := x86_64-linux-gnu-gcc-14\n":          "gcc-14",
		"  CC = gcc-16  \nLD = ld\n":               "gcc-16",
		// bookworm's linux-headers-6.1.0-56-amd64
		"CCACHE = ccache\nCC = $(if $(DEBIAN_KERNEL_USE_CCACHE),$(CCACHE)) $(CROSS_COMPILE)gcc-12\n": "gcc-12",
	} {
		got, err := kernelCompiler(in)
		if err != nil || got != want {
			t.Errorf("kernelCompiler(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "CC = clang\n", "HOSTCC = gcc-12\n"} {
		if got, err := kernelCompiler(in); err == nil {
			t.Errorf("kernelCompiler(%q) = %q, want an error", in, got)
		}
	}
}

func TestMajorMinor(t *testing.T) {
	for in, want := range map[string]string{"6.1.192-2": "6.1", "6.12.117-1": "6.12", "7.2.13-1": "7.2"} {
		if got, err := majorMinor(in); err != nil || got != want {
			t.Errorf("majorMinor(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "6", "x.y.z", "6..1"} {
		if got, err := majorMinor(in); err == nil {
			t.Errorf("majorMinor(%q) = %q, want an error", in, got)
		}
	}
}

func TestVermagicOf(t *testing.T) {
	data := []byte("\x00license=GPL\x00vermagic=6.1.0-56-amd64 SMP preempt mod_unload modversions \x00name=siw\x00")
	got, err := vermagicOf(data, "x.ko")
	if want := "6.1.0-56-amd64 SMP preempt mod_unload modversions "; err != nil || got != want {
		t.Errorf("vermagicOf = %q, %v; want %q", got, err, want)
	}
	if _, err := vermagicOf([]byte("name=siw"), "x.ko"); err == nil || !strings.Contains(err.Error(), "x.ko") {
		t.Errorf("vermagicOf without vermagic = %v, want an error naming the file", err)
	}
}

// TestSiwModuleCacheAndMissingTools: a cached build is returned as is,
// with no tool run; without one, a missing mmdebstrap is a
// MissingToolError naming the package; a custom kernel is refused.
func TestSiwModuleCacheAndMissingTools(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	pk := &PreparedKernel{Suite: "bookworm", Release: "6.1.0-56-amd64", Version: "6.1.192-2"}
	t.Setenv("PATH", t.TempDir())
	_, err := SiwModule(ctx, Options{CacheDir: cache}, pk)
	var mt *MissingToolError
	if !errors.As(err, &mt) || mt.Package != "mmdebstrap" || strings.Contains(err.Error(), "\n") {
		t.Errorf("SiwModule without mmdebstrap = %v, want a one-line MissingToolError for mmdebstrap", err)
	}
	dir := filepath.Join(cache, "siw", "6.1.0-56-amd64_6.1.192-2")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "siw.ko"), []byte("ko"), 0o644)
	os.WriteFile(filepath.Join(dir, "build.json"), []byte(`{"release":"6.1.0-56-amd64","compiler":"gcc-12","total":1000}`), 0o644)
	b, err := SiwModule(ctx, Options{CacheDir: cache}, pk)
	if err != nil || !b.Cached || b.Compiler != "gcc-12" || b.Path != filepath.Join(dir, "siw.ko") {
		t.Errorf("SiwModule with a cached build = %+v, %v; want the cached module", b, err)
	}
	if _, err := SiwModule(ctx, Options{CacheDir: cache}, &PreparedKernel{Image: "/x/bzImage"}); err == nil || !strings.Contains(err.Error(), "custom kernel") {
		t.Errorf("SiwModule for a custom kernel = %v, want a refusal", err)
	}
}

// TestIntegrationSiwBuild builds siw.ko for each suite's kernel (or
// takes it from the cache) and checks its vermagic against the kernel's.
// It needs root, mmdebstrap and the Debian mirror, and runs only with
// SRQCONFORM_VM_TEST=1 (SRQCONFORM_VM_SUITES narrows the suites).
func TestIntegrationSiwBuild(t *testing.T) {
	if os.Getenv("SRQCONFORM_VM_TEST") != "1" {
		t.Skip("set SRQCONFORM_VM_TEST=1 to build siw.ko for Debian kernels")
	}
	for _, suite := range testSuites() {
		t.Run(suite, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			var log strings.Builder
			opts := Options{Kernel: SuiteKernel(suite), CacheDir: os.Getenv("SRQCONFORM_VM_CACHE"), Log: &log}
			pk, err := PrepareKernel(ctx, opts)
			if err != nil {
				t.Fatalf("PrepareKernel(%s): %v", suite, err)
			}
			b, err := SiwModule(ctx, opts, pk)
			if err != nil {
				t.Fatalf("SiwModule(%s): %v\nlog:\n%s", suite, err, log.String())
			}
			got, err := moduleVermagic(b.Path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := kernelVermagic(ctx, pk, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("siw.ko for %s has vermagic %q, the kernel's ib_core %q", pk.Release, got, want)
			}
			start := time.Now()
			again, err := SiwModule(ctx, opts, pk)
			if err != nil || !again.Cached || again.Path != b.Path {
				t.Errorf("second SiwModule(%s) = %+v, %v; want the cached module", suite, again, err)
			}
			t.Logf("suite=%s release=%s compiler=%s cached=%v stages=%v total=%v second call=%v",
				suite, pk.Release, b.Compiler, b.Cached, b.Durations, b.Total, time.Since(start))
		})
	}
}
