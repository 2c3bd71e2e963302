package emu_test

import (
	"fmt"
	"testing"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
)

func init() {
	probes = append(probes, []struct {
		dev      emu.Switch
		run      probe
		def, got string
	}{
		{emu.LastWQEOncePerQP, reviveToErr, "[lastwqe(0)] [lastwqe(0)]", "[lastwqe(0)] []"},
		{emu.RearmSameIgnored, limitSteps("post 4", "limit 2", "fetch 3", "post 3", "limit 2", "fetch 3"), "4 0 [limit(-1)] 3 0 [limit(-1)] query 0", "4 0 [limit(-1)] 3 0 [] query 0"},
		{emu.ResizeLimitMiscount, limitSteps("post 3", "resize 8", "limit 2", "fetch 1"), "3 0 0 [] query 2", "3 0 0 [limit(-1)] query 0"},
		{emu.WrapFullLate, wrapAndFill, "before 4 after 4", "before 4 after 5"},
		{emu.SQDAgainNoFetch, sqdTwice, "peer 0 [{id=1 st=0 op=0 len=8 qp=0}]", "peer 2 []"},
		{emu.ThirdQPWrongQP, threeQPs, "[{id=1 st=0 op=0 len=8 qp=0} {id=2 st=0 op=0 len=8 qp=1} {id=3 st=0 op=0 len=8 qp=2}]", "[{id=1 st=0 op=0 len=8 qp=0} {id=2 st=0 op=0 len=8 qp=1} {id=3 st=0 op=0 len=8 qp=0}]"},
	}...)
}

// reviveToErr moves a QP to ERR, brings it back up through RESET and moves
// it to ERR again, collecting the events after each ERR.
func reviveToErr(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	q := r.qp(drivers.RC, drivers.RTS)
	q.Modify(drivers.Err)
	first := r.evStr()
	for _, st := range []drivers.QPState{drivers.Reset, drivers.Init, drivers.RTR, drivers.RTS, drivers.Err} {
		q.Modify(st)
	}
	return first + " " + r.evStr()
}

// wrapAndFill fills a 4-deep SRQ and drains it twice, so that the ring
// (of 8 slots) wraps, and fills it again.
func wrapAndFill(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	q := r.qp(drivers.RC, drivers.RTS)
	before := r.fill()
	r.drain(q)
	r.fill()
	r.drain(q)
	return fmt.Sprintf("before %d after %d", before, r.fill())
}

// sqdTwice takes a QP RTS -> SQD -> RTS -> SQD and sends to it.
func sqdTwice(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	q := r.qp(drivers.RC, drivers.RTS)
	q.Modify(drivers.SQD)
	q.Modify(drivers.RTS)
	q.Modify(drivers.SQD)
	r.postN(1)
	p := r.send(q, drivers.Send, 8)
	return fmt.Sprintf("peer %d %s", p, r.pollStr())
}

// threeQPs has three QPs take one WR each.
func threeQPs(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	var qs []drivers.QP
	for range 3 {
		qs = append(qs, r.qp(drivers.RC, drivers.RTS))
	}
	r.postN(3)
	for _, q := range qs {
		r.send(q, drivers.Send, 8)
	}
	return r.pollStr()
}
