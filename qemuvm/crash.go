package qemuvm

import (
	"fmt"
	"regexp"
	"strings"
)

// KernelCrash is a guest kernel's oops, panic or hang, read from its
// serial console: with a patched driver it is a finding about the
// driver, not a failure of the harness.
type KernelCrash struct {
	// Kind is "kernel crash" (an oops, BUG or panic) or "hang" (a hung
	// task, a soft lockup or an RCU stall, or a guest that stopped
	// answering).
	Kind string `json:"kind"`
	// Headline is the console line that announced it ("BUG: kernel NULL
	// pointer dereference, address: 0000000000000008").
	Headline string `json:"headline"`
	// Function is where it happened (the RIP line's function), Verb the
	// user verb in flight (from the call trace's ib_uverbs_* frame, e.g.
	// "modify_srq"), or "" when the trace shows none (a kernel worker).
	Function string `json:"function,omitempty"`
	Verb     string `json:"verb,omitempty"`
	// OutsideRDMA is true when neither the RIP function nor any frame
	// of the call trace is RDMA code (rdma_rxe, siw, ib_core,
	// ib_uverbs, rdma_cm, iw_cm, ib_cm, or an rxe_, siw_, ib_, rdma_
	// function) and no verb is in flight: a scheduler or timer crash
	// that a loaded TCG host can produce (an "Oops: int3" in
	// enqueue_task_fair) and that says nothing about the driver.
	OutsideRDMA bool `json:"outside_rdma,omitempty"`
	// Excerpt is the console from the headline on (at most 40 lines).
	Excerpt string `json:"excerpt"`
}

// Summary is one line: "kernel crash in rxe_resize_queue during
// modify_srq: BUG: kernel NULL pointer dereference ...".
func (c *KernelCrash) Summary() string {
	s := c.Kind
	if c.Function != "" {
		s += " in " + c.Function
	}
	if c.Verb != "" {
		s += " during " + c.Verb
	} else if c.OutsideRDMA {
		s += " (no RDMA code in the call trace)"
	} else {
		s += " (no user verb in the call trace: a kernel worker or softirq)"
	}
	return s + ": " + c.Headline
}

// KernelCrashError is a guest whose kernel crashed or hung before the
// program's result came back.
type KernelCrashError struct {
	Crash *KernelCrash
}

// Error implements error.
func (e *KernelCrashError) Error() string {
	return fmt.Sprintf("vm: the guest kernel reported a %s; console excerpt:\n%s", e.Crash.Summary(), e.Crash.Excerpt)
}

var (
	// crashHeadRe matches the console lines that open an oops, BUG,
	// panic, hung task or soft lockup report.
	crashHeadRe = regexp.MustCompile(`(?m)^.*?(BUG: .*|Oops: .*|general protection fault.*|Kernel panic - not syncing.*|INFO: task .* blocked for more than .*|watchdog: BUG: soft lockup.*|rcu: INFO: .*detected stalls.*|kernel BUG at .*|UBSAN: .*)$`)
	ripRe       = regexp.MustCompile(`RIP: [0-9a-f]{4}:([A-Za-z0-9_.]+)\+0x`)
	uverbsRe    = regexp.MustCompile(`\bib_uverbs_([A-Za-z_]+?)(?:\.[a-z0-9.]+)?\+0x`)
	// driverVerbRe matches a driver's own verb entry points, for a trace
	// that reaches them other than through a uverbs command.
	driverVerbRe = regexp.MustCompile(`\b(?:rxe|siw)_((?:create|modify|query|destroy)_(?:srq|qp|cq|ah)|post_(?:srq_)?recv|post_send|poll_cq|req_notify_cq|dealloc_ucontext)\b`)
	// rdmaFrameRe matches a frame (or RIP) in RDMA code: a module tag
	// of the RDMA stack, or a function of its prefixes.
	rdmaFrameRe = regexp.MustCompile(`\[(?:rdma_rxe|siw|ib_core|ib_uverbs|rdma_cm|iw_cm|ib_cm|rdma_ucm)\]|(?:^|[\s:?])(?:rxe|siw|ib|rdma|uverbs)_[A-Za-z0-9_]+(?:\.[a-z0-9.]+)?\+0x`)
	// plumbing frames of the uverbs dispatch, not verbs.
	uverbsPlumbing = map[string]bool{"write": true, "ioctl": true, "handler": true, "cmd_verbs": true, "run_method": true, "handler_cmd": true}
	consolePrefix  = regexp.MustCompile(`^\[\s*\d+\.\d+\]\s?`)
)

// FindKernelCrash reads a serial console for an oops, panic, hung task
// or soft lockup; nil when it shows none.
func FindKernelCrash(serial string) *KernelCrash {
	loc := crashHeadRe.FindStringSubmatchIndex(serial)
	if loc == nil {
		return nil
	}
	head := serial[loc[2]:loc[3]]
	c := &KernelCrash{Kind: "kernel crash", Headline: strings.TrimSpace(head)}
	if strings.Contains(head, "blocked for more than") || strings.Contains(head, "soft lockup") || strings.Contains(head, "detected stalls") {
		c.Kind = "hang"
	}
	lines := strings.Split(serial[loc[0]:], "\n")
	if len(lines) > 100 {
		lines = lines[:100]
	}
	rest := strings.Join(lines, "\n")
	if m := ripRe.FindStringSubmatch(rest); m != nil {
		c.Function = m[1]
	}
	c.Verb = verbInTrace(rest)
	c.OutsideRDMA = c.Verb == "" && !rdmaFrameRe.MatchString(rest)
	if len(lines) > 40 {
		lines = lines[:40]
	}
	for i, l := range lines {
		lines[i] = consolePrefix.ReplaceAllString(strings.TrimRight(l, "\r"), "")
	}
	c.Excerpt = strings.TrimRight(strings.Join(lines, "\n"), "\n")
	return c
}

// verbInTrace names the user verb a call trace shows: its first
// ib_uverbs_* frame that is not the dispatch's plumbing ("modify_srq",
// "method_srq_destroy" for an ioctl method), else its first driver verb
// frame; "" when there is neither.
func verbInTrace(trace string) string {
	for _, m := range uverbsRe.FindAllStringSubmatch(trace, -1) {
		v := m[1]
		if uverbsPlumbing[v] {
			continue
		}
		if strings.HasPrefix(v, "handler_UVERBS_") {
			return strings.ToLower(strings.TrimPrefix(v, "handler_UVERBS_"))
		}
		return v
	}
	if m := driverVerbRe.FindStringSubmatch(trace); m != nil {
		return m[1]
	}
	return ""
}
