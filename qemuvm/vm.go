package qemuvm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Options configures one guest run.
type Options struct {
	// Kernel selects the guest kernel (required).
	Kernel Kernel
	// Provider is the RDMA device the guest makes: "rxe" (the default,
	// rdma_rxe, soft-RoCE) or "siw" (soft-iWARP, built for the kernel by
	// SiwModule and cached). The device is named PROVIDER0 (rxe0, siw0);
	// see Providers.
	Provider string
	// Program is the host path of the binary to run in the guest
	// (required). It is copied in with every library ldd lists for it.
	Program string
	// Args are passed to Program.
	Args []string
	// Patches are host paths of patches to the provider's kernel driver
	// (drivers/infiniband/sw/rxe or siw): the guest loads the module
	// built with them (PatchedModule) instead of the kernel's own, and
	// its console is set to show an oops, a hung task or a soft lockup,
	// each of which panics the guest (Result.Crash, KernelCrashError).
	Patches []string
	// Env holds extra KEY=VALUE environment entries for Program.
	Env []string
	// Dir is Program's working directory in the guest; "/" by default.
	Dir string
	// ExtraFiles maps absolute guest paths to host files or directories
	// that are copied into the guest (directories recursively). Paths
	// under /srqvm are reserved.
	ExtraFiles map[string]string

	// Timeout bounds the QEMU run (boot, program, power-off);
	// 3 minutes when zero.
	Timeout time.Duration
	// StallTimeout bounds the silence on the guest's serial console
	// while it boots: with no new console bytes for that long before
	// the program starts, QEMU is killed. Under "auto" a KVM boot is
	// then repeated under TCG; a TCG boot that stalls is booted again
	// once with a bound four times as large; otherwise Run returns a
	// StallError.
	// Once the program runs, it may be silent up to Timeout.
	// DefaultStallTimeout when zero; negative turns the check off.
	StallTimeout time.Duration
	// Accel is "auto" (default: KVM when a probe shows it can run guest
	// code and no KVM boot in this process failed or stalled, else TCG),
	// "kvm" or "tcg"; see Accels.
	Accel string
	// CPUs and MemoryMB size the guest; 2 and 1024 by default.
	CPUs     int
	MemoryMB int
	// RDMACore is where the guest's libibverbs, provider and librdmacm
	// come from: RDMACoreSuite (the default for a suite kernel: the
	// kernel's own suite's rdma-core and glibc) or RDMACoreHost (the
	// default for a custom kernel: the host's); see RDMACores.
	RDMACore string
	// RDMACorePatches are patch files for the suite's rdma-core source,
	// applied in order: the provider library (and libibverbs or
	// librdmacm, when a patch touches them) is rebuilt with them and
	// put in place of the suite's (PatchedUserspace). Needs RDMACore
	// "suite".
	RDMACorePatches []string
	// Stress is how many busy processes load the host while the guest
	// runs (StartHostLoad): a way to see how the suite fares on a busy
	// CI runner. They are started after the kernel and initramfs are
	// ready and stopped when the guest ends.
	Stress int

	// CacheDir holds downloaded and unpacked kernels and the private apt
	// state; $XDG_CACHE_HOME/srqconform or ~/.cache/srqconform by
	// default.
	CacheDir string
	// Mirror and SecurityMirror are the Debian archives; see
	// DefaultMirror and DefaultSecurityMirror.
	Mirror, SecurityMirror string
	// Keyring verifies the archives; DefaultKeyring by default.
	Keyring string
	// ListsMaxAge is how long fetched package lists are trusted before
	// apt-get update runs again; 12h when zero, forever when negative.
	ListsMaxAge time.Duration

	// QEMU, Busybox, Rdma, RXEProvider and RXEDriverFile override the
	// host paths of those tools; found automatically when empty.
	QEMU          string
	Busybox       string
	Rdma          string
	RXEProvider   string
	RXEDriverFile string

	// Log, if set, receives progress messages.
	Log io.Writer
	// Console, if set, receives the guest's serial console live.
	Console io.Writer
}

// Result is the outcome of a guest run.
type Result struct {
	// KernelRelease is uname -r inside the guest.
	KernelRelease string
	// Kernel is the kernel that was booted (packages and versions).
	Kernel *PreparedKernel
	// ExitCode is the guest program's exit status.
	ExitCode int
	// Output is the program's stdout, byte for byte.
	Output []byte
	// Stderr is the program's stderr (also visible in SerialLog).
	Stderr []byte
	// RDMACoreVersion names the rdma-core the guest ran, as
	// Userspace.String does: the Debian version of its ibverbs-providers
	// and where it came from ("56.1-1 (trixie)", "44.0-2 (host)");
	// LibibverbsVersion is the version of its libibverbs1. A host
	// version is "unknown" when dpkg-query cannot tell.
	RDMACoreVersion   string
	LibibverbsVersion string
	// Userspace describes the guest's rdma-core in full.
	Userspace *Userspace
	// Modules lists the kernel modules loaded, in order; InsmodFailed
	// those whose insmod failed.
	Modules      []string
	InsmodFailed []string
	// LinkAdded reports whether "rdma link add rxe0" (or siw0) succeeded.
	LinkAdded bool
	// Siw describes the siw.ko the guest loaded (provider siw only).
	Siw *SiwBuild
	// Patched describes the module built with Options.Patches, nil
	// without patches.
	Patched *ModuleBuild
	// Crash is the guest kernel's oops, panic or hang as its console
	// showed it; nil when it showed none.
	Crash *KernelCrash
	// Accel is the QEMU accelerator used ("kvm" or "tcg").
	Accel string
	// AccelFallback says why this run left KVM for TCG, e.g. "no
	// console output for 1m0s under kvm"; empty when it did not.
	AccelFallback string
	// SerialLog is the full serial console output, for diagnostics.
	SerialLog string
	// QEMUCommand is the command line that booted the guest.
	QEMUCommand string
	// BootTime is the wall time of the QEMU run alone; WallTime that of
	// the whole Run, including kernel preparation and initramfs build.
	BootTime time.Duration
	// BootRetries counts boots repeated because the guest kernel panicked
	// before the program started.
	BootRetries int
	WallTime    time.Duration
	// LoadAverage is the host's 1-minute load average (/proc/loadavg) as
	// the guest ended; "" where it could not be read.
	LoadAverage string
}

// Providers returns the values Options.Provider accepts besides ""
// (rxe).
func Providers() []string { return []string{"rxe", "siw"} }

// provider returns the effective Options.Provider.
func (o Options) provider() string {
	if o.Provider == "" {
		return "rxe"
	}
	return o.Provider
}

// Device returns the name of the guest's RDMA device for a provider
// ("" is rxe): rxe0 or siw0.
func Device(provider string) string {
	if provider == "" {
		provider = "rxe"
	}
	return provider + "0"
}

// Accels returns the values Options.Accel accepts besides "" (auto).
func Accels() []string { return []string{"auto", "kvm", "tcg"} }

// checkAccel returns an error for an Options.Accel value Run rejects.
func checkAccel(accel string) error {
	if accel == "" || slices.Contains(Accels(), accel) {
		return nil
	}
	return fmt.Errorf("vm: Options.Accel is %q; expected \"auto\", \"kvm\" or \"tcg\"", accel)
}

// stallRetryFactor is how much larger the stall bound is when a TCG boot
// that went quiet is booted again.
const stallRetryFactor = 4

// stallTimeout returns the effective StallTimeout; <= 0 means off.
func (o Options) stallTimeout() time.Duration {
	if o.StallTimeout == 0 {
		return DefaultStallTimeout
	}
	return o.StallTimeout
}

func (o Options) logf(format string, a ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", a...)
	}
}

// cacheDir returns the cache root.
func (o Options) cacheDir() (string, error) {
	if o.CacheDir != "" {
		return filepath.Abs(o.CacheDir)
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "srqconform"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("vm: no cache directory: Options.CacheDir is empty, XDG_CACHE_HOME is unset and the home directory is unknown: %w", err)
	}
	return filepath.Join(home, ".cache", "srqconform"), nil
}

// DefaultCacheDir returns the cache directory used when
// Options.CacheDir is empty.
func DefaultCacheDir() (string, error) { return Options{}.cacheDir() }

// Run boots the selected kernel under QEMU, runs opts.Program inside
// against the rxe0 device (siw0 with Options.Provider "siw") and
// returns its output. A program that exits
// non-zero is not an error: check Result.ExitCode. Errors are returned
// for missing host tools, bad paths, unknown suites, failed downloads,
// and guests that never report back.
func Run(ctx context.Context, opts Options) (*Result, error) {
	start := time.Now()
	if err := checkAccel(opts.Accel); err != nil {
		return nil, err
	}
	if !slices.Contains(RDMACores(), opts.rdmaCore()) {
		return nil, fmt.Errorf("vm: Options.RDMACore is %q; expected one of %s", opts.RDMACore, strings.Join(RDMACores(), ", "))
	}
	if !slices.Contains(Providers(), opts.provider()) {
		return nil, fmt.Errorf("vm: Options.Provider is %q; expected one of %s", opts.Provider, strings.Join(Providers(), ", "))
	}
	qemu, err := findQEMU(opts.QEMU)
	if err != nil {
		return nil, err
	}
	if opts.Program == "" {
		return nil, errors.New("vm: Options.Program is empty; expected the host path of a binary to run in the guest")
	}
	if err := checkExecutable(opts.Program); err != nil {
		return nil, err
	}
	pk, err := PrepareKernel(ctx, opts)
	if err != nil {
		return nil, err
	}
	var siw *SiwBuild
	var patched *ModuleBuild
	replace := map[string]string{}
	switch {
	case len(opts.Patches) > 0:
		if patched, err = PatchedModule(ctx, opts, pk); err != nil {
			return nil, err
		}
		replace[patched.Module] = patched.Path
	case opts.provider() == "siw":
		if siw, err = SiwModule(ctx, opts, pk); err != nil {
			return nil, err
		}
		replace["siw"] = siw.Path
	}
	work, err := os.MkdirTemp("", "srqconform-vm-")
	if err != nil {
		return nil, fmt.Errorf("vm: %w", err)
	}
	defer os.RemoveAll(work)

	nonce, err := newNonce()
	if err != nil {
		return nil, err
	}
	initrd := filepath.Join(work, "initrd.gz")
	user, err := guestUserspace(ctx, opts, pk)
	if err != nil {
		return nil, err
	}
	modules, err := buildInitramfs(ctx, opts, pk, replace, user, nonce, work, initrd)
	if err != nil {
		return nil, err
	}
	res := &Result{Kernel: pk, Modules: modules, Siw: siw, Patched: patched, Userspace: user}
	res.RDMACoreVersion = user.String()
	res.LibibverbsVersion = user.LibibverbsVersion

	accel, err := chooseAccel(ctx, qemu, opts)
	if err != nil {
		return nil, err
	}
	load, err := StartHostLoad(ctx, opts.Stress)
	if err != nil {
		return nil, err
	}
	rep, err := bootWithFallback(ctx, qemu, accel, opts, pk, initrd, nonce, work, res)
	res.LoadAverage = loadAverage()
	load.Stop()
	res.WallTime = time.Since(start)
	res.Crash = FindKernelCrash(res.SerialLog)
	if err != nil {
		return res, crashOr(err, res)
	}
	res.KernelRelease = rep.Release
	res.ExitCode = rep.Exit
	res.Output = rep.Stdout
	res.Stderr = rep.Stderr
	res.InsmodFailed = rep.InsmodFailed
	res.LinkAdded = rep.Link == 0
	return res, nil
}

// bootWithFallback boots once; in auto mode a KVM boot that stalls, or
// fails before the guest reports anything, is repeated with TCG and KVM
// is not used again for this qemu in this process.
func bootWithFallback(ctx context.Context, qemu, accel string, opts Options, pk *PreparedKernel, initrd, nonce, work string, res *Result) (*guestReport, error) {
	rep, err := boot(ctx, qemu, accel, opts, pk, initrd, nonce, work, res)
	var nem *NoEndMarkerError
	var stall *StallError
	if err != nil && accel == "kvm" && (opts.Accel == "" || opts.Accel == "auto") && ctx.Err() == nil {
		why := ""
		switch {
		case errors.As(err, &stall):
			why = fmt.Sprintf("no console output for %v under kvm", stall.Silence)
			opts.logf("vm: %s; falling back to tcg", why)
		case errors.As(err, &nem) && !strings.Contains(res.SerialLog, marker(nonce)):
			why = "kvm boot " + nem.Reason
			opts.logf("vm: KVM boot failed (%v); retrying with TCG", nem.Reason)
		}
		if why != "" {
			kvmBroken.Store(qemu, why)
			res.AccelFallback = why
			accel = "tcg"
			rep, err = boot(ctx, qemu, accel, opts, pk, initrd, nonce, work, res)
		}
	}
	if err != nil && accel == "tcg" && errors.As(err, &stall) && ctx.Err() == nil && opts.stallTimeout() > 0 {
		// A timer is not evidence: under TCG on a host busy enough
		// (seen at load 27 on 2 cores) the boot can go quiet for longer
		// than the bound with nothing wrong. Boot again with a bound
		// four times as large before calling the guest hung.
		opts.logf("vm: no console output for %v under tcg; booting again with a bound of %v", stall.Silence, stallRetryFactor*stall.Silence)
		res.BootRetries++
		opts.StallTimeout = stallRetryFactor * stall.Silence
		rep, err = boot(ctx, qemu, accel, opts, pk, initrd, nonce, work, res)
	}
	if err != nil && errors.As(err, &nem) && ctx.Err() == nil && panickedBeforeInit(res.SerialLog, nonce) {
		// Seen once in 60 boots of Debian 6.12 under TCG: an Oops in
		// early kernel_init, before any module or the program ran.
		opts.logf("vm: the guest kernel panicked before the program started; booting again")
		res.BootRetries++
		return boot(ctx, qemu, accel, opts, pk, initrd, nonce, work, res)
	}
	return rep, err
}

// panickedBeforeInit reports whether a serial log shows a kernel panic and
// no sign of the guest's /init: a boot flake, not a result.
func panickedBeforeInit(serial, nonce string) bool {
	return strings.Contains(serial, "Kernel panic") && !strings.Contains(serial, marker(nonce))
}

// checkExecutable checks that p is an existing regular, executable file.
func checkExecutable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("vm: guest program: stat %s: %w; expected an executable file on the host", p, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("vm: guest program %s is a %s; expected an executable file", p, st.Mode().Type())
	}
	if st.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("vm: guest program %s has mode %s; expected an executable file", p, st.Mode().Perm())
	}
	return nil
}

func newNonce() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("vm: random nonce: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// dpkgVersion returns the installed version of a Debian package, or
// "unknown".
func dpkgVersion(ctx context.Context, pkg string) string {
	out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${Version}", pkg).Output()
	v := strings.TrimSpace(string(out))
	if err != nil || v == "" {
		return "unknown"
	}
	return v
}

// crashOr turns a guest run's error into a *KernelCrashError when the
// console shows a crash or a hang the kernel reported. A guest that only
// outran its bound stays a *NoEndMarkerError (see Inconclusive): a timer
// is never evidence of a hang.
func crashOr(err error, res *Result) error {
	if res.Crash != nil {
		return &KernelCrashError{Crash: res.Crash}
	}
	return err
}
