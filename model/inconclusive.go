package model

import (
	"errors"
	"fmt"
)

// Inconclusive is returned by Model.Step when an observation a timer made
// (a peer that heard nothing back, PeerSilent) is the only thing that
// differs from what the model allows: silence is not the device's answer,
// so the step shows neither conformance nor a departure. The caller counts
// it and ends the trace there; it is never a failure (Jepsen's "info").
type Inconclusive struct {
	Rule RuleID // the rule whose check needed the answer
	What string // the part of the observation that timed out
	Want string // what the model allows
	Got  string // what was observed
}

func (i *Inconclusive) Error() string {
	return fmt.Sprintf("[%s] inconclusive: %s = %s, the model needs %s", i.Rule, i.What, i.Got, i.Want)
}

// IsInconclusive says whether err is, or wraps, an *Inconclusive.
func IsInconclusive(err error) bool {
	var i *Inconclusive
	return errors.As(err, &i)
}

// silentPeer decides a silent peer outcome against the allowed set: nil
// (consistent) where a peer that hears an error is allowed, since an error
// outcome covers a receiver that drops the message and an error NAK that
// came too late alike; otherwise *Inconclusive.
func silentPeer(rule RuleID, allowed PeerSet) error {
	if allowed.Has(PeerError) {
		return nil
	}
	return &Inconclusive{Rule: rule, What: "peer outcome", Want: allowed.String(), Got: PeerSilent.String()}
}
