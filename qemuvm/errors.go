package qemuvm

import (
	"fmt"
	"strings"
	"time"
)

// MissingToolError reports a host program that the runner needs but
// cannot find.
type MissingToolError struct {
	Tool    string // program name or path looked for
	Package string // Debian package that provides it
	Detail  string // optional extra explanation
}

// Error implements error.
func (e *MissingToolError) Error() string {
	s := fmt.Sprintf("vm: looked for %s on the host and did not find it; install the Debian package %s (apt-get install %s)", e.Tool, e.Package, e.Package)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// UnknownSuiteError reports a suite name the runner has no sources for.
type UnknownSuiteError struct {
	Suite string
}

// Error implements error.
func (e *UnknownSuiteError) Error() string {
	return fmt.Sprintf("vm: unknown Debian suite %q; expected one of %s, or a custom kernel image and modules directory", e.Suite, strings.Join(Suites(), ", "))
}

// NoEndMarkerError reports a guest run whose output did not contain a
// complete result block.
type NoEndMarkerError struct {
	Reason    string // "timeout after 2m0s", "qemu exited with status 1", ...
	Command   string // the QEMU command line
	Expected  string // the marker that was expected
	LastLines string // tail of the serial log
	// TimedOut says Options.Timeout ran out (QEMU was killed then), and
	// ProgramStarted that the guest's program had begun by then.
	TimedOut, ProgramStarted bool
}

// Inconclusive says the guest outran its bound after its program
// started. With no hang, lockup or stall report on the console (the
// kernel's watchdogs report a CPU that spins, and a task blocked for
// two minutes), that is a timer's verdict, not a finding: run again with
// a larger bound.
func (e *NoEndMarkerError) Inconclusive() bool { return e.TimedOut && e.ProgramStarted }

// Error implements error.
func (e *NoEndMarkerError) Error() string {
	return fmt.Sprintf("vm: ran %s: %s, and the guest never printed the end marker %q; last serial console lines:\n%s",
		e.Command, e.Reason, e.Expected, e.LastLines)
}

// StallError reports a guest whose serial console stayed silent for
// Options.StallTimeout before its program started; QEMU was killed then
// rather than at Options.Timeout.
type StallError struct {
	Accel     string        // the accelerator of the stalled boot, "kvm" or "tcg"
	Silence   time.Duration // the bound on silence that was reached
	Command   string        // the QEMU command line
	Release   string        // the kernel release if the guest's /init reported it, else ""
	LastLines string        // tail of the serial log
}

// Error implements error.
func (e *StallError) Error() string {
	when := "before its /init started"
	if e.Release != "" {
		when = "after kernel " + e.Release + " booted but before the program started"
	}
	return fmt.Sprintf("vm: ran %s: the guest printed nothing on its serial console for %v under %s %s, so QEMU was killed; expected console output at least every %v until the program starts (Options.StallTimeout); last serial console lines:\n%s",
		e.Command, e.Silence, e.Accel, when, e.Silence, e.LastLines)
}
