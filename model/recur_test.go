package model

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestADepartureThatDidNotComeAgainRefutesItsRule: a refused resize
// after a refused destroy, and a query reading the limit disarmed, fit
// a failed modify that touched the limit (MODIFY-ONLY-MASKED) as well as
// a refused destroy that did (DESTROY-BUSY). The device run without the
// destroy reaches the same state before the resize, and keeps the limit:
// the modify's departure did not come again, so MODIFY-ONLY-MASKED is
// refuted there. DESTROY-BUSY's own step is the one left out: nothing
// to take again. Run again whole, the trace keeps both.
func TestADepartureThatDidNotComeAgainRefutesItsRule(t *testing.T) {
	arm, destroy, resize := Arm{Limit: 1}, DestroySRQ{}, Resize{MaxWR: 0}
	wr := WR{ID: 1, NumSGE: 1, SGEs: []SGE{{Length: 64}}}
	steps := trace(t, []Op{post(wr), arm, destroy, resize, Query{}},
		map[int]Observation{4: {BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2}}})
	n := len(fixtureOps())
	d := Diagnose(Documented(), testCaps, nil, steps)
	require.Contains(t, d.Explains(), []RuleID{RuleModifyOnlyMasked}, "%+v", d)
	require.Contains(t, d.Explains(), []RuleID{RuleDestroyBusy}, "%+v", d)
	k, ok := DepartureStep(Documented(), testCaps, nil, steps, []RuleID{RuleModifyOnlyMasked}, nil)
	require.True(t, ok)
	require.Equal(t, n+4, k, "the refused resize departs")

	without := trace(t, []Op{post(wr), arm, resize, Query{}}, nil)
	before, ok := StateBefore(Documented(), testCaps, nil, steps, k, nil)
	require.True(t, ok)
	other, ok := StateBefore(Documented(), testCaps, nil, without, k-1, nil)
	require.True(t, ok)
	assert.Equal(t, before, other, "a refused destroy changes nothing the model holds")
	assert.False(t, DepartureRecurs(Documented(), testCaps, nil, steps, k, without, k-1, []RuleID{RuleModifyOnlyMasked}, nil),
		"the device kept the limit through the same resize from the same state")
	assert.True(t, DepartureRecurs(Documented(), testCaps, nil, steps, k, steps, k, []RuleID{RuleModifyOnlyMasked}, nil),
		"the trace itself takes its departure again")

	noArm := trace(t, []Op{post(wr), destroy, resize, Query{}}, nil)
	other, ok = StateBefore(Documented(), testCaps, nil, noArm, k-1, nil)
	require.True(t, ok)
	assert.NotEqual(t, before, other, "without the arm the state differs: nothing need come again")
}

// TestTheReplaysAroundADiagnosisStopAtTheClock: DepartureStep,
// StateBefore, DepartureRecurs and Consistent, given a Meter whose stop
// time for its Total has passed, take no step: the replay is not
// consistent, no state is known, and whether a departure recurs tells
// nothing. With the stop an hour away they answer as unbounded, and a
// Meter's Clock charges none of their work to the Meter itself.
func TestTheReplaysAroundADiagnosisStopAtTheClock(t *testing.T) {
	arm, destroy, resize := Arm{Limit: 1}, DestroySRQ{}, Resize{MaxWR: 0}
	wr := WR{ID: 1, NumSGE: 1, SGEs: []SGE{{Length: 64}}}
	steps := trace(t, []Op{post(wr), arm, destroy, resize, Query{}},
		map[int]Observation{4: {BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2}}})
	without := trace(t, []Op{post(wr), arm, resize, Query{}}, nil)
	masked := []RuleID{RuleModifyOnlyMasked}
	k, ok := DepartureStep(Documented(), testCaps, nil, steps, masked, nil)
	require.True(t, ok)

	run := NewMeter(Effort{Pairs: 1 << 40, Total: 1 << 40})
	run.StopAt(time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	ahead := run.Clock()
	got, ok := DepartureStep(Documented(), testCaps, nil, steps, masked, ahead)
	assert.True(t, ok)
	assert.Equal(t, k, got)
	_, ok = StateBefore(Documented(), testCaps, nil, steps, k, ahead)
	assert.True(t, ok)
	assert.False(t, DepartureRecurs(Documented(), testCaps, nil, steps, k, without, k-1, masked, ahead))
	assert.NoError(t, Consistent(Documented(), testCaps, masked, steps, ahead))
	assert.Error(t, Consistent(Documented(), testCaps, nil, steps, ahead), "the trace departs with nothing relaxed")
	assert.Zero(t, run.spent, "the clock's work is not the run's")
	assert.Positive(t, ahead.spent)

	run.StopAt(time.Time{}, time.Now().Add(-time.Second))
	past := run.Clock()
	_, ok = DepartureStep(Documented(), testCaps, nil, steps, masked, past)
	assert.False(t, ok, "no departure is found past the stop")
	_, ok = StateBefore(Documented(), testCaps, nil, steps, k, past)
	assert.False(t, ok, "no state is known past the stop")
	assert.True(t, DepartureRecurs(Documented(), testCaps, nil, steps, k, without, k-1, masked, past), "past the stop it tells nothing")
	assert.ErrorIs(t, Consistent(Documented(), testCaps, masked, steps, past), errDiagnosisEffort)
	assert.Nil(t, (*Meter)(nil).Clock())
}
