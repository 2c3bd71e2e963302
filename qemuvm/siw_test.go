package qemuvm

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// TestIntegrationSiw boots each suite's kernel with provider siw and
// runs, in the guest, ibv_devinfo -v -d siw0 and an rping through
// rdma_cm on the eth0 address. It checks the capabilities seen on the
// three kernels (max_srq_wr 327680, max_srq_sge 6, no SRQ_RESIZE,
// iWARP) and that rping's client completes. Needs what
// TestIntegrationSiwBuild needs, plus ibverbs-utils and rdmacm-utils;
// runs only with SRQCONFORM_VM_TEST=1.
func TestIntegrationSiw(t *testing.T) {
	if os.Getenv("SRQCONFORM_VM_TEST") != "1" {
		t.Skip("set SRQCONFORM_VM_TEST=1 to boot kernels with siw under QEMU")
	}
	var tools = map[string]string{}
	for _, n := range []string{"sh", "ibv_devinfo", "rping"} {
		p, err := exec.LookPath(n)
		if err != nil {
			t.Fatalf("%s not found (install ibverbs-utils and rdmacm-utils): %v", n, err)
		}
		tools[n] = p
	}
	script := `ibv_devinfo -v -d siw0 || exit 10
rping -s -a ` + GuestAddr + ` -C 3 & s=$!
sleep 1
rping -c -a ` + GuestAddr + ` -C 3 -v || exit 11
wait $s || exit 12
echo RPING-OK`
	for _, suite := range testSuites() {
		t.Run(suite, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			var log strings.Builder
			opts := Options{
				Kernel:   SuiteKernel(suite),
				Provider: "siw",
				// The host's ibv_devinfo and rping use libibverbs'
				// private ABI (IBVERBS_PRIVATE_34), which sid's 65.0
				// does not define: they run with the host's rdma-core.
				RDMACore:   RDMACoreHost,
				Program:    tools["sh"],
				Args:       []string{"-c", script},
				Env:        []string{"PATH=/usr/bin:/bin:/srqvm/bin"},
				ExtraFiles: map[string]string{"/usr/bin/ibv_devinfo": tools["ibv_devinfo"], "/usr/bin/rping": tools["rping"]},
				Accel:      testAccel(t),
				CacheDir:   os.Getenv("SRQCONFORM_VM_CACHE"),
				Log:        &log,
			}
			res := mustRun(ctx, t, opts, &log)
			out := string(res.Output)
			if res.ExitCode != 0 || !strings.Contains(out, "RPING-OK") {
				t.Fatalf("siw in %s (%s): exit %d, want 0 and RPING-OK; stdout:\n%s\nstderr:\n%s\nserial:\n%s",
					suite, res.KernelRelease, res.ExitCode, out, res.Stderr, res.SerialLog)
			}
			caps := parseDevinfo(out)
			for k, want := range map[string]string{"transport": "iWARP (1)", "max_srq_wr": "327680", "max_srq_sge": "6", "state": "PORT_ACTIVE (4)"} {
				if caps[k] != want {
					t.Errorf("ibv_devinfo -v -d siw0 in %s: %s = %q, want %q", suite, k, caps[k], want)
				}
			}
			if strings.Contains(out, "SRQ_RESIZE") {
				t.Errorf("siw0 in %s lists SRQ_RESIZE among its capabilities; siw's modify_srq refuses a resize", suite)
			}
			if !res.LinkAdded || !slices.Contains(res.Modules, "siw") {
				t.Errorf("siw in %s: link added %v, modules %v; want the link and siw loaded", suite, res.LinkAdded, res.Modules)
			}
			t.Logf("suite=%s release=%s accel=%s boot+run=%v modules=%s insmod failed=%v caps: max_srq=%s max_srq_wr=%s max_srq_sge=%s device_cap_flags=%s",
				suite, res.KernelRelease, res.Accel, res.BootTime.Round(10*time.Millisecond), strings.Join(res.Modules, ","),
				res.InsmodFailed, caps["max_srq"], caps["max_srq_wr"], caps["max_srq_sge"], caps["device_cap_flags"])
		})
	}
}

// parseDevinfo reads "key: value" lines of ibv_devinfo -v (first
// occurrence of each key).
func parseDevinfo(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if _, seen := m[k]; !seen {
			m[k] = v
		}
	}
	return m
}

// TestSiwGuestSetup: a siw guest adds siw0 on eth0 with lo up, and its
// modules load crc32c_generic before libcrc32c (libcrc32c's soft
// dependency), the rdma_cm stack and siw after their dependencies.
func TestSiwGuestSetup(t *testing.T) {
	s := initScript(initConfig{Nonce: "n", Modules: []string{"siw"}, Program: "/p", Provider: "siw"})
	for _, w := range []string{"rdma link add siw0 type siw netdev eth0", "ip link set lo up", "ip addr add " + GuestAddr + "/24 dev eth0"} {
		if !strings.Contains(s, w) {
			t.Errorf("siw init script lacks %q:\n%s", w, s)
		}
	}
	if strings.Contains(s, "rxe0") {
		t.Errorf("siw init script mentions rxe0:\n%s", s)
	}
	// depends= as Debian 6.1 and 6.12 have them.
	f := fakeFromModinfo(t, map[string]string{
		"siw.ko":            "depends=ib_core,libcrc32c,ib_uverbs|name=siw",
		"libcrc32c.ko":      "depends=|softdep=pre: crc32c|name=libcrc32c",
		"crc32c_generic.ko": "depends=|name=crc32c_generic",
		"ib_core.ko":        "depends=|name=ib_core",
		"ib_uverbs.ko":      "depends=ib_core|name=ib_uverbs",
		"iw_cm.ko":          "depends=ib_core|name=iw_cm",
		"ib_cm.ko":          "depends=ib_core|name=ib_cm",
		"rdma_cm.ko":        "depends=ib_core,iw_cm,ib_cm|name=rdma_cm",
		"rdma_ucm.ko":       "depends=ib_core,rdma_cm,ib_uverbs|name=rdma_ucm",
		"dummy.ko":          "depends=|name=dummy",
	})
	got, err := LoadOrder(f, SiwRequiredModules, SiwOptionalModules)
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	for i, m := range got {
		pos[m] = i
	}
	if len(got) != 10 || pos["crc32c_generic"] > pos["libcrc32c"] || pos["libcrc32c"] > pos["siw"] || pos["rdma_cm"] > pos["rdma_ucm"] {
		t.Errorf("LoadOrder(siw) = %v; want all 10 modules, crc32c_generic before libcrc32c before siw", got)
	}
	if Device("") != "rxe0" || Device("siw") != "siw0" {
		t.Errorf("Device names: %q, %q; want rxe0, siw0", Device(""), Device("siw"))
	}
	_, err = Run(context.Background(), Options{Kernel: SuiteKernel("bookworm"), Program: "/bin/true", Provider: "mlx5"})
	if err == nil || !strings.Contains(err.Error(), `"mlx5"`) {
		t.Errorf("Run with provider mlx5 = %v, want a refusal naming it", err)
	}
}
