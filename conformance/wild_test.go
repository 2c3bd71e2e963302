package conformance

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// draws hands out the bytes of a fuzz input, one decision at a time;
// once they run out every decision is "leave it as it is".
type draws struct {
	mu sync.Mutex
	b  []byte
}

func (d *draws) byte() (byte, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.b) == 0 {
		return 0, false
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v, true
}

// chance says whether to perturb the next value: about one time in eight
// while bytes are left.
func (d *draws) chance() bool {
	v, ok := d.byte()
	return ok && v < 32
}

// u64 draws a value, most often one of the edges a device bug produces.
func (d *draws) u64() uint64 {
	v, _ := d.byte()
	edges := []uint64{0, 1, 2, 0xff, 0x7fffffff, 0x80000000, 0xffffffff, 1 << 32, 1<<63 - 1, 1 << 63, ^uint64(0)}
	if int(v) < len(edges) {
		return edges[v]
	}
	var raw [8]byte
	for i := range raw {
		raw[i], _ = d.byte()
	}
	return binary.LittleEndian.Uint64(raw[:]) >> (v % 64)
}

func (d *draws) u32() uint32 { return uint32(d.u64()) }

// int draws a signed value: an index, a count or an errno, negative too.
func (d *draws) int() int { return int(int32(d.u64())) }

func (d *draws) maybeU32(v *uint32) {
	if d.chance() {
		*v = d.u32()
	}
}

func (d *draws) maybeInt(v *int) {
	if d.chance() {
		*v = d.int()
	}
}

// wildDriver wraps a driver and perturbs, as d draws, every value its
// device reports: the device's limits, every return value, errno and
// bad_wr index, the peer's outcomes, and the fields and number of the
// completions and events it polls. It stands for a device with any bug.
type wildDriver struct {
	drivers.Driver
	d *draws
}

type wildDevice struct {
	drivers.Device
	d *draws
}

type wildSRQ struct {
	drivers.SRQ
	d *draws
}

type wildQP struct {
	drivers.QP
	d *draws
}

func (w wildDriver) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	dev, err := w.Driver.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return wildDevice{dev, w.d}, nil
}

// Info perturbs the device's own limits, less often than the rest (most
// wild limits stop the run before its first step). The limits the driver
// promises for its peer (MaxMessage and the like) are the driver's, not
// the device's: they stay.
func (w wildDevice) Info() drivers.Info {
	i := w.Device.Info()
	for _, v := range []*uint32{&i.MaxSRQWR, &i.MaxSRQSGE, &i.MaxQPWR, &i.MaxSGE} {
		if w.d.chance() && w.d.chance() {
			*v = w.d.u32()
		}
	}
	return i
}

func (w wildDevice) attr(a drivers.SRQAttr) drivers.SRQAttr {
	w.d.maybeU32(&a.MaxWR)
	w.d.maybeU32(&a.MaxSGE)
	w.d.maybeU32(&a.SRQLimit)
	return a
}

func (w wildDevice) CreateSRQ(ctx context.Context, a drivers.SRQAttr, keys int) (drivers.SRQ, drivers.SRQAttr, error) {
	s, got, err := w.Device.CreateSRQ(ctx, a, keys)
	if err != nil {
		return nil, got, err
	}
	return wildSRQ{s, w.d}, w.attr(got), nil
}

func (w wildDevice) CreateSRQEx(ctx context.Context, a drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQ, drivers.SRQAttr, error) {
	s, got, err := w.Device.CreateSRQEx(ctx, a, keys, v)
	if err != nil {
		return nil, got, err
	}
	return wildSRQ{s, w.d}, w.attr(got), nil
}

func (w wildSRQ) result(errno, bad int) (int, int) {
	w.d.maybeInt(&errno)
	w.d.maybeInt(&bad)
	return errno, bad
}

func (w wildSRQ) errno(e int) int {
	w.d.maybeInt(&e)
	return e
}

func (w wildSRQ) Post(wrs []drivers.RecvWR) (int, int) { return w.result(w.SRQ.Post(wrs)) }

func (w wildSRQ) Query() (drivers.SRQAttr, int) {
	a, e := w.SRQ.Query()
	return wildDevice{d: w.d}.attr(a), w.errno(e)
}

func (w wildSRQ) ModifyLimit(limit uint32) int { return w.errno(w.SRQ.ModifyLimit(limit)) }
func (w wildSRQ) Resize(maxWR uint32) int      { return w.errno(w.SRQ.Resize(maxWR)) }

func (w wildSRQ) CreateQP(ctx context.Context, t drivers.QPType) (drivers.QP, error) {
	q, err := w.SRQ.CreateQP(ctx, t)
	if err != nil {
		return nil, err
	}
	return wildQP{q, w.d}, nil
}

func (w wildSRQ) CreateQPCaps(ctx context.Context, t drivers.QPType, caps drivers.RecvCaps) (drivers.QP, int, error) {
	q, e, err := w.SRQ.CreateQPCaps(ctx, t, caps)
	if err != nil || q == nil {
		return q, w.errno(e), err
	}
	return wildQP{q, w.d}, w.errno(e), nil
}

func (w wildSRQ) CreateOther(a drivers.SRQAttr, v drivers.CreateVariant) (int, error) {
	e, err := w.SRQ.CreateOther(a, v)
	return w.errno(e), err
}

func (w wildSRQ) Destroy() (int, error) {
	e, err := w.SRQ.Destroy()
	return w.errno(e), err
}

func (w wildSRQ) PollCQ(max int) ([]drivers.Completion, error) {
	cs, err := w.SRQ.PollCQ(max)
	if err != nil {
		return cs, err
	}
	if w.d.chance() && len(cs) > 0 {
		cs = cs[:len(cs)-1] // one lost
	}
	if w.d.chance() {
		cs = append(cs, drivers.Completion{WRID: w.d.u64(), QP: w.d.int()}) // one made up
	}
	for i := range cs {
		c := &cs[i]
		if w.d.chance() {
			c.WRID = w.d.u64()
		}
		if w.d.chance() {
			c.Status = drivers.WCStatus(w.d.u32())
		}
		if w.d.chance() {
			c.Opcode = drivers.WCOpcode(w.d.u32())
		}
		w.d.maybeU32(&c.ByteLen)
		if w.d.chance() {
			c.HasImm = !c.HasImm
		}
		w.d.maybeU32(&c.Imm)
		w.d.maybeInt(&c.QP)
		if w.d.chance() {
			c.PayloadErr = "made up"
		}
	}
	return cs, nil
}

func (w wildSRQ) PollEvents() ([]drivers.Event, error) {
	es, err := w.SRQ.PollEvents()
	if err != nil {
		return es, err
	}
	if w.d.chance() && len(es) > 0 {
		es = es[1:]
	}
	if w.d.chance() {
		es = append(es, drivers.Event{Type: drivers.EventType(w.d.u32()), QP: w.d.int()})
	}
	for i := range es {
		if w.d.chance() {
			es[i].Type = drivers.EventType(w.d.u32())
		}
		w.d.maybeInt(&es[i].QP)
	}
	return es, nil
}

func (w wildQP) peer(p drivers.PeerStatus) drivers.PeerStatus {
	if w.d.chance() {
		return drivers.PeerStatus(w.d.u32())
	}
	return p
}

func (w wildQP) Modify(s drivers.QPState) int {
	e := w.QP.Modify(s)
	w.d.maybeInt(&e)
	return e
}

func (w wildQP) PostRecv(wr drivers.RecvWR) (int, int) {
	return wildSRQ{d: w.d}.result(w.QP.PostRecv(wr))
}

func (w wildQP) Deliver(ctx context.Context, m drivers.Message) (drivers.PeerStatus, error) {
	p, err := w.QP.Deliver(ctx, m)
	return w.peer(p), err
}

func (w wildQP) DeliverRest(ctx context.Context) (drivers.PeerStatus, error) {
	p, err := w.QP.DeliverRest(ctx)
	return w.peer(p), err
}

func (w wildQP) Destroy() (int, error) {
	e, err := w.QP.Destroy()
	w.d.maybeInt(&e)
	return e, err
}

// FuzzWildDevice runs the suite against the emulator with every value its
// device reports perturbed as the fuzz input says (wildDriver): whatever
// the device says, Check must neither panic nor run out of memory, and
// must return a report whose failures render.
func FuzzWildDevice(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 6, 0, 6, 0, 6, 0, 6})
	f.Add(bytes.Repeat([]byte{0, 9}, 64))
	f.Add(bytes.Repeat([]byte{1, 200, 3, 0, 10}, 40))
	f.Fuzz(wildOnce)
}

// wildOnce is FuzzWildDevice's property for one input.
func wildOnce(t *testing.T, in []byte) {
	rules := model.Rules()
	profiles := []model.Profile{model.Documented(), model.RXE(), model.SIW()}
	{
		d := &draws{b: in}
		head := func() int { v, _ := d.byte(); return int(v) }
		rule := rules[head()%len(rules)].ID
		opts := Options{Profile: profiles[head()%len(profiles)], Seed: uint64(head()) + 1, Cases: 1 - 2*(head()%2), Steps: 8,
			Rules: []model.RuleID{rule}, ShrinkTime: 200 * time.Millisecond}
		// The fuzzing engine takes an input that runs 10 s for a hung
		// one; a diagnosis on a busy machine can take that long. The run
		// is cut at 1 s: an interrupted run must still give its report.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rep, err := Check(ctx, wildDriver{emu.New(), d}, drivers.Config{}, opts)
		runtime.ReadMemStats(&after)
		if rep == nil {
			t.Fatalf("Check(rule %s) returned no report; error %v", rule, err)
		}
		if err != nil && rep.Error == "" && !rep.Interrupted {
			t.Errorf("Check(rule %s) returned %v with a report that says neither its error nor an interruption", rule, err)
		}
		if grew := int64(after.Sys) - int64(before.Sys); grew > 1<<30 {
			t.Errorf("Check(rule %s) took %d MiB more from the system, want under 1 GiB: a device value was used as a size", rule, grew>>20)
		}
		for _, fl := range rep.Failures {
			if fl.Trace.Text() == "" || len(fl.Trace.Steps) == 0 {
				t.Errorf("Check(rule %s): failure of %s has no counterexample", rule, fl.Rule)
			}
		}
		if _, err := json.Marshal(rep); err != nil {
			t.Errorf("Check(rule %s): the report does not encode: %v", rule, err)
		}
	}
}

// limitsDriver is the emulator reporting the device limits in info.
type limitsDriver struct {
	drivers.Driver
	srqWR, srqSGE uint32
}

type limitsDevice struct {
	drivers.Device
	srqWR, srqSGE uint32
}

func (l limitsDriver) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	dev, err := l.Driver.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return limitsDevice{dev, l.srqWR, l.srqSGE}, nil
}

func (l limitsDevice) Info() drivers.Info {
	i := l.Device.Info()
	i.MaxSRQWR, i.MaxSRQSGE = l.srqWR, l.srqSGE
	return i
}

// TestWildLimitsStopTheRunWithAReport: a max_srq_wr no device has (-1 as
// a C int) stops the run before its first step with a report naming it,
// and limits too small for a scenario make it n/a, not a harness error.
func TestWildLimitsStopTheRunWithAReport(t *testing.T) {
	rep, err := Check(context.Background(), limitsDriver{emu.New(), 0xffffffff, 6}, drivers.Config{}, Options{Cases: -1, Rules: []model.RuleID{model.RulePostFull}})
	if err == nil || rep == nil || !strings.Contains(rep.Error, "max_srq_wr = 4294967295 (as a C int, -1)") || rep.StepsRun != 0 {
		t.Errorf("Check(max_srq_wr 0xffffffff) = %v, report %+v; want a report, no step run, its Error naming the value", err, rep)
	}
	rep, err = Check(context.Background(), limitsDriver{emu.New(), 4, 1}, drivers.Config{}, Options{Cases: -1, Rules: []model.RuleID{model.RulePostBadWR}})
	if err != nil {
		t.Fatalf("Check(max_srq_wr 4, max_srq_sge 1) = %v, want scenarios too big for the device n/a", err)
	}
	for _, r := range rep.Rules {
		if r.Rule.ID == model.RulePostBadWR && (r.Status != NotApplicable || !strings.Contains(r.Reason, "max_srq_sge 1")) {
			t.Errorf("POST-BADWR (its scenario needs max_sge 2) is %s (%s), want n/a naming the device's limit", r.Status, r.Reason)
		}
	}
}
