package conformance

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

func TestFeatureTrackerCountsWhatItNames(t *testing.T) {
	f := newFeatureTracker()
	up := model.View{QPStates: []model.QPState{model.RTS}, QPTypes: []model.QPType{model.RC}, Outstanding: 2, HeadBytes: 8, Capacity: 4}
	ok := model.Observation{BadWR: -1}
	f.observe(model.ModifyQP{QP: 0, State: model.RTS}, up, ok)
	f.observe(model.ModifyQP{QP: 0, State: model.Reset}, up, ok)
	f.observe(model.Arrive{QP: 0, Msg: model.Message{Opcode: model.Send, Len: 8}}, up, ok)
	f.observe(model.Post{WRs: make([]model.WR, 3)}, up, model.Observation{Errno: model.EINVAL, BadWR: 1})
	f.observe(model.Post{WRs: make([]model.WR, 5)}, up, model.Observation{Errno: model.ENOMEM, BadWR: 4})
	f.observe(model.Arm{Limit: 1}, up, ok)
	f.observe(model.Poll{}, up, model.Observation{Events: []model.Event{{Type: model.EventSRQLimitReached, QP: -1}}})
	f.observe(model.Arm{Limit: 1}, up, ok)
	f.observe(model.ModifyQP{QP: 0, State: model.SQD}, up, ok)
	f.observe(model.ModifyQP{QP: 0, State: model.RTS}, up, ok)
	f.observe(model.Arrive{QP: 0, Msg: model.Message{Opcode: model.Send, Len: 7}}, up, ok)
	none := model.View{QPStates: []model.QPState{model.RTS}, QPTypes: []model.QPType{model.RC}, QPGone: []bool{true}, Capacity: 4}
	f.observe(model.Post{WRs: make([]model.WR, 1)}, none, ok)
	f.observe(model.Arm{Limit: 2}, none, ok)
	f.observe(model.Post{WRs: make([]model.WR, 1)}, none, model.Observation{Errno: model.EINVAL, BadWR: 0})
	assert.Equal(t, map[string]int{
		FeatureNames[featNoQP]:        2, // a post and an arm with the only QP gone; the refused post is none
		FeatureNames[featRevived]:     2, // traffic after the QP came back up (SQD -> RTS keeps it so)
		FeatureNames[featExact]:       1, // 8 bytes into an 8-byte head WR
		FeatureNames[featUnder]:       1, // 7 bytes
		FeatureNames[featBadMid]:      1,
		FeatureNames[featFull]:        1, // ENOMEM
		FeatureNames[featBadLast]:     1,
		FeatureNames[featWrapped]:     1, // 1+4 posted into a 4-WR SRQ
		FeatureNames[featRearmed]:     1, // re-armed after the event
		FeatureNames[featRearmedSame]: 1, // with the value that fired
		FeatureNames[featResumed]:     1, // traffic after SQD -> RTS
	}, f.counts)
	assert.Len(t, FeatureNames, featNoQP+1, "a feature constant per name")
}

func TestEveryReportCountsFeatures(t *testing.T) {
	if testing.Short() {
		t.Skip("two full runs of 100 cases")
	}
	// The emulator, held to the documented profile: 100 random cases
	// reach every feature and every rule's check on any seed.
	for _, seed := range []uint64{1, 2} {
		rep, err := Check(context.Background(), emu.New(), drivers.Config{}, Options{Seed: seed, Cases: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range FeatureNames {
			assert.Positive(t, rep.Features[f], "seed %d: %s never reached", seed, f)
		}
		for _, r := range rep.Rules {
			if slices.Contains(model.ConcurrentOnly, r.Rule.ID) {
				continue // one thread cannot break it: package concurrent checks it
			}
			assert.Positive(t, r.Checks, "seed %d: rule %s never checked", seed, r.Rule.ID)
		}
	}
}

func mustCheck(t *testing.T, seed uint64) *Report {
	t.Helper()
	rep, err := Check(context.Background(), emu.New(), drivers.Config{}, Options{Cases: 100, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestCasesRunAsAsked: a run makes the random cases its options ask for,
// in a go test -short too (rapid, left alone, runs a fifth of them there).
func TestCasesRunAsAsked(t *testing.T) {
	rep, err := Check(context.Background(), emu.New(), drivers.Config{}, Options{Seed: 3, Cases: 7, Rules: []model.RuleID{model.RuleQPCreate}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.CasesRun != 7 {
		t.Errorf("Check(Cases: 7) ran %d random cases (short mode %v), want 7", rep.CasesRun, testing.Short())
	}
}
