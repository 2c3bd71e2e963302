package emu_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
)

func TestInfo(t *testing.T) {
	r := stdRig(t)
	got := r.dev.Info()
	want := drivers.Info{
		Name: "emu0", Provider: "emu", MaxSRQWR: 16384, MaxSRQSGE: 6, MaxQPWR: 16384, MaxSGE: 6, SRQResize: true,
		MaxMessage: 1 << 20, MaxUDMessage: 4096, UD: true,
		InjectSRQError: true, InjectSQE: true, PartialDelivery: true, Synchronous: true,
	}
	if got != want {
		t.Errorf("Info() = %+v, want %+v", got, want)
	}
	if n := emu.New().Name(); n != "emu" {
		t.Errorf("Name() = %q, want %q", n, "emu")
	}
}

func TestCreateSRQ(t *testing.T) {
	for _, tc := range []struct {
		attr    drivers.SRQAttr
		keys    int
		want    drivers.SRQAttr
		wantErr bool
	}{
		{attr: drivers.SRQAttr{MaxWR: 4, MaxSGE: 2}, keys: 4, want: drivers.SRQAttr{MaxWR: 4, MaxSGE: 2}},
		{attr: drivers.SRQAttr{MaxWR: 1, MaxSGE: 1}, want: drivers.SRQAttr{MaxWR: 1, MaxSGE: 1}},
		{attr: drivers.SRQAttr{MaxWR: 5, MaxSGE: 3, SRQLimit: 2}, keys: 1, want: drivers.SRQAttr{MaxWR: 5, MaxSGE: 3, SRQLimit: 2}},
		{attr: drivers.SRQAttr{MaxWR: 16384, MaxSGE: 6}, keys: 1, want: drivers.SRQAttr{MaxWR: 16384, MaxSGE: 6}},
		{attr: drivers.SRQAttr{MaxWR: 0, MaxSGE: 1}, wantErr: true},
		{attr: drivers.SRQAttr{MaxWR: 16385, MaxSGE: 1}, wantErr: true},
		{attr: drivers.SRQAttr{MaxWR: 4, MaxSGE: 0}, wantErr: true},
		{attr: drivers.SRQAttr{MaxWR: 4, MaxSGE: 7}, wantErr: true},
		{attr: drivers.SRQAttr{MaxWR: 4, MaxSGE: 1}, keys: -1, wantErr: true},
	} {
		t.Run(fmt.Sprintf("%+v/%d", tc.attr, tc.keys), func(t *testing.T) {
			dev, err := emu.New().Open(ctx, drivers.Config{})
			if err != nil {
				t.Fatalf("Open() = %v, want nil", err)
			}
			defer dev.Close()
			s, got, err := dev.CreateSRQ(ctx, tc.attr, tc.keys)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("CreateSRQ(%+v, %d) = %+v, nil; want an error", tc.attr, tc.keys, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("CreateSRQ(%+v, %d) = %+v, %v; want %+v, nil", tc.attr, tc.keys, got, err, tc.want)
			}
			// srq_limit at create does not arm.
			if a, e := s.Query(); a.SRQLimit != 0 || e != 0 {
				t.Errorf("Query() after create with srq_limit %d = %+v, %d; want limit 0, errno 0", tc.attr.SRQLimit, a, e)
			}
		})
	}
}

func TestCreateLimitDoesNotFire(t *testing.T) {
	r := newRig(t, drivers.SRQAttr{MaxWR: 4, MaxSGE: 1, SRQLimit: 4}, 1)
	q := r.qp(drivers.RC, drivers.RTS)
	r.postN(2)
	r.send(q, drivers.Send, 0)
	if ev := r.evStr(); ev != "[]" {
		t.Errorf("events after a fetch with srq_limit 4 given only at create = %s, want []", ev)
	}
}

func TestPost(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prefill int
		sges    []int // num_sge of each WR
		want    string
		posted  int // WQEs outstanding afterwards, prefill included
	}{
		{"one", 0, []int{2}, "0 -1", 1},
		{"num_sge 0", 0, []int{0}, "0 -1", 1},
		{"num_sge 1", 0, []int{1}, "0 -1", 1},
		{"num_sge above max_sge", 0, []int{3}, "22 0", 0},
		{"num_sge negative", 0, []int{-1}, "22 0", 0},
		{"prefix stays", 0, []int{1, 3, 1}, "22 1", 1},
		{"full", 2, []int{1}, "12 0", 2},
		{"full checked first", 2, []int{3}, "12 0", 2},
		{"fills then full", 0, []int{1, 1, 1}, "12 2", 2},
		{"empty list", 0, nil, "0 -1", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, drivers.SRQAttr{MaxWR: 2, MaxSGE: 2}, 4)
			if n := r.postN(tc.prefill); n != tc.prefill {
				t.Fatalf("prefill posted %d, want %d", n, tc.prefill)
			}
			var wrs []drivers.RecvWR
			for _, n := range tc.sges {
				sges := []drivers.SGE{{Length: 8, Key: 0}, {Length: 8, Key: 1}, {Length: 8, Key: 2}}
				wr := drivers.RecvWR{ID: r.nextID, NumSGE: n, SGEs: sges[:max(0, n)]}
				r.nextID++
				wrs = append(wrs, wr)
			}
			if got := r.post(wrs...); got != tc.want {
				t.Errorf("Post(num_sge %v) after %d posted = %s, want %s", tc.sges, tc.prefill, got, tc.want)
			}
			if got := r.drain(r.qp(drivers.RC, drivers.RTS)); len(got) != tc.posted {
				t.Errorf("WQEs outstanding after Post(num_sge %v) = %v, want %d", tc.sges, got, tc.posted)
			}
		})
	}
}

func TestPostDoesNotCheckKeys(t *testing.T) {
	r := stdRig(t)
	if err := r.srq.InvalidateKey(1); err != nil {
		t.Fatalf("InvalidateKey(1) = %v, want nil", err)
	}
	for _, k := range []int{1, 99, -1} {
		if got := r.post(r.wrs(1, drivers.SGE{Length: 8, Key: k})...); got != "0 -1" {
			t.Errorf("Post(SGE key %d, invalid) = %s, want 0 -1", k, got)
		}
	}
}

func TestPostCopies(t *testing.T) {
	r := stdRig(t)
	wrs := r.wrs(2, drivers.SGE{Length: 8, Key: 0})
	if got := r.post(wrs...); got != "0 -1" {
		t.Fatalf("Post() = %s, want 0 -1", got)
	}
	wrs[0].ID, wrs[0].SGEs[0].Length, wrs[1].NumSGE = 99, 1, 7
	q := r.qp(drivers.RC, drivers.RTS)
	r.send(q, drivers.Send, 8)
	r.send(q, drivers.Send, 8)
	if got, want := r.pollStr(), "[{id=1 st=0 op=0 len=8 qp=0} {id=2 st=0 op=0 len=8 qp=0}]"; got != want {
		t.Errorf("completions after scribbling the posted WRs = %s, want %s", got, want)
	}
}

func TestCapacity(t *testing.T) {
	for _, n := range []uint32{1, 3, 4, 5, 8, 100} {
		r := newRig(t, drivers.SRQAttr{MaxWR: n, MaxSGE: 1}, 1)
		if got := r.fill(); got != int(n) {
			t.Errorf("max_wr %d: posts accepted = %d, want %d", n, got, n)
		}
		// A slot frees at fetch, before the completion is polled.
		q := r.qp(drivers.RC, drivers.RTS)
		r.send(q, drivers.Send, 0)
		if got := r.fill(); got != 1 {
			t.Errorf("max_wr %d: posts accepted after one fetch, nothing polled = %d, want 1", n, got)
		}
	}
}

func TestQuery(t *testing.T) {
	r := newRig(t, drivers.SRQAttr{MaxWR: 5, MaxSGE: 3}, 1)
	if got := r.query(); got != "5 3 0 0" {
		t.Errorf("Query() = %s, want 5 3 0 0", got)
	}
	if e := r.srq.ModifyLimit(2); e != 0 {
		t.Fatalf("ModifyLimit(2) = %d, want 0", e)
	}
	if got := r.query(); got != "5 3 2 0" {
		t.Errorf("Query() after ModifyLimit(2) = %s, want 5 3 2 0", got)
	}
}

// limitStep is one step of a limit scenario.
type limitStep struct {
	op   string // "post N", "limit N", "fetch N", "resize N"
	want string // the verb's result, or the events after fetching
}

func runLimit(t *testing.T, r *rig, steps []limitStep) {
	t.Helper()
	q := r.qp(drivers.RC, drivers.RTS)
	for i, s := range steps {
		var verb string
		var n int
		if _, err := fmt.Sscanf(s.op, "%s %d", &verb, &n); err != nil {
			t.Fatalf("bad step %q", s.op)
		}
		var got string
		switch verb {
		case "post":
			got = fmt.Sprint(r.postN(n))
		case "limit":
			got = fmt.Sprint(r.srq.ModifyLimit(uint32(n)))
		case "resize":
			got = fmt.Sprint(r.srq.Resize(uint32(n)))
		case "fetch":
			for range n {
				r.send(q, drivers.Send, 0)
			}
			r.poll()
			got = r.evStr()
		case "query":
			a, _ := r.srq.Query()
			got = fmt.Sprint(a.SRQLimit)
		}
		if got != s.want {
			t.Errorf("step %d %q = %s, want %s", i, s.op, got, s.want)
		}
	}
}

func TestLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []limitStep
	}{
		{"disarm when not armed", []limitStep{{"limit 0", "0"}, {"query 0", "0"}}},
		{"above capacity", []limitStep{{"limit 3", "0"}, {"limit 9", "22"}, {"query 0", "3"}}},
		{"equal to capacity", []limitStep{{"limit 8", "0"}, {"query 0", "8"}}},
		{"fires below, once", []limitStep{
			{"post 4", "4"}, {"limit 3", "0"}, {"fetch 1", "[]"}, {"query 0", "3"},
			{"fetch 1", "[limit(-1)]"}, {"query 0", "0"}, {"fetch 2", "[]"},
		}},
		{"arming above the count waits for a fetch", []limitStep{
			{"post 1", "1"}, {"limit 3", "0"}, {"fetch 0", "[]"}, {"post 1", "1"}, {"fetch 1", "[limit(-1)]"},
		}},
		{"disarm", []limitStep{{"post 4", "4"}, {"limit 3", "0"}, {"limit 0", "0"}, {"query 0", "0"}, {"fetch 4", "[]"}}},
		{"rearm", []limitStep{
			{"post 4", "4"}, {"limit 4", "0"}, {"fetch 1", "[limit(-1)]"}, {"limit 3", "0"}, {"fetch 1", "[limit(-1)]"},
		}},
		{"fetch from empty does not fire", []limitStep{{"limit 2", "0"}, {"fetch 3", "[]"}, {"query 0", "2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runLimit(t, newRig(t, drivers.SRQAttr{MaxWR: 8, MaxSGE: 1}, 1), tc.steps)
		})
	}
}

func TestResize(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []limitStep
	}{
		{"zero", []limitStep{{"resize 0", "22"}}},
		{"above device max", []limitStep{{"resize 16385", "22"}, {"resize 16384", "0"}}},
		{"below outstanding", []limitStep{{"post 3", "3"}, {"resize 2", "22"}, {"post 9", "1"}}},
		{"to outstanding", []limitStep{{"post 3", "3"}, {"resize 3", "0"}, {"post 9", "0"}}},
		{"grow", []limitStep{{"post 4", "4"}, {"resize 8", "0"}, {"post 9", "4"}}},
		{"shrink", []limitStep{{"resize 2", "0"}, {"post 9", "2"}}},
		{"limit kept", []limitStep{{"limit 2", "0"}, {"resize 8", "0"}, {"query 0", "2"}}},
		{"below the armed limit", []limitStep{{"limit 3", "0"}, {"resize 2", "0"}, {"query 0", "3"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, drivers.SRQAttr{MaxWR: 4, MaxSGE: 1}, 1)
			runLimit(t, r, tc.steps)
		})
	}
}

func TestResizeKeepsOrder(t *testing.T) {
	r := stdRig(t)
	q := r.qp(drivers.RC, drivers.RTS)
	r.postN(4)
	r.send(q, drivers.Send, 0)
	r.send(q, drivers.Send, 0)
	r.poll()
	r.postN(2) // the ring has wrapped
	if e := r.srq.Resize(16); e != 0 {
		t.Fatalf("Resize(16) = %d, want 0", e)
	}
	if got, want := r.drain(q), []uint64{3, 4, 5, 6}; !slices.Equal(got, want) {
		t.Errorf("wr_ids fetched after Resize(16) = %v, want %v", got, want)
	}
	if got := r.query(); got != "16 2 0 0" {
		t.Errorf("Query() after Resize(16) = %s, want 16 2 0 0", got)
	}
}

func TestPostRecv(t *testing.T) {
	r := stdRig(t)
	q := r.qp(drivers.RC, drivers.RTS)
	if e, bad := q.PostRecv(r.wrs(1, sge64)[0]); e != 22 || bad != 0 {
		t.Errorf("PostRecv() = %d, %d; want 22, 0", e, bad)
	}
}

var allStates = []drivers.QPState{drivers.Reset, drivers.Init, drivers.RTR, drivers.RTS, drivers.SQD, drivers.SQE, drivers.Err}

func TestTransitions(t *testing.T) {
	legal := map[[2]drivers.QPState]bool{
		{drivers.Reset, drivers.Init}: true, {drivers.Init, drivers.Init}: true, {drivers.Init, drivers.RTR}: true,
		{drivers.RTR, drivers.RTS}: true, {drivers.RTS, drivers.RTS}: true, {drivers.RTS, drivers.SQD}: true,
		{drivers.SQD, drivers.SQD}: true, {drivers.SQD, drivers.RTS}: true, {drivers.SQE, drivers.RTS}: true,
	}
	for _, from := range allStates {
		for _, to := range allStates {
			want := 22
			if to == drivers.Reset || (to == drivers.Err && from != drivers.Reset) || legal[[2]drivers.QPState{from, to}] {
				want = 0
			}
			r := stdRig(t)
			q := r.qp(drivers.RC, from)
			if e := q.Modify(to); e != want {
				t.Errorf("Modify(%s) from %s = %d, want %d", to, from, e, want)
			}
		}
	}
	r := stdRig(t)
	q := r.qp(drivers.RC, drivers.Reset)
	if e := q.Modify(7); e != 22 {
		t.Errorf("Modify(7) = %d, want 22", e)
	}
	if e := q.Modify(drivers.RTR); e != 22 {
		t.Errorf("Modify(RTR) from RESET = %d, want 22", e)
	}
	if e := q.Modify(drivers.Init); e != 0 {
		t.Errorf("Modify(INIT) after a refused RESET->RTR = %d, want 0 (the QP stays in RESET)", e)
	}
}

func TestLastWQE(t *testing.T) {
	r := stdRig(t)
	q0 := r.qp(drivers.RC, drivers.RTS)
	q1 := r.qp(drivers.UD, drivers.Init)
	for _, st := range []drivers.QPState{drivers.Err, drivers.Err} {
		q0.Modify(st)
		q1.Modify(st)
	}
	if got := r.evStr(); got != "[lastwqe(0) lastwqe(1)]" {
		t.Errorf("events after Modify(ERR) twice on QPs 0 and 1 = %s, want [lastwqe(0) lastwqe(1)]", got)
	}
	q0.Modify(drivers.Reset)
	if got := r.evStr(); got != "[]" {
		t.Errorf("events after Modify(RESET) from ERR = %s, want []", got)
	}
}

// TestInjectSQE: a send error moves a QP in RTS to SQE and leaves one in
// any other state where it is, as a device would; it is no error to ask.
func TestInjectSQE(t *testing.T) {
	for _, st := range allStates {
		r := stdRig(t)
		q := r.qp(drivers.RC, st)
		if err := q.InjectSQE(); err != nil {
			t.Errorf("InjectSQE() from %s = %v, want nil", st, err)
		}
	}
	for st, next := range map[drivers.QPState]drivers.QPState{drivers.Reset: drivers.Init, drivers.Init: drivers.RTR} {
		r := stdRig(t)
		q := r.qp(drivers.RC, st)
		q.InjectSQE()
		if got := q.Modify(next); got != 0 {
			t.Errorf("Modify(%s) after InjectSQE() from %s = %d, want 0: the QP stays in %s", next, st, got, st)
		}
	}
	r := stdRig(t)
	q := r.qp(drivers.RC, drivers.RTS)
	q.InjectSQE()
	if got := q.Modify(drivers.SQD); got == 0 {
		t.Errorf("Modify(SQD) after InjectSQE() from RTS = 0, want EINVAL: the QP is in SQE")
	}
}

func TestDeliverByState(t *testing.T) {
	ops := []drivers.Opcode{drivers.Send, drivers.SendImm, drivers.WriteImm, drivers.Write, drivers.Read, drivers.CmpSwap, drivers.FetchAdd}
	for _, typ := range []drivers.QPType{drivers.RC, drivers.UD} {
		for _, st := range allStates {
			for _, op := range ops {
				r := stdRig(t)
				q := r.qp(typ, st)
				r.evStr()
				r.postN(1)
				fetches := st != drivers.Reset && st != drivers.Init && st != drivers.Err
				consumes := op <= drivers.WriteImm
				wantPeer, wantCQE := drivers.PeerStatus(0), 0
				switch {
				case !fetches && typ == drivers.RC:
					wantPeer = 2
				case fetches && consumes:
					wantCQE = 1
				}
				peer := r.send(q, op, 8)
				cs := r.poll()
				if peer != wantPeer || len(cs) != wantCQE {
					t.Errorf("type %d, %s: Deliver(opcode %d) = peer %d, %d completions; want peer %d, %d", typ, st, op, peer, len(cs), wantPeer, wantCQE)
				}
				if left := len(r.drain(r.qp(drivers.RC, drivers.RTS))); left != 1-wantCQE {
					t.Errorf("type %d, %s: WQEs left after Deliver(opcode %d) = %d, want %d", typ, st, op, left, 1-wantCQE)
				}
			}
		}
	}
}

func TestDeliverNoWQE(t *testing.T) {
	r := stdRig(t)
	rc := r.qp(drivers.RC, drivers.RTS)
	ud := r.qp(drivers.UD, drivers.RTS)
	if p := r.send(rc, drivers.Send, 1); p != 1 {
		t.Errorf("RC Deliver(Send) on an empty SRQ = peer %d, want 1 (RNR)", p)
	}
	if p := r.send(ud, drivers.Send, 1); p != 0 {
		t.Errorf("UD Deliver(Send) on an empty SRQ = peer %d, want 0", p)
	}
	if p := r.send(rc, drivers.WriteImm, 1); p != 1 {
		t.Errorf("RC Deliver(WriteImm) on an empty SRQ = peer %d, want 1 (RNR)", p)
	}
	if got := r.pollStr() + r.evStr(); got != "[][]" {
		t.Errorf("completions and events after delivering to an empty SRQ = %s, want [][]", got)
	}
}

func TestSRQError(t *testing.T) {
	r := stdRig(t)
	rc := r.qp(drivers.RC, drivers.RTS)
	ud := r.qp(drivers.UD, drivers.RTS)
	r.postN(1)
	if err := r.srq.InjectSRQError(); err != nil {
		t.Fatalf("InjectSRQError() = %v, want nil", err)
	}
	if got := r.evStr(); got != "[srqerr(-1)]" {
		t.Errorf("events after InjectSRQError() = %s, want [srqerr(-1)]", got)
	}
	if p := r.send(rc, drivers.Send, 1); p != 1 {
		t.Errorf("RC Deliver(Send) on an SRQ in error = peer %d, want 1", p)
	}
	if p := r.send(ud, drivers.Send, 1); p != 0 {
		t.Errorf("UD Deliver(Send) on an SRQ in error = peer %d, want 0", p)
	}
	if got := r.post(r.wrs(1, sge64)...); got != "0 -1" {
		t.Errorf("Post() on an SRQ in error = %s, want 0 -1", got)
	}
	// A message in parts meets the SRQ in error as a whole one does: the
	// first packet takes nothing, and the rest hears RNR.
	if err := rc.DeliverFirstPacket(ctx, drivers.Message{Len: 8}); err != nil {
		t.Errorf("DeliverFirstPacket() on an SRQ in error = %v, want nil", err)
	}
	if p, err := rc.DeliverRest(ctx); p != 1 || err != nil {
		t.Errorf("DeliverRest() on an SRQ in error = %d, %v; want 1, nil", p, err)
	}
	if got := r.pollStr(); got != "[]" {
		t.Errorf("completions from an SRQ in error = %s, want []", got)
	}
}

func TestReceive(t *testing.T) {
	s8 := drivers.SGE{Length: 8, Key: 0}
	for _, tc := range []struct {
		name    string
		typ     drivers.QPType
		sges    []drivers.SGE
		invalid []int
		op      drivers.Opcode
		n       uint32
		cqe     string
		peer    drivers.PeerStatus
		events  string
	}{
		{name: "fits exactly", sges: []drivers.SGE{{Length: 16}}, op: drivers.Send, n: 16, cqe: "[{id=1 st=0 op=0 len=16 qp=0}]"},
		{name: "two SGEs", sges: []drivers.SGE{s8, {Length: 8, Key: 1}}, op: drivers.Send, n: 16, cqe: "[{id=1 st=0 op=0 len=16 qp=0}]"},
		{name: "zero bytes", sges: []drivers.SGE{s8}, op: drivers.Send, n: 0, cqe: "[{id=1 st=0 op=0 len=0 qp=0}]"},
		{name: "send imm", sges: []drivers.SGE{s8}, op: drivers.SendImm, n: 4, cqe: "[{id=1 st=0 op=0 len=4 qp=0 imm=0xabc}]"},
		{name: "RC too large", sges: []drivers.SGE{s8}, op: drivers.Send, n: 9, cqe: "[{id=1 st=1 op=0 len=0 qp=0}]", peer: 2, events: "[lastwqe(0)]"},
		{name: "RC too large imm", sges: []drivers.SGE{s8}, op: drivers.SendImm, n: 9, cqe: "[{id=1 st=1 op=0 len=0 qp=0}]", peer: 2, events: "[lastwqe(0)]"},
		{name: "UD too large", typ: drivers.UD, sges: []drivers.SGE{{Length: 40}}, op: drivers.Send, n: 1, cqe: "[{id=1 st=1 op=0 len=0 qp=0}]"},
		{name: "UD GRH", typ: drivers.UD, sges: []drivers.SGE{{Length: 48}}, op: drivers.Send, n: 8, cqe: "[{id=1 st=0 op=0 len=48 qp=0}]"},
		{name: "length 0 holds 2^31", sges: []drivers.SGE{{Length: 0}}, op: drivers.Send, n: 1 << 20, cqe: "[{id=1 st=0 op=0 len=1048576 qp=0}]"},
		{name: "UD length 0", typ: drivers.UD, sges: []drivers.SGE{{Length: 0}}, op: drivers.Send, n: 4096, cqe: "[{id=1 st=0 op=0 len=4136 qp=0}]"},
		{name: "num_sge 0, 0 bytes", op: drivers.Send, n: 0, cqe: "[{id=1 st=0 op=0 len=0 qp=0}]"},
		{name: "num_sge 0, 1 byte", op: drivers.Send, n: 1, cqe: "[{id=1 st=1 op=0 len=0 qp=0}]", peer: 2, events: "[lastwqe(0)]"},
		{name: "bad key, untouched SGE", sges: []drivers.SGE{s8, {Length: 8, Key: 1}}, invalid: []int{1}, op: drivers.Send, n: 4, cqe: "[{id=1 st=4 op=0 len=0 qp=0}]", peer: 2, events: "[lastwqe(0)]"},
		{name: "bad key, 0 bytes", sges: []drivers.SGE{s8}, invalid: []int{0}, op: drivers.Send, n: 0, cqe: "[{id=1 st=4 op=0 len=0 qp=0}]", peer: 2, events: "[lastwqe(0)]"},
		{name: "key out of range", sges: []drivers.SGE{{Length: 8, Key: 9}}, op: drivers.Send, n: 1, cqe: "[{id=1 st=4 op=0 len=0 qp=0}]", peer: 2, events: "[lastwqe(0)]"},
		{name: "UD bad key", typ: drivers.UD, sges: []drivers.SGE{{Length: 64}}, invalid: []int{0}, op: drivers.Send, n: 1, cqe: "[{id=1 st=4 op=0 len=0 qp=0}]"},
		{name: "length before key", sges: []drivers.SGE{s8}, invalid: []int{0}, op: drivers.Send, n: 9, cqe: "[{id=1 st=1 op=0 len=0 qp=0}]", peer: 2, events: "[lastwqe(0)]"},
		{name: "write imm ignores SGEs", sges: []drivers.SGE{s8}, invalid: []int{0}, op: drivers.WriteImm, n: 100, cqe: "[{id=1 st=0 op=1 len=100 qp=0 imm=0xabc}]"},
		{name: "UD write imm", typ: drivers.UD, sges: []drivers.SGE{s8}, op: drivers.WriteImm, n: 100, cqe: "[{id=1 st=0 op=1 len=100 qp=0 imm=0xabc}]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := stdRig(t)
			q := r.qp(tc.typ, drivers.RTS)
			r.evStr()
			wr := r.wrs(1, tc.sges...)
			if got := r.post(wr...); got != "0 -1" {
				t.Fatalf("Post() = %s, want 0 -1", got)
			}
			for _, k := range tc.invalid {
				if err := r.srq.InvalidateKey(k); err != nil {
					t.Fatalf("InvalidateKey(%d) = %v", k, err)
				}
			}
			peer := r.send(q, tc.op, tc.n)
			cqe, ev := r.pollStr(), r.evStr()
			if tc.events == "" {
				tc.events = "[]"
			}
			if peer != tc.peer || cqe != tc.cqe || ev != tc.events {
				t.Errorf("Deliver(opcode %d, len %d) into SGEs %v = peer %d, CQ %s, events %s; want peer %d, CQ %s, events %s",
					tc.op, tc.n, tc.sges, peer, cqe, ev, tc.peer, tc.cqe, tc.events)
			}
			// After an error the RC QP is in ERR and drops what comes next.
			if tc.peer == 2 {
				r.postN(1)
				if p := r.send(q, drivers.Send, 0); p != 2 {
					t.Errorf("Deliver after the error = peer %d, want 2 (QP in ERR)", p)
				}
			}
		})
	}
}

func TestReceiveQPIndexAndFIFO(t *testing.T) {
	r := stdRig(t)
	r.qp(drivers.RC, drivers.RTS)
	q1 := r.qp(drivers.UD, drivers.RTS)
	q2 := r.qp(drivers.RC, drivers.RTS)
	r.postN(3)
	r.send(q2, drivers.Send, 1)
	r.send(q1, drivers.Send, 1)
	r.send(q2, drivers.SendImm, 1)
	want := "[{id=1 st=0 op=0 len=1 qp=2} {id=2 st=0 op=0 len=41 qp=1} {id=3 st=0 op=0 len=1 qp=2 imm=0xabc}]"
	if got := r.pollStr(); got != want {
		t.Errorf("completions = %s, want %s", got, want)
	}
}

func TestPayload(t *testing.T) {
	r := newRig(t, drivers.SRQAttr{MaxWR: 4, MaxSGE: 6}, 3)
	q := r.qp(drivers.RC, drivers.RTS)
	ud := r.qp(drivers.UD, drivers.RTS)
	sges := []drivers.SGE{{Length: 3, Key: 0}, {Length: 5, Key: 1}, {Length: 7, Key: 0}, {Length: 0, Key: 2}}
	r.post(r.wrs(2, sges...)...)
	if _, err := q.Deliver(ctx, drivers.Message{Opcode: drivers.Send, Len: 1000, Pattern: 250}); err != nil {
		t.Fatal(err)
	}
	if _, err := ud.Deliver(ctx, drivers.Message{Opcode: drivers.Send, Len: 4096, Pattern: 1}); err != nil {
		t.Fatal(err)
	}
	for _, c := range r.poll() {
		if c.Status != 0 || c.PayloadErr != "" {
			t.Errorf("completion %s, want success with the payload in place", cqeStr(c))
		}
	}
}

func TestPartialDelivery(t *testing.T) {
	msg := drivers.Message{Opcode: drivers.Send, Len: 8}
	t.Run("rest completes", func(t *testing.T) {
		r := newRig(t, drivers.SRQAttr{MaxWR: 4, MaxSGE: 1}, 1)
		q := r.qp(drivers.RC, drivers.RTS)
		r.postN(2)
		r.srq.ModifyLimit(2)
		if err := q.DeliverFirstPacket(ctx, msg); err != nil {
			t.Fatalf("DeliverFirstPacket() = %v, want nil", err)
		}
		if got := r.evStr() + r.pollStr(); got != "[limit(-1)][]" {
			t.Errorf("events and CQ after the first packet = %s, want [limit(-1)][]", got)
		}
		if err := q.DeliverFirstPacket(ctx, msg); err == nil {
			t.Errorf("a second DeliverFirstPacket() = nil, want an error")
		}
		if _, err := q.Deliver(ctx, msg); err == nil {
			t.Errorf("Deliver() while half delivered = nil error, want one")
		}
		if p, err := q.DeliverRest(ctx); p != 0 || err != nil {
			t.Errorf("DeliverRest() = %d, %v; want 0, nil", p, err)
		}
		if got := r.pollStr(); got != "[{id=1 st=0 op=0 len=8 qp=0}]" {
			t.Errorf("CQ after DeliverRest = %s, want [{id=1 st=0 op=0 len=8 qp=0}]", got)
		}
		// The rest of a message the QP never saw start is out of
		// sequence: an RC peer's send fails.
		if p, err := q.DeliverRest(ctx); p != 2 || err != nil {
			t.Errorf("DeliverRest() with nothing outstanding = %d, %v; want 2, nil", p, err)
		}
	})
	t.Run("rest too large", func(t *testing.T) {
		r := newRig(t, drivers.SRQAttr{MaxWR: 4, MaxSGE: 1}, 1)
		q := r.qp(drivers.RC, drivers.RTS)
		r.post(r.wrs(1, drivers.SGE{Length: 4})...)
		q.DeliverFirstPacket(ctx, msg)
		if p, err := q.DeliverRest(ctx); p != 2 || err != nil {
			t.Errorf("DeliverRest() = %d, %v; want 2, nil", p, err)
		}
		if got := r.pollStr() + r.evStr(); got != "[{id=1 st=1 op=0 len=0 qp=0}][lastwqe(0)]" {
			t.Errorf("CQ and events = %s, want [{id=1 st=1 op=0 len=0 qp=0}][lastwqe(0)]", got)
		}
	})
	t.Run("flush on ERR", func(t *testing.T) {
		r := stdRig(t)
		q := r.qp(drivers.RC, drivers.RTS)
		r.postN(1)
		q.DeliverFirstPacket(ctx, msg)
		q.Modify(drivers.Err)
		if got := r.pollStr() + r.evStr(); got != "[{id=1 st=5 op=0 len=0 qp=0}][lastwqe(0)]" {
			t.Errorf("CQ and events after Modify(ERR) while filling = %s, want [{id=1 st=5 op=0 len=0 qp=0}][lastwqe(0)]", got)
		}
		if p, err := q.DeliverRest(ctx); p != 2 || err != nil {
			t.Errorf("DeliverRest() after the flush = %d, %v; want 2, nil", p, err)
		}
	})
	t.Run("RESET discards", func(t *testing.T) {
		r := stdRig(t)
		q := r.qp(drivers.RC, drivers.RTS)
		r.postN(4)
		q.DeliverFirstPacket(ctx, msg)
		q.Modify(drivers.Reset)
		if got := r.pollStr() + r.evStr(); got != "[][]" {
			t.Errorf("CQ and events after Modify(RESET) while filling = %s, want [][]", got)
		}
		if n := r.fill(); n != 1 {
			t.Errorf("posts accepted after the filling WQE was discarded = %d, want 1", n)
		}
	})
	for _, tc := range []struct {
		name string
		typ  drivers.QPType
		st   drivers.QPState
		op   drivers.Opcode
		post int
	}{
		{"UD", drivers.UD, drivers.RTS, drivers.Send, 1},
		{"write imm", drivers.RC, drivers.RTS, drivers.WriteImm, 1},
	} {
		t.Run("refused/"+tc.name, func(t *testing.T) {
			r := stdRig(t)
			q := r.qp(tc.typ, tc.st)
			r.postN(tc.post)
			if err := q.DeliverFirstPacket(ctx, drivers.Message{Opcode: tc.op, Len: 1}); err == nil {
				t.Errorf("DeliverFirstPacket(opcode %d) on type %d in %s with %d posted = nil, want an error", tc.op, tc.typ, tc.st, tc.post)
			}
			if got := len(r.drain(r.qp(drivers.RC, drivers.RTS))); got != tc.post {
				t.Errorf("WQEs left after a refused DeliverFirstPacket = %d, want %d", got, tc.post)
			}
		})
	}
	// Where the QP takes no WQE, a message in parts is answered as a whole
	// one is: the first packet takes nothing, the rest hears the refusal.
	for _, tc := range []struct {
		name string
		st   drivers.QPState
		post int
		peer drivers.PeerStatus
	}{
		{"INIT", drivers.Init, 1, 2},
		{"ERR", drivers.Err, 1, 2},
		{"empty", drivers.RTS, 0, 1},
	} {
		t.Run("not taken/"+tc.name, func(t *testing.T) {
			r := stdRig(t)
			q := r.qp(drivers.RC, tc.st)
			r.postN(tc.post)
			if err := q.DeliverFirstPacket(ctx, drivers.Message{Opcode: drivers.Send, Len: 1}); err != nil {
				t.Errorf("DeliverFirstPacket in %s with %d posted = %v, want nil", tc.st, tc.post, err)
			}
			if p, err := q.DeliverRest(ctx); p != tc.peer || err != nil {
				t.Errorf("DeliverRest in %s with %d posted = %d, %v; want %d, nil", tc.st, tc.post, p, err, tc.peer)
			}
			if got := len(r.drain(r.qp(drivers.RC, drivers.RTS))); got != tc.post {
				t.Errorf("WQEs left after a first packet not taken = %d, want %d", got, tc.post)
			}
		})
	}
}

func TestPollCQMax(t *testing.T) {
	r := stdRig(t)
	q := r.qp(drivers.RC, drivers.RTS)
	r.postN(3)
	for range 3 {
		r.send(q, drivers.Send, 0)
	}
	for _, tc := range []struct{ max, want int }{{2, 2}, {5, 1}, {-1, 0}} {
		cs, err := r.srq.PollCQ(tc.max)
		if len(cs) != tc.want || err != nil {
			t.Errorf("PollCQ(%d) = %d completions, %v; want %d, nil", tc.max, len(cs), err, tc.want)
		}
	}
}

func TestInvalidateKey(t *testing.T) {
	r := stdRig(t)
	for _, k := range []int{-1, 4} {
		if err := r.srq.InvalidateKey(k); err == nil {
			t.Errorf("InvalidateKey(%d) with 4 keys = nil, want an error", k)
		}
	}
	for range 2 {
		if err := r.srq.InvalidateKey(3); err != nil {
			t.Errorf("InvalidateKey(3) = %v, want nil", err)
		}
	}
}

func TestDeliverRejectsBadMessages(t *testing.T) {
	r := stdRig(t)
	rc := r.qp(drivers.RC, drivers.RTS)
	ud := r.qp(drivers.UD, drivers.RTS)
	for _, tc := range []struct {
		q   drivers.QP
		msg drivers.Message
	}{
		{rc, drivers.Message{Opcode: 7}},
		{rc, drivers.Message{Len: 1<<20 + 1}},
		{ud, drivers.Message{Len: 4097}},
	} {
		if _, err := tc.q.Deliver(ctx, tc.msg); err == nil {
			t.Errorf("Deliver(%+v) = nil error, want one", tc.msg)
		}
	}
}

func TestClose(t *testing.T) {
	r := stdRig(t)
	q := r.qp(drivers.RC, drivers.RTS)
	for range 2 {
		if err := r.srq.Close(); err != nil {
			t.Errorf("SRQ Close() = %v, want nil", err)
		}
	}
	if got := r.post(r.wrs(1, sge64)...); got != "22 0" {
		t.Errorf("Post() after Close = %s, want 22 0", got)
	}
	if _, e := r.srq.Query(); e != 22 {
		t.Errorf("Query() after Close = errno %d, want 22", e)
	}
	if e := r.srq.ModifyLimit(1); e != 22 {
		t.Errorf("ModifyLimit(1) after Close = %d, want 22", e)
	}
	if e := r.srq.Resize(8); e != 22 {
		t.Errorf("Resize(8) after Close = %d, want 22", e)
	}
	if e := q.Modify(drivers.Err); e != 22 {
		t.Errorf("Modify(ERR) after Close = %d, want 22", e)
	}
	if e, _ := q.PostRecv(drivers.RecvWR{}); e != 22 {
		t.Errorf("PostRecv() after Close = %d, want 22", e)
	}
	errs := map[string]error{}
	_, errs["CreateQP"] = r.srq.CreateQP(ctx, drivers.RC)
	errs["InvalidateKey"] = r.srq.InvalidateKey(0)
	_, errs["PollCQ"] = r.srq.PollCQ(0)
	_, errs["PollEvents"] = r.srq.PollEvents()
	errs["InjectSRQError"] = r.srq.InjectSRQError()
	_, errs["Deliver"] = q.Deliver(ctx, drivers.Message{})
	errs["DeliverFirstPacket"] = q.DeliverFirstPacket(ctx, drivers.Message{})
	_, errs["DeliverRest"] = q.DeliverRest(ctx)
	errs["InjectSQE"] = q.InjectSQE()
	for name, err := range errs {
		if err == nil {
			t.Errorf("%s after Close = nil error, want one", name)
		}
	}
	for range 2 {
		if err := r.dev.Close(); err != nil {
			t.Errorf("device Close() = %v, want nil", err)
		}
	}
	if _, _, err := r.dev.CreateSRQ(ctx, drivers.SRQAttr{MaxWR: 1, MaxSGE: 1}, 0); err == nil {
		t.Errorf("CreateSRQ after device Close = nil error, want one")
	}
}

func TestDeviceCloseClosesSRQs(t *testing.T) {
	r := stdRig(t)
	if err := r.dev.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if _, err := r.srq.PollCQ(0); err == nil {
		t.Errorf("PollCQ after device Close = nil error, want one")
	}
	if err := r.srq.Close(); err != nil {
		t.Errorf("SRQ Close() after device Close = %v, want nil", err)
	}
}

func TestOpen(t *testing.T) {
	_, err := emu.New("no-such-thing").Open(ctx, drivers.Config{})
	if err == nil || !strings.Contains(err.Error(), `"no-such-thing"`) || !strings.Contains(err.Error(), "lifo") || !strings.Contains(err.Error(), "rxe") {
		t.Errorf("Open with deviation no-such-thing = %v, want an error naming it and listing the valid names", err)
	}
	_, err = emu.New().Open(ctx, drivers.Config{Options: map[string]string{"deviations": "lifo, bogus"}})
	if err == nil || !strings.Contains(err.Error(), `"bogus"`) {
		t.Errorf(`Open with Options["deviations"]="lifo, bogus" = %v, want an error naming bogus`, err)
	}
	for _, bad := range []emu.Switch{"lifo=3", "oversize-rc-status=x", "oversize-rc-status=256", "key-error-status=-1"} {
		if _, err := emu.New(bad).Open(ctx, drivers.Config{}); err == nil {
			t.Errorf("Open with deviation %q = nil error, want one", bad)
		}
	}
	if _, err := emu.New(emu.ErrnoNegative, emu.ErrnoMinusOne).Open(ctx, drivers.Config{}); err == nil {
		t.Errorf("Open with errno-negative and errno-minus-one = nil error, want one (they conflict)")
	}
	if _, err := emu.New().Open(ctx, drivers.Config{Device: "mlx5_0"}); err == nil {
		t.Errorf(`Open(Device "mlx5_0") = nil error, want one`)
	}
	if d, err := emu.New().Open(ctx, drivers.Config{Device: "emu0"}); err != nil {
		t.Errorf(`Open(Device "emu0") = %v, want nil`, err)
	} else {
		d.Close()
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := emu.New().Open(cctx, drivers.Config{}); err == nil {
		t.Errorf("Open with a cancelled context = nil error, want one")
	}
}

func TestOpenMerges(t *testing.T) {
	dev, err := emu.New(emu.LIFO).Open(ctx, drivers.Config{Options: map[string]string{"deviations": "siw,oversize-rc-status=7"}})
	if err != nil {
		t.Fatalf("Open = %v, want nil", err)
	}
	defer dev.Close()
	got := dev.(interface{ Switches() []string }).Switches()
	want := []string{"capacity-hidden", "empty-terminates", "errno-negative", "error-events", "key-error-status=21", "lifo", "limit-at-create", "limit-kept", "no-create-srq-ex", "no-last-wqe", "no-ud", "oversize-rc-status=7", "query-unsupported", "recv-caps-checked",
		"reject-zero-sge", "resize-unsupported", "sge-against-device", "zero-length-zero"}
	if !slices.Equal(got, want) {
		t.Errorf("Switches() = %v, want %v", got, want)
	}
	if info := dev.Info(); info.UD || info.SRQResize {
		t.Errorf("Info() with siw = %+v, want UD and SRQResize false", info)
	}
}

func TestCatalogueAndSets(t *testing.T) {
	kinds := map[emu.Switch]string{}
	for _, d := range emu.Catalogue() {
		if _, dup := kinds[d.Name]; dup {
			t.Errorf("Catalogue() lists %q twice", d.Name)
		}
		kinds[d.Name] = d.Kind
		if d.Kind != emu.KindBehaviour && d.Kind != emu.KindMutant && d.Kind != emu.KindRaceMutant || d.Rule == "" || d.Description == "" {
			t.Errorf("Catalogue() entry %+v: want kind behaviour or mutant, a rule and a description", d)
		}
		if dev, err := emu.New(d.Name).Open(ctx, drivers.Config{}); err != nil {
			t.Errorf("Open with catalogue name %q = %v, want nil", d.Name, err)
		} else {
			dev.Close()
		}
	}
	sets := emu.Sets()
	for _, name := range []string{"rxe", "rxe-6.1", "mlx5", "siw"} {
		set, ok := sets[name]
		if !ok {
			t.Errorf("Sets() has no %q", name)
		}
		for _, d := range set {
			base, _, _ := strings.Cut(string(d), "=")
			if kinds[emu.Switch(base)] != emu.KindBehaviour {
				t.Errorf("set %s holds %q, which is not a behaviour in the catalogue", name, d)
			}
		}
		dev, err := emu.New().Open(ctx, drivers.Config{Options: map[string]string{"deviations": name}})
		if err != nil {
			t.Errorf("Open with set %s = %v, want nil", name, err)
			continue
		}
		dev.Close()
	}
	if slices.Contains(sets["rxe-6.1"], emu.NoFlush) || !slices.Contains(sets["rxe"], emu.NoFlush) {
		t.Errorf("rxe-6.1 = %v, rxe = %v; want no-flush in rxe only", sets["rxe-6.1"], sets["rxe"])
	}
}
