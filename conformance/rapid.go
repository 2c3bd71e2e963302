package conformance

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/srqconform/srqconform/model"
	"pgregory.net/rapid"
)

// rapidMu guards rapid's settings, process-wide flags, while a run needs
// them: rapid.Check reads the number of checks and the seed before it
// first calls the property, and the shrink time after it has reproduced a
// failure, before it calls the property with the first shrink candidate.
// A run holds rapidMu across each of those windows only (randomRun), so
// runs of other goroutines (srqblame -parallel, a caller's parallel tests)
// generate and shrink at the same time. Held for a whole run, as it once
// was, one run's random cases waited for another's, and the waiting run's
// budget ran out before it made a case.
var rapidMu sync.Mutex

// rapidOnce sets the flags every run shares.
var rapidOnce sync.Once

// randomResult is what one rapid run of random cases gave.
type randomResult struct {
	fail *Trace // the shrunk failing trace, or nil
	// inconclusive holds the cases that ended inconclusive (not while
	// shrinking).
	inconclusive  []Trace
	cases, steps  int
	unpredictable int
	coverage      map[model.RuleID]int
	features      map[string]int
	shrunk        time.Duration // how long shrinking the failure took
}

// randomRun runs up to cases rapid-driven random cases with seed, the rules
// in relaxed adopted from the device; on a failure it returns the shrunk
// counterexample. A cancelled context ends the run at once, without
// shrinking: a case cut short is not a failure.
func randomRun(ctx context.Context, x *executor, opts Options, seed uint64, cases int, relaxed []model.RuleID, done, total int) (randomResult, error) {
	rapidMu.Lock()
	started := sync.OnceFunc(rapidMu.Unlock) // rapid has read checks and seed
	defer started()
	shrinking := func() {} // rapid has read the shrink time
	defer func() { shrinking() }()
	sinceFail := 0 // calls of the property since the first failure
	res := randomResult{coverage: map[model.RuleID]int{}, features: map[string]int{}}
	o := opts
	o.Seed, o.Cases = seed, cases
	if err := setRapid(o); err != nil {
		return res, err
	}
	var (
		last     Trace
		failed   bool
		harnessE string
	)
	tb := &progTB{}
	var firstFail time.Time
	prop := func(t *rapid.T) {
		started()
		if failed {
			// The first call after the failure reproduces it; the
			// second is the first shrink candidate.
			if sinceFail++; sinceFail == 2 {
				shrinking()
			}
		}
		if !failed && !opts.deadline.IsZero() && time.Now().After(opts.deadline) {
			return // the time budget is spent: no new case
		}
		if ctx.Err() != nil {
			runtime.Goexit() // see below
		}
		// rapid checks its shrink deadline only between passes; past ours,
		// every candidate passes and the best failing trace so far stands.
		if failed && time.Since(firstFail) > opts.ShrinkTime {
			return
		}
		if failed {
			x.timing.enter(StageShrink)
		} else {
			x.timing.enter(StageRandom)
		}
		stopAt := opts.deadline // a new case: the budget
		if failed {
			stopAt = firstFail.Add(opts.ShrinkTime) // a shrink candidate: the shrink time
		}
		tr, _, reached, feats := runCounting(ctx, opts.Profile, relaxed, x, func(s *session) { s.stopAt = stopAt; genCase(t, s, opts.Steps) })
		res.steps += len(tr.Steps)
		if ctx.Err() != nil {
			runtime.Goexit() // cut short by the interrupt: not a failure
		}
		if !failed {
			res.cases++
			for r, n := range reached {
				res.coverage[r] += n
			}
			for f, n := range feats {
				res.features[f] += n
			}
			progress(opts, done+res.cases, total, "random case")
		}
		if tr.Inconclusive != nil {
			if !failed {
				res.inconclusive = append(res.inconclusive, tr)
			}
			return // neither a pass nor a failure: shrinking treats it as passing
		}
		if tr.unpredictable && tr.Deviation == nil {
			if !failed {
				res.unpredictable++
			}
			return // the generator's fault: discard the case
		}
		if !tr.Failed() {
			if opts.Passed != nil && !failed {
				opts.Passed(fmt.Sprintf("random case (seed %d)", seed), tr.Ops(), tr.Observed())
			}
			x.recycle(tr) // a pass: only its length counted
			return
		}
		if failed && last.Deviation != nil && tr.Deviation == nil {
			return // shrinking a deviation: a candidate the harness cannot run is not one
		}
		if !failed {
			firstFail = time.Now()
			// rapid reads the shrink time once it has reproduced this
			// failure; another run may have set it since this one
			// started.
			rapidMu.Lock()
			shrinking = sync.OnceFunc(rapidMu.Unlock)
			_ = flag.Set("rapid.shrinktime", opts.ShrinkTime.String()) // as setRapid did, without error
		}
		last, failed = tr, true
		if tr.Deviation == nil {
			harnessE = tr.Err
		}
		t.Fatalf("%s", tr.Steps[len(tr.Steps)-1].OpText)
	}
	// rapid runs in a goroutine of its own so that an interrupt ends it at
	// once, shrinking included: the property calls runtime.Goexit. rapid
	// cannot be told to stop, and would try candidates until its shrink
	// time ran out. A failure found before the interrupt is kept, shrunk
	// as far as it got.
	//
	// rapid v1.3.0 itself can panic while it shrinks: minimizeBlocks
	// (shrink.go) indexes the buffer it walks after an accepted candidate
	// made it shorter, and the index error escapes its recover as an
	// interface conversion. That panic is rapid's, not the device's or the
	// model's (rapid turns the property's own panics into failures), so
	// it ends the shrink: the failure found is kept, shrunk as far as it
	// got, and a run that found none reports the panic as an error.
	ended := make(chan struct{})
	var shrinkPanic any
	go func() {
		defer close(ended)
		defer func() { shrinkPanic = recover() }()
		rapid.Check(tb, prop)
	}()
	<-ended
	if !failed {
		if shrinkPanic != nil {
			return res, fmt.Errorf("random cases (seed %d): rapid.Check panicked: %v", seed, shrinkPanic)
		}
		return res, nil
	}
	res.shrunk = time.Since(firstFail)
	if last.Deviation == nil {
		if ctx.Err() != nil {
			return res, nil
		}
		return res, fmt.Errorf("random case (seed %d): %s", seed, harnessE)
	}
	res.fail = &last
	return res, nil
}

// setRapid points rapid's process-wide settings at this run: the number
// of checks, the seed and the shrink time. The caller holds rapidMu.
func setRapid(o Options) error {
	if err := rapidShared(); err != nil {
		return err
	}
	checks := o.Cases
	if testing.Short() {
		// rapid runs a fifth of its checks in a go test -short; a run's
		// number of cases is its caller's, not the test flags'.
		checks *= 5
	}
	return setFlags(map[string]string{
		"rapid.checks":     strconv.Itoa(checks),
		"rapid.seed":       strconv.FormatUint(o.Seed, 10),
		"rapid.shrinktime": o.ShrinkTime.String(),
	})
}

// rapidShared sets, once, what every rapid run shares: the testing flags
// rapid reads, and no fail file (rapid reads that flag after a shrink,
// outside rapidMu). The caller holds rapidMu.
func rapidShared() error {
	var err error
	rapidOnce.Do(func() {
		if flag.Lookup("test.short") == nil {
			// Outside go test: rapid reads the testing flags. A caller
			// that parsed its own flags first has not registered them.
			testing.Init()
		}
		if !flag.Parsed() {
			if err = flag.CommandLine.Parse(nil); err != nil {
				err = fmt.Errorf("prepare rapid flags: %w", err)
				return
			}
		}
		err = setFlags(map[string]string{"rapid.nofailfile": "true"})
	})
	return err
}

func setFlags(kv map[string]string) error {
	for k, v := range kv {
		if err := flag.Set(k, v); err != nil {
			return fmt.Errorf("set %s=%s: %w", k, v, err)
		}
	}
	return nil
}

// progTB lets rapid run outside go test; the run's outcome is read from the
// traces, not from what rapid prints.
type progTB struct {
	mu     sync.Mutex
	failed bool
}

func (*progTB) Helper() {}

func (*progTB) Name() string { return "srqconform" }

func (*progTB) Logf(string, ...any) {}

func (*progTB) Log(...any) {}

func (*progTB) Skipf(string, ...any) {}

func (*progTB) Skip(...any) {}

func (*progTB) SkipNow() {}

func (t *progTB) Errorf(string, ...any) { t.Fail() }

func (t *progTB) Error(...any) { t.Fail() }

func (t *progTB) Fatalf(string, ...any) { t.Fail() }

func (t *progTB) Fatal(...any) { t.Fail() }

func (*progTB) FailNow() {}

func (t *progTB) Fail() { t.mu.Lock(); t.failed = true; t.mu.Unlock() }

func (t *progTB) Failed() bool { t.mu.Lock(); defer t.mu.Unlock(); return t.failed }
