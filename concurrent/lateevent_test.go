package concurrent

import (
	"testing"

	"github.com/srqconform/srqconform/model"
)

// TestALastWQEEventStillMissingIsWaitedFor: a QP that entered ERR more
// often than its LAST_WQE_REACHED events came is pending, on a device
// that raises the event at all; a device that never raised one is not
// waited for, nor is a QP whose events all came.
func TestALastWQEEventStillMissingIsWaitedFor(t *testing.T) {
	modify := func(qp int, st model.QPState) Operation {
		return Operation{Input: Input{Kind: KindModify, QP: qp, State: st}, Output: Output{BadWR: -1}}
	}
	last := func(qp int) Operation {
		return Operation{Input: Input{Kind: KindEvents}, Output: Output{BadWR: -1, Events: []model.Event{{Type: model.EventQPLastWQEReached, QP: qp}}}}
	}
	refused := modify(1, model.Err)
	refused.Output.Errno = 22
	for _, tc := range []struct {
		name   string
		perCli [][]Operation
		want   bool
	}{
		{"qp1 entered ERR twice, one event", [][]Operation{
			{modify(1, model.Err), modify(1, model.Reset), modify(1, model.Init), modify(1, model.Err)},
			{last(1)}}, true},
		{"every entry has its event", [][]Operation{
			{modify(1, model.Err), modify(1, model.Reset), modify(1, model.Err)},
			{last(1), last(1)}}, false},
		{"ERR to ERR is one entry", [][]Operation{
			{modify(1, model.Err), modify(1, model.Err)},
			{last(1)}}, false},
		{"a refused modify enters nothing", [][]Operation{
			{modify(0, model.Err), refused},
			{last(0)}}, false},
		{"a device that never raised the event", [][]Operation{
			{modify(0, model.Err)}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{perCli: tc.perCli}
			if got := r.lastWQEPending(); got != tc.want {
				t.Errorf("lastWQEPending() = %v, want %v", got, tc.want)
			}
		})
	}
}
