package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/srqconform/srqconform/concurrent"
	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/conformance/render"
	"github.com/srqconform/srqconform/model"
	"github.com/srqconform/srqconform/qemuvm"
)

// vmFlags holds the vm command's flags, as given on the command line.
type vmFlags struct {
	fs            *flagSet
	provider      string
	kernel        string
	image         string
	modules       string
	profile       string
	seed          uint64
	cases         int
	duration      time.Duration
	steps         int
	format        string
	out           string
	binary        string
	timeout       time.Duration
	accel         string
	cache         string
	verbose       bool
	runs          int
	knownFile     string
	parallel      int
	jsonOut       string
	replayFile    string
	replayDir     string
	conn          string
	concurrentRun bool
	htmlDir       string
	checkTimeout  time.Duration
	checkMemory   uint64
	stress        int
	reduce        time.Duration
	patches       repeated
	rdmaCore      string
	rdmaPatches   patchFiles
}

// repeated is a flag that may be given more than once; it keeps every
// value in order.
type repeated []string

// String implements flag.Value.
func (r *repeated) String() string { return strings.Join(*r, ",") }

// Set implements flag.Value.
func (r *repeated) Set(s string) error {
	if s == "" {
		return errors.New("empty value")
	}
	*r = append(*r, s)
	return nil
}

// vmConfig is what the vm command runs, derived from its flags once they
// are checked.
type vmConfig struct {
	vmFlags
	k         qemuvm.Kernel
	suite     string
	pname     string
	known     conformance.Known
	hostCheck concurrent.CheckOptions
	outs      outputs
	// patchInfo is each -patch as read: its hash and path form.
	patchInfo []qemuvm.Patch
	// profileFile is the host path of a -profile file; pname is then its
	// path in the guest.
	profileFile string
	// boot runs a guest: qemuvm.Run unless a test replaces it.
	boot func(context.Context, qemuvm.Options) (*qemuvm.Result, error)
}

// newVMFlags defines the vm command's flags on a new flag set.
func newVMFlags(stdout, stderr io.Writer) *vmFlags {
	fs := newFlagSet("vm", stdout, stderr, "vm [-kernel SUITE | -image VMLINUZ -modules DIR] [flags]")
	f := &vmFlags{fs: fs}
	fs.StringVar(&f.provider, "provider", "rxe", "RDMA device in the guest: rxe (soft-RoCE, rxe0) or siw (soft-iWARP, siw0; siw.ko is built for the kernel in a chroot of its suite and cached, which needs root and mmdebstrap the first time)")
	fs.StringVar(&f.kernel, "kernel", "trixie", "Debian suite whose kernel to boot: "+strings.Join(qemuvm.Suites(), ", "))
	fs.StringVar(&f.image, "image", "", "boot this kernel image instead (with -modules)")
	fs.StringVar(&f.modules, "modules", "", "modules directory for -image (the one holding modules.dep or the kernel release's tree)")
	fs.StringVar(&f.profile, "profile", "", "profile name or profile file (default: siw with -provider siw; rxe-6.1 for bookworm, rxe otherwise)")
	fs.Uint64Var(&f.seed, "seed", 0, "seed for the random cases (0: pick one; it is reported)")
	fs.IntVar(&f.cases, "cases", 50, "number of random cases")
	fs.DurationVar(&f.duration, "duration", 0, "time budget for the random cases in the guest (with -cases, at most that many)")
	fs.IntVar(&f.steps, "steps", 40, "most steps per random case")
	fs.StringVar(&f.format, "format", "text", "report format: "+strings.Join(render.Formats, ", "))
	fs.StringVar(&f.out, "o", "", "write the report to this file (default: standard output)")
	fs.StringVar(&f.binary, "binary", "", "srqconform binary built with the cgo driver (default: build one with go build -tags rdma)")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Minute, "bound on the whole guest run")
	fs.StringVar(&f.accel, "accel", "auto", "QEMU accelerator: auto (KVM if a probe shows it works, else TCG; a KVM boot with no console output for a minute is repeated under TCG), kvm or tcg")
	fs.StringVar(&f.cache, "cache", "", "kernel download cache (default: ~/.cache/srqconform)")
	fs.BoolVar(&f.verbose, "v", false, "show progress and the guest console")
	fs.IntVar(&f.runs, "runs", 1, "repeat the suite in the guest with seeds seed, seed+1, ... (one boot)")
	fs.StringVar(&f.knownFile, "known", "", "a file of rules the device is known to break (see run -known): when only those fail the exit status is 0")
	fs.IntVar(&f.parallel, "parallel", 1, "with -runs: make up to this many runs at once in the guest (run -parallel)")
	fs.StringVar(&f.jsonOut, "json", "", "also write the JSON report to this file")
	fs.StringVar(&f.replayFile, "replay", "", "re-run this replay file on the guest's device instead of the suite")
	fs.StringVar(&f.replayDir, "replay-dir", "", "save every counterexample as a replay file in this directory on the host (re-run it with vm -replay FILE)")
	fs.StringVar(&f.conn, "conn", "", "how peers connect in the guest: verbs (ibv_modify_qp) or rdmacm (librdmacm); default verbs on rxe, rdmacm on siw (its only way)")
	fs.BoolVar(&f.concurrentRun, "concurrent", false, "run srqconform concurrent in the guest instead of the suite: -runs histories of -duration each (default 5s), checked for linearizability; -format text, markdown or json")
	fs.StringVar(&f.htmlDir, "html", "", "with -concurrent: write porcupine's visualisation of each violation to this directory on the host")
	fs.DurationVar(&f.checkTimeout, "check-timeout", concurrent.DefaultCheckTimeout, "with -concurrent: bound on porcupine's search per history on the host (a history not decided by then is 'unknown')")
	fs.IntVar(&f.stress, "stress", 0, "keep this many busy processes on the host while the guest runs, as on a busy CI runner (stopped at the end and on Ctrl-C)")
	fs.Uint64Var(&f.checkMemory, "check-memory", 0, "with -concurrent: "+checkMemoryUsage())
	fs.DurationVar(&f.reduce, "reduce", 10*time.Second, "with -concurrent: time spent reducing a violating history on the host (0: none)")
	fs.StringVar(&f.rdmaCore, "rdma-core", "", "rdma-core in the guest: suite (the default with -kernel: libibverbs, providers, librdmacm and glibc of the kernel's own Debian suite, downloaded and cached) or host (the host's; the default with -image)")
	fs.Var(&f.rdmaPatches, "rdma-core-patch", "rebuild the provider library (and libibverbs or librdmacm if the patch touches them) from the suite's rdma-core source with this patch applied, in a chroot of the suite (root and mmdebstrap the first time; cached by the patches' hashes); repeatable, applied in order")
	fs.Var(&f.patches, "patch", "rebuild the kernel driver (rdma_rxe.ko with -provider rxe, siw.ko with siw) from the suite's own linux-source with this patch applied, in a chroot of the suite with its compiler, and boot with it; repeatable, applied in order; paths a/rxe_resp.c or a/drivers/infiniband/sw/rxe/rxe_resp.c; the build is cached by kernel, provider and patch hashes")
	return f
}

// parseVM parses and checks the vm command's arguments. On a bad argument
// it prints one line on stderr and returns nil and the exit status (on -h,
// nil and 0).
func parseVM(args []string, stdout, stderr io.Writer) (*vmConfig, int) {
	f := newVMFlags(stdout, stderr)
	if ok, code := f.fs.parse(args); !ok {
		return nil, code
	}
	c, msg := f.check()
	if msg != "" {
		return nil, fail(stderr, "%s", msg)
	}
	return c, exitOK
}

// check refuses flags that do not go together or are out of range and
// derives the run's configuration; the string is the one line to print
// when it refuses.
func (f *vmFlags) check() (*vmConfig, string) {
	fs := f.fs
	c := &vmConfig{vmFlags: *f}
	if fs.NArg() > 0 {
		return nil, fmt.Sprintf("vm takes no arguments, got %q", fs.Args())
	}
	if f.htmlDir != "" && !f.concurrentRun {
		return nil, "-html goes with -concurrent"
	}
	if (fs.set("check-timeout") || fs.set("check-memory") || fs.set("reduce")) && !f.concurrentRun {
		return nil, "-check-timeout, -check-memory and -reduce go with -concurrent"
	}
	if err := fs.durations("check-timeout", "reduce"); err != nil {
		return nil, err.Error()
	}
	if err := checkMemoryFlag(f.checkMemory); err != nil {
		return nil, err.Error()
	}
	c.hostCheck = concurrent.CheckOptions{Timeout: f.checkTimeout, ReduceBudget: f.reduce, MemoryLimit: f.checkMemory << 20}
	if f.reduce == 0 {
		c.hostCheck.ReduceBudget = -1
	}
	if f.concurrentRun && !slices.Contains([]string{"text", "markdown", "json"}, f.format) {
		return nil, fmt.Sprintf("unknown format %q with -concurrent: want text, markdown or json", f.format)
	}
	if msg := f.checkNumbers(); msg != "" {
		return nil, msg
	}
	known, err := conformance.ReadKnown(f.knownFile)
	if err != nil {
		return nil, err.Error()
	}
	c.known = known
	if !validFormat(f.format) {
		return nil, fmt.Sprintf("unknown format %q", f.format)
	}
	if f.conn != "" && f.conn != "verbs" && f.conn != "rdmacm" {
		return nil, fmt.Sprintf("unknown connection mode %q for -conn: want verbs or rdmacm", f.conn)
	}
	if f.conn == "verbs" && f.provider == "siw" {
		return nil, "-conn verbs with -provider siw: siw QPs reach RTS only through rdma_cm; leave -conn out or give rdmacm"
	}
	if !slices.Contains(qemuvm.Providers(), f.provider) {
		return nil, fmt.Sprintf("unknown provider %q for -provider: want one of %s", f.provider, strings.Join(qemuvm.Providers(), ", "))
	}
	if !slices.Contains(qemuvm.Accels(), f.accel) {
		return nil, fmt.Sprintf("unknown accelerator %q for -accel: want one of %s", f.accel, strings.Join(qemuvm.Accels(), ", "))
	}
	if f.rdmaCore != "" && !slices.Contains(qemuvm.RDMACores(), f.rdmaCore) {
		return nil, fmt.Sprintf("unknown rdma-core %q for -rdma-core: want one of %s", f.rdmaCore, strings.Join(qemuvm.RDMACores(), ", "))
	}
	if f.rdmaCore == qemuvm.RDMACoreHost && len(f.rdmaPatches) > 0 {
		return nil, "-rdma-core-patch with -rdma-core host: patches apply to the suite's rdma-core source; leave -rdma-core out"
	}
	if msg := c.chooseKernel(); msg != "" {
		return nil, msg
	}
	if c.suite == "custom" && (f.rdmaCore == qemuvm.RDMACoreSuite || len(f.rdmaPatches) > 0) {
		return nil, "-rdma-core suite or -rdma-core-patch with -image: a custom kernel has no Debian suite; leave them out or give -rdma-core host"
	}
	if msg := c.readPatches(); msg != "" {
		return nil, msg
	}
	c.pname = f.profile
	if c.pname == "" {
		c.pname = defaultProfileFor(f.provider, c.suite)
	}
	if _, err := model.ProfileByName(c.pname); err != nil {
		// A profile file: copied into the guest, whose run reads it.
		if _, ferr := profileArg(c.pname); ferr != nil {
			return nil, ferr.Error()
		}
		if f.concurrentRun {
			return nil, fmt.Sprintf("-profile %s: -concurrent takes a built-in profile, not a profile file", c.pname)
		}
		c.profileFile = c.pname
		c.pname = "/profile" + filepath.Ext(c.pname)
	}
	c.outs = outputs{report: f.out, format: f.format, json: f.jsonOut, replayDir: f.replayDir}
	if f.replayFile == "" {
		if err := c.outs.check(); err != nil {
			return nil, err.Error()
		}
	}
	if c.seed == 0 {
		c.seed = uint64(time.Now().UnixNano()) >> 1
	}
	return c, ""
}

// checkNumbers refuses counts and durations out of range.
func (f *vmFlags) checkNumbers() string {
	switch {
	case f.timeout <= 0:
		return fmt.Sprintf("-timeout is %v, want more than 0", f.timeout)
	case f.runs < 1:
		return fmt.Sprintf("-runs must be at least 1, got %d", f.runs)
	case f.parallel < 1:
		return fmt.Sprintf("-parallel must be at least 1, got %d", f.parallel)
	case f.stress < 0:
		return fmt.Sprintf("-stress must not be negative, got %d", f.stress)
	case f.cases < 0 || f.steps <= 0:
		return fmt.Sprintf("-cases must be >= 0 and -steps > 0 (got %d, %d)", f.cases, f.steps)
	case f.duration < 0:
		return fmt.Sprintf("-duration must not be negative, got %v", f.duration)
	}
	return ""
}

// chooseKernel picks the suite's kernel, or the one -image and -modules
// name.
func (c *vmConfig) chooseKernel() string {
	c.k, c.suite = qemuvm.SuiteKernel(c.kernel), c.kernel
	if c.image != "" || c.modules != "" {
		if c.image == "" || c.modules == "" {
			return "-image and -modules go together"
		}
		for _, p := range []string{c.image, c.modules} {
			if _, err := os.Stat(p); err != nil {
				return "kernel path: " + err.Error()
			}
		}
		c.k, c.suite = qemuvm.CustomKernel(c.image, c.modules), "custom"
	} else if !slices.Contains(qemuvm.Suites(), c.kernel) {
		return fmt.Sprintf("unknown kernel suite %q: want one of %s, or -image and -modules", c.kernel, strings.Join(qemuvm.Suites(), ", "))
	}
	return ""
}

// readPatches reads every -patch: a file that is not a patch to the
// provider's driver directory is refused before anything is built.
func (c *vmConfig) readPatches() string {
	if len(c.patches) == 0 {
		return ""
	}
	if c.suite == "custom" {
		return "-patch needs a Debian suite kernel (-kernel): the driver is rebuilt from the suite's linux-source; with -image, build the module in your own tree"
	}
	for _, f := range c.patches {
		p, err := qemuvm.ReadPatch(f, c.provider)
		if err != nil {
			return err.Error()
		}
		c.patchInfo = append(c.patchInfo, p)
	}
	return ""
}
