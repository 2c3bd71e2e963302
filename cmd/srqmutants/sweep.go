package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivescript"
	"github.com/srqconform/srqconform/mutants"
	"github.com/srqconform/srqconform/mutants/outcome"
)

// runnerPkg is the program built once per mutant.
const runnerPkg = "./cmd/srqmutants/runner"

// emuDir is the mutated package, relative to the module root.
const emuDir = "drivers/emu"

// config is a sweep's settings, from the flags.
type config struct {
	Seeds    []uint64      `json:"seeds"`
	Budget   time.Duration `json:"budget_ns"`
	Sample   int           `json:"sample"` // 0: every mutant
	Parallel int           `json:"parallel"`
	Scripts  int           `json:"scripts"` // witness scripts per uncaught mutant
	Steps    int           `json:"steps"`   // steps per script
	Only     []string      `json:"only,omitempty"`
}

// bound is how long one seed's run may take before it is killed as hung.
func (c config) bound() time.Duration { return 4*c.Budget + 15*time.Second }

// Mutant statuses.
const (
	statusNotCompiling = "not compiling"
	statusEquivalent   = "equivalent"
	statusEscaped      = "escaped"
	// statusAllowed: no seed caught it, and one of the suite's own cases
	// it passed is answered otherwise by the emulator: the model accepted
	// the mutant's answer, so the documented profile allows what it does.
	statusAllowed = "allowed by the profile"
	statusCaught  = "caught"
	statusPanic   = "panic"
	statusHang    = "hang"
	// statusDriverFailed: no seed failed a rule, some ended in the
	// driver's own failure (a hang, a panic outside a verb, an error the
	// harness cannot take as the device's answer, a device limit it
	// cannot size a run by). A panic in a verb, or an error the driver
	// marks as its own state's refusal (drivers.ErrCallFailed), fails
	// the verb's rule (model.CallRule).
	statusDriverFailed = "driver failed"
)

// result is one swept mutant.
type result struct {
	mutants.Mutant
	Status string `json:"status"`
	// Caught counts the seeds whose run failed some rule.
	Caught int               `json:"caught"`
	Runs   []outcome.SeedRun `json:"runs,omitempty"`
	// Witness, for an escaped mutant, is the first script and line where
	// it and the emulator differ.
	Witness    string `json:"witness,omitempty"`
	BuildError string `json:"build_error,omitempty"`
}

// sweeper runs mutants: built into the runner with an overlay, run per
// seed, and searched for a witness when no seed catches them.
type sweeper struct {
	cfg      config
	root     string // module root
	tmp      string
	set      *mutants.Set
	base     string   // the runner built without a mutant
	baseline []string // its script digests
	progress io.Writer
	mu       sync.Mutex
	done     int
}

// moduleRoot returns the directory of the go.mod the go command sees.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("go env GOMOD: not inside a module; run srqmutants in the srqconform module")
	}
	return filepath.Dir(mod), nil
}

// choose returns the mutants to sweep: those of -mutants, or a sample of
// n spread over the labels (round robin over the labels, each
// label's mutants in the order of a hash of their IDs), or every
// compiling mutant; in generation order.
func choose(ms []mutants.Mutant, n int, only []string) []mutants.Mutant {
	var ok []mutants.Mutant
	for _, m := range ms {
		if m.NotCompiling == "" && (only == nil || contains(only, m.ID)) {
			ok = append(ok, m)
		}
	}
	if n <= 0 || n >= len(ok) {
		return ok
	}
	groups := map[string][]int{}
	for i, m := range ok {
		k := strings.Join(m.Label, ",")
		groups[k] = append(groups[k], i)
	}
	var labels []string
	for k, g := range groups {
		labels = append(labels, k)
		sort.Slice(g, func(a, b int) bool { return hashID(ok[g[a]].ID) < hashID(ok[g[b]].ID) })
	}
	// Labels in the order of their hash: a small sample is spread too.
	sort.Slice(labels, func(a, b int) bool { return hashID(labels[a]) < hashID(labels[b]) })
	var picked []int
	for round := 0; len(picked) < n; round++ {
		for _, k := range labels {
			if g := groups[k]; round < len(g) && len(picked) < n {
				picked = append(picked, g[round])
			}
		}
	}
	sort.Ints(picked)
	out := make([]mutants.Mutant, len(picked))
	for i, p := range picked {
		out[i] = ok[p]
	}
	return out
}

// hashID orders IDs and labels in a fixed order unrelated to their text.
func hashID(id string) string {
	h := sha256.Sum256([]byte(id))
	return string(h[:])
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// build builds the runner into bin, with overlay if not "".
func (sw *sweeper) build(ctx context.Context, bin, overlay string) error {
	args := []string{"build", "-o", bin}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, runnerPkg)...)
	cmd.Dir = sw.root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %v: %s", strings.Join(append(args, runnerPkg), " "), err, firstLine(stderr.String()))
	}
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// invoke runs bin with args within d and decodes its JSON into out. A
// run killed at d reports statusHang; one that died, statusPanic with
// its panic line.
func invoke(ctx context.Context, d time.Duration, out any, bin string, args ...string) (crash string, err error) {
	rctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	cmd := exec.CommandContext(rctx, bin, args...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case rctx.Err() != nil:
		return statusHang, nil
	case runErr != nil:
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") {
				return l, nil
			}
		}
		return fmt.Sprintf("%s: %v: %s", statusPanic, runErr, firstLine(stderr.String())), nil
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return "", fmt.Errorf("%s %s: decoding its output: %w", bin, strings.Join(args, " "), err)
	}
	return "", nil
}

// prepare generates the mutants, builds the unmutated runner and records
// its script digests.
func (sw *sweeper) prepare(ctx context.Context) error {
	set, err := mutants.Generate(filepath.Join(sw.root, emuDir))
	if err != nil {
		return fmt.Errorf("generating the mutants of %s: %w", emuDir, err)
	}
	sw.set = set
	sw.base = filepath.Join(sw.tmp, "runner-emulator")
	if err := sw.build(ctx, sw.base, ""); err != nil {
		return fmt.Errorf("building the unmutated runner: %w", err)
	}
	var s outcome.Scripts
	crash, err := invoke(ctx, 10*time.Minute, &s, sw.base, sw.scriptArgs()...)
	if err != nil {
		return err
	}
	if crash != "" || len(s.Digests) != sw.cfg.Scripts {
		return fmt.Errorf("the unmutated runner's scripts: %s, %d digests, want %d", crash, len(s.Digests), sw.cfg.Scripts)
	}
	sw.baseline = s.Digests
	return nil
}

func (sw *sweeper) scriptArgs() []string {
	return []string{"scripts", "-from", "1", "-n", fmt.Sprint(sw.cfg.Scripts), "-steps", fmt.Sprint(sw.cfg.Steps)}
}

// sweep runs the chosen mutants, sw.cfg.Parallel at a time. On
// cancellation it returns the mutants finished so far, in order.
func (sw *sweeper) sweep(ctx context.Context, ms []mutants.Mutant) ([]result, error) {
	results := make([]*result, len(ms))
	errs := make(chan error, len(ms))
	next := make(chan int)
	var wg sync.WaitGroup
	for range sw.cfg.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r, err := sw.one(ctx, ms[i])
				if err != nil {
					if ctx.Err() == nil {
						errs <- fmt.Errorf("mutant %s: %w", ms[i].ID, err)
					}
					continue
				}
				results[i] = &r
				sw.report(len(ms), r)
			}
		}()
	}
	// Fed in the order of their IDs' hash, so that an interrupted sweep
	// has run a sample spread over the files, not the first of them.
	order := make([]int, len(ms))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return hashID(ms[order[a]].ID) < hashID(ms[order[b]].ID) })
feed:
	for _, i := range order {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	var out []result
	for _, r := range results {
		if r != nil {
			out = append(out, *r)
		}
	}
	return out, <-errs
}

func (sw *sweeper) report(total int, r result) {
	if sw.progress == nil {
		return
	}
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.done++
	fmt.Fprintf(sw.progress, "[%d/%d] %s (%s:%d %s, label %s): %s\n", sw.done, total, r.ID, r.File, r.Line, r.Operator,
		strings.Join(r.Label, ","), statusText(r, len(sw.cfg.Seeds)))
}

// one builds and runs one mutant.
func (sw *sweeper) one(ctx context.Context, m mutants.Mutant) (result, error) {
	r := result{Mutant: m}
	dir, err := os.MkdirTemp(sw.tmp, "m-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, m.File)
	if err := os.WriteFile(file, sw.set.Source(m), 0o644); err != nil {
		return r, err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {sw.set.Path(m): file}})
	if err != nil {
		return r, err
	}
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		return r, err
	}
	bin := filepath.Join(dir, "runner")
	if err := sw.build(ctx, bin, ov); err != nil {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		r.Status, r.BuildError = statusNotCompiling, err.Error()
		return r, nil
	}
	for _, seed := range sw.cfg.Seeds {
		var run outcome.SeedRun
		crash, err := invoke(ctx, sw.cfg.bound(), &run, bin, "check", "-seed", fmt.Sprint(seed), "-budget", sw.cfg.Budget.String())
		if err != nil {
			return r, err
		}
		if crash != "" {
			r.Runs = append(r.Runs, outcome.SeedRun{Seed: seed, Budget: sw.cfg.Budget, Crash: crash, Elapsed: sw.cfg.bound()})
			r.Status = statusPanic
			if crash == statusHang {
				r.Status = statusHang
			}
			return r, nil // a crash on one seed is what the others would show
		}
		r.Runs = append(r.Runs, run)
		if run.Caught() {
			r.Caught++
		}
	}
	if r.Caught > 0 {
		r.Status = statusCaught
		return r, nil
	}
	if slices.ContainsFunc(r.Runs, outcome.SeedRun.Failed) {
		r.Status = statusDriverFailed
		return r, nil
	}
	w, err := sw.witness(ctx, bin)
	if err != nil {
		return r, err
	}
	r.Status, r.Witness = statusEscaped, w
	if w == "" {
		r.Status = statusEquivalent
		return r, nil
	}
	a, err := sw.allowed(ctx, dir, bin)
	if err != nil {
		return r, err
	}
	if a != "" {
		r.Status, r.Witness = statusAllowed, a
	}
	return r, nil
}

// allowedCases is how many random cases per seed allowed runs on a
// mutant, besides the scenarios.
const allowedCases = 200

// allowed runs the scenarios and the first allowedCases random cases of
// each seed on the mutant (held to the documented profile, as the sweep
// is), runs every case it passed again on the emulator, and returns where
// the two first answer differently: a difference the model accepted, so
// one the profile allows. It returns "" when the cases show none (the
// suite never reaches what the mutation changed).
func (sw *sweeper) allowed(ctx context.Context, dir, bin string) (string, error) {
	for _, seed := range sw.cfg.Seeds {
		var cases []outcome.PassedCase
		crash, err := invoke(ctx, sw.cfg.bound(), &cases, bin, "passed", "-seed", fmt.Sprint(seed), "-cases", fmt.Sprint(allowedCases))
		if err != nil || crash != "" {
			return "", err // a mutant that crashes here shows no allowed difference
		}
		file := filepath.Join(dir, fmt.Sprintf("passed-%d.json", seed))
		b, err := json.Marshal(cases)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(file, b, 0o644); err != nil {
			return "", err
		}
		var base [][]string
		crash, err = invoke(ctx, sw.cfg.bound(), &base, sw.base, "observe", "-in", file)
		if err != nil {
			return "", err
		}
		if crash != "" || len(base) != len(cases) {
			return "", fmt.Errorf("%s observe -in %s: %s, %d cases answered; want %d answered", sw.base, file, crash, len(base), len(cases))
		}
		for i, c := range cases {
			if k := drivescript.FirstDifference(c.Observed, base[i]); k >= 0 {
				return fmt.Sprintf("seed %d, %s, step %d %s: mutant %q, emulator %q; the model accepts the mutant's answer",
					seed, c.Source, k+1, opText(c.Ops, k), line(c.Observed, k), line(base[i], k)), nil
			}
		}
	}
	return "", nil
}

// opText is the k-th of ops (each a conformance.OpJSON) as a trace shows
// it.
func opText(ops []json.RawMessage, k int) string {
	if k < 0 || k >= len(ops) {
		return "(end of the case)"
	}
	var o conformance.OpJSON
	if err := json.Unmarshal(ops[k], &o); err != nil {
		return "(unreadable operation)"
	}
	op, err := conformance.DecodeOp(o)
	if err != nil {
		return o.Op
	}
	return op.String()
}

// witness runs the scripts on the mutant and returns where it first
// departs from the emulator, or "" when it never does.
func (sw *sweeper) witness(ctx context.Context, bin string) (string, error) {
	var s outcome.Scripts
	crash, err := invoke(ctx, 10*time.Minute, &s, bin, sw.scriptArgs()...)
	if err != nil || crash != "" {
		return "scripts: " + crash, err
	}
	for i, d := range s.Digests {
		if i < len(sw.baseline) && d == sw.baseline[i] {
			continue
		}
		seed := fmt.Sprint(s.From + uint64(i))
		var got, want []string
		args := []string{"transcript", "-seed", seed, "-steps", fmt.Sprint(sw.cfg.Steps)}
		if _, err := invoke(ctx, time.Minute, &got, bin, args...); err != nil {
			return "", err
		}
		if _, err := invoke(ctx, time.Minute, &want, sw.base, args...); err != nil {
			return "", err
		}
		k := drivescript.FirstDifference(got, want)
		return fmt.Sprintf("script %s, call %d: mutant %q, emulator %q", seed, k+1, line(got, k), line(want, k)), nil
	}
	return "", nil
}

func line(l []string, i int) string {
	if i < 0 || i >= len(l) {
		return "(end of transcript)"
	}
	return l[i]
}

// statusText is a mutant's status as the report shows it.
func statusText(r result, seeds int) string {
	if r.Status == statusCaught {
		return fmt.Sprintf("caught in %d of %d seeds", r.Caught, seeds)
	}
	return r.Status
}
