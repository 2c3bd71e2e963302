package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/srqconform/srqconform/concurrent"
	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/conformance/render"
	"github.com/srqconform/srqconform/model"
	"github.com/srqconform/srqconform/qemuvm"
)

// defaultProfileFor is the profile a suite's kernel is held to with a
// provider.
func defaultProfileFor(provider, suite string) string {
	if provider == "siw" {
		return "siw"
	}
	if suite == "bookworm" {
		return "rxe-6.1"
	}
	return "rxe"
}

// cmdVM boots a Debian kernel with rdma_rxe (or siw) under QEMU, runs
// the suite against rxe0 (siw0) inside with the cgo driver, and reports
// on the host.
func cmdVM(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("vm", stdout, stderr, "vm [-kernel SUITE | -image VMLINUZ -modules DIR] [flags]")
	provider := fs.String("provider", "rxe", "RDMA device in the guest: rxe (soft-RoCE, rxe0) or siw (soft-iWARP, siw0; siw.ko is built for the kernel in a chroot of its suite and cached, which needs root and mmdebstrap the first time)")
	kernel := fs.String("kernel", "trixie", "Debian suite whose kernel to boot: "+strings.Join(qemuvm.Suites(), ", "))
	image := fs.String("image", "", "boot this kernel image instead (with -modules)")
	modules := fs.String("modules", "", "modules directory for -image (the one holding modules.dep or the kernel release's tree)")
	profile := fs.String("profile", "", "profile (default: siw with -provider siw; rxe-6.1 for bookworm, rxe otherwise)")
	seed := fs.Uint64("seed", 0, "seed for the random cases (0: pick one; it is reported)")
	cases := fs.Int("cases", 50, "number of random cases")
	duration := fs.Duration("duration", 0, "time budget for the random cases in the guest (with -cases, at most that many)")
	steps := fs.Int("steps", 40, "most steps per random case")
	format := fs.String("format", "text", "report format: "+strings.Join(render.Formats, ", "))
	out := fs.String("o", "", "write the report to this file (default: standard output)")
	binary := fs.String("binary", "", "srqconform binary built with the cgo driver (default: build one with go build -tags rdma)")
	timeout := fs.Duration("timeout", 30*time.Minute, "bound on the whole guest run")
	accel := fs.String("accel", "auto", "QEMU accelerator: auto (KVM if a probe shows it works, else TCG; a KVM boot with no console output for a minute is repeated under TCG), kvm or tcg")
	cache := fs.String("cache", "", "kernel download cache (default: ~/.cache/srqconform)")
	verbose := fs.Bool("v", false, "show progress and the guest console")
	runs := fs.Int("runs", 1, "repeat the suite in the guest with seeds seed, seed+1, ... (one boot)")
	knownFile := fs.String("known", "", "a file of rules the device is known to break (see run -known): when only those fail the exit status is 0")
	parallel := fs.Int("parallel", 1, "with -runs: make up to this many runs at once in the guest (run -parallel)")
	jsonOut := fs.String("json", "", "also write the JSON report to this file")
	replayFile := fs.String("replay", "", "re-run this replay file on the guest's device instead of the suite")
	replayDir := fs.String("replay-dir", "", "save every counterexample as a replay file in this directory on the host (re-run it with vm -replay FILE)")
	conn := fs.String("conn", "", "how peers connect in the guest: verbs (ibv_modify_qp) or rdmacm (librdmacm); default verbs on rxe, rdmacm on siw (its only way)")
	concurrentRun := fs.Bool("concurrent", false, "run srqconform concurrent in the guest instead of the suite: -runs histories of -duration each (default 5s), checked for linearizability; -format text, markdown or json")
	htmlDir := fs.String("html", "", "with -concurrent: write porcupine's visualisation of each violation to this directory on the host")
	checkTimeout := fs.Duration("check-timeout", concurrent.DefaultCheckTimeout, "with -concurrent: bound on porcupine's search per history on the host (a history not decided by then is 'unknown')")
	stress := fs.Int("stress", 0, "keep this many busy processes on the host while the guest runs, as on a busy CI runner (stopped at the end and on Ctrl-C)")
	rdmaCore := fs.String("rdma-core", "", "rdma-core in the guest: suite (the default with -kernel: libibverbs, providers, librdmacm and glibc of the kernel's own Debian suite, downloaded and cached) or host (the host's; the default with -image)")
	var rdmaPatches patchFiles
	fs.Var(&rdmaPatches, "rdma-core-patch", "rebuild the provider library (and libibverbs or librdmacm if the patch touches them) from the suite's rdma-core source with this patch applied, in a chroot of the suite (root and mmdebstrap the first time; cached by the patches' hashes); repeatable, applied in order")
	reduce := fs.Duration("reduce", 10*time.Second, "with -concurrent: time spent reducing a violating history on the host (0: none)")
	if ok, code := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "vm takes no arguments, got %q", fs.Args())
	}
	if *htmlDir != "" && !*concurrentRun {
		return fail(stderr, "-html goes with -concurrent")
	}
	if (fs.set("check-timeout") || fs.set("reduce")) && !*concurrentRun {
		return fail(stderr, "-check-timeout and -reduce go with -concurrent")
	}
	if err := fs.durations("check-timeout", "reduce"); err != nil {
		return fail(stderr, "%v", err)
	}
	hostCheck := concurrent.CheckOptions{Timeout: *checkTimeout, ReduceBudget: *reduce}
	if *reduce == 0 {
		hostCheck.ReduceBudget = -1
	}
	if *concurrentRun && !slices.Contains([]string{"text", "markdown", "json"}, *format) {
		return fail(stderr, "unknown format %q with -concurrent: want text, markdown or json", *format)
	}
	if *timeout <= 0 {
		return fail(stderr, "-timeout is %v, want more than 0", *timeout)
	}
	if *runs < 1 {
		return fail(stderr, "-runs must be at least 1, got %d", *runs)
	}
	if *parallel < 1 {
		return fail(stderr, "-parallel must be at least 1, got %d", *parallel)
	}
	if *stress < 0 {
		return fail(stderr, "-stress must not be negative, got %d", *stress)
	}
	known, err := conformance.ReadKnown(*knownFile)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if *cases < 0 || *steps <= 0 {
		return fail(stderr, "-cases must be >= 0 and -steps > 0 (got %d, %d)", *cases, *steps)
	}
	if *duration < 0 {
		return fail(stderr, "-duration must not be negative, got %v", *duration)
	}
	if !validFormat(*format) {
		return fail(stderr, "unknown format %q", *format)
	}
	if *conn != "" && *conn != "verbs" && *conn != "rdmacm" {
		return fail(stderr, "unknown connection mode %q for -conn: want verbs or rdmacm", *conn)
	}
	if *conn == "verbs" && *provider == "siw" {
		return fail(stderr, "-conn verbs with -provider siw: siw QPs reach RTS only through rdma_cm; leave -conn out or give rdmacm")
	}
	if !slices.Contains(qemuvm.Providers(), *provider) {
		return fail(stderr, "unknown provider %q for -provider: want one of %s", *provider, strings.Join(qemuvm.Providers(), ", "))
	}
	if !slices.Contains(qemuvm.Accels(), *accel) {
		return fail(stderr, "unknown accelerator %q for -accel: want one of %s", *accel, strings.Join(qemuvm.Accels(), ", "))
	}
	if *rdmaCore != "" && !slices.Contains(qemuvm.RDMACores(), *rdmaCore) {
		return fail(stderr, "unknown rdma-core %q for -rdma-core: want one of %s", *rdmaCore, strings.Join(qemuvm.RDMACores(), ", "))
	}
	if *rdmaCore == qemuvm.RDMACoreHost && len(rdmaPatches) > 0 {
		return fail(stderr, "-rdma-core-patch with -rdma-core host: patches apply to the suite's rdma-core source; leave -rdma-core out")
	}
	k := qemuvm.SuiteKernel(*kernel)
	suite := *kernel
	if *image != "" || *modules != "" {
		if *image == "" || *modules == "" {
			return fail(stderr, "-image and -modules go together")
		}
		for _, p := range []string{*image, *modules} {
			if _, err := os.Stat(p); err != nil {
				return fail(stderr, "kernel path: %v", err)
			}
		}
		k, suite = qemuvm.CustomKernel(*image, *modules), "custom"
		if *rdmaCore == qemuvm.RDMACoreSuite || len(rdmaPatches) > 0 {
			return fail(stderr, "-rdma-core suite or -rdma-core-patch with -image: a custom kernel has no Debian suite; leave them out or give -rdma-core host")
		}
	} else if !slices.Contains(qemuvm.Suites(), *kernel) {
		return fail(stderr, "unknown kernel suite %q: want one of %s, or -image and -modules", *kernel, strings.Join(qemuvm.Suites(), ", "))
	}
	pname := *profile
	if pname == "" {
		pname = defaultProfileFor(*provider, suite)
	}
	if _, err := model.ProfileByName(pname); err != nil {
		return fail(stderr, "%v", err)
	}
	outs := outputs{report: *out, format: *format, json: *jsonOut, replayDir: *replayDir}
	if *replayFile == "" {
		if err := outs.check(); err != nil {
			return fail(stderr, "%v", err)
		}
	}
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano()) >> 1
	}
	ctx, stop := interruptible(stderr)
	defer stop()
	interruptedNow := func() int {
		fmt.Fprintln(stderr, "srqconform: interrupted: the guest was stopped; no report")
		return exitInterrupted
	}
	ctx, cancelT := context.WithTimeout(ctx, *timeout)
	defer cancelT()

	prog := *binary
	if prog == "" {
		dir, err := os.MkdirTemp("", "srqconform-vm-")
		if err != nil {
			return fail(stderr, "temporary directory: %v", err)
		}
		defer os.RemoveAll(dir)
		prog = filepath.Join(dir, "srqconform")
		if err := buildWithCgo(ctx, prog, stderr); err != nil {
			if interrupted(ctx) {
				return interruptedNow()
			}
			return fail(stderr, "%v", err)
		}
	}
	guestArgs := guestRunArgs(qemuvm.Device(*provider), pname, *conn, *seed, *cases, *steps, *runs, *parallel, *duration, *verbose, fs.FlagSet)
	extra := map[string]string{}
	if known != nil {
		// The guest applies it across -runs; the host to the report it keeps.
		extra["/known.txt"] = *knownFile
		guestArgs = append(guestArgs, "-known", "/known.txt")
	}
	opts := qemuvm.Options{
		Kernel:          k,
		Program:         prog,
		Provider:        *provider,
		Args:            guestArgs,
		ExtraFiles:      extra,
		Timeout:         *timeout,
		Accel:           *accel,
		CacheDir:        *cache,
		Stress:          *stress,
		RDMACore:        *rdmaCore,
		RDMACorePatches: rdmaPatches,
	}
	if *verbose {
		opts.Log, opts.Console = stderr, stderr
	}
	if v := os.Getenv(stacksEnv); v != "" {
		opts.Env = append(opts.Env, stacksEnv+"="+v)
	}
	if *concurrentRun {
		d := *duration
		if d == 0 {
			d = 5 * time.Second
		}
		opts.Args = []string{"concurrent", "-driver", "cgo", "-d", qemuvm.Device(*provider), "-x", "1", "-profile", pname, "-format", "json",
			"-seed", strconv.FormatUint(*seed, 10), "-runs", strconv.Itoa(*runs), "-duration", d.String(), "-record-only"}
		if *conn != "" {
			opts.Args = append(opts.Args, "-conn", *conn)
		}
		res, err := qemuvm.Run(ctx, opts)
		if err != nil {
			if interrupted(ctx) {
				return interruptedNow()
			}
			return fail(stderr, "vm: %v", err)
		}
		fmt.Fprintf(stderr, "vm: kernel %s, rdma-core %s, %s, boot %v, whole run %v%s\n", res.KernelRelease, res.RDMACoreVersion, accelSummary(res), res.BootTime.Round(time.Millisecond), res.WallTime.Round(time.Millisecond), siwSummary(res))
		stderr.Write(res.Stderr)
		return hostConcurrentReport(ctx, res.Output, res.ExitCode, res.KernelRelease, hostCheck, *htmlDir, *format, *out, *jsonOut, known, stdout, stderr)
	}
	if *replayFile != "" {
		if _, err := os.Stat(*replayFile); err != nil {
			return fail(stderr, "replay file: %v", err)
		}
		opts.ExtraFiles = map[string]string{"/replay.json": *replayFile}
		opts.Args = []string{"replay", "-driver", "cgo", "-d", qemuvm.Device(*provider), "-x", "1", "-profile", pname}
		if *conn != "" {
			opts.Args = append(opts.Args, "-conn", *conn)
		}
		opts.Args = append(opts.Args, "/replay.json")
		res, err := qemuvm.Run(ctx, opts)
		if err != nil {
			if interrupted(ctx) {
				return interruptedNow()
			}
			return fail(stderr, "vm: %v", err)
		}
		stdout.Write(res.Output)
		stderr.Write(res.Stderr)
		fmt.Fprintf(stderr, "vm: kernel %s, rdma-core %s, %s, replay exit %d\n", res.KernelRelease, res.RDMACoreVersion, accelSummary(res), res.ExitCode)
		return res.ExitCode
	}
	res, err := qemuvm.Run(ctx, opts)
	if err != nil {
		if interrupted(ctx) {
			return interruptedNow()
		}
		return fail(stderr, "vm: %v", err)
	}
	rep, code := guestRunReport(res.Output, res.ExitCode, res.Stderr, stderr)
	if rep == nil {
		return code
	}
	if rep.Device.Kernel == "" {
		rep.Device.Kernel = res.KernelRelease
	}
	rep.Device.RDMACore = guestRDMACore(res.RDMACoreVersion, rep.Device.RDMACore)
	if len(res.Stderr) > 0 && *runs > 1 {
		stderr.Write(res.Stderr) // the per-run lines
	}
	fmt.Fprintf(stderr, "vm: kernel %s, rdma-core %s, %s, boot %v, whole run %v%s\n", res.KernelRelease, res.RDMACoreVersion, accelSummary(res), res.BootTime.Round(time.Millisecond), res.WallTime.Round(time.Millisecond), siwSummary(res))
	if err := outs.write(rep, stdout, stderr); err != nil {
		return fail(stderr, "%v", err)
	}
	// With -runs the guest saw every run: a run it found failing a rule
	// -known does not list made it exit 1.
	unknownElsewhere := *runs > 1 && res.ExitCode == exitDeviates
	return finalStatus(rep, outs, nil, known, unknownElsewhere, stderr)
}

// guestRunReport decodes the report the guest's srqconform run printed.
// A guest program that died before it printed one (the Go runtime out of
// memory, a signal) is a harness failure, exit 3, not a usage error: with
// several runs the guest makes each in a process of its own
// (isolatedRuns), so a death costs only its run and the report of those
// made is printed, with the death as its Error.
func guestRunReport(out []byte, guestExit int, guestStderr []byte, stderr io.Writer) (*conformance.Report, int) {
	rep, err := decodeReport(out)
	if err != nil {
		fmt.Fprintf(stderr, "srqconform: the guest run died (exit %d) before it wrote a report: %v\nguest stderr:\n%s", guestExit, err, guestStderr)
		return nil, exitHarness
	}
	return rep, 0
}

// siwSummary describes the siw.ko a guest loaded: ", siw.ko built with
// gcc-12 in 1m12s" or ", siw.ko cached"; "" for rxe.
func siwSummary(res *qemuvm.Result) string {
	switch {
	case res.Siw == nil:
		return ""
	case res.Siw.Cached:
		return fmt.Sprintf(", siw.ko cached (built with %s in %v)", res.Siw.Compiler, res.Siw.Total)
	}
	return fmt.Sprintf(", siw.ko built with %s in %v", res.Siw.Compiler, res.Siw.Total)
}

// accelSummary names the accelerator a guest ran under and, after a
// fallback, why KVM was left: "tcg (fell back: no console output for
// 1m0s under kvm)", then the host's load average as the guest ended.
func accelSummary(res *qemuvm.Result) string {
	s := res.Accel
	if res.AccelFallback != "" {
		s = fmt.Sprintf("%s (fell back: %s)", res.Accel, res.AccelFallback)
	}
	if res.LoadAverage != "" {
		s += ", host load " + res.LoadAverage
	}
	return s
}

// buildWithCgo builds srqconform with the cgo driver from the module this
// command runs in.
func buildWithCgo(ctx context.Context, out string, stderr io.Writer) error {
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "rdma", "-o", out, "./cmd/srqconform")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build -tags rdma ./cmd/srqconform (needs gcc and libibverbs-dev): %v\n%s", err, errb.String())
	}
	return nil
}

func moduleRoot(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}")
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m (run srqconform vm from the srqconform source tree, or pass -binary): %v", err)
	}
	dir := strings.TrimSpace(string(b))
	if _, err := os.Stat(filepath.Join(dir, "cmd", "srqconform")); err != nil {
		return "", fmt.Errorf("module at %s has no cmd/srqconform: run from the srqconform source tree or pass -binary", dir)
	}
	return dir, nil
}

// decodeReport reads a JSON report (as run -json or -format json writes
// it, and as the guest prints it). It refuses JSON that is not a report:
// one without a driver, a profile, or rules that each have an ID and a
// status.
func decodeReport(b []byte) (*conformance.Report, error) {
	var v struct {
		*conformance.Report
		Conformant bool `json:"conformant"`
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("empty output")
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("decode JSON report: %w", err)
	}
	if v.Report == nil {
		return nil, errors.New("not a srqconform JSON report: it has none of a report's fields (driver, profile, rules)")
	}
	var missing []string
	if v.Driver == "" {
		missing = append(missing, "driver")
	}
	if v.Profile == "" {
		missing = append(missing, "profile")
	}
	if len(v.Rules) == 0 {
		missing = append(missing, "rules")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("not a srqconform JSON report: it has no %s", strings.Join(missing, ", "))
	}
	for i, r := range v.Rules {
		if r.Rule.ID == "" || r.Status == "" {
			return nil, fmt.Errorf("not a srqconform JSON report: rules[%d] has no rule.id or status", i)
		}
	}
	return v.Report, nil
}

func readReports(paths []string) ([]*conformance.Report, error) {
	var out []*conformance.Report
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read report: %w", err)
		}
		r, err := decodeReport(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func cmdRender(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("render", stdout, stderr, "render [-format F | -time] REPORT.json")
	format := fs.String("format", "markdown", strings.Join(render.Formats, ", "))
	timeOnly := fs.Bool("time", false, "write only where the time went, by phase and by stage (Markdown)")
	if ok, code := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return fail(stderr, "render takes one JSON report, got %d arguments", fs.NArg())
	}
	if !validFormat(*format) {
		return fail(stderr, "unknown format %q", *format)
	}
	reps, err := readReports(fs.Args())
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if *timeOnly {
		t := render.TimeMarkdown(reps[0])
		if t == "" {
			return fail(stderr, "%s has no timing: it comes from a version without it", fs.Arg(0))
		}
		_, err = io.WriteString(stdout, strings.TrimPrefix(t, "\n"))
		if err != nil {
			return fail(stderr, "%v", err)
		}
		return exitOK
	}
	if err := render.Write(stdout, *format, reps[0]); err != nil {
		return fail(stderr, "%v", err)
	}
	return exitOK
}

func cmdMatrix(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("matrix", stdout, stderr, "matrix [-format markdown|html] REPORT.json...")
	format := fs.String("format", "markdown", "markdown, or html: one self-contained page with the provider by kernel grid")
	if ok, code := fs.parse(args); !ok {
		return code
	}
	if *format != "markdown" && *format != "html" {
		return fail(stderr, "unknown format %q: want markdown or html", *format)
	}
	if fs.NArg() == 0 {
		return fail(stderr, "matrix takes one or more JSON reports")
	}
	reps, err := readReports(fs.Args())
	if err != nil {
		return fail(stderr, "%v", err)
	}
	write := render.Matrix
	if *format == "html" {
		write = render.MatrixHTML
	}
	if err := write(stdout, reps); err != nil {
		return fail(stderr, "%v", err)
	}
	return exitOK
}

// guestRunArgs is the run command the guest executes: the budget is the
// case count, or the time given with -duration (bounded by -cases only
// when -cases was given too). With -v the guest prints a progress line
// per scenario and case on the console (-progress-log).
func guestRunArgs(device, profile, conn string, seed uint64, cases, steps, runs, parallel int, duration time.Duration, verbose bool, fs *flag.FlagSet) []string {
	args := []string{"run", "-driver", "cgo", "-d", device, "-x", "1", "-q", "-format", "json", "-profile", profile,
		"-seed", strconv.FormatUint(seed, 10), "-steps", strconv.Itoa(steps), "-runs", strconv.Itoa(runs)}
	if conn != "" {
		args = append(args, "-conn", conn)
	}
	if parallel > 1 {
		args = append(args, "-parallel", strconv.Itoa(parallel))
	}
	casesSet := false
	fs.Visit(func(f *flag.Flag) { casesSet = casesSet || f.Name == "cases" })
	if duration > 0 {
		args = append(args, "-duration", duration.String())
	}
	if duration == 0 || casesSet {
		args = append(args, "-cases", strconv.Itoa(cases))
	}
	if verbose {
		args = append(args, "-progress-log")
	}
	return args
}
