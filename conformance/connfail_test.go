package conformance

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// connFailDriver is the emulator whose QPs fail their failAt-th Modify to
// RTR with EIO, as the cgo driver's rdma_cm mode does when it cannot
// connect the peer; with blame set they say so through ConnectionErr.
type connFailDriver struct {
	drivers.Driver
	failAt int32
	blame  bool
}

type connFailDevice struct {
	drivers.Device
	d     *connFailDriver
	count *atomic.Int32
}

type connFailSRQ struct {
	drivers.SRQ
	dev *connFailDevice
}

type connFailQP struct {
	drivers.QP
	dev    *connFailDevice
	failed bool
}

func (d *connFailDriver) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	dev, err := d.Driver.Open(ctx, cfg)
	return &connFailDevice{Device: dev, d: d, count: new(atomic.Int32)}, err
}

func (d *connFailDevice) CreateSRQ(ctx context.Context, a drivers.SRQAttr, keys int) (drivers.SRQ, drivers.SRQAttr, error) {
	s, attr, err := d.Device.CreateSRQ(ctx, a, keys)
	if err != nil {
		return nil, attr, err
	}
	return connFailSRQ{s, d}, attr, nil
}

func (s connFailSRQ) CreateQP(ctx context.Context, t drivers.QPType) (drivers.QP, error) {
	q, _, err := s.CreateQPCaps(ctx, t, drivers.RecvCapsZero)
	return q, err
}

func (s connFailSRQ) CreateQPCaps(ctx context.Context, t drivers.QPType, c drivers.RecvCaps) (drivers.QP, int, error) {
	q, e, err := s.SRQ.CreateQPCaps(ctx, t, c)
	if q == nil || e != 0 || err != nil {
		return q, e, err
	}
	fq := &connFailQP{QP: q, dev: s.dev}
	if s.dev.d.blame {
		return connBlameQP{fq}, 0, nil
	}
	return fq, 0, nil
}

func (q *connFailQP) Modify(to drivers.QPState) int {
	q.failed = false
	if to == drivers.RTR && q.dev.count.Add(1) == q.dev.d.failAt {
		q.failed = true
		return 5 // EIO, and the QP stays where it was
	}
	return q.QP.Modify(to)
}

// connBlameQP adds ConnectionErr to connFailQP.
type connBlameQP struct{ *connFailQP }

func (q connBlameQP) ConnectionErr() error {
	if q.failed {
		return errors.New("rdma_connect returned 99 (after 5 attempts)")
	}
	return nil
}

// TestFailedConnectionIsAHarnessError: a Modify that fails because the
// driver could not make its connection (drivers.ConnectionFailer) stops
// the run with a harness error naming it, with the report of what ran
// before; it is not reported as the device refusing a legal transition
// (QP-TRANSITIONS), which is what the same EIO without the driver's word
// is.
func TestFailedConnectionIsAHarnessError(t *testing.T) {
	for _, blame := range []bool{true, false} {
		drv := &connFailDriver{Driver: emu.New(), failAt: 3, blame: blame}
		rep, err := Check(context.Background(), drv, drivers.Config{},
			Options{Profile: model.Documented(), Rules: []model.RuleID{model.RuleFetchFIFO, model.RuleRecvCompletion}, Cases: -1})
		if rep == nil {
			t.Fatalf("blame=%v: no report (err %v)", blame, err)
		}
		transitions := false
		for _, f := range rep.Failures {
			transitions = transitions || f.Rule == model.RuleQPTransitions
		}
		if blame {
			if err == nil || !strings.Contains(rep.Error, "the connection failed") || !strings.Contains(rep.Error, "rdma_connect returned 99") {
				t.Errorf("blame=true: Check err %v, Report.Error %q; want a harness error naming the failed connection", err, rep.Error)
			}
			if transitions {
				t.Errorf("blame=true: the failed connection was reported as a QP-TRANSITIONS deviation")
			}
			continue
		}
		if !transitions {
			t.Errorf("blame=false: an EIO from Modify to RTR with no word from the driver was not a QP-TRANSITIONS deviation (err %v, failures %d)", err, len(rep.Failures))
		}
	}
}
