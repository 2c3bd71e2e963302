package qemuvm

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// running says whether pid is a live process that has not exited (a
// zombie, killed but not yet reaped, is not).
func running(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

func TestHostLoadStartsAndStops(t *testing.T) {
	l, err := StartHostLoad(context.Background(), 2)
	if err != nil {
		t.Fatalf("StartHostLoad(2): %v", err)
	}
	pids := l.Pids()
	if len(pids) != 2 {
		l.Stop()
		t.Fatalf("StartHostLoad(2) started %d processes (%v), want 2", len(pids), pids)
	}
	for _, p := range pids {
		if !running(p) {
			t.Errorf("busy process %d is not running after StartHostLoad", p)
		}
	}
	l.Stop()
	l.Stop() // twice is safe
	for _, p := range pids {
		if running(p) {
			t.Errorf("busy process %d still runs after Stop", p)
		}
	}
	var none *HostLoad
	none.Stop()
	if l, err := StartHostLoad(context.Background(), 0); err != nil || len(l.Pids()) != 0 {
		t.Errorf("StartHostLoad(0) = %v, %v; want no processes and no error", l.Pids(), err)
	}
}

// TestHostLoadEndsWithItsContext: an interrupt (the context ending) kills
// the busy processes without Stop.
func TestHostLoadEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	l, err := StartHostLoad(ctx, 1)
	if err != nil {
		t.Fatalf("StartHostLoad(1): %v", err)
	}
	defer l.Stop()
	pid := l.Pids()[0]
	cancel()
	for deadline := time.Now().Add(30 * time.Second); running(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("busy process %d still runs 30 s after its context ended", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
