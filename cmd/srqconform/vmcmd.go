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
	"strconv"
	"strings"
	"time"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/conformance/render"
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
	c, code := parseVM(args, stdout, stderr)
	if c == nil {
		return code
	}
	return runVM(c, stdout, stderr)
}

// runVM builds the guest's program unless -binary names one, boots the
// guest and runs the suite, -concurrent or -replay in it.
func runVM(c *vmConfig, stdout, stderr io.Writer) int {
	ctx, stop := interruptible(stderr)
	defer stop()
	ctx, cancelT := context.WithTimeout(ctx, c.timeout)
	defer cancelT()

	prog := c.binary
	if prog == "" {
		dir, err := os.MkdirTemp("", "srqconform-vm-")
		if err != nil {
			return fail(stderr, "temporary directory: %v", err)
		}
		defer os.RemoveAll(dir)
		prog = filepath.Join(dir, "srqconform")
		if err := buildWithCgo(ctx, prog, stderr); err != nil {
			if interrupted(ctx) {
				return vmInterrupted(stderr)
			}
			return fail(stderr, "%v", err)
		}
	}
	opts := c.guestOptions(prog, stderr)
	switch {
	case c.concurrentRun:
		return c.runConcurrent(ctx, opts, stdout, stderr)
	case c.replayFile != "":
		return c.runReplay(ctx, opts, stdout, stderr)
	}
	return c.runSuite(ctx, opts, stdout, stderr)
}

// profileFiles are the files every guest run gets: the -profile file,
// if one was given.
func (c *vmConfig) profileFiles() map[string]string {
	files := map[string]string{}
	if c.profileFile != "" {
		files[c.pname] = c.profileFile
	}
	return files
}

// vmInterrupted reports a run stopped by Ctrl-C.
func vmInterrupted(stderr io.Writer) int {
	fmt.Fprintln(stderr, "srqconform: interrupted: the guest was stopped; no report")
	return exitInterrupted
}

// guestOptions is the guest run of the suite on the program prog.
func (c *vmConfig) guestOptions(prog string, stderr io.Writer) qemuvm.Options {
	guestArgs := guestRunArgs(qemuvm.Device(c.provider), c.pname, c.conn, c.seed, c.cases, c.steps, c.runs, c.parallel, c.duration, c.verbose, c.fs.FlagSet)
	extra := c.profileFiles()
	if c.known != nil {
		// The guest applies it across -runs; the host to the report it keeps.
		extra["/known.txt"] = c.knownFile
		guestArgs = append(guestArgs, "-known", "/known.txt")
	}
	opts := qemuvm.Options{
		Kernel:          c.k,
		Program:         prog,
		Provider:        c.provider,
		Args:            guestArgs,
		ExtraFiles:      extra,
		Timeout:         c.timeout,
		Accel:           c.accel,
		CacheDir:        c.cache,
		Stress:          c.stress,
		RDMACore:        c.rdmaCore,
		RDMACorePatches: c.rdmaPatches,
		Patches:         c.patches,
	}
	if c.verbose {
		opts.Log, opts.Console = stderr, stderr
	}
	if v := os.Getenv(stacksEnv); v != "" {
		opts.Env = append(opts.Env, stacksEnv+"="+v)
	}
	return opts
}

// runConcurrent runs srqconform concurrent in the guest and checks its
// histories on the host.
func (c *vmConfig) runConcurrent(ctx context.Context, opts qemuvm.Options, stdout, stderr io.Writer) int {
	d := c.duration
	if d == 0 {
		d = 5 * time.Second
	}
	opts.Args = []string{"concurrent", "-driver", "cgo", "-d", qemuvm.Device(c.provider), "-x", "1", "-profile", c.pname, "-format", "json",
		"-seed", strconv.FormatUint(c.seed, 10), "-runs", strconv.Itoa(c.runs), "-duration", d.String(), "-record-only"}
	if c.conn != "" {
		opts.Args = append(opts.Args, "-conn", c.conn)
	}
	res, err := c.runGuest(ctx, opts, stderr)
	if err != nil {
		return c.runFailed(ctx, res, err, stdout, stderr)
	}
	fmt.Fprintf(stderr, "vm: kernel %s, rdma-core %s, %s, boot %v, whole run %v%s\n", res.KernelRelease, res.RDMACoreVersion, accelSummary(res), res.BootTime.Round(time.Millisecond), res.WallTime.Round(time.Millisecond), siwSummary(res))
	stderr.Write(res.Stderr)
	return hostConcurrentReport(ctx, res.Output, res.ExitCode, res.KernelRelease, c.hostCheck, c.htmlDir, c.format, c.out, c.jsonOut, c.known, stdout, stderr)
}

// runReplay re-runs a replay file on the guest's device.
func (c *vmConfig) runReplay(ctx context.Context, opts qemuvm.Options, stdout, stderr io.Writer) int {
	if _, err := os.Stat(c.replayFile); err != nil {
		return fail(stderr, "replay file: %v", err)
	}
	opts.ExtraFiles = c.profileFiles()
	opts.ExtraFiles["/replay.json"] = c.replayFile
	opts.Args = []string{"replay", "-driver", "cgo", "-d", qemuvm.Device(c.provider), "-x", "1", "-profile", c.pname}
	if c.conn != "" {
		opts.Args = append(opts.Args, "-conn", c.conn)
	}
	opts.Args = append(opts.Args, "/replay.json")
	res, err := c.runGuest(ctx, opts, stderr)
	if err != nil {
		return c.runFailed(ctx, res, err, stdout, stderr)
	}
	stdout.Write(res.Output)
	stderr.Write(res.Stderr)
	fmt.Fprintf(stderr, "vm: kernel %s, rdma-core %s, %s, replay exit %d\n", res.KernelRelease, res.RDMACoreVersion, accelSummary(res), res.ExitCode)
	return res.ExitCode
}

// runSuite runs the suite in the guest and writes its report on the host.
func (c *vmConfig) runSuite(ctx context.Context, opts qemuvm.Options, stdout, stderr io.Writer) int {
	res, err := c.runGuest(ctx, opts, stderr)
	if err != nil {
		return c.runFailed(ctx, res, err, stdout, stderr)
	}
	rep, code := guestRunReport(res.Output, res.ExitCode, res.Stderr, stderr)
	if rep == nil {
		return code
	}
	if rep.Device.Kernel == "" {
		rep.Device.Kernel = res.KernelRelease
	}
	rep.Device.RDMACore = guestRDMACore(res.RDMACoreVersion, rep.Device.RDMACore)
	rep.Device.Patches = strings.Join(patchNames(res.Patched), ", ")
	if len(res.Stderr) > 0 && c.runs > 1 {
		stderr.Write(res.Stderr) // the per-run lines
	}
	fmt.Fprintf(stderr, "vm: kernel %s, rdma-core %s, %s, boot %v, whole run %v%s\n", res.KernelRelease, res.RDMACoreVersion, accelSummary(res), res.BootTime.Round(time.Millisecond), res.WallTime.Round(time.Millisecond), siwSummary(res))
	if err := c.outs.write(rep, stdout, stderr); err != nil {
		return fail(stderr, "%v", err)
	}
	// With -runs the guest saw every run: a run it found failing a rule
	// -known does not list made it exit 1.
	unknownElsewhere := c.runs > 1 && res.ExitCode == exitDeviates
	code = finalStatus(rep, c.outs, nil, c.known, unknownElsewhere, stderr)
	if res.Crash != nil {
		// An oops the guest lived through: a finding all the same.
		fmt.Fprintf(stderr, "srqconform: vm: FINDING: %s\n%s\n", res.Crash.Summary(), res.Crash.Excerpt)
		return exitDeviates
	}
	return code
}

// runGuest boots the guest and runs opts in it, once more when the
// guest's kernel crashed with no RDMA code in its call trace and no
// verb in flight (KernelCrash.OutsideRDMA: under TCG on a loaded host,
// a scheduler oops such as "Oops: int3" in enqueue_task_fair). Such a
// crash is no evidence about the driver, so it does not decide the
// verdict on its own: the second boot does. A crash that comes back is
// reported as it is; a second boot that cannot finish (the -timeout
// spent) leaves the first crash reported.
func (c *vmConfig) runGuest(ctx context.Context, opts qemuvm.Options, stderr io.Writer) (*qemuvm.Result, error) {
	boot := c.boot
	if boot == nil {
		boot = qemuvm.Run
	}
	res, err := boot(ctx, opts)
	first := outsideRDMACrash(res, err)
	if first == nil || ctx.Err() != nil {
		return res, err
	}
	fmt.Fprintf(stderr, "srqconform: vm: the guest's kernel crashed outside the RDMA stack (%s); that is no evidence about the driver, so the guest boots once more and that boot decides\n", first.Summary())
	res2, err2 := boot(ctx, opts)
	var kc *qemuvm.KernelCrashError
	if err2 != nil && !errors.As(err2, &kc) {
		fmt.Fprintf(stderr, "srqconform: vm: the second boot did not finish (%v); the first boot's crash is the result\n", err2)
		return res, err
	}
	if again := outsideRDMACrash(res2, err2); again != nil {
		fmt.Fprintf(stderr, "srqconform: vm: the second boot's kernel crashed outside the RDMA stack too (%s): reported as a finding\n", again.Summary())
	}
	return res2, err2
}

// outsideRDMACrash is the guest's kernel crash when it names no RDMA
// code (KernelCrash.OutsideRDMA), whether it ended the run (err) or the
// guest lived through it (res.Crash); nil otherwise.
func outsideRDMACrash(res *qemuvm.Result, err error) *qemuvm.KernelCrash {
	var kc *qemuvm.KernelCrashError
	switch {
	case errors.As(err, &kc):
		if kc.Crash.OutsideRDMA {
			return kc.Crash
		}
	case err == nil && res != nil && res.Crash != nil && res.Crash.OutsideRDMA:
		return res.Crash
	}
	return nil
}

// runFailed reports a guest run that returned no result: a kernel crash
// or hang (a finding, exit 1, written as the report), an interruption,
// or a harness or usage error (a patch that does not apply or build
// among them), exit 2.
func (c *vmConfig) runFailed(ctx context.Context, res *qemuvm.Result, err error, stdout, stderr io.Writer) int {
	var kc *qemuvm.KernelCrashError
	var nem *qemuvm.NoEndMarkerError
	switch {
	case errors.As(err, &kc):
		fmt.Fprintf(stderr, "srqconform: vm: FINDING: %s\n", kc.Crash.Summary())
		if werr := c.writeCrash(res, kc.Crash, "", stdout); werr != nil {
			return fail(stderr, "%v", werr)
		}
		return exitDeviates
	case interrupted(ctx):
		return vmInterrupted(stderr)
	case errors.As(err, &nem) && nem.Inconclusive():
		why := fmt.Sprintf("the guest ran past -timeout %v after its program started, and its console shows no hang, lockup or stall report: run again with a larger -timeout", c.timeout)
		fmt.Fprintf(stderr, "srqconform: vm: INCONCLUSIVE: %s; last console lines:\n%s\n", why, nem.LastLines)
		if werr := c.writeCrash(res, nil, why, stdout); werr != nil {
			return fail(stderr, "%v", werr)
		}
		return exitHarness
	}
	return fail(stderr, "vm: %v", err)
}

// crashReport is the report of a guest whose kernel crashed or hung, or
// of one whose run was inconclusive (it outran -timeout with no kernel
// report: Inconclusive says so, and Finding is nil).
type crashReport struct {
	Finding      *qemuvm.KernelCrash `json:"finding"`
	Inconclusive string              `json:"inconclusive,omitempty"`
	Kernel       string              `json:"kernel"`
	Profile      string              `json:"profile"`
	Seed         uint64              `json:"seed"`
	Patches      []string            `json:"patches,omitempty"`
}

// writeCrash writes the crash (or, with kc nil, why the run was
// inconclusive) as the run's report (-o or stdout, and
// -json): JSON with -format json, else text.
func (c *vmConfig) writeCrash(res *qemuvm.Result, kc *qemuvm.KernelCrash, inconclusive string, stdout io.Writer) error {
	cr := crashReport{Finding: kc, Inconclusive: inconclusive, Profile: c.pname, Seed: c.seed}
	if res != nil {
		cr.Patches = patchNames(res.Patched)
		if res.Kernel != nil {
			cr.Kernel = res.Kernel.Release
		}
	}
	js, _ := json.MarshalIndent(cr, "", "  ")
	js = append(js, '\n')
	verdict := "INCONCLUSIVE"
	if kc != nil {
		verdict = strings.ToUpper(kc.Kind)
	}
	text := fmt.Sprintf("verdict: %s\nkernel %s; profile %s; seed %d\n", verdict, cr.Kernel, cr.Profile, cr.Seed)
	if len(cr.Patches) > 0 {
		text += "driver rebuilt with patches: " + strings.Join(cr.Patches, ", ") + "\n"
	}
	if kc != nil {
		text += kc.Summary() + "\nconsole:\n" + kc.Excerpt + "\n"
	} else {
		text += inconclusive + "\n"
	}
	body := []byte(text)
	if c.format == "json" {
		body = js
	}
	if c.jsonOut != "" {
		if err := os.WriteFile(c.jsonOut, js, 0o644); err != nil {
			return fmt.Errorf("write -json %s: %w", c.jsonOut, err)
		}
	}
	if c.out != "" {
		if err := os.WriteFile(c.out, body, 0o644); err != nil {
			return fmt.Errorf("write -o %s: %w", c.out, err)
		}
		return nil
	}
	_, err := stdout.Write(body)
	return err
}

// patchNames names a patched module's patches as "NAME sha256:HEX".
func patchNames(b *qemuvm.ModuleBuild) []string {
	if b == nil {
		return nil
	}
	var out []string
	for _, p := range b.Patches {
		out = append(out, p.Name+" sha256:"+p.SHA256)
	}
	return out
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
	case res.Patched != nil && res.Patched.Cached:
		return fmt.Sprintf(", %s.ko with %d patch(es) cached", res.Patched.Module, len(res.Patched.Patches))
	case res.Patched != nil:
		return fmt.Sprintf(", %s.ko with %d patch(es) built with %s in %v", res.Patched.Module, len(res.Patched.Patches), res.Patched.Compiler, res.Patched.Total)
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
		if r.Rule.ID == 0 || r.Status == "" {
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
