package emu_test

import (
	"fmt"
	"testing"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
)

// probe runs a short scenario on a fresh device with devs and describes
// what it observed.
type probe func(t *testing.T, devs ...emu.Switch) string

// probes holds, for every deviation, a scenario and what it shows without
// the deviation (def) and with it (dev).
var probes = []struct {
	dev      emu.Switch
	run      probe
	def, got string
}{
	// Behaviours.
	{emu.ErrnoNegative, overfill, "12 4", "-12 4"},
	{emu.ErrnoMinusOne, overfill, "12 4", "-1 4"},
	{emu.CheckSGEFirst, fullAndBadSGE, "12 0", "22 0"},
	{emu.SGEAgainstDevice, postSGEs(3), "22 0", "0 -1"},
	{emu.RejectZeroSGE, postSGEs(0), "0 -1", "22 0"},
	{emu.CapacityPow2, createAndFill(5), "attr 5 posted 5", "attr 7 posted 7"},
	{emu.CapacityHidden, createAndFill(5), "attr 5 posted 5", "attr 5 posted 8"},
	{emu.QueryTwice, queryAfterCreate, "5 2 0 0", "11 2 0 0"},
	{emu.QueryUnsupported, queryAfterCreate, "5 2 0 0", "0 0 0 95"},
	{emu.FreeAtPoll, freeAtPoll, "post 0, after poll 12", "post 12, after poll 0"},
	{emu.LimitAtCreate, limitAtCreate, "query 0 events []", "query 2 events [limit(-1)]"},
	{emu.LimitBoundStrict, limitSteps("limit 4"), "0 query 4", "22 query 0"},
	{emu.ArmFiresAtOnce, limitSteps("post 1", "limit 3", "events"), "1 0 [] query 3", "1 0 [limit(-1)] query 0"},
	{emu.LimitKept, limitSteps("post 4", "limit 3", "fetch 2", "fetch 1"), "4 0 [limit(-1)] [] query 0", "4 0 [limit(-1)] [] query 3"},
	{emu.ZeroLengthZero, receive(drivers.RC, drivers.Send, 10, drivers.SGE{Length: 0}), "peer 0 [{id=1 st=0 op=0 len=10 qp=0}] []", "peer 2 [{id=1 st=1 op=0 len=0 qp=0}] [lastwqe(0)]"},
	{emu.BufferBeforeRTR, bufferBeforeRTR, "peer 2 then []", "peer 0 then [{id=1 st=0 op=0 len=8 qp=0}]"},
	{emu.OversizeRCStatus.With(7), receive(drivers.RC, drivers.Send, 65, sge64), "peer 2 [{id=1 st=1 op=0 len=0 qp=0}] [lastwqe(0)]", "peer 2 [{id=1 st=7 op=0 len=0 qp=0}] [lastwqe(0)]"},
	{emu.OversizeRCStatus, receive(drivers.RC, drivers.Send, 65, sge64), "peer 2 [{id=1 st=1 op=0 len=0 qp=0}] [lastwqe(0)]", "peer 2 [{id=1 st=2 op=0 len=0 qp=0}] [lastwqe(0)]"},
	{emu.OversizeUDStatus, receive(drivers.UD, drivers.Send, 25, sge64), "peer 0 [{id=1 st=1 op=0 len=0 qp=0}] []", "peer 0 [{id=1 st=9 op=0 len=0 qp=0}] []"},
	{emu.OversizeUDStatus.With(2), receive(drivers.UD, drivers.Send, 25, sge64), "peer 0 [{id=1 st=1 op=0 len=0 qp=0}] []", "peer 0 [{id=1 st=2 op=0 len=0 qp=0}] []"},
	{emu.OversizeUDKills, receive(drivers.UD, drivers.Send, 25, sge64), "peer 0 [{id=1 st=1 op=0 len=0 qp=0}] []", "peer 0 [{id=1 st=1 op=0 len=0 qp=0}] [lastwqe(0)]"},
	{emu.KeyCheckTouched, badKey(drivers.RC, 8), "peer 2 [{id=1 st=4 op=0 len=0 qp=0}] [lastwqe(0)]", "peer 0 [{id=1 st=0 op=0 len=8 qp=0}] []"},
	{emu.KeyErrorStatus, badKey(drivers.RC, 40), "peer 2 [{id=1 st=4 op=0 len=0 qp=0}] [lastwqe(0)]", "peer 2 [{id=1 st=2 op=0 len=0 qp=0}] [lastwqe(0)]"},
	{emu.KeyErrorUDKills, badKey(drivers.UD, 8), "peer 0 [{id=1 st=4 op=0 len=0 qp=0}] []", "peer 0 [{id=1 st=4 op=0 len=0 qp=0}] [lastwqe(0)]"},
	{emu.ResizeUnsupported, resize8, "resize 0 advertised true", "resize 22 advertised false"},
	{emu.ResizeBelowLimitRejected, limitSteps("resize 8", "limit 4", "resize 3"), "0 0 0 query 4", "0 0 22 query 4"},
	{emu.NoLastWQE, toErr, "[{id=1 st=5 op=0 len=0 qp=0}] [lastwqe(0)]", "[{id=1 st=5 op=0 len=0 qp=0}] []"},
	{emu.FatalOnModify, toErr, "[{id=1 st=5 op=0 len=0 qp=0}] [lastwqe(0)]", "[{id=1 st=5 op=0 len=0 qp=0}] [event3(0) lastwqe(0)]"},
	{emu.NoFlush, toErr, "[{id=1 st=5 op=0 len=0 qp=0}] [lastwqe(0)]", "[] [lastwqe(0)]"},
	{emu.NoUD, createUD, "UD true, CreateQP(UD) ok", "UD false, CreateQP(UD) failed"},

	// Mutants.
	{emu.PostAllOrNothing, postPrefix, "22 2 then [1 2]", "22 2 then []"},
	{emu.BadWROffByOne, postPrefix, "22 2 then [1 2]", "22 3 then [1 2]"},
	{emu.CapacityOneShort, createAndFill(4), "attr 4 posted 4", "attr 4 posted 3"},
	{emu.CapacityOneOver, createAndFill(4), "attr 4 posted 4", "attr 4 posted 5"},
	{emu.SGEOffByOne, postSGEs(3), "22 0", "0 -1"},
	{emu.NegativeSGEAccepted, postSGEs(-1), "22 0", "0 -1"},
	{emu.KeepCallerWR, keepCaller, "[1]", "[99]"},
	{emu.PostRecvAccepted, postRecv, "22 0", "0 -1"},
	{emu.PostRecvBadWRNull, postRecv, "22 0", "22 -1"},
	{emu.PostRecvKills, postRecv, "22 0", "65544 0"},
	{emu.NegativeSGEKills, postSGEs(-1), "22 0", "65547 0"},
	{emu.LastWQEPerPacket, sendInErr, "[lastwqe(0)]", "[lastwqe(0) lastwqe(0) lastwqe(0) lastwqe(0) lastwqe(0) lastwqe(0)]"},
	{emu.CapacityPow2Unreported, createAndFill(5), "attr 5 posted 5", "attr 5 posted 7"},
	{emu.PostChecksKey, postInvalidKey, "0 -1", "22 0"},
	{emu.PostRefusedInErr, postWithQPInErr, "0 -1", "22 0"},
	{emu.CreateReportsLess, createAndFill(4), "attr 4 posted 4", "attr 3 posted 4"},
	{emu.QueryWrongSGE, queryAfterCreate, "5 2 0 0", "5 3 0 0"},
	{emu.QueryLimitStale, limitSteps("limit 2", "limit 3"), "0 0 query 3", "0 0 query 2"},
	{emu.LimitZeroKeeps, limitSteps("post 4", "limit 3", "limit 0", "fetch 2"), "4 0 0 [] query 0", "4 0 0 [limit(-1)] query 0"},
	{emu.LimitBoundMissing, limitSteps("limit 9"), "22 query 0", "0 query 9"},
	{emu.LimitAtEqual, limitSteps("post 4", "limit 2", "fetch 2"), "4 0 [] query 2", "4 0 [limit(-1)] query 0"},
	{emu.LimitNever, limitSteps("post 4", "limit 3", "fetch 4"), "4 0 [limit(-1)] query 0", "4 0 [] query 3"},
	{emu.LimitNotDisarmed, limitSteps("post 4", "limit 3", "fetch 3"), "4 0 [limit(-1)] query 0", "4 0 [limit(-1) limit(-1)] query 0"},
	{emu.LimitReadsArmed, limitSteps("post 4", "limit 3", "fetch 3"), "4 0 [limit(-1)] query 0", "4 0 [limit(-1) limit(-1)] query 3"},
	{emu.ResizeIgnoresCount, resizeBelowCount, "22 then [1 2 3 4]", "0 then [1 2]"},
	{emu.ResizeNoChange, limitSteps("resize 8", "post 9"), "0 8 query 0", "0 4 query 0"},
	{emu.ResizeClearsLimit, limitSteps("limit 2", "resize 8"), "0 0 query 2", "0 0 query 0"},
	{emu.ResizeAlwaysFails, resize8, "resize 0 advertised true", "resize 22 advertised true"},
	{emu.ResizeAcceptsZero, limitSteps("resize 0", "post 1"), "22 1 query 0", "0 0 query 0"},
	{emu.TransitionsLax, transitions, "RTS->RTR 22 RESET->RTR 22", "RTS->RTR 0 RESET->RTR 0"},
	{emu.InitFetches, deliverIn(drivers.Init), "peer 2 []", "peer 0 [{id=1 st=0 op=0 len=8 qp=0}]"},
	{emu.ErrFetches, deliverIn(drivers.Err), "peer 2 []", "peer 0 [{id=1 st=0 op=0 len=8 qp=0}]"},
	{emu.SQDNoFetch, deliverIn(drivers.SQD), "peer 0 [{id=1 st=0 op=0 len=8 qp=0}]", "peer 2 []"},
	{emu.SQENoFetch, deliverIn(drivers.SQE), "peer 0 [{id=1 st=0 op=0 len=8 qp=0}]", "peer 2 []"},
	{emu.LastWQETwice, toErr, "[{id=1 st=5 op=0 len=0 qp=0}] [lastwqe(0)]", "[{id=1 st=5 op=0 len=0 qp=0}] [lastwqe(0) lastwqe(0)]"},
	{emu.FlushSuccess, toErr, "[{id=1 st=5 op=0 len=0 qp=0}] [lastwqe(0)]", "[{id=1 st=0 op=0 len=8 qp=0}] [lastwqe(0)]"},
	{emu.SRQErrorFetches, srqError, "peer 1 [] [srqerr(-1)]", "peer 0 [{id=1 st=0 op=0 len=8 qp=0}] [srqerr(-1)]"},
	{emu.SRQErrorSilent, srqError, "peer 1 [] [srqerr(-1)]", "peer 1 [] []"},
	{emu.LIFO, fifo, "[1 2 3]", "[3 2 1]"},
	{emu.DoubleComplete, fifo, "[1 2 3]", "[1 2 3 3]"},
	{emu.WriteConsumes, receive(drivers.RC, drivers.Write, 8, sge64), "peer 0 [] []", "peer 0 [{id=1 st=0 op=1 len=8 qp=0}] []"},
	{emu.WriteImmNoConsume, receive(drivers.RC, drivers.WriteImm, 8, sge64), "peer 0 [{id=1 st=0 op=1 len=8 qp=0 imm=0xabc}] []", "peer 0 [] []"},
	{emu.WrongByteLen, receive(drivers.RC, drivers.Send, 8, sge64), "peer 0 [{id=1 st=0 op=0 len=8 qp=0}] []", "peer 0 [{id=1 st=0 op=0 len=64 qp=0}] []"},
	{emu.WrongQP, secondQP, "[{id=1 st=0 op=0 len=8 qp=1}]", "[{id=1 st=0 op=0 len=8 qp=0}]"},
	{emu.WRIDTruncated, highWRID, "[4294967297]", "[1]"},
	{emu.ImmDropped, receive(drivers.RC, drivers.SendImm, 8, sge64), "peer 0 [{id=1 st=0 op=0 len=8 qp=0 imm=0xabc}] []", "peer 0 [{id=1 st=0 op=0 len=8 qp=0}] []"},
	{emu.WriteImmScatters, receive(drivers.RC, drivers.WriteImm, 65, sge64), "peer 0 [{id=1 st=0 op=1 len=65 qp=0 imm=0xabc}] []", "peer 2 [{id=1 st=1 op=0 len=0 qp=0}] [lastwqe(0)]"},
	{emu.FitStrict, receive(drivers.RC, drivers.Send, 64, sge64), "peer 0 [{id=1 st=0 op=0 len=64 qp=0}] []", "peer 2 [{id=1 st=1 op=0 len=0 qp=0}] [lastwqe(0)]"},
	{emu.NumSGE0FitsOne, receive(drivers.RC, drivers.Send, 1), "peer 2 [{id=1 st=1 op=0 len=0 qp=0}] [lastwqe(0)]", "peer 0 [{id=1 st=0 op=0 len=1 qp=0 payload=0 bytes of the message landed, want 1}] []"},
	{emu.UDNoGRH, receive(drivers.UD, drivers.Send, 20, drivers.SGE{Length: 64}), "peer 0 [{id=1 st=0 op=0 len=60 qp=0}] []", "peer 0 [{id=1 st=0 op=0 len=20 qp=0}] []"},
	{emu.OversizeTruncates, receive(drivers.RC, drivers.Send, 65, sge64), "peer 2 [{id=1 st=1 op=0 len=0 qp=0}] [lastwqe(0)]", "peer 0 [{id=1 st=0 op=0 len=64 qp=0}] []"},
	{emu.OversizeRCSurvives, receive(drivers.RC, drivers.Send, 65, sge64), "peer 2 [{id=1 st=1 op=0 len=0 qp=0}] [lastwqe(0)]", "peer 2 [{id=1 st=1 op=0 len=0 qp=0}] []"},
	{emu.ErrorEvents, receive(drivers.RC, drivers.Send, 65, sge64), "peer 2 [{id=1 st=1 op=0 len=0 qp=0}] [lastwqe(0)]", "peer 2 [{id=1 st=1 op=0 len=0 qp=0}] [event3(0) lastwqe(0)]"},
	{emu.BadKeyIgnored, badKey(drivers.RC, 8), "peer 2 [{id=1 st=4 op=0 len=0 qp=0}] [lastwqe(0)]", "peer 0 [{id=1 st=0 op=0 len=8 qp=0}] []"},
	{emu.RNRSilent, rnr, "RC 1 UD 0", "RC 0 UD 0"},
	{emu.EmptyTerminates, rnr, "RC 1 UD 0", "RC 2 UD 0"},
	{emu.PeerGivesUp, rnr, "RC 1 UD 0", "RC 3 UD 0"},
	{emu.SlotLeak, slotLeak, "4 then 4", "4 then 3"},
	{emu.DestroyIgnoresQPs, destroyBusy, "16 then 0", "0 with a QP attached"},
	{emu.NoCreateSRQEx, createVariants, "ex 0 cq 0 bad type 22", "ex 0 cq 95 bad type 95"},
	{emu.CreateExBadTypeAccepted, createVariants, "ex 0 cq 0 bad type 22", "ex 0 cq 0 bad type 0"},
	{emu.CreateAboveMaxAccepted, createAtAndAbove, "at 0 above wr 22 above sge 22", "at 0 above wr 0 above sge 0"},
	{emu.CreateAtMaxRefused, createAtAndAbove, "at 0 above wr 22 above sge 22", "at 22 above wr 22 above sge 22"},
	{emu.RecvWRChecked, recvCaps, "wr 0 sge 0", "wr 22 sge 0"},
	{emu.RecvCapsChecked, recvCaps, "wr 0 sge 0", "wr 22 sge 22"},
	{emu.QPChecksRecvSGE, recvCaps, "wr 0 sge 0", "wr 0 sge 22"},
}

func TestDeviationsChangeBehaviour(t *testing.T) {
	for _, p := range probes {
		t.Run(string(p.dev), func(t *testing.T) {
			if p.def == p.got {
				t.Fatalf("probe for %s expects %q with and without it; it would show nothing", p.dev, p.def)
			}
			if got := p.run(t); got != p.def {
				t.Errorf("without deviations: %s, want %s", got, p.def)
			}
			if got := p.run(t, p.dev); got != p.got {
				t.Errorf("with %s: %s, want %s", p.dev, got, p.got)
			}
		})
	}
}

func TestEveryDeviationHasAProbe(t *testing.T) {
	have := map[emu.Switch]bool{}
	for _, p := range probes {
		have[p.dev] = true
	}
	for _, d := range emu.Catalogue() {
		if d.Kind == emu.KindRaceMutant {
			continue // invisible to one thread: package concurrent's tests catch them
		}
		if !have[d.Name] {
			t.Errorf("catalogue entry %s (%s) has no probe in TestDeviationsChangeBehaviour", d.Name, d.Kind)
		}
	}
}

// overfill posts 5 WRs onto a 4-deep SRQ.
func overfill(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	return r.post(r.wrs(5, sge64)...)
}

// fullAndBadSGE posts a WR with too many SGEs onto a full SRQ.
func fullAndBadSGE(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	r.fill()
	return r.post(r.wrs(1, sge64, sge64, sge64)...)
}

// postSGEs posts one WR with num_sge n on an SRQ with max_sge 2.
func postSGEs(n int) probe {
	return func(t *testing.T, devs ...emu.Switch) string {
		r := stdRig(t, devs...)
		sges := []drivers.SGE{sge64, sge64, sge64, sge64}
		return r.post(drivers.RecvWR{ID: 1, NumSGE: n, SGEs: sges[:max(0, n)]})
	}
}

// createAndFill creates an SRQ of max_wr n and posts until it is full.
func createAndFill(n uint32) probe {
	return func(t *testing.T, devs ...emu.Switch) string {
		r := newRig(t, drivers.SRQAttr{MaxWR: n, MaxSGE: 1}, 1, devs...)
		return fmt.Sprintf("attr %d posted %d", r.attr.MaxWR, r.fill())
	}
}

func queryAfterCreate(t *testing.T, devs ...emu.Switch) string {
	return newRig(t, drivers.SRQAttr{MaxWR: 5, MaxSGE: 2}, 1, devs...).query()
}

// freeAtPoll fills a 2-deep SRQ, receives one and posts before and after
// polling.
func freeAtPoll(t *testing.T, devs ...emu.Switch) string {
	r := newRig(t, drivers.SRQAttr{MaxWR: 2, MaxSGE: 1}, 1, devs...)
	q := r.qp(drivers.RC, drivers.RTS)
	r.fill()
	r.send(q, drivers.Send, 1)
	e1, _ := r.srq.Post(r.wrs(1, sge64))
	r.poll()
	e2, _ := r.srq.Post(r.wrs(1, sge64))
	return fmt.Sprintf("post %d, after poll %d", e1, e2)
}

func limitAtCreate(t *testing.T, devs ...emu.Switch) string {
	r := newRig(t, drivers.SRQAttr{MaxWR: 4, MaxSGE: 1, SRQLimit: 2}, 1, devs...)
	q := r.qp(drivers.RC, drivers.RTS)
	a, _ := r.srq.Query()
	r.postN(2)
	r.send(q, drivers.Send, 0)
	return fmt.Sprintf("query %d events %s", a.SRQLimit, r.evStr())
}

// limitSteps runs steps on a 4-deep SRQ: "post N" (how many were taken),
// "limit N", "resize N" (the verb's result), "fetch N" (the events after
// receiving N), "events"; it ends with the limit query reads.
func limitSteps(steps ...string) probe {
	return func(t *testing.T, devs ...emu.Switch) string {
		r := newRig(t, drivers.SRQAttr{MaxWR: 4, MaxSGE: 1}, 1, devs...)
		q := r.qp(drivers.RC, drivers.RTS)
		var out string
		for _, s := range steps {
			var verb string
			var n int
			fmt.Sscanf(s, "%s %d", &verb, &n)
			switch verb {
			case "post":
				out += fmt.Sprint(r.postN(n))
			case "limit":
				out += fmt.Sprint(r.srq.ModifyLimit(uint32(n)))
			case "resize":
				out += fmt.Sprint(r.srq.Resize(uint32(n)))
			case "fetch":
				for range n {
					r.send(q, drivers.Send, 0)
				}
				r.poll()
				out += r.evStr()
			case "events":
				out += r.evStr()
			default:
				t.Fatalf("bad step %q", s)
			}
			out += " "
		}
		a, _ := r.srq.Query()
		return out + fmt.Sprintf("query %d", a.SRQLimit)
	}
}

// receive posts one WR with sges, delivers (op, n) on a fresh QP of typ in
// RTS and describes the peer status, completions and events.
func receive(typ drivers.QPType, op drivers.Opcode, n uint32, sges ...drivers.SGE) probe {
	return func(t *testing.T, devs ...emu.Switch) string {
		r := stdRig(t, devs...)
		q := r.qp(typ, drivers.RTS)
		r.post(r.wrs(1, sges...)...)
		p := r.send(q, op, n)
		return fmt.Sprintf("peer %d %s %s", p, r.pollStr(), r.evStr())
	}
}

// badKey receives n bytes into a WQE of two 64-byte SGEs whose second key
// is invalid.
func badKey(typ drivers.QPType, n uint32) probe {
	return func(t *testing.T, devs ...emu.Switch) string {
		r := stdRig(t, devs...)
		q := r.qp(typ, drivers.RTS)
		r.post(r.wrs(1, drivers.SGE{Length: 64, Key: 0}, drivers.SGE{Length: 64, Key: 1})...)
		r.srq.InvalidateKey(1)
		p := r.send(q, drivers.Send, n)
		return fmt.Sprintf("peer %d %s %s", p, r.pollStr(), r.evStr())
	}
}

func bufferBeforeRTR(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	q := r.qp(drivers.RC, drivers.Init)
	r.postN(1)
	p := r.send(q, drivers.Send, 8)
	q.Modify(drivers.RTR)
	return fmt.Sprintf("peer %d then %s", p, r.pollStr())
}

func resize8(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	return fmt.Sprintf("resize %d advertised %v", r.srq.Resize(8), r.dev.Info().SRQResize)
}

// toErr moves an RC QP to ERR while it fills a WQE with an 8-byte Send.
func toErr(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	q := r.qp(drivers.RC, drivers.RTS)
	r.postN(1)
	if err := q.DeliverFirstPacket(ctx, drivers.Message{Opcode: drivers.Send, Len: 8}); err != nil {
		t.Fatalf("DeliverFirstPacket() = %v, want nil", err)
	}
	before := r.pollStr()
	q.Modify(drivers.Err)
	return fmt.Sprintf("%s %s %s", before, r.pollStr(), r.evStr())[3:]
}

// sendInErr sends to an RC QP in ERR, then modifies it to ERR again.
func sendInErr(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	q := r.qp(drivers.RC, drivers.RTS)
	q.Modify(drivers.Err)
	r.send(q, drivers.Send, 8)
	r.send(q, drivers.Send, 8)
	q.Modify(drivers.Err)
	return r.evStr()
}

func createUD(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	_, err := r.srq.CreateQP(ctx, drivers.UD)
	res := "ok"
	if err != nil {
		res = "failed"
	}
	return fmt.Sprintf("UD %v, CreateQP(UD) %s", r.dev.Info().UD, res)
}

// postPrefix posts [ok, ok, num_sge 9, ok] and drains.
func postPrefix(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	wrs := r.wrs(4, sge64)
	wrs[2].NumSGE = 9
	res := r.post(wrs...)
	return fmt.Sprintf("%s then %v", res, r.drain(r.qp(drivers.RC, drivers.RTS)))
}

func keepCaller(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	wrs := r.wrs(1, sge64)
	r.post(wrs...)
	wrs[0].ID = 99
	return fmt.Sprint(r.drain(r.qp(drivers.RC, drivers.RTS)))
}

func postRecv(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	e, bad := r.qp(drivers.RC, drivers.RTS).PostRecv(r.wrs(1, sge64)[0])
	return fmt.Sprintf("%d %d", e, bad)
}

func postInvalidKey(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	r.srq.InvalidateKey(1)
	return r.post(r.wrs(1, drivers.SGE{Length: 8, Key: 1})...)
}

func postWithQPInErr(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	r.qp(drivers.RC, drivers.Err)
	return r.post(r.wrs(1, sge64)...)
}

// resizeBelowCount fills a 4-deep SRQ, resizes to 2 and drains.
func resizeBelowCount(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	r.fill()
	e := r.srq.Resize(2)
	return fmt.Sprintf("%d then %v", e, r.drain(r.qp(drivers.RC, drivers.RTS)))
}

func transitions(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	a := r.qp(drivers.RC, drivers.RTS).Modify(drivers.RTR)
	b := r.qp(drivers.RC, drivers.Reset).Modify(drivers.RTR)
	return fmt.Sprintf("RTS->RTR %d RESET->RTR %d", a, b)
}

// deliverIn delivers an 8-byte Send to an RC QP in st.
func deliverIn(st drivers.QPState) probe {
	return func(t *testing.T, devs ...emu.Switch) string {
		r := stdRig(t, devs...)
		q := r.qp(drivers.RC, st)
		r.postN(1)
		p := r.send(q, drivers.Send, 8)
		return fmt.Sprintf("peer %d %s", p, r.pollStr())
	}
}

// srqError puts the SRQ in error with one WQE posted and delivers to RC.
func srqError(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	q := r.qp(drivers.RC, drivers.RTS)
	r.postN(1)
	r.srq.InjectSRQError()
	p := r.send(q, drivers.Send, 8)
	return fmt.Sprintf("peer %d %s %s", p, r.pollStr(), r.evStr())
}

// fifo posts three WRs and drains them.
func fifo(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	r.postN(3)
	return fmt.Sprint(r.drain(r.qp(drivers.RC, drivers.RTS)))
}

func secondQP(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	r.qp(drivers.RC, drivers.RTS)
	q := r.qp(drivers.RC, drivers.RTS)
	r.postN(1)
	r.send(q, drivers.Send, 8)
	return r.pollStr()
}

// highWRID receives into a WR whose wr_id has bits above 32 and returns the
// completion's wr_id.
func highWRID(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	q := r.qp(drivers.RC, drivers.RTS)
	wr := drivers.RecvWR{ID: 1<<32 + 1, NumSGE: 1, SGEs: []drivers.SGE{sge64}}
	r.post(wr)
	r.send(q, drivers.Send, 8)
	var ids []uint64
	cs, _ := r.srq.PollCQ(0)
	for _, c := range cs {
		ids = append(ids, c.WRID)
	}
	return fmt.Sprint(ids)
}

func rnr(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	a := r.send(r.qp(drivers.RC, drivers.RTS), drivers.Send, 1)
	b := r.send(r.qp(drivers.UD, drivers.RTS), drivers.Send, 1)
	return fmt.Sprintf("RC %d UD %d", a, b)
}

// slotLeak fills a 4-deep SRQ, drains it and fills it again.
func slotLeak(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	n := r.fill()
	r.drain(r.qp(drivers.RC, drivers.RTS))
	return fmt.Sprintf("%d then %d", n, r.fill())
}

// destroyBusy destroys the SRQ with a QP in RESET attached, then again
// after destroying the QP.
func destroyBusy(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	q := r.qp(drivers.RC, drivers.Reset)
	busy, err := r.srq.Destroy()
	if err != nil {
		t.Fatalf("Destroy() with a QP attached = %v, want nil error", err)
	}
	if busy == 0 {
		return "0 with a QP attached"
	}
	if e, err := q.Destroy(); e != 0 || err != nil {
		t.Fatalf("QP Destroy() = %d, %v, want 0, nil", e, err)
	}
	gone, err := r.srq.Destroy()
	if err != nil {
		t.Fatalf("Destroy() with no QP = %v, want nil error", err)
	}
	return fmt.Sprintf("%d then %d", busy, gone)
}

// createOther is the errno of creating another SRQ with attr the way v says.
func (r *rig) createOther(attr drivers.SRQAttr, v drivers.CreateVariant) int {
	r.t.Helper()
	e, err := r.srq.CreateOther(attr, v)
	if err != nil {
		r.t.Fatalf("CreateOther(%+v, %d) = %v, want nil error", attr, v, err)
	}
	return e
}

// createVariants creates another SRQ through each ibv_create_srq_ex variant.
func createVariants(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	a := drivers.SRQAttr{MaxWR: 4, MaxSGE: 1}
	return fmt.Sprintf("ex %d cq %d bad type %d", r.createOther(a, drivers.CreateEx), r.createOther(a, drivers.CreateExCQ), r.createOther(a, drivers.CreateExBadType))
}

// createAtAndAbove creates another SRQ at the device's limits and one over
// each.
func createAtAndAbove(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	i := r.dev.Info()
	return fmt.Sprintf("at %d above wr %d above sge %d",
		r.createOther(drivers.SRQAttr{MaxWR: i.MaxSRQWR, MaxSGE: i.MaxSRQSGE}, drivers.CreatePlain),
		r.createOther(drivers.SRQAttr{MaxWR: i.MaxSRQWR + 1, MaxSGE: 1}, drivers.CreatePlain),
		r.createOther(drivers.SRQAttr{MaxWR: 5, MaxSGE: i.MaxSRQSGE + 1}, drivers.CreatePlain))
}

// recvCaps creates QPs with receive caps above the device's limits.
func recvCaps(t *testing.T, devs ...emu.Switch) string {
	r := stdRig(t, devs...)
	create := func(c drivers.RecvCaps) int {
		q, e, err := r.srq.CreateQPCaps(ctx, drivers.RC, c)
		if err != nil || (q == nil) != (e != 0) {
			t.Fatalf("CreateQPCaps(RC, %d) = %v, %d, %v, want a QP or an errno", c, q, e, err)
		}
		return e
	}
	return fmt.Sprintf("wr %d sge %d", create(drivers.RecvCapsAboveWR), create(drivers.RecvCapsAboveSGE))
}

func TestSetsPlayTheirDrivers(t *testing.T) {
	for _, tc := range []struct {
		set  string
		run  probe
		want string
	}{
		{"rxe", createAndFill(5), "attr 7 posted 7"},
		{"rxe", receive(drivers.RC, drivers.Send, 65, sge64), "peer 2 [{id=1 st=2 op=0 len=0 qp=0}] [lastwqe(0)]"},
		{"rxe", receive(drivers.UD, drivers.Send, 25, sge64), "peer 0 [{id=1 st=9 op=0 len=0 qp=0}] []"},
		{"rxe", toErr, "[] [lastwqe(0)]"},
		{"rxe", limitAtCreate, "query 2 events [limit(-1)]"},
		{"rxe-6.1", receive(drivers.UD, drivers.Send, 25, sge64), "peer 0 [{id=1 st=2 op=0 len=0 qp=0}] []"},
		{"rxe-6.1", toErr, "[{id=1 st=5 op=0 len=0 qp=0}] []"},
		{"mlx5", fullAndBadSGE, "22 0"},
		{"mlx5", queryAfterCreate, "15 2 0 0"},
		{"mlx5", freeAtPoll, "post 12, after poll 0"},
		{"mlx5", bufferBeforeRTR, "peer 0 then [{id=1 st=0 op=0 len=8 qp=0}]"},
		{"mlx5", resize8, "resize 22 advertised false"},
		{"siw", overfill, "-12 4"},
		{"siw", postSGEs(0), "-22 0"},
		{"siw", createAndFill(5), "attr 5 posted 8"},
		{"siw", queryAfterCreate, "0 0 0 95"},
		{"siw", createUD, "UD false, CreateQP(UD) failed"},
	} {
		if got := tc.run(t, emu.Switch(tc.set)); got != tc.want {
			t.Errorf("set %s: %s, want %s", tc.set, got, tc.want)
		}
	}
}
