package main

import (
	"fmt"
	"os"
	"strings"
)

// guestRDMACore names a guest's rdma-core in its report: the packages
// the host put in the guest ("56.1-1 (trixie)") and the libibverbs file
// the guest's program loaded, as the cgo driver read it there
// ("libibverbs.so.1.14.56.1"), so that the report shows the library
// really used.
func guestRDMACore(packaged, loaded string) string {
	switch {
	case packaged == "":
		return loaded
	case loaded == "" || loaded == "unknown" || !strings.HasPrefix(loaded, "libibverbs"):
		return packaged
	}
	return packaged + ", " + loaded
}

// patchFiles is a repeatable flag of patch files, kept in order; each
// must exist.
type patchFiles []string

// String implements flag.Value.
func (p *patchFiles) String() string { return strings.Join(*p, ",") }

// Set implements flag.Value.
func (p *patchFiles) Set(v string) error {
	st, err := os.Stat(v)
	if err != nil {
		return fmt.Errorf("patch file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("patch file %s is a %s; expected a file", v, st.Mode().Type())
	}
	*p = append(*p, v)
	return nil
}
