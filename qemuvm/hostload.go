package qemuvm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
)

// HostLoad is a set of busy processes on the host, started by
// StartHostLoad to load the machine on purpose, as the other tenants of a
// shared CI runner do.
type HostLoad struct {
	cmds []*exec.Cmd
	once sync.Once
}

// busyLoop is the shell loop each busy process runs: a builtin, so it
// spins one CPU without forking.
const busyLoop = "while :; do :; done"

// StartHostLoad starts n busy processes (each a /bin/sh spinning in a
// loop) at the caller's own priority. They end when Stop is called, when
// ctx ends (an interrupt), or when the calling process dies (the
// parent-death signal, Linux). n < 1 starts none.
func StartHostLoad(ctx context.Context, n int) (*HostLoad, error) {
	l := &HostLoad{}
	for i := 0; i < n; i++ {
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", busyLoop)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			l.Stop()
			return nil, fmt.Errorf("vm: starting busy process %d of %d (/bin/sh -c %q): %w", i+1, n, busyLoop, err)
		}
		l.cmds = append(l.cmds, cmd)
	}
	return l, nil
}

// Pids returns the busy processes' process IDs.
func (l *HostLoad) Pids() []int {
	var out []int
	for _, c := range l.cmds {
		out = append(out, c.Process.Pid)
	}
	return out
}

// Stop kills the busy processes and waits for them; it is safe to call
// more than once, and on a nil HostLoad.
func (l *HostLoad) Stop() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		for _, c := range l.cmds {
			_ = c.Process.Kill() // gone already when ctx ended
		}
		for _, c := range l.cmds {
			_ = c.Wait() // killed: the error says so
		}
	})
}

// loadAverage returns the host's 1-minute load average as /proc/loadavg
// gives it, or "" where it cannot be read.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
