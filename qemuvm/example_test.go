package qemuvm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/srqconform/srqconform/qemuvm"
)

// ExampleRun runs the srqconform binary inside a trixie guest and
// decodes the JSON report it prints on stdout. Output is returned
// byte for byte, so binary-safe formats work too.
func ExampleRun() {
	res, err := qemuvm.Run(context.Background(), qemuvm.Options{
		Kernel:  qemuvm.SuiteKernel("trixie"),
		Program: "./srqconform", // a host binary; cgo builds bring their libraries
		Args:    []string{"-device", "rxe0", "-json"},
		Timeout: 5 * time.Minute,
	})
	if err != nil {
		log.Fatal(err) // says what was run, what came back and what was expected
	}
	var report map[string]any
	if err := json.Unmarshal(res.Output, &report); err != nil {
		log.Fatalf("srqconform exit %d, stderr %s: %v", res.ExitCode, res.Stderr, err)
	}
	fmt.Println(res.KernelRelease, res.RDMACoreVersion, res.ExitCode, len(report))
}

// ExampleRunGoTest runs a package's Go tests (for instance the cgo
// driver's) inside a sid guest against rxe0.
func ExampleRunGoTest() {
	res, err := qemuvm.RunGoTest(context.Background(),
		qemuvm.Options{Kernel: qemuvm.SuiteKernel("sid")},
		"./drivers/verbs",
		[]string{"-test.v", "-test.run", "^TestSRQ"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("kernel %s, go test exit %d\n%s", res.KernelRelease, res.ExitCode, res.Output)
}

// ExampleCustomKernel boots a kernel a developer built themselves.
func ExampleCustomKernel() {
	res, err := qemuvm.Run(context.Background(), qemuvm.Options{
		Kernel:  qemuvm.CustomKernel("/src/linux/arch/x86/boot/bzImage", "/tmp/modroot/lib/modules/7.3.0-rc1"),
		Program: "/usr/bin/ibv_devinfo",
		Args:    []string{"-d", "rxe0"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s", res.Output)
}
