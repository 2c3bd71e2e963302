package concurrent

import (
	"bufio"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultMemoryLimit is the heap a check lets porcupine's search grow to
// when CheckOptions.MemoryLimit is 0: half the memory the process may use
// (the machine's, or its cgroup's if smaller), or 4 GiB where neither can
// be read. Porcupine keeps every state it reaches; a violation makes it
// try every order, and before this bound one history of real rxe on 6.12
// grew to 21 GiB and a CI runner's kernel killed the run.
func DefaultMemoryLimit() uint64 {
	total := memTotal()
	if cg := cgroupLimit(); cg > 0 && (total == 0 || cg < total) {
		total = cg
	}
	if total == 0 {
		return 4 << 30
	}
	return total / 2
}

// memTotal reads MemTotal from /proc/meminfo (0 if it cannot).
func memTotal() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// cgroupLimit reads the cgroup v2 memory.max of the process's cgroup
// (0 if there is none, or it is "max").
func cgroupLimit() uint64 {
	data, err := os.ReadFile("/sys/fs/cgroup/memory.max")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// memGuard abandons a porcupine search once the heap passes limit: the
// porcupine model then has no next state, the search unwinds in moments,
// and the check reports the search Unknown, as one that ran out of time.
type memGuard struct {
	limit uint64
	over  atomic.Bool
	stop  chan struct{}
}

// heapMetric is the runtime metric the guard reads: the heap size the
// collector aims at for its next cycle (the live heap at the last cycle,
// doubled at GOGC=100), which is about what the process will hold. It
// needs no collection to read, so the guard never makes the search wait.
const heapMetric = "/gc/heap/goal:bytes"

// guardPeriod is how often the guard reads the heap.
const guardPeriod = 20 * time.Millisecond

// startGuard watches the heap until stopped (limit 0: the default). It
// reads the heap once before it returns, collecting first if an earlier
// search's heap is still counted, so a search that starts over the limit
// is abandoned at once and one that starts after a large one is not.
func startGuard(limit uint64) *memGuard {
	if limit == 0 {
		limit = DefaultMemoryLimit()
	}
	g := &memGuard{limit: limit, stop: make(chan struct{})}
	sample := []metrics.Sample{{Name: heapMetric}}
	if g.heap(sample) > g.limit {
		runtime.GC()
		if g.heap(sample) > g.limit {
			g.over.Store(true)
			return g
		}
	}
	go func() {
		t := time.NewTicker(guardPeriod)
		defer t.Stop()
		for {
			select {
			case <-g.stop:
				return
			case <-t.C:
			}
			if g.heap(sample) > g.limit {
				g.over.Store(true)
				return
			}
		}
	}()
	return g
}

// heap reads the heap's size into sample and returns it.
func (g *memGuard) heap(sample []metrics.Sample) uint64 {
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

// tripped reports whether the heap passed the limit (nil: never).
func (g *memGuard) tripped() bool { return g != nil && g.over.Load() }

// end stops the watch.
func (g *memGuard) end() { close(g.stop) }
