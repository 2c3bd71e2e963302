package qemuvm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// findQEMU returns the qemu-system-x86_64 binary.
func findQEMU(override string) (string, error) {
	name := override
	if name == "" {
		name = "qemu-system-x86_64"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", &MissingToolError{Tool: name, Package: "qemu-system-x86", Detail: err.Error()}
	}
	return p, nil
}

var (
	kvmProbeMu sync.Mutex
	kvmProbed  = map[string]bool{} // qemu path -> probe result
	kvmBroken  sync.Map            // qemu path -> why a KVM boot failed or stalled (string)
)

// chooseAccel resolves Options.Accel to "kvm" or "tcg".
func chooseAccel(ctx context.Context, qemu string, opts Options) (string, error) {
	if err := checkAccel(opts.Accel); err != nil {
		return "", err
	}
	if opts.Accel == "kvm" || opts.Accel == "tcg" {
		return opts.Accel, nil
	}
	if why, broken := kvmBroken.Load(qemu); broken {
		opts.logf("vm: using tcg: earlier in this process, %s", why)
		return "tcg", nil
	}
	kvmProbeMu.Lock()
	defer kvmProbeMu.Unlock()
	ok, done := kvmProbed[qemu]
	if !done {
		ok = probeKVM(ctx, qemu)
		kvmProbed[qemu] = ok
		opts.logf("vm: KVM usable: %v", ok)
	}
	if ok {
		return "kvm", nil
	}
	return "tcg", nil
}

// probeKVM checks that KVM can actually execute guest code: it boots a
// 64 KiB firmware whose reset vector writes 0x42 to an isa-debug-exit
// port, which makes QEMU exit with status (0x42<<1)|1 = 133.
func probeKVM(ctx context.Context, qemu string) bool {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return false
	}
	f.Close()
	dir, err := os.MkdirTemp("", "srqconform-kvmprobe-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(dir)
	rom := bytes.Repeat([]byte{0xf4}, 64<<10) // hlt
	// mov al,0x42; out 0xf4,al; hlt; jmp $
	copy(rom[0xfff0:], []byte{0xb0, 0x42, 0xe6, 0xf4, 0xf4, 0xeb, 0xfe})
	bios := filepath.Join(dir, "probe.bin")
	if err := os.WriteFile(bios, rom, 0o644); err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu, "-accel", "kvm", "-machine", "q35", "-cpu", "max", "-m", "64",
		"-nodefaults", "-display", "none", "-monitor", "none", "-serial", "none",
		"-bios", bios, "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04")
	err = cmd.Run()
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == 133
}

// qemuArgs returns the QEMU command line for one boot.
func qemuArgs(accel string, opts Options, pk *PreparedKernel, initrd, resultFile string) []string {
	cpus, mem := opts.CPUs, opts.MemoryMB
	if cpus <= 0 {
		cpus = 2
	}
	if mem <= 0 {
		mem = 1024
	}
	return []string{
		"-accel", accel,
		"-machine", "q35", "-cpu", "max",
		"-smp", strconv.Itoa(cpus), "-m", strconv.Itoa(mem),
		"-nographic", "-no-reboot", "-nic", "none",
		"-monitor", "none",
		"-serial", "stdio",
		"-serial", "file:" + resultFile,
		"-kernel", pk.Image, "-initrd", initrd,
		// No "quiet": the kernel's boot messages are the console
		// progress that stall detection (DefaultStallTimeout) watches
		// for; with quiet a healthy boot is silent from the setup
		// code's "Probing EDD" line to /init. /init turns the console
		// down (dmesg -n 1) before it prints its first marker.
		"-append", "console=ttyS0 panic=-1",
	}
}

// lockedBuffer is a bytes.Buffer safe for one writer and later readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.b.Bytes()...)
}

// boot runs QEMU once and parses the guest's report. It fills in the
// diagnostic fields of res as it goes.
func boot(ctx context.Context, qemu, accel string, opts Options, pk *PreparedKernel, initrd, nonce, work string, res *Result) (*guestReport, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 3 * time.Minute
	}
	resultFile := filepath.Join(work, "result-"+accel+".txt")
	args := qemuArgs(accel, opts, pk, initrd, resultFile)
	res.Accel = accel
	res.QEMUCommand = commandLine(qemu, args)
	opts.logf("vm: booting %s (%s) with %s", pk.Release, strings.Join(pk.Packages, " "), accel)

	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, qemu, args...)
	cmd.WaitDelay = 5 * time.Second
	var console lockedBuffer
	watch := newConsoleWatch(marker(nonce)+" START", nil)
	writers := []io.Writer{&console, watch}
	if opts.Console != nil {
		writers = append(writers, opts.Console)
	}
	w := io.MultiWriter(writers...)
	cmd.Stdout = w
	cmd.Stderr = w
	cmd.Stdin = nil // /dev/null
	start := time.Now()
	stalled, runErr := runWatched(rctx, cmd, watch, opts.stallTimeout())
	res.BootTime = time.Since(start)
	serial := console.Bytes()
	res.SerialLog = string(serial)
	resultText, _ := os.ReadFile(resultFile)

	rep, perr := parseMarkers(nonce, string(serial)+"\n"+string(resultText))
	if perr != nil {
		return nil, fmt.Errorf("%w (QEMU command: %s)", perr, res.QEMUCommand)
	}
	if stalled {
		return nil, &StallError{
			Accel:     accel,
			Silence:   opts.stallTimeout(),
			Command:   res.QEMUCommand,
			Release:   rep.Release,
			LastLines: lastLines(serial, 25),
		}
	}
	if rep.Finished && rep.HaveStdout && rep.HaveExit {
		return rep, nil
	}
	reason := ""
	switch {
	case rctx.Err() == context.DeadlineExceeded:
		reason = fmt.Sprintf("timed out after %s and was killed", timeout)
	case ctx.Err() != nil:
		reason = "was cancelled: " + ctx.Err().Error()
	case runErr != nil:
		reason = "exited with " + runErr.Error()
	default:
		reason = "exited with status 0"
	}
	if !rep.ProgramStarted && rep.Release != "" {
		reason += fmt.Sprintf(" (kernel %s booted; the program never started)", rep.Release)
	} else if rep.ProgramStarted {
		reason += " (the program started but its result block is missing)"
	}
	return nil, &NoEndMarkerError{
		Reason:         reason,
		Command:        res.QEMUCommand,
		Expected:       marker(nonce) + " FINISHED",
		LastLines:      lastLines(serial, 25),
		TimedOut:       rctx.Err() == context.DeadlineExceeded,
		ProgramStarted: rep.ProgramStarted,
	}
}

// commandLine renders a command for messages, quoting arguments that
// need it.
func commandLine(name string, args []string) string {
	parts := []string{name}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"$\\") {
			a = shellQuote(a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
