package conformance

import (
	"context"
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
	f.observe(model.Poll{}, up, model.Observation{Events: []model.Event{{Type: model.EventSRQLimitReached, QP: -1}}})
	f.observe(model.Arm{Limit: 1}, up, ok)
	assert.Equal(t, map[string]int{
		FeatureNames[0]:  1, // traffic after the QP came back up
		FeatureNames[13]: 1, // 8 bytes into an 8-byte head WR
		FeatureNames[7]:  1, // refused mid-list
		FeatureNames[4]:  1, // ENOMEM
		FeatureNames[8]:  1, // refused last
		FeatureNames[5]:  1, // 1+4 posted into a 4-WR SRQ
		FeatureNames[3]:  1, // re-armed after the event
	}, f.counts)
}

func TestEveryReportCountsFeatures(t *testing.T) {
	// The emulator, held to the documented profile: the default run reaches
	// these features on any seed (the rest is issue 8's work).
	for _, seed := range []uint64{1, 2} {
		rep := mustCheck(t, seed)
		for _, f := range []string{FeatureNames[4], FeatureNames[6], FeatureNames[7], FeatureNames[13]} {
			assert.Positive(t, rep.Features[f], "seed %d: %s never reached", seed, f)
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
