package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestClonesShareTheirPastNotTheirFuture: a clone shares the history
// before it, and each copy's steps after it are its own; a deviation's
// diagnosis replays the history of the model it happened in.
func TestClonesShareTheirPastNotTheirFuture(t *testing.T) {
	m := fixture(t, Documented())
	before := m.history.len()
	c := m.Clone()
	mustRun(t, m, post(wr(1, 64)))
	mustRun(t, c, post(wr(2, 64), wr(3, 64)))
	mustRun(t, c, Poll{})
	assert.Equal(t, before+1, m.history.len(), "steps of the original")
	assert.Equal(t, before+2, c.history.len(), "steps of the clone")
	assert.Equal(t, m.history.steps()[:before], c.history.steps()[:before], "the shared past")
	assert.Equal(t, Post{WRs: []WR{wr(1, 64)}}, m.history.steps()[before].Op, "the original's own step")
	assert.Equal(t, Post{WRs: []WR{wr(2, 64), wr(3, 64)}}, c.history.steps()[before].Op, "the clone's own step")

	// A poll that claims a completion nothing can have made departs; its
	// diagnosis replays the original's steps, not the clone's.
	obs := Observation{Completions: []Completion{{WRID: 99, Status: WCSuccess, Opcode: WCRecv, QP: 0}}}
	err := m.Step(Poll{Max: 4}, obs)
	d, ok := err.(*Deviation)
	if !ok {
		t.Fatalf("Step(poll with a made-up completion) = %v, want a *Deviation", err)
	}
	assert.Equal(t, before+2, d.step, "the deviation's step")
	assert.Equal(t, before+2, len(d.diag.steps.steps()), "the steps its diagnosis replays")
}
