package conformance

import (
	"fmt"
	"time"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// Status is a rule's result.
type Status string

// Rule statuses.
const (
	Pass          Status = "pass"    // its checks ran and agreed
	Fail          Status = "fail"    // the diagnosis names it broken
	NotApplicable Status = "n/a"     // the device cannot show it (Reason says why)
	Blocked       Status = "blocked" // its scenario failed in a way no rule explains
	// Follows: its check failed only on what another rule's departure
	// left behind (Failure.Follows); that rule is the one broken.
	Follows    Status = "follows"
	NotReached Status = "not reached" // no check of it ran in this run
)

// RuleResult is one row of the report.
type RuleResult struct {
	Rule      model.Rule `json:"rule"`
	Status    Status     `json:"status"`
	Reason    string     `json:"reason,omitempty"`
	Scenarios int        `json:"scenarios"`
	// Checks counts the steps in which the rule's check ran and agreed.
	Checks   int   `json:"checks"`
	Failures []int `json:"failures,omitempty"` // indexes into Report.Failures
}

// Failure is a counterexample: a minimal trace that replays, and the rules
// its diagnosis names broken.
type Failure struct {
	Rule model.RuleID `json:"rule"` // the first rule of Rules
	// Rules is the diagnosis: the rules whose relaxation explains the trace
	// (see model.Diagnose). Empty when no rule explains it.
	Rules  []model.RuleID `json:"rules,omitempty"`
	Source string         `json:"source"` // "scenario: NAME" or "random case (seed N)"
	// Follows names the rule, diagnosed broken earlier in the run, whose
	// departure this trace needs before the one its diagnosis names: with
	// that rule kept, the trace is not explained. What a device does after
	// it departed from one rule is not a second root cause (fold).
	Follows model.RuleID `json:"follows,omitempty"`
	// minimal says shrinking tried every step of the trace and none could
	// go (checker.minimize).
	minimal bool
	// AlsoIn lists the other runs that failed on the same rules; the
	// report keeps the shortest counterexample per diagnosis.
	AlsoIn []string   `json:"also_in,omitempty"`
	Trace  Trace      `json:"trace"`
	Replay ReplayFile `json:"replay"`
}

// Finding is a profile declaration the device did not bear out.
type Finding struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
	// Untestable findings could not be probed safely or with this driver;
	// they are listed but do not make a device non-conformant.
	Untestable bool `json:"untestable,omitempty"`
}

// Report is the outcome of a conformance run.
type Report struct {
	Driver  string       `json:"driver"`
	Device  drivers.Info `json:"device"`
	Profile string       `json:"profile"`
	Seed    uint64       `json:"seed"`
	Cases   int          `json:"cases"`
	// Duration is the time budget the random cases ran under, if any.
	Duration time.Duration `json:"duration_ns,omitempty"`
	Steps    int           `json:"max_steps"`
	Rules    []RuleResult  `json:"rules"`
	Failures []Failure     `json:"failures"`
	Findings []Finding     `json:"findings"`
	// Resolved lists, for each choice the profile left open, the values the
	// device's behaviour allowed.
	Resolved map[string][]string `json:"resolved,omitempty"`
	// Features counts the state-space features (FeatureNames) the steps
	// that agreed reached; a feature never reached is absent.
	Features map[string]int `json:"features"`
	// Broken lists the rules diagnosed broken, in the order found; the run
	// adopted the device's behaviour for each and went on testing the rest.
	Broken []model.RuleID `json:"broken,omitempty"`
	// StepsRun counts operations run on the driver; CasesRun the random
	// cases run (shrinking not counted); Elapsed is wall time.
	StepsRun int           `json:"steps_run"`
	CasesRun int           `json:"cases_run"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	// Phases is where the time went, by kind of work on the driver and
	// the model (PhaseNames), and Stages by stage of the run (StageNames):
	// each with its total and how often it was entered. Phases do not
	// overlap and add up to no more than Elapsed; stages add up to it.
	Phases []Phase `json:"phases,omitempty"`
	Stages []Phase `json:"stages,omitempty"`
	// Unpredictable counts random cases the model could not predict (a
	// fault of the generator, not the device), and deviations that vanish
	// when the trace is replayed keeping every model candidate (the run's
	// model keeps the most parsimonious ones only); they are discarded.
	Unpredictable int `json:"unpredictable,omitempty"`
	// Inconclusive counts the steps whose observation was silence where
	// the model needs the device's answer (a peer that heard nothing back
	// even after the driver's longer re-check, model.Inconclusive): each
	// ended its scenario or case there, and none is a failure.
	// InconclusiveAt says where, for the first maxInconclusiveAt of them.
	Inconclusive   int      `json:"inconclusive"`
	InconclusiveAt []string `json:"inconclusive_at,omitempty"`
	// Interrupted is set when the run was stopped (SIGINT, SIGTERM) before
	// it finished: the report holds what ran until then.
	Interrupted bool `json:"interrupted,omitempty"`
	// Error is set when the harness or the device failed and the run
	// stopped early: the report holds what ran until then.
	Error string `json:"error,omitempty"`
}

// Conformant reports whether the device showed no deviation and bore out
// every declared deviation of its profile.
func (r *Report) Conformant() bool {
	return r.FailingOnly() && len(r.Failures) == 0
}

// FailingOnly reports whether the report's departures, if any, are all
// failing rules: no profile finding other than an untestable one.
func (r *Report) FailingOnly() bool {
	for _, f := range r.Findings {
		if !f.Untestable {
			return false
		}
	}
	return true
}

// FollowsNote says, for a failure that follows from another rule's
// departure (Failure.Follows), what that means; "" for one that does not.
func FollowsNote(f Failure) string {
	if f.Follows == 0 {
		return ""
	}
	return fmt.Sprintf("follows from %[1]s: the steps before the failing one need %[1]s's departure, so this check failed on what it left; it counts under %[1]s, not as a root cause of its own", f.Follows)
}
