package conformance

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestTheLibraryDefaultIsTheCommandsBudget: Check and Test with no case
// count and no duration run random cases for DefaultBudget, as srqconform
// run does on the emulator (issue 20, item 15: they ran 100 cases, which
// caught 30 of 43 unseen bug kinds where the budget caught 43).
func TestTheLibraryDefaultIsTheCommandsBudget(t *testing.T) {
	var o Options
	o.defaults()
	assert.Equal(t, DefaultBudget, o.Duration)
	assert.Zero(t, o.Cases, "a count would bound the budget")
	for _, tc := range []struct {
		in       Options
		cases    int
		duration time.Duration
	}{
		{Options{Cases: 7}, 7, 0},
		{Options{Cases: -1}, -1, 0},
		{Options{Duration: 3}, 0, 3},
		{Options{Cases: 7, Duration: 3}, 7, 3},
	} {
		o := tc.in
		o.defaults()
		assert.Equal(t, tc.cases, o.Cases, "%+v", tc.in)
		assert.EqualValues(t, tc.duration, o.Duration, "%+v", tc.in)
	}
}
