package main

import (
	"fmt"
	"io"
)

// cmdVM is the VM runner's entry; the runner itself is package vm.
func cmdVM(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "srqconform: vm: running the suite inside a QEMU guest needs the cgo driver, which this version does not have yet (see README, 'Real devices')")
	return exitUsage
}
