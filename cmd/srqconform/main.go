package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Exit codes, as the package documentation describes them.
const (
	exitOK          = 0
	exitDeviates    = 1
	exitUsage       = 2
	exitHarness     = 3
	exitInterrupted = 130
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "vm" { // vm hands it to the guest
		dumpStacksAfter(os.Getenv(stacksEnv), os.Stderr)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// stacksEnv, a duration, makes the process print every goroutine's stack
// on stderr once that long has passed, and go on: where a run that seems
// stuck stands (vm passes it from the host into the guest).
const stacksEnv = "SRQCONFORM_STACKS_AFTER"

func dumpStacksAfter(v string, w io.Writer) {
	d, err := time.ParseDuration(v)
	if v == "" || err != nil || d <= 0 {
		return
	}
	time.AfterFunc(d, func() {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		fmt.Fprintf(w, "srqconform: %s=%v: every goroutine's stack:\n%s\n", stacksEnv, d, buf[:n])
	})
}

const usage = `usage: srqconform <command> [flags]

commands:
  run        run the conformance suite against a device (default: the emulator)
  concurrent record concurrent histories (posting threads, QPs receiving, state
             changes, limit arming) and check them for linearizability
  rules      print the rule catalogue
  profiles   list the driver profiles, or show one: srqconform profiles rxe
             (-format yaml or json prints it as a profile file for run -profile FILE)
  deviations list the emulator's behaviours and mutants (-deviations takes them), one a line
  replay     re-run a saved counterexample: srqconform replay FILE
  infer      run the suite with every profile field open and write the profile the device showed
  vm         boot a Debian kernel with rdma_rxe under QEMU and run the suite inside
  corpus     run the corpus of real SRQ bugs (vm -patch per entry and kernel) and print what was caught
  render     render a saved JSON report: srqconform render -format markdown FILE.json
  matrix     a rule-by-kernel Markdown table of saved JSON reports

Run 'srqconform <command> -h' for a command's flags.

Exit status: 0 conformant, 1 deviations found, 2 usage or environment error,
3 harness or device failed (partial report written), 130 interrupted (partial
report written).
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return fail(stderr, "no command given: want one of %s; run 'srqconform -h' for the commands", strings.Join(commands, ", "))
	}
	switch args[0] {
	case "run":
		return cmdRun(args[1:], stdout, stderr)
	case "rules":
		return cmdRules(args[1:], stdout, stderr)
	case "profiles":
		return cmdProfiles(args[1:], stdout, stderr)
	case "replay":
		return cmdReplay(args[1:], stdout, stderr)
	case "infer":
		return cmdInfer(args[1:], stdout, stderr)
	case "vm":
		return cmdVM(args[1:], stdout, stderr)
	case "concurrent":
		return cmdConcurrent(args[1:], stdout, stderr)
	case "render":
		return cmdRender(args[1:], stdout, stderr)
	case "matrix":
		return cmdMatrix(args[1:], stdout, stderr)
	case "deviations":
		return cmdDeviations(args[1:], stdout, stderr)
	case "corpus":
		return cmdCorpus(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		switch {
		case len(args) == 1:
			fmt.Fprint(stdout, usage)
			return exitOK
		case len(args) == 2 && slices.Contains(commands, args[1]):
			return run([]string{args[1], "-h"}, stdout, stderr)
		}
		return fail(stderr, "%s takes at most a command name, got %q; run 'srqconform -h' for the commands", args[0], args[1:])
	}
	return fail(stderr, "unknown command %q: want one of %s; run 'srqconform -h' for the commands", args[0], strings.Join(commands, ", "))
}

// commands lists the commands run knows.
var commands = []string{"run", "concurrent", "rules", "profiles", "deviations", "replay", "infer", "vm", "corpus", "render", "matrix"}
