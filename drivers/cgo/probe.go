//go:build linux && cgo && rdma

package cgo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/srqconform/srqconform/drivers"
)

// A call that can kill its process (drivers.Info.PostRecvUnsafe and
// NegativeSGEUnsafe) is made in a child process: the running binary again,
// with probeEnv set, which the package's init catches before main runs.
// The child makes the call on resources of its own made the same way
// (srqc_probe_post_recv, srqc_probe_post_srq_recv) and prints what it
// returned; the parent reads how the child ended. A crash is then an
// observation, reported against its rule with a replay file, and the run
// goes on.
const (
	// probeEnv is "post_recv DEVICE WR_ID" or
	// "post_srq_recv DEVICE WR_ID NUM_SGE".
	probeEnv = "SRQCONFORM_CGO_PROBE"
	// probeTimeout bounds a child: opening a device and making four
	// resources, under TCG.
	probeTimeout = time.Minute
)

func init() {
	if v := os.Getenv(probeEnv); v != "" {
		os.Exit(runProbe(v))
	}
}

// runProbe is the child's side: it makes the call spec names, prints
// "RET BAD_INDEX" on stdout and returns 0, or prints why it could not
// and returns 2. A crash never returns.
func runProbe(spec string) int {
	f := strings.Fields(spec)
	want := map[string]int{"post_recv": 3, "post_srq_recv": 4}
	if len(f) == 0 || want[f[0]] != len(f) {
		fmt.Fprintf(os.Stderr, "srqconform cgo probe: %s=%q: want \"post_recv DEVICE WR_ID\" or \"post_srq_recv DEVICE WR_ID NUM_SGE\"\n", probeEnv, spec)
		return 2
	}
	id, err := strconv.ParseUint(f[2], 10, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "srqconform cgo probe: wr_id %q: %v\n", f[2], err)
		return 2
	}
	name := _C_CString(f[1])
	defer _C_free(unsafe.Pointer(name))
	var bad _C_int
	var r int
	what := "a PD, CQ, SRQ and QP"
	if f[0] == "post_recv" {
		r = int(_C_srqc_probe_post_recv(name, _C_uint64_t(id), &bad))
	} else {
		n, err := strconv.ParseInt(f[3], 10, 32)
		if err != nil {
			fmt.Fprintf(os.Stderr, "srqconform cgo probe: num_sge %q: %v\n", f[3], err)
			return 2
		}
		what = "a PD, memory region and SRQ"
		r = int(_C_srqc_probe_post_srq_recv(name, _C_uint64_t(id), _C_int(n), &bad))
	}
	if r <= -1000 {
		fmt.Fprintf(os.Stderr, "srqconform cgo probe: making the device %s, %s failed: %v\n", f[1], what, syscall.Errno(-1000-r))
		return 2
	}
	fmt.Printf("%d %d\n", r, int(bad))
	return 0
}

// postRecvInChild makes ibv_post_recv, as PostRecv would, in a child
// process on a QP of its own attached to an SRQ of its own. It returns the
// verb's return value and bad_wr index, or drivers.KilledErrno plus the
// signal that killed the child.
func postRecvInChild(device string, wrID uint64) (int, int, error) {
	return inChild("PostRecv", fmt.Sprintf("post_recv %s %d", device, wrID))
}

// postSRQRecvInChild makes ibv_post_srq_recv of one WR with numSGE, as
// Post would, in a child process on an SRQ of its own. It returns what
// postRecvInChild does.
func postSRQRecvInChild(device string, wrID uint64, numSGE int) (int, int, error) {
	return inChild("Post", fmt.Sprintf("post_srq_recv %s %d %d", device, wrID, numSGE))
}

// inChild runs the probe spec in a child process for the driver method
// verb and returns the verb's return value and bad_wr index, or
// drivers.KilledErrno plus the signal that killed the child.
func inChild(verb, spec string) (int, int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, 0, fmt.Errorf("cgo: %s in a child process: os.Executable: %w", verb, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), probeEnv+"="+spec)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ctx.Err() == nil:
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return drivers.KilledErrno + int(ws.Signal()), 0, nil
		}
		return 0, 0, fmt.Errorf("cgo: %s in a child process (%s) exited %d, want 0 or a signal: %s", verb, self, ee.ExitCode(), strings.TrimSpace(errOut.String()))
	case err != nil:
		return 0, 0, fmt.Errorf("cgo: %s in a child process (%s): %v (bound %v)", verb, self, err, probeTimeout)
	}
	var ret, bad int
	if _, err := fmt.Sscanf(out.String(), "%d %d", &ret, &bad); err != nil {
		return 0, 0, fmt.Errorf("cgo: %s in a child process printed %q, want \"RET BAD_INDEX\"", verb, out.String())
	}
	return ret, bad, nil
}
