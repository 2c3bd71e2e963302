package model

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests of this file hold departures in shapes no fault point of the
// model foresees, and check that each is blamed on the rule whose promise
// it breaks: a relaxed rule admits any departure in what it governs, and
// the catch-all RECV-COMPLETION loses to a specific rule that explains
// the same trace.

// udLengthWithoutGRH is a UD trace whose first completion's byte_len
// leaves out the GRH area while the fit is checked with it, as the
// documented profile says: a second message that fits only without the
// GRH still fails. It returns the model before the poll and what the
// device's poll returned.
func udLengthWithoutGRH(t *testing.T) (*Model, Observation) {
	m := fixture(t, Documented())
	mustRun(t, m, post(wr(1, 256), wr(2, 256)))
	mustRun(t, m, Arrive{QP: 1, Msg: Message{Opcode: Send, Len: 100}})
	mustRun(t, m, Arrive{QP: 1, Msg: Message{Opcode: Send, Len: 230}})
	got, err := m.Expect(Poll{})
	require.NoError(t, err)
	require.Len(t, got.Completions, 2)
	require.NotEqual(t, WCSuccess, got.Completions[1].Status, "230 bytes and the GRH exceed 256")
	got.Completions[0].ByteLen -= UDHeader
	return m, got
}

// TestAUDLengthWithoutTheGRHIsBlamedOnUDGRH: byte_len that leaves out the
// GRH area, on a device that checks the fit with it, is UD-GRH's
// departure (the fault point foresees only a device that ignores the GRH
// area altogether), not the catch-all's.
func TestAUDLengthWithoutTheGRHIsBlamedOnUDGRH(t *testing.T) {
	m, got := udLengthWithoutGRH(t)
	assert.Equal(t, "UD-GRH", ruleOf(m.Step(Poll{}, got)))
}

// TestACompletionOutOfOrderAnywhereIsBlamedOnFetchFIFO: a device that
// fetches the third WR before the second (not the newest-first order the
// fault point foresees) breaks FETCH-FIFO.
func TestACompletionOutOfOrderAnywhereIsBlamedOnFetchFIFO(t *testing.T) {
	m := fixture(t, Documented())
	mustRun(t, m, post(wr(1, 64), wr(2, 64), wr(3, 64), wr(4, 64)))
	for range 3 {
		mustRun(t, m, send(0, 8))
	}
	got := Observation{BadWR: -1, Completions: []Completion{
		{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 8},
		{WRID: 3, QP: 0, Opcode: WCRecv, ByteLen: 8},
		{WRID: 2, QP: 0, Opcode: WCRecv, ByteLen: 8},
	}}
	assert.Equal(t, "FETCH-FIFO", ruleOf(m.Step(Poll{}, got)))
}

// TestAWRASuccessfulPostLeftOutIsBlamedOnPostOrder: a post that returned 0
// but never queued its second WR breaks POST-ORDER (every WR of a post
// that succeeded stays posted): the queue runs dry one message early.
func TestAWRASuccessfulPostLeftOutIsBlamedOnPostOrder(t *testing.T) {
	m := fixture(t, Documented())
	mustRun(t, m, post(wr(1, 64), wr(2, 64), wr(3, 64)))
	mustRun(t, m, send(0, 8))
	mustRun(t, m, send(0, 8))
	got := Observation{BadWR: -1, Completions: []Completion{
		{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 8},
		{WRID: 3, QP: 0, Opcode: WCRecv, ByteLen: 8},
	}}
	err := m.Step(Poll{}, got)
	require.Error(t, err)
	d := err.(*Deviation).Diagnose()
	assert.Contains(t, d.Explains(), []RuleID{RulePostOrder}, "diagnosis %+v", d)
	assert.Equal(t, []RuleID{RulePostOrder}, d.Rules, "a WR left out of the queue before FETCH-FIFO's reordering")
}

// TestAGenericRuleLosesToASpecificOne: when a specific rule and the
// catch-all each explain a trace alone, the specific rule is the
// diagnosis, and the catch-all is an alternative.
func TestAGenericRuleLosesToASpecificOne(t *testing.T) {
	m, got := udLengthWithoutGRH(t)
	err := m.Step(Poll{}, got)
	require.Error(t, err)
	d := err.(*Deviation).Diagnose()
	assert.Equal(t, []RuleID{RuleUDGRH}, d.Rules, "diagnosis %+v", d)
	assert.Contains(t, d.Also, []RuleID{RuleRecvCompletion}, "the catch-all explains it too, and loses")
}

// writeImmCompletion is a model with one RDMA Write with Immediate
// delivered on qp0, and the completion the model expects of it.
func writeImmCompletion(t *testing.T) (*Model, Observation) {
	m := fixture(t, Documented())
	mustRun(t, m, post(wr(1, 64)))
	mustRun(t, m, Arrive{QP: 0, Msg: Message{Opcode: WriteImm, Len: 16, Imm: 7}})
	got, err := m.Expect(Poll{})
	require.NoError(t, err)
	require.Len(t, got.Completions, 1)
	require.Equal(t, WCRecvRDMAWithImm, got.Completions[0].Opcode)
	return m, got
}

// TestAWriteWithImmediatesLengthIsBlamedOnRecvWriteImm: a Write with
// Immediate completing one byte short breaks RECV-WRITE-IMM, which says
// what that completion holds, not FETCH-OPCODES, which says only whether
// the message consumes a WR (both are at stake for the message).
func TestAWriteWithImmediatesLengthIsBlamedOnRecvWriteImm(t *testing.T) {
	m, got := writeImmCompletion(t)
	got.Completions[0].ByteLen--
	err := m.Step(Poll{}, got)
	require.Error(t, err)
	d := err.(*Deviation).Diagnose()
	assert.Equal(t, []RuleID{RuleRecvWriteImm}, d.Rules, "diagnosis %+v", d)
	assert.NotContains(t, d.Also, []RuleID{RuleFetchOpcodes}, "consuming a WR says nothing of byte_len")
}

// TestAWriteWithImmediateWithoutItsImmediateIsBlamedOnRecvWriteImm: the
// immediate of a Write with Immediate is RECV-WRITE-IMM's as well as
// RECV-IMM's; the more specific rule is named.
func TestAWriteWithImmediateWithoutItsImmediateIsBlamedOnRecvWriteImm(t *testing.T) {
	m, got := writeImmCompletion(t)
	got.Completions[0].HasImm, got.Completions[0].Imm = false, 0
	err := m.Step(Poll{}, got)
	require.Error(t, err)
	d := err.(*Deviation).Diagnose()
	assert.Equal(t, []RuleID{RuleRecvWriteImm}, d.Rules, "diagnosis %+v", d)
}

// TestAFitMisjudgedOnRCIsOneDeparture: an RC device that fails a message
// its WR holds (it sums the SGE lengths short, by more than the boundary's
// one byte) NAKs the sender and leaves the QP in ERR, so the next message
// to that QP fails too. RECV-FIT explains both: adopting the failure the
// sender heard carries its consequence, the QP in ERR, with it; it is
// not a second departure of another rule.
func TestAFitMisjudgedOnRCIsOneDeparture(t *testing.T) {
	m := New(Documented(), testCaps)
	var steps []Step
	do := func(op Op) {
		steps = append(steps, Step{Op: op, Obs: mustRun(t, m, op)})
	}
	do(CreateSRQ{MaxWR: 4, MaxSGE: 2})
	do(CreateQP{Type: RC})
	for _, s := range []QPState{Init, RTR, RTS} {
		do(ModifyQP{QP: 0, State: s})
	}
	do(post(wr(1, 60, 40), wr(2, 64)))
	nak := Observation{BadWR: -1, Peer: PeerError}
	steps = append(steps, Step{Op: send(0, 99), Obs: nak}, Step{Op: send(0, 8), Obs: nak})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleRecvFit}, d.Rules, "diagnosis %+v", d)
}

// TestDiagnosisPastItsAllowanceTriesNoPair: a trace only two rules
// explain (an arm and a resize, both valid, both refused) is diagnosed
// with a pair without a bound, and left unexplained, and Cut, once the
// single-rule replays have spent the pair allowance: the pair search is
// what the allowance cuts.
func TestDiagnosisPastItsAllowanceTriesNoPair(t *testing.T) {
	m := New(Documented(), testCaps)
	create := CreateSRQ{MaxWR: 4, MaxSGE: 2}
	refused := Observation{Errno: EINVAL, BadWR: -1}
	steps := []Step{{Op: create, Obs: mustRun(t, m, create)}, {Op: Arm{Limit: 1}, Obs: refused}, {Op: Resize{MaxWR: 8}, Obs: refused}}
	d := Diagnose(Documented(), testCaps, nil, steps)
	require.Len(t, d.Rules, 2, "diagnosis %+v", d)
	require.False(t, d.Cut)
	late := DiagnoseBy(Documented(), testCaps, nil, steps, 1)
	assert.True(t, late.Unexplained, "diagnosis past the allowance %+v", late)
	assert.True(t, late.Cut, "a diagnosis the allowance stopped says so: %+v", late)
	assert.Empty(t, late.Rules)
	assert.Equal(t, d, DiagnoseBy(Documented(), testCaps, nil, steps, 0), "zero is no bound")
	assert.Equal(t, d, DiagnoseBy(Documented(), testCaps, nil, steps, 1<<40), "an allowance the search stays within changes nothing")
}

// TestADiagnosisIsTheSameWhateverTheClockSays: the bound is work, so a
// diagnosis does not read the clock: the same trace and allowance give
// the same diagnosis, Cut or not, every time (a timer is never evidence).
func TestADiagnosisIsTheSameWhateverTheClockSays(t *testing.T) {
	m := New(Documented(), testCaps)
	create := CreateSRQ{MaxWR: 4, MaxSGE: 2}
	refused := Observation{Errno: EINVAL, BadWR: -1}
	steps := []Step{{Op: create, Obs: mustRun(t, m, create)}, {Op: Arm{Limit: 1}, Obs: refused}, {Op: Resize{MaxWR: 8}, Obs: refused}}
	// Find the allowance at which the pair search is cut part way: the
	// smallest that still explains the trace, less one.
	var w Meter
	full := diagnoseAmong(Documented(), testCaps, nil, steps, nil, &w)
	require.Len(t, full.Rules, 2)
	lo, hi := int64(1), w.spent
	for lo < hi {
		mid := (lo + hi) / 2
		if d := DiagnoseBy(Documented(), testCaps, nil, steps, mid); d.Cut {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	require.Greater(t, lo, int64(1), "some allowance cuts the search")
	cut := DiagnoseBy(Documented(), testCaps, nil, steps, lo-1)
	require.True(t, cut.Cut)
	for range 20 {
		assert.Equal(t, cut, DiagnoseBy(Documented(), testCaps, nil, steps, lo-1))
		assert.Equal(t, full, DiagnoseBy(Documented(), testCaps, nil, steps, lo))
	}
}

// TestSingleRuleReplaysStopAtTheTotal: past DiagnoseWithin's Total no
// single rule's replay starts either: a trace one rule explains (a bad
// key completed as success) is left unexplained and cut, where with work
// left it is explained.
func TestSingleRuleReplaysStopAtTheTotal(t *testing.T) {
	steps := trace(t, []Op{post(WR{ID: 1, NumSGE: 1, SGEs: []SGE{{Length: 64, Key: 1}}}), Invalidate{Key: 1}, send(0, 8), Poll{}},
		map[int]Observation{3: {BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 8}}}})
	d := DiagnoseWithin(Documented(), testCaps, nil, steps, nil, NewMeter(Effort{Pairs: 1, Total: 1 << 40}))
	require.NotEmpty(t, d.Rules, "with work left the trace is explained: %+v", d)
	d = DiagnoseWithin(Documented(), testCaps, nil, steps, nil, NewMeter(Effort{Pairs: 1, Total: 1}))
	assert.Empty(t, d.Rules, "a single rule's replay started past the total: %+v", d)
	assert.True(t, d.Cut, "a diagnosis the total cut says so: %+v", d)
}

// TestAMeterPastItsStopTimeIsSpent: a Meter whose StopAt time has passed
// counts as spent whatever work is left, so that the diagnosis of a trace
// one rule explains is cut, and unexplained; with the time ahead of it
// the same Meter explains it.
func TestAMeterPastItsStopTimeIsSpent(t *testing.T) {
	steps := trace(t, []Op{post(WR{ID: 1, NumSGE: 1, SGEs: []SGE{{Length: 64, Key: 1}}}), Invalidate{Key: 1}, send(0, 8), Poll{}},
		map[int]Observation{3: {BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 8}}}})
	ahead := NewMeter(Effort{Pairs: 1 << 40, Total: 1 << 40})
	ahead.StopAt(time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	d := DiagnoseWithin(Documented(), testCaps, nil, steps, nil, ahead)
	require.NotEmpty(t, d.Rules, "with the stop an hour away the trace is explained: %+v", d)
	assert.False(t, d.Cut)
	assert.True(t, ahead.PairsLeft())
	past := NewMeter(Effort{Pairs: 1 << 40, Total: 1 << 40})
	past.StopAt(time.Time{}, time.Now().Add(-time.Second))
	require.False(t, past.PairsLeft(), "past the total's stop time the pairs are spent too")
	d = DiagnoseWithin(Documented(), testCaps, nil, steps, nil, past)
	assert.Empty(t, d.Rules, "a single rule's replay started past the stop time: %+v", d)
	assert.True(t, d.Cut, "a diagnosis the stop time cut says so: %+v", d)
	assert.False(t, past.PairsLeft())
	past.StopAt(time.Time{}, time.Time{})
	assert.True(t, past.PairsLeft(), "the zero time is no stop")
	pairs := NewMeter(Effort{Pairs: 1 << 40, Total: 1 << 40})
	pairs.StopAt(time.Now().Add(-time.Second), time.Now().Add(time.Hour))
	assert.False(t, pairs.PairsLeft(), "past the pairs' stop time")
	d = DiagnoseWithin(Documented(), testCaps, nil, steps, nil, pairs)
	assert.NotEmpty(t, d.Rules, "single rules still run before the total's stop time: %+v", d)
}

// ran runs ops on a fresh model under p and returns them as steps, each
// with the model's own observation.
func ran(t *testing.T, p Profile, ops ...Op) []Step {
	t.Helper()
	m := New(p, testCaps)
	steps := make([]Step, len(ops))
	for i, op := range ops {
		steps[i] = Step{Op: op, Obs: mustRun(t, m, op)}
	}
	return steps
}

// trace runs ops on a fresh documented model over the fixture's SRQ and
// QPs, each step with the model's own observation unless got holds the
// device's for that step (by index into ops), and returns the steps. The
// model adopts nothing after a departure: later observations in got
// must be written out.
func trace(t *testing.T, ops []Op, got map[int]Observation) []Step {
	t.Helper()
	m := New(Documented(), testCaps)
	var steps []Step
	for _, op := range append(fixtureOps(), ops...) {
		steps = append(steps, Step{Op: op})
	}
	base := len(fixtureOps())
	for i := range steps {
		if o, ok := got[i-base]; ok && i >= base {
			steps[i].Obs = o
			continue
		}
		obs, err := m.Run(steps[i].Op)
		require.NoError(t, err, "step %d %s", i+1, steps[i].Op)
		steps[i].Obs = obs
	}
	return steps
}

// fixtureOps are the operations fixture runs.
func fixtureOps() []Op {
	ops := []Op{CreateSRQ{MaxWR: 4, MaxSGE: 2}, CreateQP{Type: RC}, CreateQP{Type: UD}}
	for qpn := range 2 {
		for _, s := range []QPState{Init, RTR, RTS} {
			ops = append(ops, ModifyQP{QP: qpn, State: s})
		}
	}
	return ops
}

func refused(errno int) Observation { return Observation{Errno: errno, BadWR: -1} }

// TestAResizeRefusedWithAnotherErrnoIsBlamedOnItsCheck: on a device that
// advertises resize, a resize above max_srq_wr refused with ENOMEM, or
// one to exactly the outstanding count or to max_srq_wr refused with
// EINVAL (a check placed one off), breaks the bound or count check, not
// RESIZE-OPTIONAL (whose relaxation would explain any refusal). Refused
// as not supported (EOPNOTSUPP or ENOSYS), out of bounds or below the count, it
// breaks RESIZE-OPTIONAL: that answer says resize does not work.
func TestAResizeRefusedWithAnotherErrnoIsBlamedOnItsCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		ops  []Op
		got  map[int]Observation
		want RuleID
	}{
		{"above max_srq_wr, ENOMEM", []Op{Resize{MaxWR: testCaps.MaxSRQWR + 1}}, map[int]Observation{0: refused(ENOMEM)}, RuleResizeBounds},
		{"at max_srq_wr, EINVAL", []Op{Resize{MaxWR: testCaps.MaxSRQWR}}, map[int]Observation{0: refused(EINVAL)}, RuleResizeBounds},
		{"below the count, ENOMEM", []Op{post(wr(1, 8), wr(2, 8), wr(3, 8)), Resize{MaxWR: 2}}, map[int]Observation{1: refused(ENOMEM)}, RuleResizeBelowCount},
		{"at the count, EINVAL", []Op{post(wr(1, 8), wr(2, 8)), Resize{MaxWR: 2}}, map[int]Observation{1: refused(EINVAL)}, RuleResizeBelowCount},
		{"above max_srq_wr, EOPNOTSUPP", []Op{Resize{MaxWR: testCaps.MaxSRQWR + 1}}, map[int]Observation{0: refused(EOPNOTSUPP)}, RuleResizeOptional},
		{"below the count, EOPNOTSUPP", []Op{post(wr(1, 8), wr(2, 8), wr(3, 8)), Resize{MaxWR: 2}}, map[int]Observation{1: refused(EOPNOTSUPP)}, RuleResizeOptional},
		{"after a resize that worked, above max_srq_wr, EOPNOTSUPP", []Op{Resize{MaxWR: 8}, Resize{MaxWR: testCaps.MaxSRQWR + 1}}, map[int]Observation{1: refused(EOPNOTSUPP)}, RuleResizeOptional},
		{"after a resize that worked, below the count, EOPNOTSUPP", []Op{Resize{MaxWR: 8}, post(wr(1, 8), wr(2, 8), wr(3, 8)), Resize{MaxWR: 2}}, map[int]Observation{2: refused(EOPNOTSUPP)}, RuleResizeOptional},
		// ENOSYS says "not supported" as well (libibverbs and providers
		// return it for a verb they do not implement).
		{"above max_srq_wr, ENOSYS", []Op{Resize{MaxWR: testCaps.MaxSRQWR + 1}}, map[int]Observation{0: refused(ENOSYS)}, RuleResizeOptional},
		{"below the count, ENOSYS", []Op{post(wr(1, 8), wr(2, 8), wr(3, 8)), Resize{MaxWR: 2}}, map[int]Observation{1: refused(ENOSYS)}, RuleResizeOptional},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Diagnose(Documented(), testCaps, nil, trace(t, c.ops, c.got))
			assert.Equal(t, []RuleID{c.want}, d.Rules, "diagnosis %+v", d)
		})
	}
}

// TestALimitClampedAboveTheBoundIsBlamedOnLimitBound: an arm above
// max_wr accepted and armed at max_wr (query reads 4, not 5) is
// LIMIT-BOUND's departure alone, not LIMIT-BOUND and QUERY-LIMIT.
func TestALimitClampedAboveTheBoundIsBlamedOnLimitBound(t *testing.T) {
	steps := trace(t, []Op{Arm{Limit: 5}, Query{}}, map[int]Observation{
		0: refused(0),
		1: {BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2, SRQLimit: 4}},
	})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleLimitBound}, d.Rules, "diagnosis %+v", d)
}

// TestALimitEventOneFetchLateIsBlamedOnLimitFire: the SRQ disarms at the
// fetch that leaves fewer WRs than the limit but raises the event only
// at the next fetch. LIMIT-FIRE alone explains it, not LIMIT-FIRE with
// QUERY-LIMIT and LIMIT-ONCE.
func TestALimitEventOneFetchLateIsBlamedOnLimitFire(t *testing.T) {
	none := Observation{BadWR: -1}
	steps := trace(t, []Op{
		post(wr(1, 8), wr(2, 8), wr(3, 8)), Arm{Limit: 3}, send(0, 1), Poll{}, Query{}, send(0, 1), Poll{},
	}, map[int]Observation{
		3: {BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 1}}},
		4: {BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2}},
		5: none,
		6: {BadWR: -1, Completions: []Completion{{WRID: 2, QP: 0, Opcode: WCRecv, ByteLen: 1}}, Events: []Event{{Type: EventSRQLimitReached, QP: -1}}},
	})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleLimitFire}, d.Rules, "diagnosis %+v", d)
}

// TestARefusedCreateIsBlamedOnQPCreate: a UD QP refused once an RC QP
// exists breaks QP-CREATE, and so does the same refusal of a create
// whose receive caps the profile ignores.
func TestARefusedCreateIsBlamedOnQPCreate(t *testing.T) {
	m := fixture(t, Documented())
	assert.Equal(t, "QP-CREATE", ruleOf(m.Step(CreateQP{Type: UD}, refused(EINVAL))))
	steps := trace(t, []Op{CreateQP{Type: UD}, CreateQP{Type: UD, RecvCaps: RecvCapsAboveWR}}, map[int]Observation{
		0: refused(EINVAL), 1: refused(EINVAL),
	})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleQPCreate}, d.Rules, "one rule explains both refusals: diagnosis %+v", d)
}

// TestAFitRefusedEitherWayIsBlamedOnItsRule: an empty message refused by
// a WR of num_sge 0 breaks RECV-NUMSGE0 (whose fault point foresaw only
// such a WR taking bytes), and a small message refused by a WR whose SGE
// lengths sum past 2^31 (a 32-bit sum) breaks RECV-FIT; in neither is the
// catch-all to blame. The refusal moves the RC QP to ERR, as the profile
// says an oversize message does.
func TestAFitRefusedEitherWayIsBlamedOnItsRule(t *testing.T) {
	for _, c := range []struct {
		name string
		w    WR
		len  uint32
		want RuleID
	}{
		{"num_sge 0, empty message", WR{ID: 1, NumSGE: 0}, 0, RuleRecvNumSGE0},
		{"SGEs summing past 2^31", wr(1, 1<<31-1, 100), 200, RuleRecvFit},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := fixture(t, Documented())
			mustRun(t, m, post(c.w))
			mustRun(t, m, send(0, c.len))
			got := Observation{BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Status: WCLocLenErr}}}
			assert.Equal(t, c.want.String(), ruleOf(m.Step(Poll{}, got)))
		})
	}
}

// TestAFitMisjudgedFarFromTheBoundaryIsRecvFits: an RC device whose sum
// of a WR's SGE lengths leaves SGEs out NAKs a message far below the WR's
// room and completes the WR with a length error, and one whose sum counts
// too much takes a message three times its WR whole. RECV-FIT governs the
// fit at any size, so it is blamed, not the catch-all; with a protection
// error the device says its key check failed a valid key (RECV-BAD-KEY,
// which governs which keys the fill finds invalid); with any other error
// status no specific rule explains it, and the catch-all does.
func TestAFitMisjudgedFarFromTheBoundaryIsRecvFits(t *testing.T) {
	for _, c := range []struct {
		name   string
		w      WR
		len    uint32
		status WCStatus
		want   RuleID
	}{
		{"the second SGE not counted", wr(1, 64, 64), 100, WCLocLenErr, RuleRecvFit},
		{"no SGE counted", wr(1, 64), 1, WCLocLenErr, RuleRecvFit},
		{"no SGE counted, a QP error", wr(1, 64), 1, WCLocQPOpErr, RuleRecvCompletion},
		// The other way: a message three times its WR taken whole (a sum
		// that counts an SGE thrice), SUCCESS with its own length.
		{"a message too large taken whole", wr(1, 64), 200, WCSuccess, RuleRecvFit},
		// A protection error on a WR whose keys are all valid: the key
		// check failed a valid key, RECV-BAD-KEY's departure.
		{"a valid key found invalid", wr(1, 64), 1, WCLocProtErr, RuleRecvBadKey},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := fixture(t, Documented())
			steps := slices.Clone(m.history.steps())
			steps = append(steps, Step{Op: post(c.w), Obs: mustRun(t, m, post(c.w))})
			if c.status == WCSuccess {
				steps = append(steps, Step{Op: send(0, c.len), Obs: Observation{BadWR: -1, Peer: PeerOK}},
					Step{Op: Poll{}, Obs: Observation{BadWR: -1,
						Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: c.len}}}})
			} else {
				steps = append(steps, Step{Op: send(0, c.len), Obs: Observation{BadWR: -1, Peer: PeerError}},
					Step{Op: Poll{}, Obs: Observation{BadWR: -1,
						Completions: []Completion{{WRID: 1, QP: 0, Status: c.status}},
						Events:      []Event{{Type: EventQPLastWQEReached, QP: 0}}}})
			}
			d := Diagnose(Documented(), testCaps, nil, steps)
			assert.Equal(t, []RuleID{c.want}, d.Rules, "diagnosis %+v", d)
		})
	}
}

// TestAPostMisreportedIsBlamedOnTheReportingRule: a list post that took
// every WR but returned their count (no bad_wr) breaks POST-RETURN, and
// one that took the WRs before an invalid one but named the list's head
// in bad_wr breaks POST-BADWR: in both the WRs the device holds complete
// later, which the model, once it adopts the departure, expects.
func TestAPostMisreportedIsBlamedOnTheReportingRule(t *testing.T) {
	done := func(ids ...uint64) Observation {
		o := Observation{BadWR: -1}
		for _, id := range ids {
			o.Completions = append(o.Completions, Completion{WRID: id, QP: 0, Opcode: WCRecv, ByteLen: 1})
		}
		return o
	}
	for _, c := range []struct {
		name string
		post Post
		got  Observation
		want RuleID
	}{
		{"returns the count", post(wr(1, 8), wr(2, 8)), Observation{Errno: 2, BadWR: -1}, RulePostReturn},
		{"bad_wr on the head", post(wr(1, 8), wr(2, 8), WR{ID: 3, NumSGE: -1}), Observation{Errno: EINVAL, BadWR: 0}, RulePostBadWR},
	} {
		t.Run(c.name, func(t *testing.T) {
			steps := trace(t, []Op{c.post, send(0, 1), send(0, 1), Poll{}}, map[int]Observation{
				0: c.got, 1: {BadWR: -1}, 2: {BadWR: -1}, 3: done(1, 2),
			})
			d := Diagnose(Documented(), testCaps, nil, steps)
			assert.Equal(t, []RuleID{c.want}, d.Rules, "diagnosis %+v", d)
		})
	}
}

// TestAFailingListWhoseRestWasPostedIsBlamedOnPostOrder: a list whose
// middle WR is invalid fails there (EINVAL, bad_wr on it) but the device
// skipped that WR and posted the one after it: POST-ORDER's departure
// (its fault point foresaw only a list whose prefix is dropped).
func TestAFailingListWhoseRestWasPostedIsBlamedOnPostOrder(t *testing.T) {
	steps := trace(t, []Op{post(wr(1, 8), WR{ID: 2, NumSGE: -1}, wr(3, 8)), send(0, 1), send(0, 1), Poll{}}, map[int]Observation{
		0: {Errno: EINVAL, BadWR: 1},
		1: {BadWR: -1}, 2: {BadWR: -1},
		3: {BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 1}, {WRID: 3, QP: 0, Opcode: WCRecv, ByteLen: 1}}},
	})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RulePostOrder}, d.Rules, "diagnosis %+v", d)
}

// TestAFailingListThatLostTheLastOfItsPrefixIsBlamedOnPostOrder: a list
// that fails at its third WR (EINVAL) while the device's error path took
// back the second WR too (posted before it, so it must stay posted) is
// POST-ORDER's departure, though the first WR stayed: the relaxation
// admits any tail of the prefix lost at each failing list, not only the
// whole prefix (one WR left out alone explains one such list, not two).
func TestAFailingListThatLostTheLastOfItsPrefixIsBlamedOnPostOrder(t *testing.T) {
	steps := trace(t, []Op{post(wr(1, 8), wr(2, 8), WR{ID: 3, NumSGE: -1}), send(0, 1), send(0, 1), Poll{}, post(wr(5, 8)), send(0, 0), Poll{}}, map[int]Observation{
		0: {Errno: EINVAL, BadWR: 2},
		1: {BadWR: -1}, 2: {BadWR: -1, Peer: PeerRNR},
		3: {BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 1}}},
		6: {BadWR: -1, Completions: []Completion{{WRID: 5, QP: 0, Opcode: WCRecv}}},
	})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RulePostOrder}, d.Rules, "diagnosis %+v", d)
	// Relaxed alone, POST-ORDER explains the failure up to the RNR, as a
	// run's unify asks of it.
	checked := steps[:len(steps)-4]
	n, ok, _ := DeparturesWithin(Documented(), testCaps, nil, checked, []RuleID{RulePostOrder}, nil)
	assert.True(t, ok && n > 0, "POST-ORDER alone: %d departures, consistent %v; want consistent with a departure", n, ok)
	// Two such lists, each losing the last WR of its prefix and keeping
	// the first: POST-ORDER alone explains both.
	bad := WR{ID: 9, NumSGE: -1}
	twice := trace(t, []Op{post(wr(1, 8), wr(2, 8), bad), post(wr(4, 8), wr(5, 8), bad), send(0, 1), send(0, 1), send(0, 1), Poll{}}, map[int]Observation{
		0: {Errno: EINVAL, BadWR: 2}, 1: {Errno: EINVAL, BadWR: 2},
		2: {BadWR: -1}, 3: {BadWR: -1}, 4: {BadWR: -1, Peer: PeerRNR},
		5: {BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 1}, {WRID: 4, QP: 0, Opcode: WCRecv, ByteLen: 1}}},
	})
	_, ok, _ = DeparturesWithin(Documented(), testCaps, nil, twice, []RuleID{RulePostOrder}, nil)
	assert.True(t, ok, "two lists each losing the last of its prefix: want POST-ORDER alone to explain them")
}

// TestACallThatChangedWhatItPromisedToLeaveIsBlamedOnThatCall: a limit
// modify after which query reads max_sge 1 and WRs of two SGEs are refused
// with EINVAL changed max_sge, which its mask did not name: one departure
// of MODIFY-ONLY-MASKED, not POST-SGE at every refused post and QUERY-ATTR;
// so too after a resize or a disarm. A destroy refused with EBUSY after which every post fails left the SRQ
// not working as before: one departure of DESTROY-BUSY, not POST-SGE at
// every post.
func TestACallThatChangedWhatItPromisedToLeaveIsBlamedOnThatCall(t *testing.T) {
	attr := Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 1, SRQLimit: 1}}
	steps := trace(t, []Op{Arm{Limit: 1}, Query{}, post(wr(1, 8, 8)), post(wr(2, 8, 8)), post(wr(3, 8))}, map[int]Observation{
		1: attr, 2: {Errno: EINVAL, BadWR: 0}, 3: {Errno: EINVAL, BadWR: 0},
	})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleModifyOnlyMasked}, d.Rules, "max_sge changed by a limit modify: diagnosis %+v", d)
	steps = trace(t, []Op{Resize{MaxWR: 8}, Query{}, post(wr(1, 8, 8)), post(wr(2, 8, 8)), post(wr(3, 8))}, map[int]Observation{
		0: refused(0), 1: {BadWR: -1, Attr: SRQAttr{MaxWR: 8, MaxSGE: 1}}, 2: {Errno: EINVAL, BadWR: 0}, 3: {Errno: EINVAL, BadWR: 0},
	})
	d = Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleModifyOnlyMasked}, d.Rules, "max_sge changed by a resize: diagnosis %+v", d)
	steps = trace(t, []Op{Arm{Limit: 0}, post(wr(1, 8, 8)), post(wr(2, 8, 8)), post(wr(3, 8))}, map[int]Observation{
		1: {Errno: EINVAL, BadWR: 0}, 2: {Errno: EINVAL, BadWR: 0},
	})
	d = Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleModifyOnlyMasked}, d.Rules, "max_sge changed by a disarm: diagnosis %+v", d)

	steps = trace(t, []Op{DestroySRQ{}, post(wr(1, 8)), post(wr(2, 8)), post(wr(3, 8))}, map[int]Observation{
		1: {Errno: EINVAL, BadWR: 0}, 2: {Errno: EINVAL, BadWR: 0}, 3: {Errno: EINVAL, BadWR: 0},
	})
	d = Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleDestroyBusy}, d.Rules, "posts refused after a refused destroy: diagnosis %+v", d)
}

// TestUDFitsMisjudgedAlikeAreRecvFits: a UD device that counts none of a
// WR's SGEs fails every message with a length error, seen only at the
// poll. RECV-FIT explains the three as one way of the device's (a UD
// misjudgement holds for every later message of its kind), and a device
// that misjudges one UD message and not the next, alike, is not admitted.
func TestUDFitsMisjudgedAlikeAreRecvFits(t *testing.T) {
	steps := ran(t, Documented(), CreateSRQ{MaxWR: 4, MaxSGE: 1}, CreateQP{Type: UD},
		ModifyQP{QP: 0, State: Init}, ModifyQP{QP: 0, State: RTR}, post(wr(1, 256), wr(2, 256), wr(3, 256)))
	var done []Completion
	for id := uint64(1); id <= 3; id++ {
		steps = append(steps, Step{Op: send(0, 8), Obs: Observation{BadWR: -1, Peer: PeerOK}})
		done = append(done, Completion{WRID: id, QP: 0, Status: WCLocLenErr})
	}
	all := append(slices.Clone(steps), Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: done}})
	d := Diagnose(Documented(), testCaps, nil, all)
	assert.Equal(t, []RuleID{RuleRecvFit}, d.Rules, "every UD message failed: %+v", d)

	done[1] = Completion{WRID: 2, QP: 0, Opcode: WCRecv, ByteLen: 8 + UDHeader}
	mixed := append(slices.Clone(steps), Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: done}})
	d = Diagnose(Documented(), testCaps, nil, mixed)
	assert.NotEqual(t, []RuleID{RuleRecvFit}, d.Rules, "the second of three alike UD messages taken: %+v", d)
}

// TestAnOversizeStatusOnUDIsRecvTooLarges: a UD message too large for its
// WR with or without the GRH area's 40 bytes, completed with SUCCESS,
// breaks RECV-TOO-LARGE. UD-GRH governs such a message's byte_len and
// payload, but whether the GRH area counts would not have changed its
// fate, so UD-GRH does not explain its status; where the GRH area is
// what makes it too large, it does.
func TestAnOversizeStatusOnUDIsRecvTooLarges(t *testing.T) {
	for _, c := range []struct {
		len  uint32
		want RuleID
	}{{100, RuleRecvTooLarge}, {50, RuleUDGRH}} {
		steps := ran(t, Documented(), CreateSRQ{MaxWR: 4, MaxSGE: 1}, CreateQP{Type: UD},
			ModifyQP{QP: 0, State: Init}, ModifyQP{QP: 0, State: RTR}, post(wr(1, 64)))
		steps = append(steps,
			Step{Op: send(0, c.len), Obs: Observation{BadWR: -1, Peer: PeerOK}},
			Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: c.len}}}})
		d := Diagnose(Documented(), testCaps, nil, steps)
		assert.Equal(t, []RuleID{c.want}, d.Rules, "a %d-byte UD message into 64 bytes, completed with SUCCESS: %+v", c.len, d)
	}
}

// TestAnSRQTakenForEmptyIsBlamedOnRecvRNR: a device that miscounts its
// queue and answers RNR on RC while a WR is queued breaks RECV-RNR, which
// governs when the SRQ counts as empty; the WR stays and completes the
// next message.
func TestAnSRQTakenForEmptyIsBlamedOnRecvRNR(t *testing.T) {
	for _, n := range []uint32{8, 0} {
		m := fixture(t, Documented())
		mustRun(t, m, post(wr(1, 64)))
		steps := append(m.history.steps(),
			Step{Op: send(0, n), Obs: Observation{BadWR: -1, Peer: PeerRNR}},
			Step{Op: Poll{}, Obs: Observation{BadWR: -1}},
			Step{Op: send(0, n), Obs: Observation{BadWR: -1, Peer: PeerOK}},
			Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: n}}}})
		assert.Equal(t, []string{"RECV-RNR"}, RuleNames(Diagnose(Documented(), testCaps, nil, steps).Rules), "a message of %d bytes", n)
	}
}

// TestAMessageGivenTheNextWRIsBlamedOnFetchFIFO: a device that hands a
// message the WR after the head (neither the head nor the newest), too
// small for it, answers the sender with an error the head WR would not
// give, and completes the second WR
// in error (the RC QP then in ERR, with its last-WQE event); the next
// message takes the head, still queued. FETCH-FIFO governs which WR a
// message takes: the sender's outcome is its departure too, not a second
// one. (Without the next message, a head that a post left out of the
// queue, POST-ORDER's, explains as much.)
func TestAMessageGivenTheNextWRIsBlamedOnFetchFIFO(t *testing.T) {
	m := fixture(t, Documented())
	mustRun(t, m, post(wr(1, 64), wr(2, 4), wr(3, 64)))
	steps := append(m.history.steps(),
		Step{Op: send(0, 8), Obs: Observation{BadWR: -1, Peer: PeerError}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 2, QP: 0, Status: WCLocLenErr}},
			Events: []Event{{Type: EventQPLastWQEReached, QP: 0}}}},
		Step{Op: send(1, 8), Obs: Observation{BadWR: -1, Peer: PeerOK}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 1, QP: 1, Opcode: WCRecv, ByteLen: 8 + UDHeader}}}})
	assert.Equal(t, []string{"FETCH-FIFO"}, RuleNames(Diagnose(Documented(), testCaps, nil, steps).Rules))
}

// TestAUDMessageDroppedWithAWRQueuedIsBlamedOnRecvRNR: a device that takes
// a non-empty SRQ for empty drops a UD message (the sender hears nothing
// of it); the WR stays and completes the next message.
func TestAUDMessageDroppedWithAWRQueuedIsBlamedOnRecvRNR(t *testing.T) {
	m := fixture(t, Documented())
	mustRun(t, m, post(wr(1, 64)))
	steps := append(m.history.steps(),
		Step{Op: send(1, 8), Obs: Observation{BadWR: -1, Peer: PeerOK}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1}},
		Step{Op: send(1, 8), Obs: Observation{BadWR: -1, Peer: PeerOK}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 1, QP: 1, Opcode: WCRecv, ByteLen: 8 + UDHeader}}}})
	assert.Equal(t, []string{"RECV-RNR"}, RuleNames(Diagnose(Documented(), testCaps, nil, steps).Rules))
}

// TestAFittingMessageFailedOnTheHeadWRIsRecvCompletions is real rxe with
// e2a05339fa11 reverted (corpus, 6.12): a 1-byte Send into a 64-byte WR
// fails, and the evidence poll shows the head WR completed in error, with
// the QP's LAST_WQE_REACHED. No other WR would have failed the message, so
// FETCH-FIFO (which WR a message takes) does not explain it; the catch-all
// does, and the LAST_WQE_REACHED of the QP its adopted error status moved
// to ERR is no second departure.
func TestAFittingMessageFailedOnTheHeadWRIsRecvCompletions(t *testing.T) {
	p := RXE()
	steps := ran(t, p, CreateSRQ{MaxWR: 8, MaxSGE: 1}, CreateQP{Type: RC}, post(wr(1, 64), wr(2, 64), wr(3, 64)),
		ModifyQP{QP: 0, State: Init}, ModifyQP{QP: 0, State: RTR})
	steps = append(steps,
		Step{Op: send(0, 1), Obs: Observation{BadWR: -1, Peer: PeerError}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1,
			Completions: []Completion{{WRID: 1, QP: 0, Status: WCRemInvReq}},
			Events:      []Event{{Type: EventQPLastWQEReached, QP: 0}}}})
	d := DiagnoseBy(p, testCaps, nil, steps, 0)
	assert.Equal(t, []RuleID{RuleRecvCompletion}, d.Rules, "diagnosis %+v", d)
	assert.NotContains(t, d.Explains(), []RuleID{RuleFetchFIFO})
}

// TestARefusedCreateIsBlamedOnWhatGovernsIt: a create of the SRQ under
// test within the device's limits refused with EINVAL (the errno of a
// create above them) is CREATE-MAX's as well as CREATE-ATTR's; with
// another errno only CREATE-ATTR's; through ibv_create_srq_ex it is
// CREATE-EX's first.
func TestARefusedCreateIsBlamedOnWhatGovernsIt(t *testing.T) {
	for _, c := range []struct {
		variant CreateVariant
		errno   int
		want    []RuleID
		also    []RuleID
	}{
		{CreatePlain, EINVAL, []RuleID{RuleCreateAttr}, []RuleID{RuleCreateMax}},
		{CreatePlain, ENOMEM, []RuleID{RuleCreateAttr}, nil},
		{CreateEx, EINVAL, []RuleID{RuleCreateEx}, []RuleID{RuleCreateMax}},
	} {
		steps := []Step{{Op: CreateSRQ{MaxWR: 8, MaxSGE: 1, Variant: c.variant}, Obs: refused(c.errno)}}
		d := DiagnoseBy(Documented(), testCaps, nil, steps, 0)
		assert.Equal(t, c.want, d.Rules, "%s refused with %s: diagnosis %+v", c.variant, ErrnoName(c.errno), d)
		if c.also != nil {
			assert.Contains(t, d.Explains(), c.also, "%s refused with %s", c.variant, ErrnoName(c.errno))
		} else {
			assert.Len(t, d.Explains(), 1, "%s refused with %s: %+v", c.variant, ErrnoName(c.errno), d)
		}
	}
}

// TestAModifyToErrThatLeftTheQPAsItWasIsQPTransitions: a modify to ERR
// that returned 0 and left the QP in RTS (no LAST_WQE_REACHED, the next
// message taken and completed) is one departure of QP-TRANSITIONS, which
// governs the QP's state, not a missing event and a fetch in ERR.
func TestAModifyToErrThatLeftTheQPAsItWasIsQPTransitions(t *testing.T) {
	steps := ran(t, Documented(), append(fixtureOps(), post(wr(1, 64), wr(2, 64)))...)
	steps = append(steps,
		Step{Op: ModifyQP{QP: 0, State: Err}, Obs: Observation{BadWR: -1}},
		Step{Op: send(0, 8), Obs: Observation{BadWR: -1, Peer: PeerOK}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 8}}}})
	d := DiagnoseBy(Documented(), testCaps, nil, steps, 0)
	assert.Equal(t, []RuleID{RuleQPTransitions}, d.Rules, "diagnosis %+v", d)
}

// TestAPostRefusedAfterPostsTakenWithNoQPIsNotPostAnyState: an SRQ
// grown from 4 to 8 that still refuses the fifth WR as full, with no QP
// attached, is not POST-ANY-STATE's (a device that refuses posts for its
// QPs' states): the four posts before were taken with no QP either.
func TestAPostRefusedAfterPostsTakenWithNoQPIsNotPostAnyState(t *testing.T) {
	steps := ran(t, Documented(), CreateSRQ{MaxWR: 4, MaxSGE: 1}, post(wr(1, 64), wr(2, 64), wr(3, 64), wr(4, 64)), Resize{MaxWR: 8}, Query{})
	steps = append(steps, Step{Op: post(wr(5, 64)), Obs: Observation{Errno: ENOMEM, BadWR: 0}})
	d := DiagnoseBy(Documented(), testCaps, nil, steps, 0)
	assert.NotEmpty(t, d.Rules, "diagnosis %+v", d)
	assert.NotContains(t, d.Explains(), []RuleID{RulePostAnyState}, "diagnosis %+v", d)
}

// TestAPostRefusedWithNoQPIsStillPostAnyState: the first post to an SRQ
// with no QP attached, refused, is POST-ANY-STATE's.
func TestAPostRefusedWithNoQPIsStillPostAnyState(t *testing.T) {
	m := New(Documented(), testCaps)
	create := CreateSRQ{MaxWR: 4, MaxSGE: 1}
	steps := []Step{{Op: create, Obs: mustRun(t, m, create)}, {Op: post(wr(1, 64)), Obs: Observation{Errno: EINVAL, BadWR: 0}}}
	d := DiagnoseBy(Documented(), testCaps, nil, steps, 0)
	assert.Equal(t, []RuleID{RulePostAnyState}, d.Rules, "diagnosis %+v", d)
}

// TestAnEmptySRQThatKilledTheQPIsRecvRNR: a message meeting an empty SRQ
// that moved its QP to ERR (a UD message killing the QP, where it should
// be dropped; an RC one answered with an error after two RNRs, where RNR
// was due) is RECV-RNR's one departure: the QP's LAST_WQE_REACHED and the
// later message it did not take follow from it.
func TestAnEmptySRQThatKilledTheQPIsRecvRNR(t *testing.T) {
	for _, c := range []struct {
		name string
		qp   int
		peer []PeerStatus // what the sender heard of the messages to the empty SRQ
	}{
		{"UD", 1, []PeerStatus{PeerOK}},
		{"RC", 0, []PeerStatus{PeerRNR, PeerRNR, PeerError}},
	} {
		var ops []Op
		got := map[int]Observation{}
		for _, p := range c.peer {
			got[len(ops)] = Observation{BadWR: -1, Peer: p}
			ops = append(ops, send(c.qp, 8))
		}
		ops = append(ops, post(wr(1, 256)), send(c.qp, 8), Poll{})
		if c.qp == 0 {
			got[len(ops)-2] = Observation{BadWR: -1, Peer: PeerError}
		}
		got[len(ops)-1] = Observation{BadWR: -1, Events: []Event{{Type: EventQPLastWQEReached, QP: c.qp}}}
		d := DiagnoseBy(Documented(), testCaps, nil, trace(t, ops, got), 0)
		assert.Equal(t, []RuleID{RuleRecvRNR}, d.Rules, "%s: diagnosis %+v", c.name, d)
	}
}

// TestALimitEventAgainAtRNRIsLimitOnce: an SRQ armed at 2 that raised
// its limit event and raised another when a message then met it empty
// (no fetch, no re-arming) breaks LIMIT-ONCE, whatever the shape of the
// second event; not LIMIT-FIRE, whose events come at fetches.
func TestALimitEventAgainAtRNRIsLimitOnce(t *testing.T) {
	limit := Event{Type: EventSRQLimitReached, QP: -1}
	ops := []Op{Arm{Limit: 2}, post(wr(1, 64), wr(2, 64), wr(3, 64)), send(0, 8), send(0, 8), send(0, 8), Poll{}, send(0, 8), Poll{}}
	steps := trace(t, ops, map[int]Observation{
		7: {BadWR: -1, Events: []Event{limit}},
	})
	d := DiagnoseBy(Documented(), testCaps, nil, steps, 0)
	assert.Equal(t, []RuleID{RuleLimitOnce}, d.Rules, "diagnosis %+v", d)
}

// TestAFlushNamingAnotherWRIsQPFlushInProgress: the flush of the WR a QP
// was filling when it entered ERR that names the SRQ's head (still
// queued, and completed later by its own message) breaks
// QP-FLUSH-INPROGRESS, which governs that completion, not FETCH-FIFO and
// FETCH-ONCE.
func TestAFlushNamingAnotherWRIsQPFlushInProgress(t *testing.T) {
	ops := []Op{post(wr(1, 8192), wr(2, 8192)), Arrive{QP: 0, Msg: Message{Opcode: Send, Len: 6000}, FirstPacketOnly: true},
		ModifyQP{QP: 0, State: Err}, Poll{}, send(1, 8), Poll{}}
	steps := trace(t, ops, map[int]Observation{
		3: {BadWR: -1, Completions: []Completion{{WRID: 2, QP: 0, Status: WCWRFlushErr}}, Events: []Event{{Type: EventQPLastWQEReached, QP: 0}}},
		5: {BadWR: -1, Completions: []Completion{{WRID: 2, QP: 1, Opcode: WCRecv, ByteLen: 8 + UDHeader}}},
	})
	d := DiagnoseBy(Documented(), testCaps, nil, steps, 0)
	assert.Equal(t, []RuleID{RuleQPFlushInProgress}, d.Rules, "diagnosis %+v", d)
}

// TestAnArmThatTookEffectLateIsLimitArm: an arm accepted with the SRQ
// above its limit that takes effect only at the next post (no event at
// the fetch that went below it, one after the post) breaks LIMIT-ARM
// once: the event that comes later is that arm's, not another departure.
// The trace cannot tell it from an event one fetch late (LIMIT-FIRE),
// which the tie-break names.
func TestAnArmThatTookEffectLateIsLimitArm(t *testing.T) {
	limit := Event{Type: EventSRQLimitReached, QP: -1}
	ops := []Op{post(wr(1, 64), wr(2, 64), wr(3, 64)), Arm{Limit: 2}, send(0, 8), send(0, 8), Poll{}, post(wr(4, 64)), send(0, 8), Poll{}}
	done := func(ids ...uint64) []Completion {
		var cs []Completion
		for _, id := range ids {
			cs = append(cs, Completion{WRID: id, QP: 0, Opcode: WCRecv, ByteLen: 8})
		}
		return cs
	}
	steps := trace(t, ops, map[int]Observation{
		4: {BadWR: -1, Completions: done(1, 2)},
		7: {BadWR: -1, Completions: done(3), Events: []Event{limit}},
	})
	d := DiagnoseBy(Documented(), testCaps, nil, steps, 0)
	assert.Contains(t, d.Explains(), []RuleID{RuleLimitArm}, "diagnosis %+v", d)
	assert.Len(t, d.Rules, 1, "diagnosis %+v", d)
}

// TestAnArmThatTouchedMaxWRIsModifyOnlyMasked: arming the limit of an
// SRQ grown from 4 to 8 that put max_wr back to 4 (the next post refused
// as full, the query reading 4) breaks MODIFY-ONLY-MASKED: the arm's mask
// names only the limit.
func TestAnArmThatTouchedMaxWRIsModifyOnlyMasked(t *testing.T) {
	ops := []Op{Resize{MaxWR: 8}, Query{}, post(wr(1, 64), wr(2, 64), wr(3, 64), wr(4, 64)), Arm{Limit: 1}, post(wr(5, 64)), Query{}}
	steps := trace(t, ops, map[int]Observation{
		4: {Errno: ENOMEM, BadWR: 0},
		5: {BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2, SRQLimit: 1}},
	})
	d := DiagnoseBy(Documented(), testCaps, nil, steps, 0)
	assert.Equal(t, []RuleID{RuleModifyOnlyMasked}, d.Rules, "diagnosis %+v", d)
}

// TestAWrongLengthOnTheHeadWRIsTheCatchAlls: a byte_len one short on the
// completion of the head WR, with WRs queued behind it, is RECV-COMPLETION's:
// FETCH-FIFO's newest-first fetching, refuted by the head's completion,
// does not make that completion's fields the device's.
func TestAWrongLengthOnTheHeadWRIsTheCatchAlls(t *testing.T) {
	ops := []Op{post(wr(1, 64), wr(2, 64), wr(3, 64)), send(0, 20), Poll{}}
	steps := trace(t, ops, map[int]Observation{
		2: {BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 19}}},
	})
	d := DiagnoseBy(Documented(), testCaps, nil, steps, 0)
	assert.Equal(t, []RuleID{RuleRecvCompletion}, d.Rules, "diagnosis %+v", d)
	assert.NotContains(t, d.Explains(), []RuleID{RuleFetchFIFO}, "diagnosis %+v", d)
}

// TestAFailedCallThatDisarmedIsItsRules: a resize refused (to 0, out of
// bounds) or a destroy refused with QPs attached that disarmed the armed
// limit (the fetch below it raises nothing, srq_limit reads 0) breaks the
// promise that a failed call changes nothing: MODIFY-ONLY-MASKED's for the
// modify, DESTROY-BUSY's for the destroy.
func TestAFailedCallThatDisarmedIsItsRules(t *testing.T) {
	for _, c := range []struct {
		call Op
		want RuleID
	}{
		{Resize{MaxWR: 0}, RuleModifyOnlyMasked},
		{DestroySRQ{}, RuleDestroyBusy},
	} {
		ops := []Op{post(wr(1, 64), wr(2, 64)), Arm{Limit: 2}, Query{}, c.call, Query{}, send(0, 8), Poll{}}
		steps := trace(t, ops, map[int]Observation{
			4: {BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2}},
			6: {BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 8}}},
		})
		d := DiagnoseBy(Documented(), testCaps, nil, steps, 0)
		assert.Equal(t, []RuleID{c.want}, d.Rules, "%s: diagnosis %+v", c.call, d)
	}
}

// TestALimitReadArmedAfterTheEventIsLimitAfterFire: srq_limit read as
// armed after the limit event (before the event is polled), then 0,
// breaks LIMIT-AFTER-FIRE at that read, whenever it comes, not the
// profile's one choice of what the read says.
func TestALimitReadArmedAfterTheEventIsLimitAfterFire(t *testing.T) {
	ops := []Op{post(wr(1, 64), wr(2, 64)), Arm{Limit: 2}, send(0, 8), Query{}, Poll{}, Query{}}
	steps := trace(t, ops, map[int]Observation{
		3: {BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2, SRQLimit: 2}},
	})
	d := DiagnoseBy(Documented(), testCaps, nil, steps, 0)
	assert.Equal(t, []RuleID{RuleLimitAfterFire}, d.Rules, "diagnosis %+v", d)
}

// TestALimitReadAsAnyValueAfterTheEventIsLimitAfterFire: srq_limit read
// after the limit event as a value that is neither 0 nor the armed limit
// (here the count of WRs left at the event) breaks LIMIT-AFTER-FIRE,
// whose statement covers every read after the event, not QUERY-LIMIT: the
// relaxation admits any read there, not the shapes foreseen.
func TestALimitReadAsAnyValueAfterTheEventIsLimitAfterFire(t *testing.T) {
	ops := []Op{post(wr(1, 64), wr(2, 64), wr(3, 64)), Arm{Limit: 3}, Query{}, send(0, 8), Poll{}, Query{}}
	steps := trace(t, ops, map[int]Observation{
		5: {BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2, SRQLimit: 2}},
	})
	d := DiagnoseBy(Documented(), testCaps, nil, steps, 0)
	assert.Equal(t, []RuleID{RuleLimitAfterFire}, d.Rules, "diagnosis %+v", d)
}

// TestAnRTSQPThatTakesNoWRIsQPFetchStates: an RC QP brought back to RTS
// from SQD that answers RNR to every message while a WR is queued breaks
// QP-FETCH-STATES once (it takes no WR until its state changes), not
// RECV-RNR at every message (a device that miscounts the SRQ). POST-ORDER
// (the post left its WR out) fits this trace as well and ranks after it;
// a later post refused as full would tell them apart.
func TestAnRTSQPThatTakesNoWRIsQPFetchStates(t *testing.T) {
	ops := []Op{ModifyQP{QP: 0, State: SQD}, ModifyQP{QP: 0, State: RTS}, post(wr(1, 64)), send(0, 1), Poll{}, send(0, 1), Poll{}}
	steps := trace(t, ops, map[int]Observation{
		3: {BadWR: -1, Peer: PeerRNR}, 4: {BadWR: -1}, 5: {BadWR: -1, Peer: PeerRNR}, 6: {BadWR: -1},
	})
	d := DiagnoseBy(Documented(), testCaps, nil, steps, 0)
	assert.Equal(t, []RuleID{RuleQPFetchStates}, d.Rules, "diagnosis %+v", d)
}

// TestTheRestOfAMessageTooLongIsBlamedOnRecvTooLarge: a Send whose first
// packet took a WR too small for it, and whose rest the device answered
// with RNR where the message's failure was due, breaks RECV-TOO-LARGE: the
// poll after it shows the WR completed with LOC_LEN_ERR, so the device
// judged the message too long and told the sender the wrong thing. The
// rest's check named the catch-all RECV-COMPLETION as its rule, whose
// relaxation explained the trace alone, so the catch-all took the blame
// (a generated mutant of the emulator, qp.qp.complete.off-by-one.0ad256,
// failed RECV-TOO-LARGE for whole messages and RECV-COMPLETION for
// partial ones).
func TestTheRestOfAMessageTooLongIsBlamedOnRecvTooLarge(t *testing.T) {
	m := fixture(t, Documented())
	steps := m.history.steps()
	do := func(op Op) {
		obs := mustRun(t, m, op)
		steps = append(steps, Step{Op: op, Obs: obs})
	}
	do(post(wr(1, 4)))
	do(Arrive{QP: 0, Msg: Message{Opcode: Send, Len: 300}, FirstPacketOnly: true})
	want, err := m.Expect(ArriveRest{QP: 0})
	require.NoError(t, err)
	require.Equal(t, PeerError, want.Peer, "the model fails the message")
	steps = append(steps, Step{Op: ArriveRest{QP: 0}, Obs: Observation{BadWR: -1, Peer: PeerRNR}})
	// The poll then sees what the model expects after the message's
	// failure: the WR's LOC_LEN_ERR completion and the QP's events.
	_ = mustRun(t, m, ArriveRest{QP: 0})
	poll, err := m.Expect(Poll{})
	require.NoError(t, err)
	require.NotEmpty(t, poll.Completions)
	require.Equal(t, WCLocLenErr, poll.Completions[0].Status)
	steps = append(steps, Step{Op: Poll{}, Obs: poll})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleRecvTooLarge}, d.Rules, "diagnosis %+v", d)
}

// TestTheRestOfAMessageWhoseWRWasFlushedFailsTheSend: the QP went to ERR
// between a message's first packet and its rest. The WR was flushed
// (QP-FLUSH-INPROGRESS); the rest is still owed (the View says the QP is
// filling), and reaches a QP that takes nothing, so the sender's send
// fails (QP-NOFETCH-STATES). A device that says it went through deviates
// on that rule. A reset abandons the half-sent message: no rest is owed.
// Before, the model refused to predict the rest, so the suite never sent
// it, and the emulator's mutants of that path escaped.
func TestTheRestOfAMessageWhoseWRWasFlushedFailsTheSend(t *testing.T) {
	flushed := func() *Model {
		m := fixture(t, Documented())
		mustRun(t, m, post(wr(1, 4096)))
		mustRun(t, m, Arrive{QP: 0, Msg: Message{Opcode: Send, Len: 3000}, FirstPacketOnly: true})
		mustRun(t, m, ModifyQP{QP: 0, State: Err})
		return m
	}
	m := flushed()
	require.True(t, m.View().Filling[0], "the rest is owed after the flush")
	require.True(t, m.Predictable(ArriveRest{QP: 0}))
	want, err := m.Expect(ArriveRest{QP: 0})
	require.NoError(t, err)
	assert.Equal(t, PeerError, want.Peer)
	mustRun(t, m, ArriveRest{QP: 0})
	assert.False(t, m.View().Filling[0], "the rest arrived")

	err = flushed().Step(ArriveRest{QP: 0}, Observation{BadWR: -1, Peer: PeerOK})
	require.Error(t, err)
	assert.Equal(t, RuleQPNoFetchStates, err.(*Deviation).Rule)

	m = flushed()
	mustRun(t, m, ModifyQP{QP: 0, State: Reset})
	assert.False(t, m.View().Filling[0], "a reset abandons the rest")
	_, err = m.Expect(ArriveRest{QP: 0})
	assert.ErrorIs(t, err, ErrNotModelled)
}

// TestAFirstPacketTakenByNoWRIsQPFetchStates: a QP in RTR or RTS whose
// first packet of a message takes no WR (its sender's answer comes only
// with the rest, an error), and which takes the WR with the next message,
// breaks QP-FETCH-STATES for that one message. Before, an RTS QP was held
// stuck from the first packet on, so the next message's completion was a
// second rule's (RECV-COMPLETION), and an RTR QP's first packet was held
// to a dropped message's answer, which the harness never reads (it
// reports the model's), so no candidate lived (generated mutants
// qp.qp.DeliverFirstPacket.drop.086694 and early-return.6cbcc8).
func TestAFirstPacketTakenByNoWRIsQPFetchStates(t *testing.T) {
	for _, state := range []QPState{RTR, RTS} {
		ops := []Op{CreateSRQ{MaxWR: 4, MaxSGE: 1}, CreateQP{Type: RC}, ModifyQP{QP: 0, State: Init}, ModifyQP{QP: 0, State: RTR}}
		if state == RTS {
			ops = append(ops, ModifyQP{QP: 0, State: RTS})
		}
		ops = append(ops, post(wr(1, 64)), Arrive{QP: 0, Msg: Message{Opcode: Send, Len: 8}, FirstPacketOnly: true})
		// The device: the rest fails, nothing was taken, and the next
		// message takes the WR.
		steps := append(ran(t, Documented(), ops...),
			Step{Op: ArriveRest{QP: 0}, Obs: Observation{BadWR: -1, Peer: PeerError}},
			Step{Op: send(0, 8), Obs: Observation{BadWR: -1, Peer: PeerOK}},
			Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{
				{WRID: 1, Status: WCSuccess, Opcode: WCRecv, ByteLen: 8, QP: 0}}}})
		d := Diagnose(Documented(), testCaps, nil, steps)
		assert.Equal(t, []RuleID{RuleQPFetchStates}, d.Rules, "%s: diagnosis %+v", state, d)
	}
}

// TestAMessageCompletedOnTwoWRsIsFetchOnces: one message's completion
// written again on the next queued WR, as rxe did with 15ae32c4a355
// reverted (the responder went back to check_resource with the packet it
// had just completed). FETCH-ONCE says a consuming message takes exactly
// one WR, so it alone explains the poll; without its relaxation adopting
// the repeat, the second completion was a WR the model held queued and the
// blame fell on rules that lose or reorder WRs.
func TestAMessageCompletedOnTwoWRsIsFetchOnces(t *testing.T) {
	m := fixture(t, Documented())
	steps := m.history.steps()
	do := func(op Op) {
		steps = append(steps, Step{Op: op, Obs: mustRun(t, m, op)})
	}
	do(post(wr(1, 64), wr(2, 64), wr(3, 64)))
	do(Arrive{QP: 0, Msg: Message{Opcode: SendImm, Len: 16, Imm: 7}})
	poll, err := m.Expect(Poll{})
	require.NoError(t, err)
	require.Len(t, poll.Completions, 1)
	again := poll.Completions[0]
	again.WRID = 2
	poll.Completions = append(poll.Completions, again)
	steps = append(steps, Step{Op: Poll{}, Obs: poll})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleFetchOnce}, d.Rules, "diagnosis %+v", d)

	// The repeat took WR 2 out of the SRQ: the next message takes WR 3,
	// and that is no second departure.
	_ = mustRun(t, m, Poll{})
	msg := Arrive{QP: 0, Msg: Message{Opcode: SendImm, Len: 8, Imm: 8}}
	steps = append(steps, Step{Op: msg, Obs: mustRun(t, m, msg)})
	next, err := m.Expect(Poll{})
	require.NoError(t, err)
	require.Len(t, next.Completions, 1)
	require.Equal(t, uint64(2), next.Completions[0].WRID, "the faithful model gives WR 2")
	next.Completions[0].WRID = 3
	steps = append(steps, Step{Op: Poll{}, Obs: next})
	d = Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleFetchOnce}, d.Rules, "diagnosis %+v", d)
}

// TestAnRTSQPThatAnswersErrorAndTakesNothingIsQPFetchStates: an RC QP in
// RTS with WRs queued answers a message with an error and completes
// nothing: it took no WR, which QP-FETCH-STATES governs (RTS is a state
// that fetches). Before, that rule admitted only an RNR answer in RTS, so
// such a device (its QPs stop fetching) spread over RECV-RNR,
// RECV-COMPLETION and more. A trace that reads as well as one message
// the QP took and failed still goes to that message's rule
// (TestAFitMisjudgedOnRCIsOneDeparture).
func TestAnRTSQPThatAnswersErrorAndTakesNothingIsQPFetchStates(t *testing.T) {
	steps := queuedInRTS(t, RC, wr(1, 64), wr(2, 64))
	nak := Observation{BadWR: -1, Peer: PeerError}
	none := Observation{BadWR: -1}
	steps = append(steps, Step{Op: send(0, 8), Obs: nak}, Step{Op: Poll{}, Obs: none}, Step{Op: send(0, 8), Obs: nak}, Step{Op: Poll{}, Obs: none})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleQPFetchStates}, d.Rules, "diagnosis %+v", d)
}

// TestAUDMessageDroppedWithWRsQueuedFollowsFromQPFetchStates: a UD QP in
// RTS drops a message (its sender hears nothing either way) though WRs
// are queued. Alone, the trace is RECV-RNR's (the device took the SRQ for
// empty). Once a run has adopted QP-FETCH-STATES for the device (its QPs
// take no WR: an RC QP answered RNR or an error with WRs queued), the drop
// follows from it and is no new failure.
func TestAUDMessageDroppedWithWRsQueuedFollowsFromQPFetchStates(t *testing.T) {
	steps := queuedInRTS(t, UD, wr(1, 128), wr(2, 128))
	steps = append(steps, Step{Op: send(0, 8), Obs: Observation{BadWR: -1, Peer: PeerOK}}, Step{Op: Poll{}, Obs: Observation{BadWR: -1}})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleRecvRNR}, d.Rules, "diagnosis %+v", d)
	d = Diagnose(Documented(), testCaps, []RuleID{RuleQPFetchStates}, steps)
	assert.True(t, len(d.Rules) == 0 && !d.Unexplained, "with QP-FETCH-STATES adopted: diagnosis %+v, want the trace consistent", d)
}

// queuedInRTS is the trace of an SRQ of 4 WRs of one SGE with one QP of
// type typ taken to RTS and wrs posted, each step observed as the model
// expects.
func queuedInRTS(t *testing.T, typ QPType, wrs ...WR) []Step {
	t.Helper()
	m := New(Documented(), testCaps)
	var steps []Step
	for _, op := range []Op{CreateSRQ{MaxWR: 4, MaxSGE: 1}, CreateQP{Type: typ},
		ModifyQP{QP: 0, State: Init}, ModifyQP{QP: 0, State: RTR}, ModifyQP{QP: 0, State: RTS}, post(wrs...)} {
		steps = append(steps, Step{Op: op, Obs: mustRun(t, m, op)})
	}
	return steps
}

// TestAUDQPThatTakesNothingRaisesNoLimitEvent: once QP-FETCH-STATES is
// adopted, a UD QP in RTS that took nothing for a message leaves its WR
// queued, so the armed limit has no reason to fire: its missing event is
// no second departure (LIMIT-ARM or LIMIT-FIRE) besides.
func TestAUDQPThatTakesNothingRaisesNoLimitEvent(t *testing.T) {
	steps := ran(t, Documented(), CreateSRQ{MaxWR: 8, MaxSGE: 1}, CreateQP{Type: UD},
		ModifyQP{QP: 0, State: Init}, ModifyQP{QP: 0, State: RTR}, ModifyQP{QP: 0, State: RTS},
		post(wr(1, 128), wr(2, 128), wr(3, 128), wr(4, 128)), Arm{Limit: 4})
	steps = append(steps,
		Step{Op: send(0, 8), Obs: Observation{BadWR: -1, Peer: PeerOK}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1}})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.True(t, len(d.Rules) > 0 || d.Unexplained, "diagnosis %+v: the trace departs", d)
	d = Diagnose(Documented(), testCaps, []RuleID{RuleQPFetchStates}, steps)
	assert.True(t, len(d.Rules) == 0 && !d.Unexplained, "with QP-FETCH-STATES adopted: diagnosis %+v, want the trace consistent", d)
	// Adopted at the poll instead (the device took the SRQ for empty:
	// RECV-RNR), the event the fetch raised is taken back with it.
	d = Diagnose(Documented(), testCaps, []RuleID{RuleRecvRNR}, steps)
	assert.True(t, len(d.Rules) == 0 && !d.Unexplained, "with RECV-RNR adopted: diagnosis %+v, want the trace consistent", d)
}

// TestAnExCreateRefusedFollowsFromRefusedCreates: once CREATE-ATTR is
// adopted (the device refuses creates within its limits), the ex form
// refused too is no second departure; alone it stays CREATE-EX's first
// (TestARefusedCreateIsBlamedOnWhatGovernsIt).
func TestAnExCreateRefusedFollowsFromRefusedCreates(t *testing.T) {
	steps := []Step{{Op: CreateSRQ{MaxWR: 8, MaxSGE: 1, Variant: CreateEx}, Obs: refused(ENOMEM)}}
	d := Diagnose(Documented(), testCaps, []RuleID{RuleCreateAttr}, steps)
	assert.True(t, len(d.Rules) == 0 && !d.Unexplained, "with CREATE-ATTR adopted: diagnosis %+v, want the trace consistent", d)
	d = Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleCreateEx}, d.Rules, "alone: diagnosis %+v", d)
}

// TestAnExCreateWritingBackWrongSizesIsCreateExs: an ibv_create_srq_ex
// that succeeds but writes back sizes CREATE-ATTR does not allow (here a
// zeroed struct) is CREATE-EX's departure first, as a refused ex create is;
// once CREATE-ATTR is adopted (plain creates write back the same), the ex
// form's write-back is no second departure.
func TestAnExCreateWritingBackWrongSizesIsCreateExs(t *testing.T) {
	steps := []Step{{Op: CreateSRQ{MaxWR: 8, MaxSGE: 2, Variant: CreateEx}, Obs: Observation{BadWR: -1}}}
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleCreateEx}, d.Rules, "alone: diagnosis %+v", d)
	d = Diagnose(Documented(), testCaps, []RuleID{RuleCreateAttr}, steps)
	assert.True(t, len(d.Rules) == 0 && !d.Unexplained, "with CREATE-ATTR adopted: diagnosis %+v, want the trace consistent", d)
	plain := []Step{{Op: CreateSRQ{MaxWR: 8, MaxSGE: 2}, Obs: Observation{BadWR: -1}}}
	d = Diagnose(Documented(), testCaps, nil, plain)
	assert.Equal(t, []RuleID{RuleCreateAttr}, d.Rules, "the plain form: diagnosis %+v", d)
}

// TestAResizeMisreportedIsBlamedOnItsResizeRule: a resize below the
// outstanding count accepted with every WR kept (query then reads the
// request, and the kept WRs still complete) is RESIZE-BELOW-COUNT's
// departure; a grow whose query reads one less than the request while
// the request's WRs all fit is RESIZE-CAPACITY's, not QUERY-ATTR's, and
// the next query reading the same is no new departure.
func TestAResizeMisreportedIsBlamedOnItsResizeRule(t *testing.T) {
	attr := func(maxWR uint32) Observation { return Observation{BadWR: -1, Attr: SRQAttr{MaxWR: maxWR, MaxSGE: 2}} }
	t.Run("below the count, kept", func(t *testing.T) {
		steps := trace(t, []Op{post(wr(1, 8), wr(2, 8), wr(3, 8)), Resize{MaxWR: 2}, Query{}, post(wr(4, 8)), send(0, 1), send(0, 1), send(0, 1), Poll{}},
			map[int]Observation{1: refused(0), 2: attr(2), 3: {Errno: ENOMEM, BadWR: 0},
				7: {BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 1}, {WRID: 2, QP: 0, Opcode: WCRecv, ByteLen: 1}, {WRID: 3, QP: 0, Opcode: WCRecv, ByteLen: 1}}}})
		d := Diagnose(Documented(), testCaps, nil, steps)
		assert.Equal(t, []RuleID{RuleResizeBelowCount}, d.Rules, "diagnosis %+v", d)
	})
	t.Run("below the count, nothing changed but the report", func(t *testing.T) {
		steps := trace(t, []Op{post(wr(1, 8), wr(2, 8)), Resize{MaxWR: 1}, Query{}, post(wr(3, 8)), post(wr(4, 8)), Query{}, post(wr(5, 8))},
			map[int]Observation{1: refused(0), 2: attr(1), 3: refused(0), 4: refused(0), 5: attr(1), 6: {Errno: ENOMEM, BadWR: 0}})
		d := Diagnose(Documented(), testCaps, nil, steps)
		assert.Equal(t, []RuleID{RuleResizeBelowCount}, d.Rules, "diagnosis %+v", d)
	})
	t.Run("grow, query one short", func(t *testing.T) {
		var posts []Op
		for i := range 12 {
			posts = append(posts, post(wr(uint64(i+1), 8)))
		}
		ops := append([]Op{Resize{MaxWR: 12}, Query{}}, posts...)
		ops = append(ops, Query{})
		got := map[int]Observation{0: refused(0), 1: attr(11), 14: attr(11)}
		for i := range 12 {
			got[2+i] = refused(0) // all twelve fit
		}
		d := Diagnose(Documented(), testCaps, nil, trace(t, ops, got))
		assert.Equal(t, []RuleID{RuleResizeCapacity}, d.Rules, "diagnosis %+v", d)
	})
}

// TestAResizeMayLeaveLeakedSlotsBehind: a device whose error completions
// never give their slot back (SLOT-FREE) and whose resize copies only
// the outstanding WRs into the new ring accepts a resize to the live
// count: SLOT-FREE alone explains it, not a second rule for the resize.
func TestAResizeMayLeaveLeakedSlotsBehind(t *testing.T) {
	full := Observation{Errno: ENOMEM, BadWR: 0}
	steps := trace(t, []Op{
		post(wr(1, 8)), post(wr(2, 8)), post(wr(3, 8)), post(wr(4, 8)),
		send(1, 8), Poll{}, post(wr(5, 8)), Resize{MaxWR: 3}, Query{}, post(wr(6, 8)),
	}, map[int]Observation{6: full, 7: refused(0), 8: {BadWR: -1, Attr: SRQAttr{MaxWR: 3, MaxSGE: 2}}, 9: full})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleSlotFree}, d.Rules, "diagnosis %+v", d)
}

// TestAnAckedMessageWithNoWRIsBlamedOnRecvRNR: an RC message meeting an
// empty SRQ, and one meeting an SRQ in error, both acknowledged with no
// WR taken, are one departure shape of RECV-RNR (what the sender hears
// of a message the SRQ has no WR for): RECV-RNR alone explains each, so
// a run that shows both is blamed on it alone, not on it and
// SRQ-ERR-NOFETCH.
func TestAnAckedMessageWithNoWRIsBlamedOnRecvRNR(t *testing.T) {
	ok := Observation{BadWR: -1}
	for _, c := range []struct {
		name string
		ops  []Op
	}{
		{"empty", []Op{send(0, 8), Poll{}}},
		{"in error", []Op{post(wr(1, 8)), InjectSRQError{}, send(0, 8), Poll{}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := len(c.ops)
			d := Diagnose(Documented(), testCaps, nil, trace(t, c.ops, map[int]Observation{n - 2: ok}))
			assert.Contains(t, d.Explains(), []RuleID{RuleRecvRNR}, "diagnosis %+v", d)
		})
	}
}

// TestACompletionNamingAnotherWRIsBlamedOnRecvCompletion: a poll whose
// second completion carries the first's wr_id, the WRs otherwise taken
// in order (the third completes as itself, and nothing else completes
// later), is RECV-COMPLETION's departure: the wr_id a completion
// carries is what it governs. No fetch rule, nor pair, explains it.
func TestACompletionNamingAnotherWRIsBlamedOnRecvCompletion(t *testing.T) {
	c := func(id uint64) Completion { return Completion{WRID: id, QP: 0, Opcode: WCRecv, ByteLen: 1} }
	steps := trace(t, []Op{post(wr(1, 8), wr(2, 8), wr(3, 8)), send(0, 1), send(0, 1), send(0, 1), Poll{}, post(wr(4, 8)), send(0, 1), Poll{}},
		map[int]Observation{4: {BadWR: -1, Completions: []Completion{c(1), c(1), c(3)}}, 7: {BadWR: -1, Completions: []Completion{c(4)}}})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleRecvCompletion}, d.Rules, "diagnosis %+v", d)
}

// TestAnERRAppliedAfterTheNextPacketIsBlamedOnQPNoFetchStates: a QP
// moved to ERR while it fills a WR that goes on filling it (no flush
// when polled, and the rest of the message completes the WR) processed
// a message in ERR: QP-NOFETCH-STATES alone explains it, as it explains
// a whole message taken after the modify, so that a device showing both
// is blamed on one rule.
func TestAnERRAppliedAfterTheNextPacketIsBlamedOnQPNoFetchStates(t *testing.T) {
	ok := Observation{BadWR: -1}
	steps := trace(t, []Op{
		post(wr(1, 4096), wr(2, 4096)), Arrive{QP: 0, Msg: Message{Opcode: Send, Len: 3000}, FirstPacketOnly: true},
		ModifyQP{QP: 0, State: Err}, Poll{}, ArriveRest{QP: 0}, Poll{},
	}, map[int]Observation{
		3: {BadWR: -1, Events: []Event{{Type: EventQPLastWQEReached, QP: 0}}},
		4: ok,
		5: {BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 3000}}},
	})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Contains(t, d.Explains(), []RuleID{RuleQPNoFetchStates}, "diagnosis %+v", d)
}

// TestRefusedCreatesOfAnotherSRQAreOneRule: a device that refuses every
// create of another SRQ within its limits, plain and extended alike,
// breaks CREATE-MAX (a create within the limits succeeds), and the
// extended create making the same SRQ as the plain one follows from it;
// an extended create refused alone stays CREATE-EX's.
func TestRefusedCreatesOfAnotherSRQAreOneRule(t *testing.T) {
	plain := CreateOther{MaxWR: 8, MaxSGE: 1, Variant: CreatePlain}
	ex := CreateOther{MaxWR: 8, MaxSGE: 1, Variant: CreateEx}
	d := Diagnose(Documented(), testCaps, nil, trace(t, []Op{plain, ex}, map[int]Observation{0: refused(EINVAL), 1: refused(EINVAL)}))
	assert.Equal(t, []RuleID{RuleCreateMax}, d.Rules, "both refused: diagnosis %+v", d)
	d = Diagnose(Documented(), testCaps, nil, trace(t, []Op{plain, ex}, map[int]Observation{1: refused(EINVAL)}))
	assert.Equal(t, []RuleID{RuleCreateEx}, d.Rules, "the extended refused alone: diagnosis %+v", d)
}

// TestAResizeThatRearmsTheLastLimitIsBlamedOnModifyOnlyMasked: after the
// limit fired (srq_limit reads 0), a resize that armed the SRQ again at
// the last limit (query reads it, and the next fetch below raises the
// event again) changed an attribute its mask did not name:
// MODIFY-ONLY-MASKED alone, not LIMIT-AFTER-FIRE and LIMIT-ONCE.
func TestAResizeThatRearmsTheLastLimitIsBlamedOnModifyOnlyMasked(t *testing.T) {
	limit := Event{Type: EventSRQLimitReached, QP: -1}
	c := func(id uint64) Completion { return Completion{WRID: id, QP: 0, Opcode: WCRecv, ByteLen: 1} }
	steps := trace(t, []Op{post(wr(1, 8), wr(2, 8)), Arm{Limit: 2}, send(0, 1), Poll{}, Resize{MaxWR: 8}, Query{}, send(0, 1), Poll{}},
		map[int]Observation{
			3: {BadWR: -1, Completions: []Completion{c(1)}, Events: []Event{limit}},
			4: refused(0),
			5: {BadWR: -1, Attr: SRQAttr{MaxWR: 8, MaxSGE: 2, SRQLimit: 2}},
			7: {BadWR: -1, Completions: []Completion{c(2)}, Events: []Event{limit}},
		})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleModifyOnlyMasked}, d.Rules, "diagnosis %+v", d)
}

// TestAnErrorCompletionHoldingItsSlotIsBlamedOnSlotFree: a device that
// frees a WR's slot at fetch (a post right after a successful fetch
// fits) but holds the slot of a WR that completed with an error until the
// completion is polled (the post after it finds the queue full) frees
// slots at another time than the profile says: SLOT-FREE, not POST-FULL.
func TestAnErrorCompletionHoldingItsSlotIsBlamedOnSlotFree(t *testing.T) {
	full := Observation{Errno: ENOMEM, BadWR: 0}
	steps := trace(t, []Op{
		post(wr(1, 8), wr(2, 8), wr(3, 8), wr(4, 8)), post(wr(5, 8)), send(0, 1), post(wr(6, 8)),
		send(1, 1), post(wr(7, 8)), Poll{}, post(wr(8, 8)),
	}, map[int]Observation{1: full, 3: refused(0), 5: full, 7: refused(0)})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleSlotFree}, d.Rules, "diagnosis %+v", d)
}

// TestACheckOrderThatChangesIsBlamedOnPostCheckOrder: a WR with too many
// SGEs meeting a full queue refused with ENOMEM once and with EINVAL
// later (a driver whose check order changes, as after a ring wrap) breaks
// POST-CHECK-ORDER, whose relaxation admits either check's errno at any
// such post, not POST-SGE.
func TestACheckOrderThatChangesIsBlamedOnPostCheckOrder(t *testing.T) {
	steps := trace(t, []Op{post(wr(1, 8), wr(2, 8), wr(3, 8), wr(4, 8)), post(wr(5, 8, 8, 8)), Poll{}, post(wr(6, 8, 8, 8))},
		map[int]Observation{1: {Errno: ENOMEM, BadWR: 0}, 3: {Errno: EINVAL, BadWR: 0}})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RulePostCheckOrder}, d.Rules, "diagnosis %+v", d)
}

// TestAThirdErrnoWhereBothChecksApplyIsPostCheckOrders: a WR with too
// many SGEs meeting a full queue refused with ENOSPC, neither check's
// errno, breaks POST-CHECK-ORDER, whose statement is the errno of a WR
// that meets both checks; a full queue alone still gets ENOMEM, so it is
// not POST-FULL's. A device that gives ENOSPC to a full queue alone as
// well is POST-FULL's, for both (as faulty2's full-mid-list-eagain, with
// EAGAIN, whose test this replaces: it held the third errno to be always
// the first check's, even where nothing shows a full queue alone gets it).
func TestAThirdErrnoWhereBothChecksApplyIsPostCheckOrders(t *testing.T) {
	const enospc = 28
	fill := post(wr(1, 8), wr(2, 8), wr(3, 8), wr(4, 8))
	third := Observation{Errno: enospc, BadWR: 0}
	steps := trace(t, []Op{fill, post(wr(5, 8)), post(wr(6, 8, 8, 8))},
		map[int]Observation{1: {Errno: ENOMEM, BadWR: 0}, 2: third})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RulePostCheckOrder}, d.Rules, "diagnosis %+v", d)
	steps = trace(t, []Op{fill, post(wr(5, 8)), post(wr(6, 8, 8, 8))},
		map[int]Observation{1: third, 2: third})
	d = Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RulePostFull}, d.Rules, "diagnosis %+v", d)
}

// TestADeviceWhoseCopiesHoldNothingIsBlamedOnPostCopy: a device that keeps
// an empty WQE for every WR posted (no SGEs, wr_id 0) fails a fitting
// message with a length error and names a wr_id no WR carried. That is
// the SRQ's copy of the WR, which POST-COPY governs in every field, not
// the catch-all's wr_id nor the fit.
func TestADeviceWhoseCopiesHoldNothingIsBlamedOnPostCopy(t *testing.T) {
	m := fixture(t, Documented())
	mustRun(t, m, post(wr(1, 64), wr(2, 64)))
	steps := append(m.history.steps(),
		Step{Op: send(0, 1), Obs: Observation{BadWR: -1, Peer: PeerError}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 0, QP: 0, Status: WCLocLenErr}},
			Events: []Event{{Type: EventQPLastWQEReached, QP: 0}}}})
	assert.Equal(t, []string{"POST-COPY"}, RuleNames(Diagnose(Documented(), testCaps, nil, steps).Rules))
}

// TestAGarbledCopyIsRefutedByTheWRIDPosted: the branch that takes the
// device's copies for garbled is refuted by a completion that names the
// wr_id posted: a fitting message failed on its own WR is not POST-COPY's.
func TestAGarbledCopyIsRefutedByTheWRIDPosted(t *testing.T) {
	m := fixture(t, Documented())
	mustRun(t, m, post(wr(1, 64), wr(2, 64)))
	steps := append(m.history.steps(),
		Step{Op: send(0, 1), Obs: Observation{BadWR: -1, Peer: PeerError}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Status: WCLocLenErr}},
			Events: []Event{{Type: EventQPLastWQEReached, QP: 0}}}})
	d := Diagnose(Documented(), testCaps, nil, steps)
	require.NotEmpty(t, d.Rules)
	for _, set := range d.Explains() {
		assert.NotEqual(t, []string{"POST-COPY"}, RuleNames(set))
	}
}

// TestAModifyRefusedThatTookEffectIsBlamedOnQPTransitions: a device that
// returns an error from a legal modify to RESET but resets the QP all the
// same breaks QP-TRANSITIONS, which governs the QP's state as well as the
// return value: the message the reset QP then drops is what follows, not
// a second rule's departure.
func TestAModifyRefusedThatTookEffectIsBlamedOnQPTransitions(t *testing.T) {
	m := fixture(t, Documented())
	mustRun(t, m, post(wr(1, 64)))
	mustRun(t, m, ModifyQP{QP: 0, State: Reset})
	mustRun(t, m, send(0, 8))
	mustRun(t, m, Poll{})
	steps := m.history.steps()
	reset := len(steps) - 3
	require.Equal(t, ModifyQP{QP: 0, State: Reset}, steps[reset].Op)
	steps[reset].Obs = Observation{Errno: EINVAL, BadWR: -1}
	assert.Equal(t, []string{"QP-TRANSITIONS"}, RuleNames(Diagnose(Documented(), testCaps, nil, steps).Rules))
}

// TestAFetchFromAnEmptySlotIsBlamedOnFetchFIFO: a device that fetches one
// slot past the head takes the second WR for the first message and, for
// the second, a slot that holds no WR (zeroed memory: wr_id 0, no SGEs),
// which fails a fitting message. Which slot a message takes is FETCH-FIFO's
// to govern, whatever the slot holds; the catch-all's wr_id is not the
// promise broken, and the WR posted does carry its wr_id (not POST-COPY's).
func TestAFetchFromAnEmptySlotIsBlamedOnFetchFIFO(t *testing.T) {
	m := fixture(t, Documented())
	mustRun(t, m, post(wr(1, 64), wr(2, 64)))
	steps := append(m.history.steps(),
		Step{Op: send(0, 8), Obs: Observation{BadWR: -1, Peer: PeerOK}},
		Step{Op: send(0, 8), Obs: Observation{BadWR: -1, Peer: PeerError}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{
			{WRID: 2, QP: 0, Opcode: WCRecv, ByteLen: 8},
			{WRID: 0, QP: 0, Status: WCLocLenErr}},
			Events: []Event{{Type: EventQPLastWQEReached, QP: 0}}}})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []string{"FETCH-FIFO"}, RuleNames(d.Rules), "diagnosis %+v", d)
}

// TestAWRIDTruncatedToZeroIsNotAnEmptySlot: a completion whose wr_id is
// the low 32 bits of the WR's (0 for 1<<40) is the completion's fault,
// not a fetch from an empty slot, though an empty slot's wr_id is 0 too.
func TestAWRIDTruncatedToZeroIsNotAnEmptySlot(t *testing.T) {
	m := fixture(t, Documented())
	mustRun(t, m, post(wr(1<<40, 64)))
	steps := append(m.history.steps(),
		Step{Op: send(0, 8), Obs: Observation{BadWR: -1, Peer: PeerOK}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 0, QP: 0, Opcode: WCRecv, ByteLen: 8}}}})
	d := Diagnose(Documented(), testCaps, nil, steps)
	require.NotEmpty(t, d.Rules, "diagnosis %+v", d)
	assert.NotContains(t, d.Explains(), []RuleID{RuleFetchFIFO}, "diagnosis %+v", d)
}

// TestACompletionThatNeverCameIsBlamedOnTheRuleThatPromisedIt: three
// messages each took a WR, and the poll lacks the middle one's
// completion, then the last one's, and a later poll returns nothing: the
// device lost them. A completion that never comes departs from the rule
// that promised it, here RECV-COMPLETION's for a message that fit; a
// poll that held it back (POLL-MAX) would have returned it later.
func TestACompletionThatNeverCameIsBlamedOnTheRuleThatPromisedIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  []uint64
	}{
		{"the middle one", []uint64{1, 3}},
		{"the last one", []uint64{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := fixture(t, Documented())
			mustRun(t, m, post(wr(1, 64), wr(2, 64), wr(3, 64)))
			steps := m.history.steps()
			for range 3 {
				steps = append(steps, Step{Op: send(0, 8), Obs: Observation{BadWR: -1, Peer: PeerOK}})
			}
			var cs []Completion
			for _, id := range tc.got {
				cs = append(cs, Completion{WRID: id, QP: 0, Opcode: WCRecv, ByteLen: 8})
			}
			steps = append(steps, Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: cs}}, Step{Op: Poll{}, Obs: Observation{BadWR: -1}})
			d := Diagnose(Documented(), testCaps, nil, steps)
			assert.Equal(t, []string{"RECV-COMPLETION"}, RuleNames(d.Rules), "diagnosis %+v", d)
		})
	}
}

// TestABoundCheckTurnedRoundIsResizeBounds: a device whose bound check
// refuses, with EINVAL, a resize within the bounds and takes one above
// max_srq_wr, and then reports the request, breaks RESIZE-BOUNDS alone:
// the check governs the bounds both ways, and what query reports of a
// resize it let through is its departure, not QUERY-ATTR's.
func TestABoundCheckTurnedRoundIsResizeBounds(t *testing.T) {
	above := testCaps.MaxSRQWR + 1
	for _, c := range []struct {
		name string
		ops  []Op
		got  map[int]Observation
	}{
		{"taken above max_srq_wr, then queried", []Op{Resize{MaxWR: above}, Query{}},
			map[int]Observation{0: refused(0), 1: {BadWR: -1, Attr: SRQAttr{MaxWR: above, MaxSGE: 2}}}},
		{"refused within the bounds and taken above them", []Op{Resize{MaxWR: 12}, Resize{MaxWR: above}, Query{}},
			map[int]Observation{0: refused(EINVAL), 1: refused(0), 2: {BadWR: -1, Attr: SRQAttr{MaxWR: above, MaxSGE: 2}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Diagnose(Documented(), testCaps, nil, trace(t, c.ops, c.got))
			assert.Equal(t, []RuleID{RuleResizeBounds}, d.Rules, "diagnosis %+v", d)
		})
	}
}

// TestAQueryBelowWhatTheDeviceTookIsPostFulls: after a resize, whose
// capacity the model knows only as a lower bound, the device took one WR
// more than max_wr and query reports max_wr: POST-FULL governs how many
// WRs fit, and explains the report with the posts, as RESIZE-CAPACITY
// does (a run with a post past max_wr elsewhere is then POST-FULL's alone).
func TestAQueryBelowWhatTheDeviceTookIsPostFulls(t *testing.T) {
	m := New(Documented(), testCaps)
	steps := []Step{
		{Op: CreateSRQ{MaxWR: 2, MaxSGE: 1}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 2, MaxSGE: 1}}},
		{Op: Resize{MaxWR: 2}, Obs: refused(0)},
		{Op: post(wr(1, 8)), Obs: refused(0)},
		{Op: post(wr(2, 8)), Obs: refused(0)},
		{Op: post(wr(3, 8)), Obs: refused(0)},
		{Op: Query{}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 2, MaxSGE: 1}}},
	}
	for _, s := range steps[:2] {
		_, err := m.Run(s.Op)
		require.NoError(t, err)
	}
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Contains(t, d.Explains(), []RuleID{RulePostFull}, "diagnosis %+v", d)
}

// TestAUDQPThatBuffersBeforeRTRWhereRCDropsIsQPBeforeRTRs: a device that
// buffers a UD message that reached the QP in INIT and processes it at
// RTR, where an RC message in INIT was dropped, breaks QP-BEFORE-RTR
// alone: the rule governs every message before RTR, whatever the QP's
// type, and the profile's one choice need not hold for both.
func TestAUDQPThatBuffersBeforeRTRWhereRCDropsIsQPBeforeRTRs(t *testing.T) {
	ops := []Op{CreateSRQ{MaxWR: 4, MaxSGE: 1}, CreateQP{Type: RC}, CreateQP{Type: UD},
		ModifyQP{QP: 0, State: Init}, ModifyQP{QP: 1, State: Init}, post(wr(1, 64), wr(2, 64))}
	m := New(Documented(), testCaps)
	var steps []Step
	for _, op := range ops {
		obs, err := m.Run(op)
		require.NoError(t, err)
		steps = append(steps, Step{Op: op, Obs: obs})
	}
	steps = append(steps,
		Step{Op: send(0, 8), Obs: Observation{BadWR: -1, Peer: PeerError}},
		Step{Op: send(1, 8), Obs: Observation{BadWR: -1, Peer: PeerOK}},
		Step{Op: ModifyQP{QP: 0, State: RTR}, Obs: refused(0)},
		Step{Op: ModifyQP{QP: 1, State: RTR}, Obs: refused(0)},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 1, QP: 1, Opcode: WCRecv, ByteLen: 8 + UDHeader}}}})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleQPBeforeRTR}, d.Rules, "diagnosis %+v", d)
}

// TestADeviceHoldingOtherThanMaxWRIsPostFulls: a device that holds one WR
// fewer than the max_wr it reports (a post refused as full pinned the
// capacity at the request, below what query then reports), or one more (a resize below
// the count it holds taken, query reporting the request), departs from
// POST-FULL, which governs how many WRs fit against max_wr: it explains
// the query and the resize, as the rules of those verbs do.
func TestADeviceHoldingOtherThanMaxWRIsPostFulls(t *testing.T) {
	for _, c := range []struct {
		name  string
		steps []Step
	}{
		{"holds one fewer than it reports", []Step{
			{Op: CreateSRQ{MaxWR: 2, MaxSGE: 1}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 2, MaxSGE: 1}}},
			{Op: Resize{MaxWR: 3}, Obs: refused(0)},
			{Op: post(wr(1, 8), wr(2, 8), wr(3, 8)), Obs: refused(0)},
			{Op: post(wr(4, 8)), Obs: Observation{Errno: ENOMEM, BadWR: 0}},
			{Op: Query{}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 1}}},
		}},
		{"takes a resize below the count it holds", []Step{
			{Op: CreateSRQ{MaxWR: 4, MaxSGE: 1}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 1}}},
			{Op: post(wr(1, 8), wr(2, 8)), Obs: refused(0)},
			{Op: Resize{MaxWR: 1}, Obs: refused(0)},
			{Op: Query{}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 1, MaxSGE: 1}}},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Diagnose(Documented(), testCaps, nil, c.steps)
			require.NotEmpty(t, d.Rules, "diagnosis %+v", d)
			assert.Contains(t, d.Explains(), []RuleID{RulePostFull}, "diagnosis %+v", d)
		})
	}
}

// TestAFailingListThatLeavesAPhantomIsPostOrders: a device whose error
// path moves the producer index one slot too far leaves, after a failing
// list, a slot that holds no WR (wr_id 0, no SGEs) in the queue, which a
// message then takes: POST-ORDER, which governs what a failing list
// leaves in the queue.
func TestAFailingListThatLeavesAPhantomIsPostOrders(t *testing.T) {
	m := fixture(t, Documented())
	steps := m.history.steps()
	bad := WR{ID: 2, NumSGE: -1}
	steps = append(steps,
		Step{Op: post(wr(1, 64), bad), Obs: Observation{Errno: EINVAL, BadWR: 1}},
		Step{Op: send(0, 0), Obs: Observation{BadWR: -1, Peer: PeerOK}},
		Step{Op: send(0, 0), Obs: Observation{BadWR: -1, Peer: PeerOK}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{
			{WRID: 1, QP: 0, Opcode: WCRecv}, {WRID: 0, QP: 0, Opcode: WCRecv}}}})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RulePostOrder}, d.Rules, "diagnosis %+v", d)
}

// TestARefusedArmThatDisarmsIsLimitBounds: LIMIT-BOUND promises an arm
// above the bound fails and changes nothing. A device that refuses it but
// disarms the limit armed before breaks that promise: relaxed, the rule
// admits it, as DESTROY-BUSY and MODIFY-ONLY-MASKED admit a refused call
// that disarmed.
func TestARefusedArmThatDisarmsIsLimitBounds(t *testing.T) {
	wr := func(id uint64) WR { return WR{ID: id, NumSGE: 1, SGEs: []SGE{{Length: 64}}} }
	steps := trace(t, []Op{post(wr(1), wr(2)), Arm{Limit: 1}, Arm{Limit: 100}, Query{}},
		map[int]Observation{3: {BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2}}})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Contains(t, d.Explains(), []RuleID{RuleLimitBound}, "%+v", d)
	n, ok, _ := DeparturesWithin(Documented(), testCaps, nil, steps, []RuleID{RuleLimitBound}, nil)
	require.True(t, ok)
	assert.Equal(t, 1, n)
}

// TestARefusedDestroyThatDisarmsIsDestroyBusys: a destroy refused while QPs
// are attached, after which a query reads the limit disarmed, is one
// departure of DESTROY-BUSY (the refusal changes nothing). An arm that
// did not take fits too, but only as an arm that may take at some later
// step, two departures: DESTROY-BUSY comes before LIMIT-ARM, though
// LIMIT-ARM comes first in Specificity. (QUERY-LIMIT, one departure,
// comes first: this trace alone cannot tell a query that lies; the run
// without the destroy can, conformance's tellApart.)
func TestARefusedDestroyThatDisarmsIsDestroyBusys(t *testing.T) {
	wr := func(id uint64) WR { return WR{ID: id, NumSGE: 1, SGEs: []SGE{{Length: 64}}} }
	steps := trace(t, []Op{post(wr(1), wr(2)), Arm{Limit: 1}, DestroySRQ{}, Query{}},
		map[int]Observation{3: {BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2}}})
	d := Diagnose(Documented(), testCaps, nil, steps)
	sets := d.Explains()
	busy := slices.IndexFunc(sets, func(s []RuleID) bool { return slices.Equal(s, []RuleID{RuleDestroyBusy}) })
	arm := slices.IndexFunc(sets, func(s []RuleID) bool { return slices.Equal(s, []RuleID{RuleLimitArm}) })
	require.GreaterOrEqual(t, busy, 0, "%+v", d)
	require.GreaterOrEqual(t, arm, 0, "%+v", d)
	assert.Less(t, busy, arm, "DESTROY-BUSY's one departure comes before LIMIT-ARM's two: %+v", d)
	n, ok, _ := DeparturesWithin(Documented(), testCaps, nil, steps, []RuleID{RuleLimitArm}, nil)
	require.True(t, ok, "an arm that did not take fits the trace too")
	assert.Equal(t, 2, n)
}

// twoCompletionsDue returns operations after which the CQ holds two
// completions (two WRs posted, two messages to QP 0), and the poll for all
// that returns both.
func twoCompletionsDue(t *testing.T) ([]Op, Observation) {
	t.Helper()
	wr := func(id uint64) WR { return WR{ID: id, NumSGE: 1, SGEs: []SGE{{Length: 64}}} }
	ops := []Op{post(wr(1), wr(2)), send(0, 8), send(0, 8)}
	all := trace(t, append(ops, Poll{}), nil)
	both := all[len(all)-1].Obs
	require.Len(t, both.Completions, 2)
	return ops, both
}

// TestAPollPastNumEntriesIsPollMaxs: a poll asked for one completion that
// returns both the CQ holds departs from POLL-MAX alone, and the next poll,
// finding the CQ empty, is no second departure. Without the rule the
// trace is explained by no rule (the catch-all RECV-COMPLETION cannot
// take a completion the model already holds).
func TestAPollPastNumEntriesIsPollMaxs(t *testing.T) {
	ops, both := twoCompletionsDue(t)
	empty := Observation{BadWR: -1}
	steps := trace(t, append(ops, Poll{Max: 1}, Poll{}), map[int]Observation{3: both, 4: empty})
	m := New(Documented(), testCaps)
	var err error
	for _, st := range steps {
		if err = m.Step(st.Op, st.Obs); err != nil {
			break
		}
	}
	var dv *Deviation
	require.ErrorAs(t, err, &dv)
	assert.Equal(t, RulePollMax, dv.Rule, "the check that notices it is POLL-MAX's")
	d := Diagnose(Documented(), testCaps, nil, steps)
	require.NotEmpty(t, d.Explains(), "%+v", d)
	assert.Equal(t, []RuleID{RulePollMax}, d.Explains()[0], "%+v", d)
	n, ok, _ := DeparturesWithin(Documented(), testCaps, nil, steps, []RuleID{RulePollMax}, nil)
	require.True(t, ok)
	assert.Equal(t, 1, n)
}

// TestAPollThatReturnsTooFewIsPollMaxs: two completions due, a poll of
// num_entries 2 returns the first only, and the next poll the second: a
// poll returns the first num_entries the CQ holds (man ibv_poll_cq(3)),
// so the short poll is POLL-MAX's departure, one that RECV-COMPLETION,
// whose completion came after all, does not explain; so are polls of one
// that return none, as long as the poll for all returns them. A
// completion that a poll for all does not return, and no poll ever does,
// is its own rule's to lose, not a poll's to hold.
func TestAPollThatReturnsTooFewIsPollMaxs(t *testing.T) {
	ops, both := twoCompletionsDue(t)
	first := Observation{BadWR: -1, Completions: both.Completions[:1]}
	second := Observation{BadWR: -1, Completions: both.Completions[1:]}
	empty := Observation{BadWR: -1}
	steps := trace(t, append(ops, Poll{Max: 2}, Poll{}), map[int]Observation{3: first, 4: second})
	d := Diagnose(Documented(), testCaps, nil, steps)
	require.NotEmpty(t, d.Explains(), "%+v", d)
	assert.Equal(t, []RuleID{RulePollMax}, d.Rules, "%+v", d)
	assert.NotContains(t, d.Explains(), []RuleID{RuleRecvCompletion}, "%+v", d)

	// A device whose bound is one short returns nothing at every poll of
	// one, and the poll for all returns what they held back.
	oneShort := trace(t, append(ops, Poll{Max: 1}, Poll{Max: 1}, Poll{}), map[int]Observation{3: empty, 4: empty, 5: both})
	d = Diagnose(Documented(), testCaps, nil, oneShort)
	assert.Equal(t, []RuleID{RulePollMax}, d.Rules, "polls of one that return none: %+v", d)

	never := trace(t, append(ops, Poll{Max: 2}, Poll{}, Poll{}), map[int]Observation{3: first, 4: empty, 5: empty})
	d = Diagnose(Documented(), testCaps, nil, never)
	require.NotEmpty(t, d.Explains(), "%+v", d)
	assert.Equal(t, []RuleID{RuleRecvCompletion}, d.Rules, "a completion that never comes: %+v", d)
}

// TestExtraLimitEventsOfAnArmingBeforeARearmAreLimitOnces: an arming
// fires as a fetch takes the count below it, and the SRQ is armed again
// before the poll, which shows the event twice (a device that raises it
// once per attached QP). The extra event is the fired arming's, which
// LIMIT-ONCE governs, though the SRQ's arming now has not fired.
func TestExtraLimitEventsOfAnArmingBeforeARearmAreLimitOnces(t *testing.T) {
	ops := []Op{post(wr(1, 64), wr(2, 64)), Arm{Limit: 2}, send(0, 1), Arm{Limit: 1}, Poll{}}
	right := trace(t, ops, nil)
	got := right[len(right)-1].Obs
	require.Equal(t, []Event{{Type: EventSRQLimitReached, QP: -1}}, got.Events)
	got.Events = append(slices.Clone(got.Events), got.Events[0])
	steps := trace(t, ops, map[int]Observation{4: got})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleLimitOnce}, d.Rules, "%+v", d)
}

// TestAUDSumWrongForOneNumSGEIsRecvFits: on UD a fitting message into a
// WR of two SGEs, far from the boundary, completes with a length error
// (a sum that miscounts each SGE), and a later fitting message into a
// WR of one SGE completes as it should. RECV-FIT explains both: the
// device's misjudgement holds for WRs of as many SGEs, not for every WR.
// So does a sum that counts none, which misjudges every WR.
func TestAUDSumWrongForOneNumSGEIsRecvFits(t *testing.T) {
	two := WR{ID: 1, NumSGE: 2, SGEs: []SGE{{Length: 40}, {Length: 40}}}
	ud := func(n uint32) Arrive { return Arrive{QP: 1, Msg: Message{Opcode: Send, Len: n}} }
	ops := []Op{post(two, WR{ID: 2, NumSGE: 1, SGEs: []SGE{{Length: 64}}}), ud(1), ud(1), Poll{}}
	right := trace(t, ops, nil)
	got := right[len(right)-1].Obs
	require.Len(t, got.Completions, 2)
	lenErr := func(c Completion) Completion {
		return Completion{WRID: c.WRID, QP: c.QP, Status: WCLocLenErr}
	}
	oneWrong := got
	oneWrong.Completions = []Completion{lenErr(got.Completions[0]), got.Completions[1]}
	steps := trace(t, ops, map[int]Observation{3: oneWrong})
	n, ok, _ := DeparturesWithin(Documented(), testCaps, nil, steps, []RuleID{RuleRecvFit}, nil)
	require.True(t, ok, "a sum wrong for two SGEs, right for one")
	assert.Equal(t, 2, n, "a far flip counts two")
	bothWrong := got
	bothWrong.Completions = []Completion{lenErr(got.Completions[0]), lenErr(got.Completions[1])}
	steps = trace(t, ops, map[int]Observation{3: bothWrong})
	_, ok, _ = DeparturesWithin(Documented(), testCaps, nil, steps, []RuleID{RuleRecvFit}, nil)
	assert.True(t, ok, "a sum that counts none misjudges every WR")
}

// TestAnEmptyWRThatTookOneByteIsAtRecvFitsBoundary: a WR of num_sge 0
// that took a 1-byte message departs from RECV-NUMSGE0, and from RECV-FIT
// with one departure, as any WR whose room is off by one: the boundary
// of a room of 0 bytes.
func TestAnEmptyWRThatTookOneByteIsAtRecvFitsBoundary(t *testing.T) {
	ops := []Op{post(WR{ID: 1}), send(0, 1), Poll{}}
	steps := trace(t, ops, map[int]Observation{1: {BadWR: -1, Peer: PeerOK},
		2: {BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Status: WCSuccess, Opcode: WCRecv, ByteLen: 1}}}})
	for _, r := range []RuleID{RuleRecvNumSGE0, RuleRecvFit} {
		n, ok, _ := DeparturesWithin(Documented(), testCaps, nil, steps, []RuleID{r}, nil)
		require.True(t, ok, "%s", r)
		assert.Equal(t, 1, n, "%s", r)
	}
}

// TestAResizeTakenBelowTheCountShowsWRsLeftOut: six posts that returned 0
// and then a resize to 4 that the device took (its query reports 4): a
// device whose posts left WRs out of its queue holds fewer than six, and
// the resize is where that shows. POST-ORDER explains it with one
// departure, as RESIZE-BELOW-COUNT does; a run whose other traces show
// WRs left out (an RNR with WRs posted) is blamed on POST-ORDER alone.
func TestAResizeTakenBelowTheCountShowsWRsLeftOut(t *testing.T) {
	var ops []Op
	for i := range 6 {
		ops = append(ops, post(wr(uint64(i+1), 8)))
	}
	c := Caps{MaxSRQWR: 1 << 14, MaxSRQSGE: 6, Resize: true}
	ops = append([]Op{CreateSRQ{MaxWR: 16, MaxSGE: 1}}, append(ops, Resize{MaxWR: 4}, Query{})...)
	m := New(Documented(), c)
	var steps []Step
	for i, op := range ops {
		obs, err := m.Run(op)
		switch i {
		case 7:
			obs, err = Observation{BadWR: -1}, nil
		case 8:
			obs, err = Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 1}}, nil
		}
		require.NoError(t, err, "step %d", i+1)
		steps = append(steps, Step{Op: op, Obs: obs})
	}
	n, ok, _ := DeparturesWithin(Documented(), c, nil, steps, []RuleID{RulePostOrder}, nil)
	require.True(t, ok, "WRs left out by the posts")
	assert.Equal(t, 1, n)
}

// TestAQPInErrThatFailsAnotherMessageIsQPNoFetchStatesAlone: an RC QP
// that a message too long moved to ERR goes on processing messages as if
// it were ready (a responder testing a cached state): the next message
// too long takes a WR, completes with an error and takes the QP into ERR
// again, with another LAST_WQE_REACHED. What follows from processing the
// message as if ready is QP-NOFETCH-STATES' one departure, not a second
// rule's (QP-LAST-WQE).
func TestAQPInErrThatFailsAnotherMessageIsQPNoFetchStatesAlone(t *testing.T) {
	lastWQE := Event{Type: EventQPLastWQEReached, QP: 0}
	steps := trace(t, []Op{
		post(wr(1, 8), wr(2, 8)), send(0, 64), send(0, 64), Poll{},
	}, map[int]Observation{
		1: {BadWR: -1, Peer: PeerError}, 2: {BadWR: -1, Peer: PeerError},
		3: {BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Status: WCLocLenErr}, {WRID: 2, QP: 0, Status: WCLocLenErr}}, Events: []Event{lastWQE, lastWQE}},
	})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleQPNoFetchStates}, d.Rules, "diagnosis %+v", d)
}

// TestAWRLeftOutSeenOnUDIsBlamedOnPostOrder: a post that returned 0 but
// never queued its WR shows on UD only as a missing completion (the
// sender hears nothing either way). When the next WR posted is the one a
// later message fills, the WR was gone, not skipped by the QP or taken
// for an empty SRQ and kept (RECV-RNR, QP-FETCH-STATES): POST-ORDER's.
func TestAWRLeftOutSeenOnUDIsBlamedOnPostOrder(t *testing.T) {
	m := New(Documented(), testCaps)
	var steps []Step
	do := func(op Op) Observation {
		obs := mustRun(t, m, op)
		steps = append(steps, Step{Op: op, Obs: obs})
		return obs
	}
	for _, op := range fixtureOps() {
		do(op)
	}
	do(post(wr(1, 64)))
	ud := Arrive{QP: 1, Msg: Message{Opcode: Send, Len: 8}}
	steps = append(steps, Step{Op: ud, Obs: Observation{BadWR: -1, Peer: PeerOK}})
	steps = append(steps, Step{Op: Poll{}, Obs: Observation{BadWR: -1}}) // wr1's completion missing
	steps = append(steps, Step{Op: post(wr(2, 64)), Obs: Observation{BadWR: -1}})
	steps = append(steps, Step{Op: ud, Obs: Observation{BadWR: -1, Peer: PeerOK}})
	steps = append(steps, Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{
		{WRID: 2, QP: 1, Opcode: WCRecv, ByteLen: 8 + UDHeader}}}})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RulePostOrder}, d.Rules, "diagnosis %+v", d)
}

// TestALimitGivenAtCreateArmedByALaterPostIsBlamedOnCreateLimit: a driver
// that keeps a srq_limit given at create as a pending arming, written by
// its next doorbell whatever was armed in between, leaves the SRQ reading
// unarmed after create and raises the event once a post has armed it.
// One departure of CREATE-LIMIT, not QUERY-LIMIT (query read the truth)
// or LIMIT-FIRE.
func TestALimitGivenAtCreateArmedByALaterPostIsBlamedOnCreateLimit(t *testing.T) {
	limitEvent := Observation{BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 8}},
		Events: []Event{{Type: EventSRQLimitReached, QP: -1}}}
	for _, c := range []struct {
		name string
		ops  []Op
	}{
		{"query, then a post", []Op{Query{}, post(wr(1, 64), wr(2, 64)), send(0, 8), Poll{}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := New(Documented(), testCaps)
			var steps []Step
			ops := append([]Op{CreateSRQ{MaxWR: 4, MaxSGE: 2, Limit: 2}}, fixtureOps()[1:]...)
			for _, op := range append(ops, c.ops[:len(c.ops)-1]...) {
				steps = append(steps, Step{Op: op, Obs: mustRun(t, m, op)})
			}
			steps = append(steps, Step{Op: Poll{}, Obs: limitEvent})
			d := Diagnose(Documented(), testCaps, nil, steps)
			assert.Equal(t, []RuleID{RuleCreateLimit}, d.Rules, "diagnosis %+v", d)
		})
	}
}

// TestALimitGivenAtCreateArmedByAResizeIsBlamedOnCreateLimit: the pending
// arming may come with a resize, which writes the SRQ's context too: the
// SRQ reads unarmed after create and armed with the create's limit after
// the resize. CREATE-LIMIT's one departure, not QUERY-LIMIT's.
func TestALimitGivenAtCreateArmedByAResizeIsBlamedOnCreateLimit(t *testing.T) {
	m := New(Documented(), testCaps)
	var steps []Step
	ops := append([]Op{CreateSRQ{MaxWR: 4, MaxSGE: 2, Limit: 2}}, fixtureOps()[1:]...)
	for _, op := range append(ops, Query{}, Resize{MaxWR: 8}) {
		steps = append(steps, Step{Op: op, Obs: mustRun(t, m, op)})
	}
	got := mustRun(t, m, Query{})
	require.Zero(t, got.Attr.SRQLimit, "the documented SRQ is not armed")
	got.Attr.SRQLimit = 2
	steps = append(steps, Step{Op: Query{}, Obs: got})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleCreateLimit}, d.Rules, "diagnosis %+v", d)
}

// TestADisarmUndoneIsLimitDisarmsEvenWithALimitGivenAtCreate: an SRQ
// created with a limit, filled, armed, disarmed, posted to again and
// fetched from, raises the event. A disarm that did not take explains it
// (LIMIT-DISARM, one departure); the create's limit armed by the second
// post would have undone the disarm too, so it counts twice and loses.
func TestADisarmUndoneIsLimitDisarmsEvenWithALimitGivenAtCreate(t *testing.T) {
	m := New(Documented(), testCaps)
	var steps []Step
	ops := append([]Op{CreateSRQ{MaxWR: 8, MaxSGE: 2, Limit: 2}}, fixtureOps()[1:]...)
	ops = append(ops, post(wr(1, 64), wr(2, 64), wr(3, 64), wr(4, 64)), Arm{Limit: 3}, Arm{Limit: 0}, post(wr(5, 64)))
	for range 4 {
		ops = append(ops, send(0, 8))
	}
	for _, op := range ops {
		steps = append(steps, Step{Op: op, Obs: mustRun(t, m, op)})
	}
	got := mustRun(t, m, Poll{})
	require.Len(t, got.Completions, 4)
	require.Empty(t, got.Events, "the documented SRQ is disarmed")
	got.Events = []Event{{Type: EventSRQLimitReached, QP: -1}}
	steps = append(steps, Step{Op: Poll{}, Obs: got})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleLimitDisarm}, d.Rules, "diagnosis %+v", d)
}

// TestACrashedCallDepartsFromItsRule: a driver that crashes in a call, or
// fails it by its own state (Observation.Failed), departs from the rule
// the call keeps by returning (CallRule), an ibv_create_srq_ex create from
// CREATE-EX's as its refusal would, and the diagnosis names that rule
// alone.
func TestACrashedCallDepartsFromItsRule(t *testing.T) {
	for _, crash := range []Observation{
		{BadWR: -1, Crashed: "runtime error: index out of range"},
		{BadWR: -1, Failed: "PollCQ: on a closed SRQ"},
	} {
		crashedOrFailed(t, crash)
	}
}

func crashedOrFailed(t *testing.T, crash Observation) {
	t.Helper()
	for _, c := range []struct {
		ops  []Op
		want RuleID
	}{
		{[]Op{CreateSRQ{MaxWR: 4, MaxSGE: 1, Variant: CreateEx}}, RuleCreateEx},
		{[]Op{CreateSRQ{MaxWR: 4, MaxSGE: 1}}, RuleCreateAttr},
		{[]Op{CreateSRQ{MaxWR: 4, MaxSGE: 1}, post(wr(1, 8))}, RulePostReturn},
		{[]Op{CreateSRQ{MaxWR: 4, MaxSGE: 1}, Poll{}}, RulePollMax},
	} {
		m := New(Documented(), testCaps)
		var steps []Step
		for _, op := range c.ops[:len(c.ops)-1] {
			steps = append(steps, Step{Op: op, Obs: mustRun(t, m, op)})
		}
		last := c.ops[len(c.ops)-1]
		require.Equal(t, c.want, CallRule(last))
		steps = append(steps, Step{Op: last, Obs: crash})
		d := Diagnose(Documented(), testCaps, nil, steps)
		assert.Equal(t, []RuleID{c.want}, d.Rules, "%s crashed: diagnosis %+v", last, d)
	}
}

// TestAFailedExCreateOfAnotherSRQIsThePlainCreates: an ibv_create_srq_ex
// of another SRQ that fails (the driver's own state refuses it) as the
// plain create of one does is CREATE-MAX's departure with the plain one,
// not a second rule: CREATE-EX promises only that the ex form makes what
// the plain one makes. Alone, the ex form's failure stays CREATE-EX's;
// above the device's limits it is CREATE-MAX's.
func TestAFailedExCreateOfAnotherSRQIsThePlainCreates(t *testing.T) {
	// failing is a trace whose create of another SRQ, o, the driver failed.
	failing := func(o CreateOther) []Step {
		return append(ran(t, Documented(), CreateSRQ{MaxWR: 4, MaxSGE: 1}),
			Step{Op: o, Obs: Observation{BadWR: -1, Failed: "CreateOther: on a closed SRQ"}})
	}
	ex := CreateOther{MaxWR: 4, MaxSGE: 1, Variant: CreateEx}
	above := CreateOther{MaxWR: testCaps.MaxSRQWR + 1, MaxSGE: 1, Variant: CreateEx}
	for _, c := range []struct {
		o       CreateOther
		relaxed []RuleID // adopted by the run already
		want    []RuleID // nil: no rule more
	}{
		{ex, nil, []RuleID{RuleCreateEx}},
		{ex, []RuleID{RuleCreateMax}, nil}, // the plain create's failure adopted
		{above, nil, []RuleID{RuleCreateMax}},
	} {
		d := Diagnose(Documented(), testCaps, c.relaxed, failing(c.o))
		if c.want == nil {
			assert.Empty(t, d.Rules, "%s failed, %v relaxed: diagnosis %+v", c.o, c.relaxed, d)
			continue
		}
		assert.Equal(t, c.want, d.Rules, "%s failed, %v relaxed: diagnosis %+v", c.o, c.relaxed, d)
	}
}

// TestAWRLeftOutSeenOnUDWithAnArmedLimitIsBlamedOnPostOrder: a WR that
// a successful post left out of the device's queue leaves the SRQ empty,
// so a message to a UD QP takes nothing and is dropped: no completion,
// and no fetch to raise the limit armed above the count. Both follow
// from the one WR left out: POST-ORDER, not LIMIT-FIRE or
// QP-FETCH-STATES beside it.
func TestAWRLeftOutSeenOnUDWithAnArmedLimitIsBlamedOnPostOrder(t *testing.T) {
	m := New(Documented(), testCaps)
	var steps []Step
	ops := append([]Op{CreateSRQ{MaxWR: 16, MaxSGE: 2}}, fixtureOps()[1:]...)
	for _, op := range append(ops, post(wr(1, 128)), Arm{Limit: 6}) {
		steps = append(steps, Step{Op: op, Obs: mustRun(t, m, op)})
	}
	ud := Arrive{QP: 1, Msg: Message{Opcode: Send, Len: 1}}
	steps = append(steps, Step{Op: ud, Obs: Observation{BadWR: -1, Peer: PeerOK}})
	steps = append(steps, Step{Op: Poll{}, Obs: Observation{BadWR: -1}}) // no completion, no event
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Contains(t, append(d.Also, d.Rules), []RuleID{RulePostOrder}, "alone, the trace so far fits POST-ORDER: %+v", d)
	// The next message takes the next WR posted: wr1 is gone, not queued.
	steps = append(steps, Step{Op: post(wr(2, 128)), Obs: Observation{BadWR: -1}})
	steps = append(steps, Step{Op: ud, Obs: Observation{BadWR: -1, Peer: PeerOK}})
	steps = append(steps, Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{
		{WRID: 2, QP: 1, Opcode: WCRecv, ByteLen: 1 + UDHeader}}, Events: []Event{{Type: EventSRQLimitReached, QP: -1}}}})
	d = Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RulePostOrder}, d.Rules, "diagnosis %+v", d)
}

// TestAWRLeftOutSeenAsRoomForABadWRIsBlamedOnPostOrder: a device whose
// successful post left its last WR out of the queue has room where the
// model holds the queue full, so a bad WR posted then is refused as bad
// (EINVAL) where the full check comes first, and the next good WR is
// taken; the messages then complete every WR but the one left out. One
// WR left out: POST-ORDER's one departure, not POST-FULL (the device
// holding more than max_wr) with another rule for the WR that never
// completes.
func TestAWRLeftOutSeenAsRoomForABadWRIsBlamedOnPostOrder(t *testing.T) {
	ok := Observation{BadWR: -1}
	bad := WR{ID: 4, NumSGE: -1}
	steps := []Step{
		{Op: CreateSRQ{MaxWR: 3, MaxSGE: 1}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 3, MaxSGE: 1}}},
		{Op: post(wr(1, 8), wr(2, 8), wr(3, 8)), Obs: ok},
		{Op: post(bad), Obs: Observation{Errno: EINVAL, BadWR: 0}},
		{Op: post(wr(5, 8), WR{ID: 6, NumSGE: -1}), Obs: Observation{Errno: ENOMEM, BadWR: 1}},
		{Op: CreateQP{Type: RC}, Obs: ok},
		{Op: ModifyQP{QP: 0, State: Init}, Obs: ok},
		{Op: ModifyQP{QP: 0, State: RTR}, Obs: ok},
	}
	// The messages show which WR was left out: wr3, the newest of its post.
	for range 3 {
		steps = append(steps, Step{Op: send(0, 8), Obs: Observation{BadWR: -1, Peer: PeerOK}})
	}
	steps = append(steps, Step{Op: send(0, 8), Obs: Observation{BadWR: -1, Peer: PeerRNR}})
	var cs []Completion
	for _, id := range []uint64{1, 2, 5} {
		cs = append(cs, Completion{WRID: id, QP: 0, Opcode: WCRecv, ByteLen: 8})
	}
	steps = append(steps, Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: cs}})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RulePostOrder}, d.Rules, "diagnosis %+v", d)
}

// TestAWRLeftOutSeenOnUDBeforeAnotherCompletionIsBlamedOnPostOrder: a WR
// a successful post left out of the device's queue leaves a message to a
// UD QP taking nothing (no completion), and a later message takes the
// next WR posted. The poll returns that one's completion, with the UD
// message's missing before it: the one WR left out, POST-ORDER's, not
// QP-FETCH-STATES' or RECV-RNR's (the WR would still be queued, and the
// post refused as full).
func TestAWRLeftOutSeenOnUDBeforeAnotherCompletionIsBlamedOnPostOrder(t *testing.T) {
	for _, max := range []int{0, 1} { // a poll for all, and one bounded to the completion it returns
		m := New(Documented(), testCaps)
		var steps []Step
		ops := append([]Op{CreateSRQ{MaxWR: 1, MaxSGE: 1}}, fixtureOps()[1:]...)
		for _, op := range append(ops, post(wr(2, 64))) {
			steps = append(steps, Step{Op: op, Obs: mustRun(t, m, op)})
		}
		steps = append(steps, Step{Op: Arrive{QP: 1, Msg: Message{Opcode: Send}}, Obs: Observation{BadWR: -1, Peer: PeerOK}})
		steps = append(steps, Step{Op: post(WR{ID: 3}, WR{ID: 4, NumSGE: -1}), Obs: Observation{Errno: ENOMEM, BadWR: 1}})
		steps = append(steps, Step{Op: send(0, 1), Obs: Observation{BadWR: -1, Peer: PeerError}})
		steps = append(steps, Step{Op: Poll{Max: max}, Obs: Observation{BadWR: -1, Completions: []Completion{
			{WRID: 3, QP: 0, Status: WCLocLenErr}}, Events: []Event{{Type: EventQPLastWQEReached, QP: 0}}}})
		d := Diagnose(Documented(), testCaps, nil, steps)
		assert.Equal(t, []RuleID{RulePostOrder}, d.Rules, "poll max=%d: diagnosis %+v", max, d)
	}
}

// TestAWRLeftOutSeenInAnEarlyLimitEventIsBlamedOnPostOrder: a WR that a
// successful post left out of the device's queue leaves the count one
// lower than the model's, so the limit event comes at the fetch that
// leaves the model's count at the limit; the next message takes the WR
// posted after, not the one left out. One WR left out: POST-ORDER's one
// departure, not LIMIT-FIRE's with another rule for the missing WR.
func TestAWRLeftOutSeenInAnEarlyLimitEventIsBlamedOnPostOrder(t *testing.T) {
	m := New(Documented(), testCaps)
	var steps []Step
	ops := append(fixtureOps(), post(wr(1, 64)), post(wr(2, 64)), Arm{Limit: 1})
	for _, op := range ops {
		steps = append(steps, Step{Op: op, Obs: mustRun(t, m, op)})
	}
	limit := []Event{{Type: EventSRQLimitReached, QP: -1}}
	steps = append(steps,
		Step{Op: send(0, 8), Obs: Observation{BadWR: -1, Peer: PeerOK}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 8}}, Events: limit}},
		Step{Op: post(wr(3, 64)), Obs: Observation{BadWR: -1}},
		Step{Op: send(0, 8), Obs: Observation{BadWR: -1, Peer: PeerOK}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 3, QP: 0, Opcode: WCRecv, ByteLen: 8}}}},
	)
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RulePostOrder}, d.Rules, "diagnosis %+v", d)
}

// TestAWRLeftOutSeenInTheSendersOutcomeIsBlamedOnPostOrder: a WR that a
// successful post left out of the device's queue makes the next message
// to an RC QP take the WR after it, and the sender hears that WR's
// outcome (an error: it has no room) where the model's head would have
// taken the message. One WR left out: POST-ORDER's one departure, not
// RECV-FIT or RECV-COMPLETION for the outcome and another rule for the
// completion.
func TestAWRLeftOutSeenInTheSendersOutcomeIsBlamedOnPostOrder(t *testing.T) {
	m := New(Documented(), testCaps)
	var steps []Step
	for _, op := range append(fixtureOps(), post(wr(1, 64)), post(WR{ID: 2})) {
		steps = append(steps, Step{Op: op, Obs: mustRun(t, m, op)})
	}
	steps = append(steps,
		Step{Op: send(0, 24), Obs: Observation{BadWR: -1, Peer: PeerError}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 2, QP: 0, Status: WCLocLenErr}},
			Events: []Event{{Type: EventQPLastWQEReached, QP: 0}}}},
	)
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Contains(t, append(d.Also, d.Rules), []RuleID{RulePostOrder}, "alone, the trace so far fits POST-ORDER: %+v", d)
	// The next message takes the next WR posted: wr1 is gone, not queued.
	steps = append(steps,
		Step{Op: post(wr(3, 64)), Obs: Observation{BadWR: -1}},
		Step{Op: Arrive{QP: 1, Msg: Message{Opcode: Send, Len: 8}}, Obs: Observation{BadWR: -1, Peer: PeerOK}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 3, QP: 1, Opcode: WCRecv, ByteLen: 8 + UDHeader}}}},
	)
	d = Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RulePostOrder}, d.Rules, "diagnosis %+v", d)
}

// TestALimitCheckThatRunsLateIsExplainedByLimitFire: a device whose limit
// check runs late (when a completion is polled, say) still reads the
// limit armed after the fetch that left fewer WRs than it, and raises the
// event later. One departure of LIMIT-FIRE, which governs when the event
// comes; the armed limit the query reads follows from it.
func TestALimitCheckThatRunsLateIsExplainedByLimitFire(t *testing.T) {
	m := New(Documented(), testCaps)
	var steps []Step
	for _, op := range append(fixtureOps(), post(wr(1, 64), wr(2, 64)), Arm{Limit: 2}, send(0, 8)) {
		steps = append(steps, Step{Op: op, Obs: mustRun(t, m, op)})
	}
	steps = append(steps,
		Step{Op: Query{}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2, SRQLimit: 2}}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 8}},
			Events: []Event{{Type: EventSRQLimitReached, QP: -1}}}},
	)
	// Alone, the trace ties with LIMIT-AFTER-FIRE (the event raised at
	// the fetch, the query reading the limit all the same): a run whose
	// other failures only LIMIT-FIRE explains goes to LIMIT-FIRE (unify).
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Contains(t, append(d.Also, d.Rules), []RuleID{RuleLimitFire}, "diagnosis %+v", d)
	n, consistent, _ := DeparturesWithin(Documented(), testCaps, nil, steps, []RuleID{RuleLimitFire}, nil)
	assert.True(t, consistent && n == 1, "LIMIT-FIRE alone: %d departures, consistent %v", n, consistent)
}

// TestALateLimitCheckSeenByAQueryIsExplainedByLimitFire: a limit check
// that runs late may run between two polls (at a completion a flush
// writes, say): a query before it reads the limit armed, the query after
// it reads the SRQ disarmed, and the next poll has the event.
// LIMIT-FIRE's one departure.
func TestALateLimitCheckSeenByAQueryIsExplainedByLimitFire(t *testing.T) {
	m := New(Documented(), testCaps)
	var steps []Step
	for _, op := range append(fixtureOps(), post(wr(1, 64), wr(2, 64)), Arm{Limit: 2}, send(0, 8)) {
		steps = append(steps, Step{Op: op, Obs: mustRun(t, m, op)})
	}
	limit := []Event{{Type: EventSRQLimitReached, QP: -1}}
	steps = append(steps,
		Step{Op: Query{}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2, SRQLimit: 2}}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 8}}}},
		Step{Op: Query{}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2}}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Events: limit}},
	)
	n, consistent, _ := DeparturesWithin(Documented(), testCaps, nil, steps, []RuleID{RuleLimitFire}, nil)
	assert.True(t, consistent && n == 1, "LIMIT-FIRE alone: %d departures, consistent %v", n, consistent)
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleLimitFire}, d.Rules, "diagnosis %+v", d)
}

// TestAWriteImmBufferedBeforeRTRBesideADroppedSendIsBlamedOnQPBeforeRTR:
// a responder that parks a Write with Immediate reaching a QP in INIT,
// and completes it at RTR, while it drops a Send as the profile says:
// QP-BEFORE-RTR governs every message before RTR, and a device may treat
// the two opcodes apart. One rule, not QP-BEFORE-RTR with RECV-IMM and
// RECV-COMPLETION for the Send it dropped (nor QP-NOFETCH-STATES: a poll
// in INIT shows the Write not yet processed).
func TestAWriteImmBufferedBeforeRTRBesideADroppedSendIsBlamedOnQPBeforeRTR(t *testing.T) {
	m := New(Documented(), testCaps)
	var steps []Step
	for _, op := range []Op{CreateSRQ{MaxWR: 4, MaxSGE: 1}, CreateQP{Type: RC}, post(wr(1, 8), wr(2, 8)), ModifyQP{QP: 0, State: Init}} {
		steps = append(steps, Step{Op: op, Obs: mustRun(t, m, op)})
	}
	steps = append(steps,
		Step{Op: Arrive{QP: 0, Msg: Message{Opcode: WriteImm, Imm: 7}}, Obs: Observation{BadWR: -1, Peer: PeerOK}},
		Step{Op: Arrive{QP: 0, Msg: Message{Opcode: SendImm, Len: 1, Imm: 9}}, Obs: Observation{BadWR: -1, Peer: PeerError}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1}}, // parked, not processed in INIT
		Step{Op: ModifyQP{QP: 0, State: RTR}, Obs: Observation{BadWR: -1}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{
			{WRID: 1, QP: 0, Opcode: WCRecvRDMAWithImm, HasImm: true, Imm: 7}}}},
	)
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleQPBeforeRTR}, d.Rules, "diagnosis %+v", d)
}

// TestAFailingWRPostedAllTheSameIsBlamedOnPostOrder: a device whose
// error path rings the doorbell with the WQE it started for the failing
// WR posts that WR all the same (bad_wr names it), and a message later
// completes it. POST-ORDER governs which WRs of a failing list stay
// posted: its one departure, where no rule explained it before.
func TestAFailingWRPostedAllTheSameIsBlamedOnPostOrder(t *testing.T) {
	m := fixture(t, Documented())
	steps := m.history.steps()
	bad := WR{ID: 3, NumSGE: 3, SGEs: []SGE{{Length: 8}, {Length: 8}, {Length: 8}}}
	steps = append(steps, Step{Op: post(wr(1, 64), wr(2, 64), bad, wr(4, 64)), Obs: Observation{Errno: EINVAL, BadWR: 2}})
	var cs []Completion
	for id := range uint64(3) {
		steps = append(steps, Step{Op: send(0, 1), Obs: Observation{BadWR: -1, Peer: PeerOK}})
		cs = append(cs, Completion{WRID: id + 1, QP: 0, Opcode: WCRecv, ByteLen: 1})
	}
	steps = append(steps, Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: cs}})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RulePostOrder}, d.Rules, "diagnosis %+v", d)
}

// TestAnExCreateThatIgnoresMaxSGEIsExplainedByCreateEx: an
// ibv_create_srq_ex that reads max_sge from elsewhere makes an SRQ of one
// SGE whatever it writes back (a WR of three is refused), and takes
// another SRQ's max_sge above max_srq_sge. CREATE-EX governs what the ex
// form makes: two departures in each trace, so that alone each stays
// POST-SGE's or CREATE-MAX's, and a run with both goes to CREATE-EX.
func TestAnExCreateThatIgnoresMaxSGEIsExplainedByCreateEx(t *testing.T) {
	created := Step{Op: CreateSRQ{MaxWR: 2, MaxSGE: 3, Variant: CreateEx}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 2, MaxSGE: 3}}}
	three := WR{ID: 1, NumSGE: 3, SGEs: []SGE{{Length: 8}, {Length: 8}, {Length: 8}}}
	for name, steps := range map[string][]Step{
		"a WR of three SGEs refused": {created, {Op: post(three), Obs: Observation{Errno: EINVAL, BadWR: 0}}},
		"another SRQ above max_srq_sge taken": {created, {Op: CreateOther{MaxWR: 2, MaxSGE: testCaps.MaxSRQSGE + 1, Variant: CreateEx},
			Obs: Observation{BadWR: -1}}},
	} {
		n, consistent, _ := DeparturesWithin(Documented(), testCaps, nil, steps, []RuleID{RuleCreateEx}, nil)
		assert.True(t, consistent && n == 2, "%s: CREATE-EX alone: %d departures, consistent %v", name, n, consistent)
		d := Diagnose(Documented(), testCaps, nil, steps)
		assert.NotEqual(t, []RuleID{RuleCreateEx}, d.Rules, "%s: alone, a rule of one departure: %+v", name, d)
	}
}

// TestARefusedShrinkThatKeptItsPostBoundIsExplainedByModifyOnlyMasked: a
// driver that stores a resize's max_wr in its post path before the
// command and does not restore it when the command fails refuses the
// shrink below the count as it should, then refuses posts as full at the
// refused size while query reads the old max_wr. MODIFY-ONLY-MASKED's
// one departure: what a refused modify changed all the same.
func TestARefusedShrinkThatKeptItsPostBoundIsExplainedByModifyOnlyMasked(t *testing.T) {
	ok := Observation{BadWR: -1}
	steps := []Step{
		{Op: CreateSRQ{MaxWR: 3, MaxSGE: 1}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 3, MaxSGE: 1}}},
		{Op: post(wr(1, 8), wr(2, 8)), Obs: ok},
		{Op: Resize{MaxWR: 1}, Obs: Observation{Errno: EINVAL, BadWR: -1}},
		{Op: post(wr(3, 8)), Obs: Observation{Errno: ENOMEM, BadWR: 0}},
		{Op: Query{}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 3, MaxSGE: 1}}},
	}
	n, consistent, _ := DeparturesWithin(Documented(), testCaps, nil, steps, []RuleID{RuleModifyOnlyMasked}, nil)
	assert.True(t, consistent && n == 1, "MODIFY-ONLY-MASKED alone: %d departures, consistent %v", n, consistent)
}

// TestAResizeReportingMoreThanFitsIsBlamedOnResizeCapacity: a driver
// that reports after a resize the new ring's size as max_wr while its
// post path holds to the request refuses the post past the request as
// full. RESIZE-CAPACITY promises that what query reports after a resize
// fits: its one departure, where the model, which takes the report as
// the capacity, otherwise saw QUERY-ATTR or POST-FULL.
func TestAResizeReportingMoreThanFitsIsBlamedOnResizeCapacity(t *testing.T) {
	ok := Observation{BadWR: -1}
	steps := []Step{
		{Op: CreateSRQ{MaxWR: 4, MaxSGE: 1}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 1}}},
		{Op: post(wr(1, 8), wr(2, 8)), Obs: ok},
		{Op: Resize{MaxWR: 20}, Obs: ok},
		{Op: Query{}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 31, MaxSGE: 1}}},
	}
	for i := 3; i <= 20; i++ {
		steps = append(steps, Step{Op: post(wr(uint64(i), 8)), Obs: ok})
	}
	steps = append(steps, Step{Op: post(wr(21, 8)), Obs: Observation{Errno: ENOMEM, BadWR: 0}})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleResizeCapacity}, d.Rules, "diagnosis %+v", d)
}
