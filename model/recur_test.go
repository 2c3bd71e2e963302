package model

import (
	"testing"

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
	k, ok := DepartureStep(Documented(), testCaps, nil, steps, []RuleID{RuleModifyOnlyMasked})
	require.True(t, ok)
	require.Equal(t, n+4, k, "the refused resize departs")

	without := trace(t, []Op{post(wr), arm, resize, Query{}}, nil)
	before, ok := StateBefore(Documented(), testCaps, nil, steps, k)
	require.True(t, ok)
	other, ok := StateBefore(Documented(), testCaps, nil, without, k-1)
	require.True(t, ok)
	assert.Equal(t, before, other, "a refused destroy changes nothing the model holds")
	assert.False(t, DepartureRecurs(Documented(), testCaps, nil, steps, k, without, k-1, []RuleID{RuleModifyOnlyMasked}),
		"the device kept the limit through the same resize from the same state")
	assert.True(t, DepartureRecurs(Documented(), testCaps, nil, steps, k, steps, k, []RuleID{RuleModifyOnlyMasked}),
		"the trace itself takes its departure again")

	noArm := trace(t, []Op{post(wr), destroy, resize, Query{}}, nil)
	other, ok = StateBefore(Documented(), testCaps, nil, noArm, k-1)
	require.True(t, ok)
	assert.NotEqual(t, before, other, "without the arm the state differs: nothing need come again")
}
