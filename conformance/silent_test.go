package conformance_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/conformance/render"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// slowPeerDriver is the emulator with a peer whose transport gives up
// before the receiver's answer comes back, as an RC peer's does on a busy
// machine: every Deliver the emulator answers with from is reported as
// as. With as PeerSilent it is a driver that tells silence apart; with as
// PeerError it is the cgo driver before it did (every status other than
// success and RNR was an error). Every delivery takes pause longer: with
// from and as equal, it is only a slow device.
type slowPeerDriver struct {
	drivers.Driver
	from, as drivers.PeerStatus
	pause    time.Duration
}

type slowPeerDevice struct {
	drivers.Device
	d *slowPeerDriver
}

type slowPeerSRQ struct {
	drivers.SRQ
	d *slowPeerDriver
}

type slowPeerQP struct {
	drivers.QP
	d *slowPeerDriver
}

func (d *slowPeerDriver) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	dev, err := d.Driver.Open(ctx, cfg)
	return slowPeerDevice{dev, d}, err
}

func (d slowPeerDevice) CreateSRQ(ctx context.Context, a drivers.SRQAttr, keys int) (drivers.SRQ, drivers.SRQAttr, error) {
	s, attr, err := d.Device.CreateSRQ(ctx, a, keys)
	if err != nil {
		return nil, attr, err
	}
	return slowPeerSRQ{s, d.d}, attr, nil
}

func (d slowPeerDevice) CreateSRQEx(ctx context.Context, a drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQ, drivers.SRQAttr, error) {
	s, attr, err := d.Device.CreateSRQEx(ctx, a, keys, v)
	if err != nil {
		return nil, attr, err
	}
	return slowPeerSRQ{s, d.d}, attr, nil
}

func (s slowPeerSRQ) CreateQP(ctx context.Context, t drivers.QPType) (drivers.QP, error) {
	q, err := s.SRQ.CreateQP(ctx, t)
	if err != nil {
		return nil, err
	}
	return slowPeerQP{q, s.d}, nil
}

func (s slowPeerSRQ) CreateQPCaps(ctx context.Context, t drivers.QPType, c drivers.RecvCaps) (drivers.QP, int, error) {
	q, errno, err := s.SRQ.CreateQPCaps(ctx, t, c)
	if q == nil || err != nil {
		return q, errno, err
	}
	return slowPeerQP{q, s.d}, errno, nil
}

func (q slowPeerQP) Deliver(ctx context.Context, msg drivers.Message) (drivers.PeerStatus, error) {
	time.Sleep(q.d.pause)
	p, err := q.QP.Deliver(ctx, msg)
	if err == nil && p == q.d.from {
		p = q.d.as
	}
	return p, err
}

func (q slowPeerQP) DeliverRest(ctx context.Context) (drivers.PeerStatus, error) {
	p, err := q.QP.DeliverRest(ctx)
	if err == nil && p == q.d.from {
		p = q.d.as
	}
	return p, err
}

// TestAPeerThatGaveUpIsNotTheDevicesError: when the peer's transport gives
// up before the receiver's RNR NAK comes back, the run has no failure: the
// steps are inconclusive, counted in the report and shown in every format.
// The same run with the silence reported as an error, as the cgo driver
// did before, fails RECV-RNR: this is the test that fails without the
// change.
func TestAPeerThatGaveUpIsNotTheDevicesError(t *testing.T) {
	opts := conformance.Options{Profile: model.Documented(), Seed: 7, Cases: 20}
	rep, err := conformance.Check(context.Background(), &slowPeerDriver{Driver: emu.New(), from: drivers.PeerRNR, as: drivers.PeerSilent}, drivers.Config{}, opts)
	if err != nil {
		t.Fatalf("Check with a silent peer: %v", err)
	}
	if len(rep.Failures) != 0 {
		t.Errorf("a silent peer gave %d failures, first on %s; want none", len(rep.Failures), rep.Failures[0].Rule)
	}
	if rep.Inconclusive == 0 || len(rep.InconclusiveAt) == 0 || !strings.Contains(rep.InconclusiveAt[0], "RECV-RNR") {
		t.Errorf("a silent peer: Inconclusive %d, InconclusiveAt %q; want RECV-RNR steps counted", rep.Inconclusive, rep.InconclusiveAt)
	}
	for _, r := range rep.Rules {
		if r.Status == conformance.Fail || r.Status == conformance.Blocked {
			t.Errorf("rule %s is %s with a silent peer; want neither fail nor blocked", r.Rule.ID, r.Status)
		}
	}
	for _, format := range render.Formats {
		var b bytes.Buffer
		if err := render.Write(&b, format, rep); err != nil {
			t.Fatalf("render %s: %v", format, err)
		}
		if !strings.Contains(strings.ToLower(b.String()), "inconclusive") {
			t.Errorf("the %s report does not show the inconclusive steps", format)
		}
	}

	// The emulator's own peer that gives up: the same.
	emuRep, err := conformance.Check(context.Background(), emu.New(emu.PeerGivesUp), drivers.Config{}, opts)
	if err != nil || len(emuRep.Failures) != 0 || emuRep.Inconclusive == 0 {
		t.Errorf("emulator with %s: err %v, %d failures, %d inconclusive; want no error, no failure, some inconclusive", emu.PeerGivesUp, err, len(emuRep.Failures), emuRep.Inconclusive)
	}

	old, err := conformance.Check(context.Background(), &slowPeerDriver{Driver: emu.New(), from: drivers.PeerRNR, as: drivers.PeerError}, drivers.Config{}, opts)
	if err != nil {
		t.Fatalf("Check with the silence reported as an error: %v", err)
	}
	failed := false
	for _, f := range old.Failures {
		failed = failed || f.Rule == model.RuleRecvRNR
	}
	if !failed || old.Inconclusive != 0 {
		t.Errorf("silence reported as the device's error: RECV-RNR failed %v, %d inconclusive; want it failed and none inconclusive", failed, old.Inconclusive)
	}
}

// TestASilentDropIsConsistent: a receiver that drops a message (a QP in
// ERR, RESET or INIT) answers nothing, so the peer's silence there is
// what the model allows wherever it allows an error, and no step is
// inconclusive.
func TestASilentDropIsConsistent(t *testing.T) {
	rep, err := conformance.Check(context.Background(), &slowPeerDriver{Driver: emu.New(), from: drivers.PeerError, as: drivers.PeerSilent}, drivers.Config{},
		conformance.Options{Profile: model.Documented(), Seed: 7, Cases: 20})
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if len(rep.Failures) != 0 || rep.Inconclusive != 0 {
		t.Errorf("silence in place of every peer error: %d failures, %d inconclusive (%q); want none of either", len(rep.Failures), rep.Inconclusive, rep.InconclusiveAt)
	}
}
