package outcome

import (
	"encoding/json"
	"time"
)

// SeedRun is one conformance run of a mutant with one seed.
type SeedRun struct {
	Seed   uint64        `json:"seed"`
	Budget time.Duration `json:"budget_ns"`
	// Failing lists the rules the report marks "fail", sorted.
	Failing []string `json:"failing,omitempty"`
	// Diagnoses lists each failure's diagnosis (the rules blamed).
	Diagnoses [][]string    `json:"diagnoses,omitempty"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	// Error is the report's harness error, or the error Check returned.
	Error         string `json:"error,omitempty"`
	Unpredictable int    `json:"unpredictable,omitempty"`
	// Crash is set by the sweep, not the runner: "panic: ..." when the
	// runner died, "hang" when it overran its bound and was killed.
	Crash string `json:"crash,omitempty"`
}

// Caught says the run failed some rule.
func (r SeedRun) Caught() bool { return len(r.Failing) > 0 }

// Failed says the run reported a failure: a rule's, or the driver's own
// (a panic in a verb, an error where the model expects a result, a runner
// that died or hung), which mutation testing counts as killing the mutant.
// The unmutated emulator gives neither, so the mutation made it.
func (r SeedRun) Failed() bool { return r.Caught() || r.Error != "" || r.Crash != "" }

// Scripts is the digests of scripts From, From+1, ... run on a driver.
type Scripts struct {
	From    uint64   `json:"from"`
	Steps   int      `json:"steps"`
	Digests []string `json:"digests"`
}

// PassedCase is a case a mutant passed: where it came from, its
// operations (each as conformance.OpJSON) and what the mutant answered at
// each step (conformance.Trace.Observed).
type PassedCase struct {
	Source   string            `json:"source"`
	Ops      []json.RawMessage `json:"ops"`
	Observed []string          `json:"observed"`
}
