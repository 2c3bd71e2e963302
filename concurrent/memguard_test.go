package concurrent

import (
	"testing"
	"time"
)

// TestSearchOverMemoryIsUnknown: a search that passes its memory bound is
// abandoned and the history is undecided, for want of memory; never a
// violation, and never a process the kernel kills.
func TestSearchOverMemoryIsUnknown(t *testing.T) {
	h := lastWQEHistory(t)
	res, err := Check(h, CheckOptions{Timeout: DefaultCheckTimeout, ReduceBudget: -1, MemoryLimit: 1})
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if res.Verdict != Unknown || res.Bound != "memory" {
		t.Fatalf("Check with a 1-byte bound = %s (bound %q), want unknown (bound \"memory\")", res.Verdict, res.Bound)
	}
	res, err = Check(h, CheckOptions{Timeout: DefaultCheckTimeout, ReduceBudget: -1})
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if !res.Violation() || res.Bound != "" {
		t.Fatalf("Check with the default bound = %s (bound %q), want a violation", res.Verdict, res.Bound)
	}
}

// TestSearchOutOfTimeSaysSo: a search cut by its timeout says "time".
func TestSearchOutOfTimeSaysSo(t *testing.T) {
	res, err := Check(lastWQEHistory(t), CheckOptions{Timeout: time.Nanosecond, ReduceBudget: -1})
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if res.Verdict != Unknown || res.Bound != "time" {
		t.Fatalf("Check with a 1 ns timeout = %s (bound %q), want unknown (bound \"time\")", res.Verdict, res.Bound)
	}
}

// TestDefaultMemoryLimitIsSane: half the machine's memory, at least
// something and less than all of it.
func TestDefaultMemoryLimitIsSane(t *testing.T) {
	got := DefaultMemoryLimit()
	if total := memTotal(); total > 0 && (got == 0 || got >= total) {
		t.Fatalf("DefaultMemoryLimit() = %d with MemTotal %d, want more than 0 and less than MemTotal", got, total)
	}
	if got == 0 {
		t.Fatal("DefaultMemoryLimit() = 0")
	}
}
