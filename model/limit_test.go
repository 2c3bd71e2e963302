package model

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func limitEvents(obs Observation) int {
	n := 0
	for _, e := range obs.Events {
		if e.Type == EventSRQLimitReached {
			n++
		}
	}
	return n
}

// TestLimitFiresBelowNotAt follows RUT SrqTest.SrqLimit scaled down: 8
// posted, limit 4; consuming to 4 left raises nothing, the next one fires.
func TestLimitFiresBelowNotAt(t *testing.T) {
	m := New(RXE(), testCaps)
	mustRun(t, m, CreateSRQ{MaxWR: 8, MaxSGE: 1})
	mustRun(t, m, CreateQP{Type: UD})
	for _, s := range []QPState{Init, RTR, RTS} {
		mustRun(t, m, ModifyQP{QP: 0, State: s})
	}
	for i := range 8 {
		mustRun(t, m, post(wr(uint64(i), 64)))
	}
	mustRun(t, m, Arm{Limit: 4})
	assert.Equal(t, uint32(4), mustRun(t, m, Query{}).Attr.SRQLimit, "QUERY-LIMIT")
	for range 4 {
		mustRun(t, m, send(0, 1))
	}
	dev := *m // the state before the poll, for a device that fired at ==
	dev.cands = slices.Clone(m.cands)
	dev.history = m.history // shared: never written
	polled := mustRun(t, m, Poll{})
	assert.Equal(t, 0, limitEvents(polled), "4 left is not below 4")
	polled.Events = []Event{{EventSRQLimitReached, -1}}
	assert.Equal(t, "LIMIT-FIRE", ruleOf(dev.Step(Poll{}, polled)), "a device firing at == limit")
}

func TestLimitRules(t *testing.T) {
	setup := func(t *testing.T, p Profile) *Model {
		m := fixture(t, p)
		mustRun(t, m, post(wr(1, 64), wr(2, 64), wr(3, 64)))
		return m
	}
	t.Run("fires once, then reads 0", func(t *testing.T) {
		m := setup(t, Documented())
		mustRun(t, m, Arm{Limit: 3})
		mustRun(t, m, send(1, 1))
		assert.Equal(t, 1, limitEvents(mustRun(t, m, Poll{})))
		assert.Equal(t, uint32(0), mustRun(t, m, Query{}).Attr.SRQLimit, "LIMIT-AFTER-FIRE")
		mustRun(t, m, send(1, 1))
		assert.Equal(t, 0, limitEvents(mustRun(t, m, Poll{})), "LIMIT-ONCE")
	})
	t.Run("a second event is a deviation", func(t *testing.T) {
		m := setup(t, Documented())
		mustRun(t, m, Arm{Limit: 3})
		mustRun(t, m, send(1, 1))
		mustRun(t, m, Poll{})
		mustRun(t, m, send(1, 1))
		assert.Equal(t, "LIMIT-ONCE", ruleOf(m.Step(Poll{}, Observation{Completions: []Completion{ok1(2, 1, 41)}, Events: []Event{{EventSRQLimitReached, -1}}})))
	})
	t.Run("reading the old limit after firing is a deviation", func(t *testing.T) {
		m := setup(t, Documented())
		mustRun(t, m, Arm{Limit: 3})
		mustRun(t, m, send(1, 1))
		mustRun(t, m, Poll{})
		assert.Equal(t, "LIMIT-AFTER-FIRE", ruleOf(m.Step(Query{}, Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2, SRQLimit: 3}})))
	})
	t.Run("siw keeps the value but fires once", func(t *testing.T) {
		m := setup(t, SIW())
		mustRun(t, m, Arm{Limit: 3})
		mustRun(t, m, send(0, 1))
		assert.Equal(t, 1, limitEvents(mustRun(t, m, Poll{})))
		mustRun(t, m, send(0, 1))
		assert.Equal(t, 0, limitEvents(mustRun(t, m, Poll{})))
	})
	t.Run("disarm with 0", func(t *testing.T) {
		m := setup(t, Documented())
		mustRun(t, m, Arm{Limit: 3})
		mustRun(t, m, Arm{Limit: 0})
		assert.Equal(t, uint32(0), mustRun(t, m, Query{}).Attr.SRQLimit)
		mustRun(t, m, send(1, 1))
		assert.Equal(t, 0, limitEvents(mustRun(t, m, Poll{})), "LIMIT-DISARM")
	})
	t.Run("bound", func(t *testing.T) {
		m := setup(t, RXE()) // capacity 7
		assert.Equal(t, 0, mustRun(t, m, Arm{Limit: 7}).Errno, "limit == max_wr accepted on rxe")
		assert.Equal(t, EINVAL, mustRun(t, m, Arm{Limit: 8}).Errno, "LIMIT-BOUND")
		assert.Equal(t, uint32(7), mustRun(t, m, Query{}).Attr.SRQLimit, "a refused arm changes nothing")
		assert.Equal(t, "LIMIT-BOUND", ruleOf(setup(t, RXE()).Step(Arm{Limit: 8}, ok(0))))
	})
	t.Run("arming above the count: rxe fires at the next fetch", func(t *testing.T) {
		m := setup(t, RXE())
		mustRun(t, m, Arm{Limit: 5})
		assert.Equal(t, 0, limitEvents(mustRun(t, m, Poll{})))
		mustRun(t, m, send(1, 1))
		assert.Equal(t, 1, limitEvents(mustRun(t, m, Poll{})))
	})
	t.Run("arming above the count: documented allows at once", func(t *testing.T) {
		m := setup(t, Documented())
		require.NoError(t, m.Step(Arm{Limit: 4}, ok(0)))
		require.NoError(t, m.Step(Poll{}, Observation{Events: []Event{{EventSRQLimitReached, -1}}}))
		assert.Equal(t, []string{string(FireAtOnce)}, m.Resolved(Documented())["ArmBelow"])
	})
	t.Run("limit at create", func(t *testing.T) {
		for _, tc := range []struct {
			p     Profile
			fires int
		}{{Documented(), 0}, {RXE(), 1}} {
			m := New(tc.p, testCaps)
			mustRun(t, m, CreateSRQ{MaxWR: 4, MaxSGE: 1, Limit: 2})
			mustRun(t, m, CreateQP{Type: RC})
			for _, s := range []QPState{Init, RTR, RTS} {
				mustRun(t, m, ModifyQP{QP: 0, State: s})
			}
			mustRun(t, m, post(wr(1, 8), wr(2, 8)))
			mustRun(t, m, send(0, 1))
			assert.Equal(t, tc.fires, limitEvents(mustRun(t, m, Poll{})), "CREATE-LIMIT under %s", tc.p.Name)
		}
	})
}

func TestCreateAndQuery(t *testing.T) {
	create := CreateSRQ{MaxWR: 4, MaxSGE: 2}
	for _, tc := range []struct {
		name string
		p    Profile
		got  SRQAttr
		rule string
	}{
		{"documented accepts more", Documented(), SRQAttr{MaxWR: 7, MaxSGE: 3}, ""},
		{"documented refuses less", Documented(), SRQAttr{MaxWR: 3, MaxSGE: 2}, "CREATE-ATTR"},
		{"documented refuses fewer SGEs", Documented(), SRQAttr{MaxWR: 4, MaxSGE: 1}, "CREATE-ATTR"},
		{"rxe rounds to 2^k-1", RXE(), SRQAttr{MaxWR: 7, MaxSGE: 2}, ""},
		{"rxe refuses the request as is", RXE(), SRQAttr{MaxWR: 4, MaxSGE: 2}, "CREATE-ATTR"},
		{"documented refuses a max_wr past max_srq_wr", Documented(), SRQAttr{MaxWR: 0xffffffff, MaxSGE: 2}, "CREATE-ATTR"},
		{"documented refuses a max_sge past max_srq_sge", Documented(), SRQAttr{MaxWR: 4, MaxSGE: 0xffffffff}, "CREATE-ATTR"},
		{"documented accepts the request rounded up", Documented(), SRQAttr{MaxWR: 9, MaxSGE: 5}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(tc.p, testCaps)
			assert.Equal(t, tc.rule, ruleOf(m.Step(create, Observation{BadWR: -1, Attr: tc.got})))
			if tc.rule == "" {
				assert.Equal(t, tc.got.MaxWR, mustRun(t, m, Query{}).Attr.MaxWR, "query reports what create reported")
				for i := range tc.got.MaxWR {
					require.Equal(t, 0, mustRun(t, m, post(wr(uint64(i), 8))).Errno)
				}
				assert.Equal(t, ENOMEM, mustRun(t, m, post(wr(99, 8))).Errno, "exactly the reported max_wr fits")
			}
		})
	}
	m := fixture(t, Documented())
	assert.Equal(t, "QUERY-ATTR", ruleOf(m.Step(Query{}, Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 5, MaxSGE: 2}})))
	m = fixture(t, MLX5())
	assert.NoError(t, m.Step(Query{}, Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 15, MaxSGE: 2}}), "mlx5 may report more")
	m = fixture(t, MLX5())
	assert.Equal(t, "QUERY-ATTR", ruleOf(m.Step(Query{}, Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 0xffffffff, MaxSGE: 2}})), "but not past max_srq_wr")
	m = fixture(t, SIW())
	assert.Equal(t, EOPNOTSUPP, mustRun(t, m, Query{}).Errno)
}

func TestResize(t *testing.T) {
	three := post(wr(1, 8), wr(2, 8), wr(3, 8))
	attr := func(maxWR, limit uint32) Observation {
		return Observation{BadWR: -1, Attr: SRQAttr{MaxWR: maxWR, MaxSGE: 2, SRQLimit: limit}}
	}
	for _, tc := range []struct {
		name      string
		p         Profile
		setup     []Op
		op        Op
		wantErrno int
		wrong     Observation // for op, or for the query after it when query is set
		query     bool
		rule      string
	}{
		{"grow, query reports at least the request", Documented(), []Op{three}, Resize{MaxWR: 10}, 0, attr(9, 0), true, "RESIZE-CAPACITY"},
		{"below the count, refused", Documented(), []Op{three}, Resize{MaxWR: 2}, EINVAL, attr(2, 0), true, "RESIZE-BELOW-COUNT"},
		{"to zero", Documented(), nil, Resize{MaxWR: 0}, EINVAL, ok(0), false, "RESIZE-BOUNDS"},
		{"above the device", Documented(), nil, Resize{MaxWR: testCaps.MaxSRQWR + 1}, EINVAL, ok(0), false, "RESIZE-BOUNDS"},
		{"rxe rounds, accepts 2 with 3 outstanding", RXE(), []Op{three}, Resize{MaxWR: 2}, 0, ok(EINVAL), false, "RESIZE-BELOW-COUNT"},
		{"rxe reports the rounded size", RXE(), nil, Resize{MaxWR: 8}, 0, attr(8, 0), true, "RESIZE-CAPACITY"},
		{"rxe refuses below the limit", RXE(), []Op{Arm{Limit: 5}}, Resize{MaxWR: 4}, EINVAL, ok(0), false, "RESIZE-BELOW-LIMIT"},
		{"resize keeps the limit", Documented(), []Op{three, Arm{Limit: 2}}, Resize{MaxWR: 8}, 0, attr(8, 0), true, "MODIFY-ONLY-MASKED"},
		{"mlx5 has no resize", MLX5(), nil, Resize{MaxWR: 8}, EOPNOTSUPP, ok(0), false, "RESIZE-OPTIONAL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			build := func() *Model {
				m := fixture(t, tc.p)
				for _, op := range tc.setup {
					mustRun(t, m, op)
				}
				return m
			}
			assert.Equal(t, tc.wantErrno, mustRun(t, build(), tc.op).Errno)
			m := build()
			if tc.query {
				if tc.wantErrno != 0 {
					// The device accepted what the model refuses by
					// default; its query must still hold the WRs.
					require.NoError(t, m.Step(tc.op, ok(0)))
				} else {
					mustRun(t, m, tc.op)
				}
				assert.Equal(t, tc.rule, ruleOf(m.Step(Query{}, tc.wrong)))
			} else {
				assert.Equal(t, tc.rule, ruleOf(m.Step(tc.op, tc.wrong)))
			}
		})
	}
	m := fixture(t, Documented())
	mustRun(t, m, post(wr(1, 8), wr(2, 8)))
	mustRun(t, m, Resize{MaxWR: 6})
	assert.Equal(t, uint32(6), mustRun(t, m, Query{}).Attr.MaxWR)
	for i := range 4 {
		require.Equal(t, 0, mustRun(t, m, post(wr(uint64(10+i), 8))).Errno)
	}
	assert.Equal(t, ENOMEM, mustRun(t, m, post(wr(20, 8))).Errno, "RESIZE-CAPACITY: exactly the new max_wr fits")
	mustRun(t, m, send(0, 1))
	assert.Equal(t, uint64(1), mustRun(t, m, Poll{}).Completions[0].WRID, "outstanding WRs keep their order")
	// A device that rounds the resize up is allowed by the documented
	// profile; its query pins the new capacity.
	m = fixture(t, Documented())
	require.NoError(t, m.Step(Resize{MaxWR: 5}, ok(0)))
	require.NoError(t, m.Step(Query{}, attr(7, 0)))
	assert.Equal(t, uint32(7), m.View().Capacity)
}

// TestSRQEventNamingAQPIsItsRulesDeparture: a limit event, or an SRQ
// error event, that names a QP (an SRQ's events name none) is the
// departure of the rule that governs the event, alone: its fields are the
// rule's as much as its coming is.
func TestSRQEventNamingAQPIsItsRulesDeparture(t *testing.T) {
	build := func() *Model {
		m := fixture(t, Documented())
		mustRun(t, m, post(wr(1, 64), wr(2, 64), wr(3, 64)))
		mustRun(t, m, Arm{Limit: 3})
		mustRun(t, m, send(0, 1))
		return m
	}
	polled := mustRun(t, build(), Poll{})
	assert.Equal(t, []Event{{EventSRQLimitReached, -1}}, polled.Events, "the event the model raises names no QP")
	polled.Events = []Event{{EventSRQLimitReached, 0}}
	assert.Equal(t, "LIMIT-FIRE", ruleOf(build().Step(Poll{}, polled)), "a limit event naming qp0")
	polled.Events = []Event{{EventSRQLimitReached, -2}}
	assert.Equal(t, "LIMIT-FIRE", ruleOf(build().Step(Poll{}, polled)), "a limit event with a QP field of -2, not -1 (none)")
}

// TestABoundCheckTurnedAroundIsLimitBoundAlone: a device whose bound
// check is inverted refuses a limit within the bound with EINVAL and takes
// one above it. LIMIT-BOUND governs the bound, both ways: one rule.
func TestABoundCheckTurnedAroundIsLimitBoundAlone(t *testing.T) {
	m := fixture(t, Documented())
	steps := append(m.history.steps(),
		Step{Op: Arm{Limit: 100}, Obs: Observation{BadWR: -1}},
		Step{Op: Arm{Limit: 2}, Obs: Observation{Errno: EINVAL, BadWR: -1}})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleLimitBound}, d.Rules, "diagnosis %+v", d)
}

// TestADisarmThatArmsIsLimitDisarmAlone: a device whose modify to limit 0
// leaves the SRQ armed (at a level the model never saw armed) raises a
// limit event the model forbids. LIMIT-DISARM governs what follows a
// disarm, whatever level the device left: one rule.
func TestADisarmThatArmsIsLimitDisarmAlone(t *testing.T) {
	build := func() *Model {
		m := fixture(t, Documented())
		mustRun(t, m, Arm{Limit: 0})
		mustRun(t, m, post(wr(1, 64)))
		mustRun(t, m, send(0, 1))
		return m
	}
	polled := mustRun(t, build(), Poll{})
	assert.Empty(t, polled.Events, "a disarmed SRQ raises no limit event")
	polled.Events = []Event{{EventSRQLimitReached, -1}}
	assert.Equal(t, "LIMIT-DISARM", ruleOf(build().Step(Poll{}, polled)), "a limit event after a disarm, never armed")
}

// TestAnArmRefusedThatArmedIsLimitArmAlone: a device that arms the limit
// and then returns an error (EPERM) from ibv_modify_srq. The query reads
// the limit, a re-arm lower is refused and taken too, and the event comes
// at the new level. LIMIT-ARM governs the arming and the call's result:
// one rule, however the arming shows afterwards.
func TestAnArmRefusedThatArmedIsLimitArmAlone(t *testing.T) {
	const eperm = 1
	recv := func(id uint64, evs ...Event) Observation {
		return Observation{BadWR: -1, Completions: []Completion{{WRID: id, QP: 0, Opcode: WCRecv, ByteLen: 1}}, Events: evs}
	}
	steps := trace(t, []Op{
		post(wr(1, 64), wr(2, 64), wr(3, 64)), Arm{Limit: 3}, Query{}, Arm{Limit: 1},
		send(0, 1), Poll{}, send(0, 1), Poll{}, send(0, 1), Poll{},
	}, map[int]Observation{
		1: {Errno: eperm, BadWR: -1},
		2: {BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2, SRQLimit: 3}},
		3: {Errno: eperm, BadWR: -1},
		4: {BadWR: -1}, 5: recv(1),
		6: {BadWR: -1}, 7: recv(2),
		8: {BadWR: -1}, 9: recv(3, Event{Type: EventSRQLimitReached, QP: -1}),
	})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleLimitArm}, d.Rules, "diagnosis %+v", d)
}

// TestACountCheckTurnedAroundIsResizeBelowCountAlone: a device whose
// resize count check is inverted refuses with EINVAL a resize that holds
// the WRs and takes one below them. RESIZE-BELOW-COUNT governs the count
// check, both ways: one rule. The refusal alone stays RESIZE-OPTIONAL's
// (a valid resize refused), as its statement says.
func TestACountCheckTurnedAroundIsResizeBelowCountAlone(t *testing.T) {
	ops := []Op{post(wr(1, 64), wr(2, 64)), Resize{MaxWR: 12}, Resize{MaxWR: 1}, Query{}}
	steps := trace(t, ops, map[int]Observation{
		1: {Errno: EINVAL, BadWR: -1},
		2: {BadWR: -1},
		3: {BadWR: -1, Attr: SRQAttr{MaxWR: 1, MaxSGE: 2}}, // it holds 2
	})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleResizeBelowCount}, d.Rules, "diagnosis %+v", d)
	d = Diagnose(Documented(), testCaps, nil, steps[:len(steps)-2])
	assert.Equal(t, []RuleID{RuleResizeOptional}, d.Rules, "the refusal alone: diagnosis %+v", d)
}

// TestAnSRQThatNeverEntersErrorIsSRQErrEventAlone: a device on which
// the SRQ does not enter its error state raises no SRQ_ERR and goes on
// taking messages. SRQ-ERR-EVENT governs the entry the event marks; that
// nothing stops fetching follows from it, and is no SRQ-ERR-NOFETCH
// departure.
func TestAnSRQThatNeverEntersErrorIsSRQErrEventAlone(t *testing.T) {
	ops := []Op{post(wr(1, 64)), InjectSRQError{}, Poll{}, send(0, 1), Poll{}}
	steps := trace(t, ops, map[int]Observation{
		1: {BadWR: -1},
		2: {BadWR: -1}, // no SRQ_ERR
		3: {BadWR: -1}, // taken
		4: {BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 1}}},
	})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleSRQErrEvent}, d.Rules, "diagnosis %+v", d)
}

// TestADeviceRefusingEveryLimitModifyIsLimitArmAlone: a device that
// refuses every ibv_modify_srq of srq_limit, a disarm included, breaks
// LIMIT-ARM; its refused disarm follows. Alone, a refused disarm stays
// LIMIT-DISARM's.
func TestADeviceRefusingEveryLimitModifyIsLimitArmAlone(t *testing.T) {
	refused := Observation{Errno: EINVAL, BadWR: -1}
	steps := trace(t, []Op{Arm{Limit: 2}, Arm{Limit: 0}}, map[int]Observation{0: refused, 1: refused})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleLimitArm}, d.Rules, "diagnosis %+v", d)
	steps = trace(t, []Op{Arm{Limit: 0}}, map[int]Observation{0: refused})
	d = Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleLimitDisarm}, d.Rules, "a refused disarm alone: diagnosis %+v", d)
}

// TestALimitModifyThatDoesNothingIsExplainedByLimitArm: a device whose
// srq_limit modify returns 0 and does nothing takes a limit above the
// bound and one within it, and arms neither (the query reads 0).
// LIMIT-ARM governs the call's result and the arming, so it alone
// explains the trace, and a run whose other traces need LIMIT-ARM blames
// it alone (conformance's unify). Its departure above the bound counts
// as two, so that alone the trace stays LIMIT-BOUND's, the more direct
// reading.
func TestALimitModifyThatDoesNothingIsExplainedByLimitArm(t *testing.T) {
	ok := Observation{BadWR: -1}
	steps := trace(t, []Op{Arm{Limit: 5}, Arm{Limit: 2}, Query{}}, map[int]Observation{
		0: ok, 1: ok, 2: {BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2}},
	})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleLimitBound}, d.Rules, "diagnosis %+v", d)
	assert.Contains(t, d.Explains(), []RuleID{RuleLimitArm}, "LIMIT-ARM alone explains it: diagnosis %+v", d)
}

// TestAZeroedQueryReplyIsQueryAttrAlone: a query whose reply is all
// zeros while the SRQ is armed gets max_wr, max_sge and srq_limit wrong:
// one wrong reply, QUERY-ATTR's alone. A wrong srq_limit alone stays
// QUERY-LIMIT's.
func TestAZeroedQueryReplyIsQueryAttrAlone(t *testing.T) {
	armed := []Op{post(wr(1, 64), wr(2, 64), wr(3, 64)), Arm{Limit: 2}, Query{}}
	steps := trace(t, armed, map[int]Observation{2: {BadWR: -1}})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleQueryAttr}, d.Rules, "diagnosis %+v", d)
	steps = trace(t, armed, map[int]Observation{2: {BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2, SRQLimit: 3}}})
	d = Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleQueryLimit}, d.Rules, "a wrong srq_limit alone: diagnosis %+v", d)
}

// TestAQueryReadingTheAdoptedWriteBackIsNoSecondDeparture: a create that
// writes back a max_wr below the request breaks CREATE-ATTR; a query
// that then reads what the create wrote back reads the SRQ "as created"
// and is no QUERY-ATTR departure.
func TestAQueryReadingTheAdoptedWriteBackIsNoSecondDeparture(t *testing.T) {
	steps := []Step{
		{Op: CreateSRQ{MaxWR: 4, MaxSGE: 1}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 3, MaxSGE: 1}}},
		{Op: Query{}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 3, MaxSGE: 1}}},
	}
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleCreateAttr}, d.Rules, "diagnosis %+v", d)
}

// TestADisarmRefusedThatDisarmedIsLimitDisarmAlone: a device whose
// disarm of an armed SRQ returns an error but disarms (no limit event
// comes at the old level) breaks LIMIT-DISARM alone, not LIMIT-ARM
// (a generated mutant that returned 1 from a successful disarm).
func TestADisarmRefusedThatDisarmedIsLimitDisarmAlone(t *testing.T) {
	none := Observation{BadWR: -1}
	steps := trace(t, []Op{post(wr(1, 64), wr(2, 64), wr(3, 64)), Arm{Limit: 3}, Arm{Limit: 0}, send(0, 1), Poll{}}, map[int]Observation{
		2: {Errno: 1, BadWR: -1},
		3: none,
		4: {BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 1}}},
	})
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Equal(t, []RuleID{RuleLimitDisarm}, d.Rules, "diagnosis %+v", d)
}

// TestALimitEventOwedPastTheNextFetchIsLimitFireAlone: a device that
// disarms at the fetch that leaves fewer WRs than the limit and raises
// the event only later, past the next fetch (when a message it counted
// completes), or never. A query reads the SRQ armed after the arm, and
// disarmed after that fetch. When the event comes is what LIMIT-FIRE
// governs, however late: one rule (it was let come one fetch late only).
func TestALimitEventOwedPastTheNextFetchIsLimitFireAlone(t *testing.T) {
	recv := func(id uint64, evs ...Event) Observation {
		return Observation{BadWR: -1, Completions: []Completion{{WRID: id, QP: 0, Opcode: WCRecv, ByteLen: 1}}, Events: evs}
	}
	disarmed := Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2}}
	limit := Event{Type: EventSRQLimitReached, QP: -1}
	for name, last := range map[string]Observation{
		"raised two fetches late": {BadWR: -1, Events: []Event{limit}},
		"never raised":            {BadWR: -1},
	} {
		steps := trace(t, []Op{
			post(wr(1, 64), wr(2, 64), wr(3, 64)), Arm{Limit: 3}, Query{},
			send(0, 1), Poll{}, Query{}, send(0, 1), Poll{}, Poll{},
		}, map[int]Observation{
			4: recv(1), 5: disarmed, 7: recv(2), 8: last,
		})
		d := Diagnose(Documented(), testCaps, nil, steps)
		assert.Equal(t, []RuleID{RuleLimitFire}, d.Rules, "%s: diagnosis %+v", name, d)
	}
}

// TestAnArmRecordedButNotProgrammedIsLimitArmsToExplain: a driver that
// keeps a new limit for query but does not program it leaves the SRQ
// armed at the old level (or disarmed): query reads the new limit, the
// event comes at the old one. That is a departure in what LIMIT-ARM
// governs, the arming a modify makes, so LIMIT-ARM alone explains it,
// as LIMIT-FIRE (never raised at the new level) does; the device's
// runs tell them apart (conformance's tellApart and neighbours).
func TestAnArmRecordedButNotProgrammedIsLimitArmsToExplain(t *testing.T) {
	recv := func(id uint64, evs ...Event) Observation {
		return Observation{BadWR: -1, Completions: []Completion{{WRID: id, QP: 0, Opcode: WCRecv, ByteLen: 1}}, Events: evs}
	}
	armedAt := func(l uint32) Observation {
		return Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 4, MaxSGE: 2, SRQLimit: l}}
	}
	steps := trace(t, []Op{
		post(wr(1, 64), wr(2, 64), wr(3, 64)), Arm{Limit: 1}, Arm{Limit: 2}, Query{},
		send(0, 1), send(0, 1), Poll{}, Query{}, send(0, 1), Poll{},
	}, map[int]Observation{
		3: armedAt(2), 6: {BadWR: -1, Completions: []Completion{{WRID: 1, QP: 0, Opcode: WCRecv, ByteLen: 1}, {WRID: 2, QP: 0, Opcode: WCRecv, ByteLen: 1}}},
		7: armedAt(2), 9: recv(3, Event{Type: EventSRQLimitReached, QP: -1}),
	})
	assert.NoError(t, Consistent(Documented(), testCaps, []RuleID{RuleLimitArm}, steps, nil))
	d := Diagnose(Documented(), testCaps, nil, steps)
	assert.Contains(t, d.Explains(), []RuleID{RuleLimitArm}, "diagnosis %+v", d)
}
