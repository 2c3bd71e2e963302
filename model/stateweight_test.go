package model

import "testing"

// TestStateWordsIsWhatHashStateWrites: stateWords counts the words
// appendState writes without picks, for states with WRs of several
// SGEs outstanding, completions in the CQ, messages pending before RTR
// and a deregistered key, so that a diagnosis's charge (stepWeight)
// follows the state's size; and stepWeight grows with it.
func TestStateWordsIsWhatHashStateWrites(t *testing.T) {
	m := fixture(t, Documented())
	mustRun(t, m, CreateQP{Type: RC})
	mustRun(t, m, ModifyQP{QP: 2, State: Init})
	check := func(what string) {
		t.Helper()
		for _, c := range m.cands {
			if got, want := 8*c.stateWords(), len(c.appendState(nil, false)); got != want {
				t.Fatalf("after %s: 8*stateWords() = %d, appendState wrote %d bytes", what, got, want)
			}
		}
	}
	check("the fixture")
	light := m.cands[0].stepWeight()
	mustRun(t, m, post(wr(1, 8, 8), wr(2, 16), wr(3)))
	check("a post")
	mustRun(t, m, send(0, 8))
	check("a message")
	mustRun(t, m, send(2, 4)) // qp2 in INIT: before RTR
	check("a message before RTR")
	mustRun(t, m, Invalidate{Key: 1})
	check("a dereg")
	mustRun(t, m, Poll{Max: 1})
	check("a poll")
	mustRun(t, m, Resize{MaxWR: 64})
	for i := range 40 {
		mustRun(t, m, post(wr(uint64(10+i), 4, 4)))
	}
	check("forty posts")
	if heavy := m.cands[0].stepWeight(); light != 1 || heavy < 2 {
		t.Errorf("stepWeight = %d on the fixture, %d with 40 WRs outstanding; want 1 and at least 2", light, heavy)
	}
}
