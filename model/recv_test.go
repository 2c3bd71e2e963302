package model

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// arrivalCase posts setup WRs, delivers ops, then polls; want is the
// canonical poll, wrong a poll the model must refuse with rule.
type arrivalCase struct {
	name  string
	prof  Profile
	ops   []Op
	want  []Completion
	evs   []Event
	wrong []Completion
	rule  string
}

func (tc arrivalCase) run(t *testing.T) {
	build := func() *Model {
		m := fixture(t, tc.prof)
		for _, op := range tc.ops {
			mustRun(t, m, op)
		}
		return m
	}
	got := mustRun(t, build(), Poll{})
	assert.Equal(t, tc.want, got.Completions, "completions")
	assert.ElementsMatch(t, tc.evs, got.Events, "events")
	assert.NoError(t, build().Step(Poll{}, got))
	if tc.rule == "" {
		return
	}
	// What a device breaking the rule shows: the wrong completions, with
	// the events and the peers' outcomes that go with them.
	dev, ok := departures[tc.name]
	if !ok {
		dev.evs = got.Events
	}
	base := fixture(t, tc.prof)
	steps := base.history.steps()
	for i, op := range tc.ops {
		obs := mustRun(t, base, op)
		if p, ok := dev.peers[i]; ok {
			obs.Peer = p
		}
		steps = append(steps, Step{Op: op, Obs: obs})
	}
	steps = append(steps, Step{Op: Poll{}, Obs: Observation{Completions: tc.wrong, Events: dev.evs}})
	d := Diagnose(tc.prof, testCaps, nil, steps)
	if testing.Verbose() {
		t.Logf("diagnosis %+v", d)
	}
	assert.Equal(t, tc.rule, strings.Join(RuleNames(d.Rules), "+"))
}

// departure is what a device breaking a receive case's rule shows besides
// the wrong completions: the events, and the peer outcomes of the arrivals
// (by index in the case's ops) that differ from the model's.
type departure struct {
	evs   []Event
	peers map[int]PeerStatus
}

// departures lists the receive cases whose departure changes a QP's fate or
// what a peer sees; the other cases keep the canonical events and peers.
var departures = map[string]departure{
	"fits exactly": {[]Event{{EventQPLastWQEReached, 0}}, map[int]PeerStatus{1: PeerError}},
	"write with immediate ignores the scatter list": {[]Event{{EventQPLastWQEReached, 0}}, map[int]PeerStatus{1: PeerError}},
	"num_sge 0 holds an empty message":              {[]Event{{EventQPLastWQEReached, 0}}, map[int]PeerStatus{1: PeerError}},
	"num_sge 0 refuses one byte":                    {nil, map[int]PeerStatus{1: PeerOK}},
	"length 0 is 2^31 bytes (documented)":           {[]Event{{EventQPLastWQEReached, 0}}, map[int]PeerStatus{1: PeerError}},
	"length 0 is 0 bytes (rxe)":                     {nil, map[int]PeerStatus{1: PeerOK}},
	"RC too large goes to ERR":                      {nil, map[int]PeerStatus{2: PeerOK}},
	"rxe UD too large keeps the QP":                 {[]Event{{EventQPLastWQEReached, 1}}, nil},
	"invalid key":                                   {nil, map[int]PeerStatus{2: PeerOK}},
	"rxe checks only touched SGEs":                  {[]Event{{EventQPLastWQEReached, 0}}, map[int]PeerStatus{2: PeerError}},
	"rxe touched invalid key":                       {nil, map[int]PeerStatus{2: PeerOK}},
}

func ok1(id uint64, qpn int, n uint32) Completion {
	return Completion{WRID: id, QP: qpn, Status: WCSuccess, Opcode: WCRecv, ByteLen: n}
}

func fail1(id uint64, qpn int, s WCStatus) Completion {
	return Completion{WRID: id, QP: qpn, Status: s}
}

func TestReceiveRules(t *testing.T) {
	doc, rxe := Documented(), RXE()
	imm := Message{Opcode: SendImm, Len: 4, Imm: 0xbeef}
	for _, tc := range []arrivalCase{
		{"fits exactly", doc, []Op{post(wr(1, 16, 16)), send(0, 32)},
			[]Completion{ok1(1, 0, 32)}, nil, []Completion{fail1(1, 0, WCLocLenErr)}, "RECV-FIT"},
		{"byte_len is the message length", doc, []Op{post(wr(1, 64)), send(0, 5)},
			[]Completion{ok1(1, 0, 5)}, nil, []Completion{ok1(1, 0, 64)}, "RECV-COMPLETION"},
		{"FIFO", doc, []Op{post(wr(1, 64), wr(2, 64)), send(0, 1), send(0, 2)},
			[]Completion{ok1(1, 0, 1), ok1(2, 0, 2)}, nil, []Completion{ok1(2, 0, 1), ok1(1, 0, 2)}, "FETCH-FIFO"},
		{"a WR completes once", doc, []Op{post(wr(1, 64), wr(2, 64)), send(0, 1), send(0, 2)},
			[]Completion{ok1(1, 0, 1), ok1(2, 0, 2)}, nil, []Completion{ok1(1, 0, 1), ok1(1, 0, 1), ok1(2, 0, 2)}, "FETCH-ONCE"},
		{"send with immediate", doc, []Op{post(wr(1, 64)), Arrive{QP: 0, Msg: imm}},
			[]Completion{{WRID: 1, Status: WCSuccess, Opcode: WCRecv, ByteLen: 4, HasImm: true, Imm: 0xbeef}}, nil,
			[]Completion{ok1(1, 0, 4)}, "RECV-IMM"},
		{"write with immediate ignores the scatter list", doc, []Op{post(WR{ID: 1}), Arrive{QP: 0, Msg: Message{Opcode: WriteImm, Len: 4096, Imm: 7}}},
			[]Completion{{WRID: 1, Status: WCSuccess, Opcode: WCRecvRDMAWithImm, ByteLen: 4096, HasImm: true, Imm: 7}}, nil,
			[]Completion{fail1(1, 0, WCLocLenErr)}, "RECV-WRITE-IMM"},
		{"non-consuming opcodes take nothing", doc, []Op{post(wr(1, 64)), Arrive{QP: 0, Msg: Message{Opcode: Write, Len: 8}},
			Arrive{QP: 0, Msg: Message{Opcode: Read, Len: 8}}, Arrive{QP: 0, Msg: Message{Opcode: CmpSwap, Len: 8}},
			Arrive{QP: 0, Msg: Message{Opcode: FetchAdd, Len: 8}}},
			nil, nil, []Completion{ok1(1, 0, 8)}, "FETCH-OPCODES"},
		// Refusing the empty message a num_sge 0 WR holds breaks the
		// rule about such WRs, the more specific of the two that fit.
		{"num_sge 0 holds an empty message", doc, []Op{post(WR{ID: 1}, WR{ID: 2}), send(0, 0)},
			[]Completion{ok1(1, 0, 0)}, nil, []Completion{fail1(1, 0, WCLocLenErr)}, "RECV-NUMSGE0"},
		{"num_sge 0 refuses one byte", doc, []Op{post(WR{ID: 1}), send(0, 1)},
			[]Completion{fail1(1, 0, WCLocLenErr)}, []Event{{EventQPLastWQEReached, 0}}, []Completion{ok1(1, 0, 1)}, "RECV-NUMSGE0"},
		{"length 0 is 2^31 bytes (documented)", doc, []Op{post(wr(1, 0)), send(0, 4096)},
			[]Completion{ok1(1, 0, 4096)}, nil, []Completion{fail1(1, 0, WCLocLenErr)}, "SGE-LEN0"},
		{"length 0 is 0 bytes (rxe)", rxe, []Op{post(wr(1, 0)), send(0, 1)},
			[]Completion{fail1(1, 0, WCLocQPOpErr)}, []Event{{EventQPLastWQEReached, 0}}, []Completion{ok1(1, 0, 1)}, "SGE-LEN0"},
		{"UD needs 40 bytes for the GRH", doc, []Op{post(wr(1, 100)), send(1, 60)},
			[]Completion{ok1(1, 1, 100)}, nil, []Completion{ok1(1, 1, 60)}, "UD-GRH"},
		{"UD one byte over", doc, []Op{post(wr(1, 100)), send(1, 61)},
			[]Completion{fail1(1, 1, WCLocLenErr)}, nil, []Completion{ok1(1, 1, 61)}, "UD-GRH"},
		{"RC too large goes to ERR", doc, []Op{post(wr(1, 8), wr(2, 8)), send(0, 9), send(0, 1)},
			[]Completion{fail1(1, 0, WCLocLenErr)}, []Event{{EventQPLastWQEReached, 0}}, []Completion{fail1(1, 0, WCLocLenErr), ok1(2, 0, 1)}, "RECV-TOO-LARGE"},
		{"rxe RC too large status", rxe, []Op{post(wr(1, 8)), send(0, 9)},
			[]Completion{fail1(1, 0, WCLocQPOpErr)}, []Event{{EventQPLastWQEReached, 0}}, []Completion{fail1(1, 0, WCLocLenErr)}, "RECV-TOO-LARGE"},
		{"rxe UD too large keeps the QP", rxe, []Op{post(wr(1, 8), wr(2, 64)), send(1, 9), send(1, 1)},
			[]Completion{fail1(1, 1, WCRemInvReq), ok1(2, 1, 41)}, nil, []Completion{fail1(1, 1, WCRemInvReq)}, "RECV-TOO-LARGE"},
		{"rxe-6.1 UD too large kills the QP", RXE61(), []Op{post(wr(1, 8), wr(2, 64)), send(1, 9), send(1, 1)},
			[]Completion{fail1(1, 1, WCLocQPOpErr)}, nil, []Completion{fail1(1, 1, WCLocQPOpErr), ok1(2, 1, 41)}, "QP-NOFETCH-STATES"},
		{"invalid key", doc, []Op{post(WR{ID: 1, NumSGE: 1, SGEs: []SGE{{Length: 64, Key: 1}}}), Invalidate{Key: 1}, send(0, 8)},
			[]Completion{fail1(1, 0, WCLocProtErr)}, []Event{{EventQPLastWQEReached, 0}}, []Completion{ok1(1, 0, 8)}, "RECV-BAD-KEY"},
		{"rxe checks only touched SGEs", rxe, []Op{post(WR{ID: 1, NumSGE: 2, SGEs: []SGE{{Length: 64}, {Length: 64, Key: 1}}}), Invalidate{Key: 1}, send(0, 8)},
			[]Completion{ok1(1, 0, 8)}, nil, []Completion{fail1(1, 0, WCLocQPOpErr)}, "RECV-BAD-KEY"},
		{"rxe touched invalid key", rxe, []Op{post(WR{ID: 1, NumSGE: 2, SGEs: []SGE{{Length: 4}, {Length: 64, Key: 1}}}), Invalidate{Key: 1}, send(0, 8)},
			[]Completion{fail1(1, 0, WCLocQPOpErr)}, []Event{{EventQPLastWQEReached, 0}}, []Completion{ok1(1, 0, 8)}, "RECV-BAD-KEY"},
	} {
		t.Run(tc.name, tc.run)
	}
}

func TestPeerOutcomes(t *testing.T) {
	m := fixture(t, Documented())
	assert.Equal(t, PeerRNR, mustRun(t, m, send(0, 1)).Peer, "RECV-RNR on RC")
	assert.Equal(t, PeerOK, mustRun(t, m, send(1, 1)).Peer, "UD drops silently")
	assert.Equal(t, "RECV-RNR", ruleOf(fixture(t, Documented()).Step(send(0, 1), Observation{Peer: PeerOK})))
	mustRun(t, m, post(wr(1, 4)))
	assert.Equal(t, PeerError, mustRun(t, m, send(0, 5)).Peer, "too large on RC NAKs the sender")
	assert.Equal(t, PeerError, mustRun(t, m, send(0, 1)).Peer, "QP in ERR: dropped")
}

func TestQPStatesThatFetch(t *testing.T) {
	for _, st := range QPStates {
		t.Run(st.String(), func(t *testing.T) {
			m := New(RXE(), testCaps)
			mustRun(t, m, CreateSRQ{MaxWR: 4, MaxSGE: 1})
			mustRun(t, m, CreateQP{Type: RC})
			mustRun(t, m, post(wr(1, 64)))
			path := map[QPState][]Op{
				Reset: nil,
				Init:  {ModifyQP{QP: 0, State: Init}},
				RTR:   {ModifyQP{QP: 0, State: Init}, ModifyQP{QP: 0, State: RTR}},
				RTS:   {ModifyQP{QP: 0, State: Init}, ModifyQP{QP: 0, State: RTR}, ModifyQP{QP: 0, State: RTS}},
				SQD:   {ModifyQP{QP: 0, State: Init}, ModifyQP{QP: 0, State: RTR}, ModifyQP{QP: 0, State: RTS}, ModifyQP{QP: 0, State: SQD}},
				SQE:   {ModifyQP{QP: 0, State: Init}, ModifyQP{QP: 0, State: RTR}, ModifyQP{QP: 0, State: RTS}, InjectSQE{QP: 0}},
				Err:   {ModifyQP{QP: 0, State: Init}, ModifyQP{QP: 0, State: Err}},
			}[st]
			for _, op := range path {
				mustRun(t, m, op)
			}
			require.Equal(t, st, m.View().QPStates[0])
			mustRun(t, m, send(0, 8))
			// Stated here, not taken from QPState.Fetches, so that a
			// change to the model's predicate shows (rdmamojo, DESCRIPTION).
			if st == RTR || st == RTS || st == SQD || st == SQE {
				assert.Equal(t, 0, m.Outstanding(), "QP-FETCH-STATES")
			} else {
				assert.Equal(t, 1, m.Outstanding(), "QP-NOFETCH-STATES")
			}
		})
	}
}

func TestBufferedBeforeRTR(t *testing.T) {
	m := New(MLX5(), testCaps)
	mustRun(t, m, CreateSRQ{MaxWR: 4, MaxSGE: 1})
	mustRun(t, m, CreateQP{Type: RC})
	mustRun(t, m, post(wr(1, 64)))
	mustRun(t, m, ModifyQP{QP: 0, State: Init})
	mustRun(t, m, send(0, 8))
	assert.Equal(t, 1, m.Outstanding(), "nothing fetched in INIT")
	mustRun(t, m, ModifyQP{QP: 0, State: RTR})
	assert.Equal(t, 0, m.Outstanding(), "QP-BEFORE-RTR: processed at RTR")
	assert.Equal(t, []Completion{ok1(1, 0, 8)}, mustRun(t, m, Poll{}).Completions)
}

func TestTransitions(t *testing.T) {
	legal := map[[2]QPState]bool{}
	for _, p := range [][2]QPState{{Reset, Init}, {Init, Init}, {Init, RTR}, {RTR, RTS}, {RTS, RTS}, {RTS, SQD}, {SQD, SQD}, {SQD, RTS}, {SQE, RTS}} {
		legal[p] = true
	}
	for _, from := range QPStates {
		for _, to := range QPStates {
			want := legal[[2]QPState{from, to}] || to == Reset || (to == Err && from != Reset)
			assert.Equal(t, want, legalTransition(from, to), "%s -> %s", from, to)
		}
	}
	m := fixture(t, Documented())
	assert.NotEqual(t, 0, mustRun(t, m, ModifyQP{QP: 0, State: RTR}).Errno, "RTS -> RTR is illegal")
	assert.Equal(t, "QP-TRANSITIONS", ruleOf(fixture(t, Documented()).Step(ModifyQP{QP: 0, State: RTR}, ok(0))))
	assert.Equal(t, "QP-TRANSITIONS", ruleOf(fixture(t, Documented()).Step(ModifyQP{QP: 0, State: SQD}, ok(EINVAL))))
}

func TestLastWQEAndFlush(t *testing.T) {
	in := []Op{post(wr(1, 64), wr(2, 64)), Arrive{QP: 0, Msg: Message{Opcode: Send, Len: 32}, FirstPacketOnly: true}, ModifyQP{QP: 0, State: Err}}
	for _, tc := range []arrivalCase{
		{"documented: flush then event", Documented(), in, []Completion{fail1(1, 0, WCWRFlushErr)}, []Event{{EventQPLastWQEReached, 0}}, nil, "QP-FLUSH-INPROGRESS"},
		{"rxe: event, the WR vanishes", RXE(), in, nil, []Event{{EventQPLastWQEReached, 0}}, []Completion{fail1(1, 0, WCWRFlushErr)}, "QP-FLUSH-INPROGRESS"},
		{"rxe-6.1: flush, no event", RXE61(), in, []Completion{fail1(1, 0, WCWRFlushErr)}, nil, nil, "QP-FLUSH-INPROGRESS"},
		{"rest of the message completes", Documented(), in[:2:2], nil, nil, nil, ""},
	} {
		t.Run(tc.name, tc.run)
	}
	m := fixture(t, Documented())
	mustRun(t, m, ModifyQP{QP: 0, State: Err})
	assert.Equal(t, "QP-LAST-WQE", ruleOf(m.Step(Poll{}, Observation{})))
	m = fixture(t, Documented())
	mustRun(t, m, post(wr(1, 64)))
	mustRun(t, m, Arrive{QP: 0, Msg: Message{Opcode: Send, Len: 32}, FirstPacketOnly: true})
	mustRun(t, m, ArriveRest{QP: 0})
	assert.Equal(t, []Completion{ok1(1, 0, 32)}, mustRun(t, m, Poll{}).Completions)
}

func TestSRQError(t *testing.T) {
	m := fixture(t, Documented())
	mustRun(t, m, post(wr(1, 64)))
	mustRun(t, m, InjectSRQError{})
	assert.Equal(t, 0, mustRun(t, m, post(wr(2, 64))).Errno, "posting still works")
	mustRun(t, m, send(0, 8))
	mustRun(t, m, send(1, 8))
	assert.Equal(t, 2, m.Outstanding(), "SRQ-ERR-NOFETCH")
	obs := mustRun(t, m, Poll{})
	assert.Equal(t, []Event{{EventSRQErr, -1}}, obs.Events)
	m = fixture(t, Documented())
	mustRun(t, m, InjectSRQError{})
	assert.Equal(t, "SRQ-ERR-EVENT", ruleOf(m.Step(Poll{}, Observation{})))
}

func TestSlotFree(t *testing.T) {
	// Post max_wr, receive 2 without polling, post 2 more: rxe frees at
	// fetch, mlx5 only when the completions are polled.
	ops := []Op{post(wr(1, 8), wr(2, 8), wr(3, 8), wr(4, 8), wr(5, 8), wr(6, 8), wr(7, 8)), send(0, 1), send(0, 1)}
	again := post(wr(8, 8), wr(9, 8))
	for _, tc := range []struct {
		p    Profile
		want Observation
	}{{RXE(), ok(0)}, {MLX5(), Observation{Errno: ENOMEM, BadWR: 0}}} {
		m := fixture(t, tc.p)
		for _, op := range ops {
			mustRun(t, m, op)
		}
		got := mustRun(t, m, again)
		assert.Equal(t, tc.want.Errno, got.Errno, tc.p.Name)
		assert.Equal(t, tc.want.BadWR, got.BadWR, tc.p.Name)
	}
	// The documented profile allows both, and the first observation decides.
	for _, obs := range []Observation{ok(0), {Errno: ENOMEM, BadWR: 0}} {
		m := fixture(t, Documented())
		for _, op := range ops {
			require.NoError(t, m.Step(op, mustExpect(t, m, op)))
		}
		assert.NoError(t, m.Step(again, obs))
		assert.Equal(t, []string{map[int]string{0: string(FreeAtFetch), ENOMEM: string(FreeAtPoll)}[obs.Errno]}, m.Resolved(Documented())["SlotFree"])
	}
}

func mustExpect(t *testing.T, m *Model, op Op) Observation {
	t.Helper()
	obs, err := m.Expect(op)
	require.NoError(t, err)
	return obs
}

// TestFillingWRHoldsItsSlot is the regression found by the invariant check:
// under FreeAtPoll a WR fetched for a half-delivered message keeps its slot.
func TestFillingWRHoldsItsSlot(t *testing.T) {
	m := fixture(t, MLX5()) // capacity 7, slots free at poll
	mustRun(t, m, post(wr(1, 64), wr(2, 64), wr(3, 64), wr(4, 64), wr(5, 64), wr(6, 64), wr(7, 64)))
	mustRun(t, m, Arrive{QP: 0, Msg: Message{Opcode: Send, Len: 32}, FirstPacketOnly: true})
	assert.Equal(t, ENOMEM, mustRun(t, m, post(wr(8, 64))).Errno)
	mustRun(t, m, ArriveRest{QP: 0})
	assert.Equal(t, ENOMEM, mustRun(t, m, post(wr(8, 64))).Errno, "not until the completion is polled")
	mustRun(t, m, Poll{})
	assert.Equal(t, 0, mustRun(t, m, post(wr(8, 64))).Errno)
	require.NoError(t, m.CheckInvariants())
}

// TestRXEDeparturesSeenOnTheDevice covers what real rxe showed: bad_wr left
// NULL by ibv_post_recv, LAST_WQE_REACHED repeated for packets in ERR, and
// on 6.1 a create that reports the request but holds 2^k-1.
func TestRXEDeparturesSeenOnTheDevice(t *testing.T) {
	m := fixture(t, RXE())
	assert.NoError(t, m.Step(PostRecv{QP: 0, WR: wr(1, 8)}, Observation{Errno: EINVAL, BadWR: -1}))
	assert.Equal(t, "POST-QP-RQ", ruleOf(fixture(t, Documented()).Step(PostRecv{QP: 0, WR: wr(1, 8)}, Observation{Errno: EINVAL, BadWR: -1})))

	repeat := func(p Profile) error {
		m := fixture(t, p)
		mustRun(t, m, ModifyQP{QP: 0, State: Err})
		mustRun(t, m, send(0, 1))
		lw := Event{EventQPLastWQEReached, 0}
		return m.Step(Poll{}, Observation{Events: []Event{lw, lw, lw}})
	}
	assert.NoError(t, repeat(RXE()), "rxe repeats the event for packets met in ERR")
	assert.Equal(t, "QP-LAST-WQE", ruleOf(repeat(Documented())))
	m = fixture(t, RXE())
	mustRun(t, m, ModifyQP{QP: 0, State: Err})
	assert.Equal(t, "QP-LAST-WQE", ruleOf(m.Step(Poll{}, Observation{})), "once is still required")

	// A message too large for its WR puts the QP in ERR at its first
	// packet; its later packets, already sent, meet the QP in ERR (seen on
	// rxe 6.12 through rdma_cm: a 4096-byte Send, two events). A message
	// of at most one packet on any device (256 bytes) leaves one event.
	tooLarge := func(n uint32) error {
		m := fixture(t, RXE())
		mustRun(t, m, post(wr(1, 8)))
		got := mustRun(t, m, send(0, n))
		require.Equal(t, PeerError, got.Peer)
		lw := Event{EventQPLastWQEReached, 0}
		c := Completion{WRID: 1, QP: 0, Status: WCLocQPOpErr, Opcode: WCRecv}
		return m.Step(Poll{}, Observation{Completions: []Completion{c}, Events: []Event{lw, lw}})
	}
	assert.NoError(t, tooLarge(4096), "the later packets of a multi-packet message met the QP in ERR")
	assert.Equal(t, "QP-LAST-WQE", ruleOf(tooLarge(256)), "a one-packet message leaves one event")

	m = New(RXE61(), testCaps)
	require.NoError(t, m.Step(CreateSRQ{MaxWR: 8, MaxSGE: 1}, Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 8, MaxSGE: 1}}))
	assert.Equal(t, uint32(15), mustRun(t, m, Query{}).Attr.MaxWR)
	for i := range 15 {
		require.Equal(t, 0, mustRun(t, m, post(wr(uint64(i), 8))).Errno)
	}
	assert.Equal(t, ENOMEM, mustRun(t, m, post(wr(99, 8))).Errno)
	assert.Equal(t, "CREATE-ATTR", ruleOf(New(RXE61(), testCaps).Step(CreateSRQ{MaxWR: 8, MaxSGE: 1}, Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 15, MaxSGE: 1}})))
}

// TestQPErrorEvents checks QP-ERROR-EVENT: siw raises QP_FATAL when a
// message too long kills an RC QP and QP_ACCESS_ERR for a bad key, rxe
// raises neither, and the documented profile accepts either way; no
// profile accepts one on a QP that met no error.
func TestQPErrorEvents(t *testing.T) {
	tooLong := []Op{post(wr(1, 8)), send(0, 64)}
	badKey := []Op{post(WR{ID: 1, NumSGE: 1, SGEs: []SGE{{Length: 64, Key: 1}}}), Invalidate{Key: 1}, send(0, 8)}
	withEvent := func(obs Observation, ev Event) Observation {
		obs.Events = append(slices.Clone(obs.Events), ev)
		return obs
	}
	without := func(obs Observation, typ EventType) Observation {
		obs.Events = slices.DeleteFunc(slices.Clone(obs.Events), func(e Event) bool { return e.Type == typ })
		return obs
	}
	for _, tc := range []struct {
		name  string
		p     Profile
		ops   []Op
		event EventType
	}{
		{"siw: too long", SIW(), tooLong, EventQPFatal},
		{"siw: bad key", SIW(), badKey, EventQPAccessErr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := fixture(t, tc.p)
			for _, op := range tc.ops {
				mustRun(t, m, op)
			}
			want := mustRun(t, m.Clone(), Poll{})
			assert.Contains(t, want.Events, Event{tc.event, 0}, "the profile's event is expected")
			// Diagnosed alone, a missing event is as well explained by a
			// QP that survived the error (RECV-TOO-LARGE, RECV-BAD-KEY):
			// the check that notices it is QP-ERROR-EVENT's.
			var d *Deviation
			require.ErrorAs(t, m.Clone().Step(Poll{}, without(want, tc.event)), &d, "a missing event")
			assert.Equal(t, RuleQPErrorEvent, d.Rule, "a missing event")
			assert.Equal(t, "QP-ERROR-EVENT", ruleOf(m.Clone().Step(Poll{}, withEvent(want, Event{tc.event, 0}))), "a second event")
		})
	}
	for _, p := range []Profile{RXE(), Documented()} {
		m := fixture(t, p)
		for _, op := range tooLong {
			mustRun(t, m, op)
		}
		want := mustRun(t, m.Clone(), Poll{})
		assert.NotContains(t, want.Events, Event{EventQPFatal, 0}, "%s: canonically no event", p.Name)
		got := ruleOf(m.Clone().Step(Poll{}, withEvent(want, Event{EventQPFatal, 0})))
		if p.Name == "rxe" {
			assert.Equal(t, "QP-ERROR-EVENT", got, "rxe raises none")
		} else {
			assert.Equal(t, "", got, "documented accepts the event")
		}
		// A QP that met no error raises none, whatever the profile.
		m = fixture(t, p)
		mustRun(t, m, post(wr(2, 64)))
		mustRun(t, m, send(0, 8))
		want = mustRun(t, m.Clone(), Poll{})
		assert.Equal(t, "QP-ERROR-EVENT", ruleOf(m.Clone().Step(Poll{}, withEvent(want, Event{EventQPAccessErr, 0}))), "%s: an event on a healthy QP", p.Name)
	}
}

// TestWildValuesDepart: an event of a type the model has none of, or of a
// QP that does not exist, a completion whose fields are out of range, and
// a peer outcome past the enum are departures of the rule that governs
// them, noticed and rendered, never used as an index.
func TestWildValuesDepart(t *testing.T) {
	for _, c := range []struct {
		ev   Event
		rule RuleID
	}{
		{Event{Type: 200, QP: 0}, RuleQPErrorEvent},
		{Event{Type: 6, QP: -1}, RuleSRQErrEvent},
		{Event{Type: EventQPLastWQEReached, QP: 1 << 30}, RuleQPLastWQE},
		{Event{Type: EventQPFatal, QP: -5}, RuleQPErrorEvent},
	} {
		m := fixture(t, Documented())
		var d *Deviation
		require.ErrorAs(t, m.Step(Poll{}, Observation{BadWR: -1, Events: []Event{c.ev}}), &d, "%s", c.ev)
		assert.Equal(t, c.rule, d.Rule, "%s", c.ev)
		assert.Contains(t, d.Got, c.ev.String(), "the deviation shows the event")
	}
	good := Completion{WRID: 1, ByteLen: 8, QP: 0}
	for _, c := range []struct {
		name string
		got  Completion
		what string
	}{
		{"status past the enum", Completion{WRID: 1, Status: 0xff, QP: 0}, "status"},
		{"opcode past the enum", Completion{WRID: 1, Opcode: 0xff, ByteLen: 8, QP: 0}, "opcode"},
		{"byte_len 0xffffffff", Completion{WRID: 1, ByteLen: 0xffffffff, QP: 0}, "byte_len"},
		{"qp of no QP", Completion{WRID: 1, ByteLen: 8, QP: -1}, "qp"},
		{"wr_id never posted", Completion{WRID: 1 << 40, ByteLen: 8, QP: 0}, "wr_id"},
	} {
		m := fixture(t, Documented())
		mustRun(t, m, post(wr(1, 8)))
		mustRun(t, m, send(0, 8))
		require.Equal(t, []Completion{good}, mustRun(t, m.Clone(), Poll{}).Completions, "the fixture's completion")
		var d *Deviation
		require.ErrorAs(t, m.Step(Poll{}, Observation{BadWR: -1, Completions: []Completion{c.got}}), &d, c.name)
		assert.Equal(t, RuleRecvCompletion, d.Rule, c.name)
		assert.Contains(t, d.What, c.what, c.name)
	}
	m := fixture(t, Documented())
	mustRun(t, m, post(wr(1, 8)))
	var d *Deviation
	require.ErrorAs(t, m.Step(send(0, 8), Observation{BadWR: -1, Peer: 200}), &d, "a peer outcome past the enum")
	assert.Contains(t, d.Got, "PeerStatus(200)")
}

// TestCatchAllCarriesTheErrorsConsequence: an RC message that fits, which
// the device fails (the sender told of an error, the WR completed in
// error, the QP in ERR), is one departure of one rule: what follows on the
// QP in ERR (the next message refused, the last-WQE event) is not a second
// one. With a length error the device says it found the message too large
// for a WR it fits, far from the boundary: RECV-FIT's departure, which
// governs the fit at any size. With any other error status no specific
// rule explains it, and the catch-all does.
func TestCatchAllCarriesTheErrorsConsequence(t *testing.T) {
	for _, c := range []struct {
		status WCStatus
		want   string
	}{{WCLocLenErr, "RECV-FIT"}, {WCLocQPOpErr, "RECV-COMPLETION"}} {
		doc := Documented()
		base := fixture(t, doc)
		steps := base.history.steps()
		for _, op := range []Op{post(wr(1, 64), wr(2, 64)), send(0, 8), send(0, 8)} {
			obs := mustRun(t, base, op)
			if _, ok := op.(Arrive); ok {
				obs.Peer = PeerError
			}
			steps = append(steps, Step{Op: op, Obs: obs})
		}
		steps = append(steps, Step{Op: Poll{}, Obs: Observation{
			Completions: []Completion{fail1(1, 0, c.status)},
			Events:      []Event{{EventQPLastWQEReached, 0}},
		}})
		d := Diagnose(doc, testCaps, nil, steps)
		assert.Equal(t, c.want, strings.Join(RuleNames(d.Rules), "+"), "completed with %s: diagnosis %+v", c.status, d)
	}
}
