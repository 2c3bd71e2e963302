package cgo

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// allocated returns the bytes f allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestWildByteLenAllocatesNothing: a receive completion reporting byte_len
// 0xffffffff (a real rxe length bug) is refused for what the WR's SGEs
// hold before anything is sized by it; it once allocated 4 GiB and killed
// the run.
func TestWildByteLenAllocatesNothing(t *testing.T) {
	places := []place{{0, 0, 100, 100}, {0, 128, 100, 100}}
	read := func(int, uint64, uint64) []byte {
		t.Fatal("checkPayload read the regions for a byte_len no WR can hold")
		return nil
	}
	var bad string
	grew := allocated(func() { _, bad = checkPayload(places, 0xffffffff, 0, read) })
	if !strings.Contains(bad, "byte_len 4294967295 but the WR's SGEs hold only 200 bytes") {
		t.Errorf("checkPayload(byte_len 0xffffffff) = %q, want it refused against the 200 bytes the SGEs hold", bad)
	}
	if grew > 1<<20 {
		t.Errorf("checkPayload(byte_len 0xffffffff) allocated %d bytes, want under 1 MiB", grew)
	}
}

// TestToCompletionChecksEveryField: each field of a work completion is
// checked before it is used, and a value out of its range reaches the
// suite as one the model rejects, not as a valid one.
func TestToCompletionChecksEveryField(t *testing.T) {
	qpOf := func(n uint32) (receiver, bool) { return receiver{0, drivers.RC}, n == 7 }
	noRead := func(int, uint64, uint64) []byte {
		t.Fatal("the regions were read for a completion that names no posted WR or no QP")
		return nil
	}
	for _, c := range []struct {
		name string
		w    wc
		want drivers.Completion
	}{
		{"status past the enum", wc{wrID: 1, status: 256, opcode: wcRecv, qpNum: 7}, drivers.Completion{WRID: 1, Status: unknownStatus, Opcode: 0, QP: 0}},
		{"last status", wc{wrID: 1, status: lastStatus, opcode: wcRecv, qpNum: 7}, drivers.Completion{WRID: 1, Status: lastStatus, Opcode: 0, QP: 0}},
		{"send opcode", wc{wrID: 1, opcode: 0, qpNum: 7}, drivers.Completion{WRID: 1, Opcode: unknownOpcode, QP: 0}},
		{"write with imm", wc{wrID: 1, opcode: wcRecvRDMAImm, flags: wcWithImm, imm: 9, qpNum: 7}, drivers.Completion{WRID: 1, Opcode: 1, HasImm: true, Imm: 9, QP: 0}},
		{"qp_num of no QP", wc{wrID: 2, opcode: wcRecv, byteLen: 0xffffffff, qpNum: 8}, drivers.Completion{WRID: 2, ByteLen: 0xffffffff, QP: -1}},
		{"wr_id never posted", wc{wrID: 99, opcode: wcRecv, byteLen: 0xffffffff, qpNum: 7}, drivers.Completion{WRID: 99, ByteLen: 0xffffffff, QP: 0}},
	} {
		posted := ledger{2: {{{0, 0, 8, 8}}}}
		if got := toCompletion(c.w, qpOf, posted, noRead); got != c.want {
			t.Errorf("%s: toCompletion(%+v) = %+v, want %+v", c.name, c.w, got, c.want)
		}
	}
	// A posted WR's layout is taken once: a second completion of it has
	// none to be checked against.
	posted := ledger{}
	posted.remember(5, []place{{0, 0, 8, 8}})
	posted.remember(5, []place{{0, 64, 4, 4}})
	posted.forget(5)
	read := func(_ int, off, n uint64) []byte {
		if off != 0 || n != 3 {
			t.Fatalf("read(off %d, n %d), want the first WR's SGE (off 0) for 3 bytes", off, n)
		}
		return []byte{4, 5, 6}
	}
	got := toCompletion(wc{wrID: 5, opcode: wcRecv, byteLen: 3, qpNum: 7}, qpOf, posted, read)
	if got.PayloadErr != "" || !got.HasPattern || got.Pattern != 4 {
		t.Errorf("toCompletion(a good receive) = %+v, want its payload read back with pattern 4", got)
	}
	if _, ok := posted.take(5); ok {
		t.Error("the ledger still holds wr_id 5 after its one outstanding WR completed")
	}
}

// wildLenDriver is the emulator whose first successful receive of a Send
// comes back through the cgo driver's completion path (toCompletion) with
// byte_len 0xffffffff, as a real rxe with a length bug reported it.
type wildLenDriver struct{ drivers.Driver }

type wildLenDevice struct{ drivers.Device }

type wildLenSRQ struct {
	drivers.SRQ
	mu     sync.Mutex
	posted ledger
	next   uint64 // offset of the next SGE in the fake region
	done   bool
}

func (d wildLenDriver) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	dev, err := d.Driver.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return wildLenDevice{dev}, nil
}

func (d wildLenDevice) CreateSRQ(ctx context.Context, a drivers.SRQAttr, keys int) (drivers.SRQ, drivers.SRQAttr, error) {
	s, got, err := d.Device.CreateSRQ(ctx, a, keys)
	if err != nil {
		return nil, got, err
	}
	return &wildLenSRQ{SRQ: s, posted: ledger{}}, got, nil
}

func (s *wildLenSRQ) Post(wrs []drivers.RecvWR) (int, int) {
	errno, bad := s.SRQ.Post(wrs)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, w := range wrs {
		if errno != 0 && i >= bad {
			break
		}
		var ps []place
		for _, g := range w.SGEs {
			ps = append(ps, place{g.Key, s.next, g.Length, stride(g.Length)})
			s.next += stride(g.Length)
		}
		s.posted.remember(w.ID, ps)
	}
	return errno, bad
}

func (s *wildLenSRQ) PollCQ(max int) ([]drivers.Completion, error) {
	cs, err := s.SRQ.PollCQ(max)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range cs {
		if s.done || c.Status != drivers.WCSuccess || c.Opcode != 0 {
			continue
		}
		s.done = true
		qpOf := func(n uint32) (receiver, bool) { return receiver{int(n), drivers.RC}, true }
		read := func(int, uint64, uint64) []byte { return nil }
		cs[i] = toCompletion(wc{wrID: c.WRID, opcode: wcRecv, byteLen: 0xffffffff, qpNum: uint32(c.QP)}, qpOf, s.posted, read)
	}
	return cs, err
}

// TestWildByteLenIsARecvCompletionFailure: through conformance.Check, the
// byte_len 0xffffffff of the cgo driver's completion path is a
// RECV-COMPLETION failure with its counterexample, not a crash, and the
// run allocates nothing near its size.
func TestWildByteLenIsARecvCompletionFailure(t *testing.T) {
	var rep *conformance.Report
	var err error
	grew := allocated(func() {
		rep, err = conformance.Check(context.Background(), wildLenDriver{emu.New()}, drivers.Config{},
			conformance.Options{Profile: model.Documented(), Rules: []model.RuleID{model.RuleRecvCompletion}, Cases: -1})
	})
	if err != nil {
		t.Fatalf("conformance.Check(a byte_len of 0xffffffff) = %v, want a report of its failure", err)
	}
	if grew > 1<<30 {
		t.Errorf("conformance.Check allocated %d MiB, want under 1 GiB: byte_len sized an allocation", grew>>20)
	}
	for _, f := range rep.Failures {
		if f.Rule != model.RuleRecvCompletion {
			continue
		}
		text := f.Trace.Text()
		if strings.Contains(text, "byte_len = 4294967295") {
			return
		}
		t.Errorf("the RECV-COMPLETION counterexample does not show byte_len 4294967295:\n%s", text)
	}
	t.Fatalf("conformance.Check: failures %+v, want one of RECV-COMPLETION showing byte_len 4294967295", rep.Failures)
}
