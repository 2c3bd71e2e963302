package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// countingSRQ answers polls with nothing until its polls reach from, then
// with one completion, and counts the polls.
type countingSRQ struct {
	drivers.SRQ
	polls, from int
}

func (s *countingSRQ) PollCQ(int) ([]drivers.Completion, error) {
	s.polls++
	if s.from > 0 && s.polls == s.from {
		return []drivers.Completion{{WRID: 1}}, nil
	}
	return nil, nil
}

func (s *countingSRQ) PollEvents() ([]drivers.Event, error) { return nil, nil }

// TestSecondLooksStopOnceFutile: a device that lacks what the model
// expects gets maxFutileRechecks second looks in a run, then none; one
// whose completion comes during a second look is slow, not lacking, and
// keeps getting them.
func TestSecondLooksStopOnceFutile(t *testing.T) {
	want := model.Observation{Completions: []model.Completion{{WRID: 1}}}
	lacking := &countingSRQ{}
	x := &executor{srq: lacking, wait: time.Millisecond, recheck: 5 * time.Millisecond}
	var looked []bool
	for range maxFutileRechecks + 2 {
		x.short = true
		before := lacking.polls
		obs := model.Observation{BadWR: -1}
		if err := x.recheckPoll(context.Background(), model.Poll{}, want, &obs); err != nil {
			t.Fatalf("recheckPoll: %v", err)
		}
		looked = append(looked, lacking.polls > before)
	}
	for i, l := range looked {
		if l != (i < maxFutileRechecks) {
			t.Fatalf("second looks at a lacking device: %v; want the first %d only", looked, maxFutileRechecks)
		}
	}

	x.futile = 0
	for range maxFutileRechecks + 2 {
		slow := &countingSRQ{from: 2} // the first poll finds nothing, the second a completion
		x.srq, x.short = slow, true
		obs := model.Observation{BadWR: -1}
		if err := x.recheckPoll(context.Background(), model.Poll{}, want, &obs); err != nil {
			t.Fatalf("recheckPoll: %v", err)
		}
		if len(obs.Completions) != 1 || x.futile != 0 {
			t.Fatalf("second look at a slow device: %d completions, %d futile looks; want 1 and 0", len(obs.Completions), x.futile)
		}
	}
}
