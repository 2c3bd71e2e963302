package model

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPostRules(t *testing.T) {
	doc := Documented()
	seven := post(wr(1, 8), wr(2, 8), wr(3, 8), wr(4, 8), wr(5, 8), wr(6, 8), wr(7, 8))
	tests := []struct {
		name   string
		prof   Profile
		setup  []Op
		op     Op
		want   Observation // canonical outcome
		wrong  Observation // an outcome the model must refuse
		rule   string      // the rule the refusal cites
		outAft int         // outstanding WRs after the op
	}{
		{"prefix stays posted", doc, nil, post(wr(1, 8), wr(2, 8), WR{ID: 3, NumSGE: 3, SGEs: make([]SGE, 3)}, wr(4, 8)),
			Observation{Errno: EINVAL, BadWR: 2}, Observation{Errno: EINVAL, BadWR: 3}, "POST-BADWR", 2},
		{"bad_wr not earlier", doc, nil, post(wr(1, 8), wr(2, 8), WR{ID: 3, NumSGE: 3, SGEs: make([]SGE, 3)}),
			// Refusing wr2 explains it with one departure, as a misreported
			// index does; the later trace tells them apart.
			Observation{Errno: EINVAL, BadWR: 2}, Observation{Errno: EINVAL, BadWR: 1}, "POST-SGE", 2},
		{"all posted when all valid", doc, nil, post(wr(1, 8), wr(2, 8)),
			ok(0), Observation{Errno: EINVAL, BadWR: 1}, "POST-SGE", 2},
		{"full at exactly max_wr", doc, []Op{post(wr(1, 8), wr(2, 8), wr(3, 8))}, post(wr(4, 8), wr(5, 8)),
			Observation{Errno: ENOMEM, BadWR: 1}, ok(0), "POST-FULL", 4},
		{"not full below max_wr", doc, []Op{post(wr(1, 8), wr(2, 8))}, post(wr(3, 8), wr(4, 8)),
			ok(0), Observation{Errno: ENOMEM, BadWR: 1}, "POST-FULL", 4},
		{"num_sge above max_sge", doc, nil, post(WR{ID: 1, NumSGE: 3, SGEs: make([]SGE, 3)}),
			Observation{Errno: EINVAL, BadWR: 0}, Observation{Errno: ENOMEM, BadWR: 0}, "POST-FULL", 0},
		{"num_sge at max_sge", doc, nil, post(wr(1, 8, 8)),
			ok(0), Observation{Errno: EINVAL, BadWR: 0}, "POST-SGE", 1},
		{"negative num_sge", doc, nil, post(WR{ID: 1, NumSGE: -1}),
			Observation{Errno: EINVAL, BadWR: 0}, ok(0), "POST-SGE", 0},
		{"num_sge 0 is valid", doc, nil, post(WR{ID: 1}),
			ok(0), Observation{Errno: EINVAL, BadWR: 0}, "POST-SGE", 1},
		{"siw rejects num_sge 0, negative errno", SIW(), nil, post(wr(1, 8), WR{ID: 2}),
			Observation{Errno: -EINVAL, BadWR: 1}, Observation{Errno: EINVAL, BadWR: 1}, "POST-RETURN", 1},
		{"rxe: full checked first", RXE(), []Op{seven}, post(WR{ID: 9, NumSGE: 3, SGEs: make([]SGE, 3)}),
			Observation{Errno: ENOMEM, BadWR: 0}, Observation{Errno: EINVAL, BadWR: 0}, "POST-CHECK-ORDER", 7},
		{"mlx5: num_sge checked first", MLX5(), []Op{seven}, post(WR{ID: 9, NumSGE: 3, SGEs: make([]SGE, 3)}),
			Observation{Errno: EINVAL, BadWR: 0}, Observation{Errno: ENOMEM, BadWR: 0}, "POST-CHECK-ORDER", 7},
		{"rxe: max_wr 4 holds 7", RXE(), []Op{post(wr(1, 8), wr(2, 8), wr(3, 8), wr(4, 8), wr(5, 8), wr(6, 8))}, post(wr(7, 8), wr(8, 8)),
			Observation{Errno: ENOMEM, BadWR: 1}, Observation{Errno: ENOMEM, BadWR: 0}, "POST-FULL", 7},
		{"errno must be positive", RXE(), nil, post(WR{ID: 1, NumSGE: 3, SGEs: make([]SGE, 3)}),
			Observation{Errno: EINVAL, BadWR: 0}, Observation{Errno: -EINVAL, BadWR: 0}, "POST-RETURN", 0},
		{"post to the QP's own RQ is refused", doc, nil, PostRecv{QP: 0, WR: wr(1, 8)},
			Observation{Errno: EINVAL, BadWR: 0}, ok(0), "POST-QP-RQ", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			build := func() *Model {
				m := fixture(t, tc.prof)
				for _, op := range tc.setup {
					mustRun(t, m, op)
				}
				return m
			}
			m := build()
			got := mustRun(t, m, tc.op)
			assert.Equal(t, tc.want.Errno, got.Errno, "errno")
			assert.Equal(t, tc.want.BadWR, got.BadWR, "bad_wr")
			assert.Equal(t, tc.outAft, m.Outstanding(), "outstanding after")
			assert.NoError(t, build().Step(tc.op, got), "the canonical outcome must be allowed")
			assert.Equal(t, tc.rule, deviate(t, build, tc.op, tc.wrong))
		})
	}
}

// TestAllOrNothingIsBlamedOnPostOrder: a device that drops the prefix of a
// failing list shows it only when the prefix should be consumed. RNR
// alone fits a device that miscounts its queue as well (RECV-RNR); the
// next WR completing in the dropped one's place tells them apart.
func TestAllOrNothingIsBlamedOnPostOrder(t *testing.T) {
	m := fixture(t, Documented())
	require.NoError(t, m.Step(post(wr(1, 64), WR{ID: 2, NumSGE: 3, SGEs: make([]SGE, 3)}), Observation{Errno: EINVAL, BadWR: 1}))
	alone := explainers(m.Step(send(0, 8), Observation{Peer: PeerRNR}))
	assert.Contains(t, alone, RulePostOrder)
	assert.Contains(t, alone, RuleRecvRNR)
	steps := append(m.history.steps(),
		Step{Op: post(wr(3, 64)), Obs: Observation{BadWR: -1}},
		Step{Op: send(0, 8), Obs: Observation{BadWR: -1, Peer: PeerOK}},
		Step{Op: Poll{}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 3, QP: 0, Opcode: WCRecv, ByteLen: 8}}}})
	assert.Equal(t, []string{"POST-ORDER"}, RuleNames(Diagnose(Documented(), testCaps, nil, steps).Rules))
}

// explainers lists the single rules that explain err's trace.
func explainers(err error) []RuleID {
	d, ok := err.(*Deviation)
	if !ok {
		return nil
	}
	var out []RuleID
	for _, set := range d.Diagnose().Explains() {
		if len(set) == 1 {
			out = append(out, set[0])
		}
	}
	slices.Sort(out)
	return out
}

func TestPostAllowedWithoutQPsAndInAnyState(t *testing.T) {
	m := New(Documented(), testCaps)
	mustRun(t, m, CreateSRQ{MaxWR: 2, MaxSGE: 1})
	assert.Equal(t, 0, mustRun(t, m, post(wr(1, 8))).Errno, "POST-ANY-STATE: no QP")
	mustRun(t, m, CreateQP{Type: RC})
	mustRun(t, m, ModifyQP{QP: 0, State: Init})
	mustRun(t, m, ModifyQP{QP: 0, State: Err})
	assert.Equal(t, 0, mustRun(t, m, post(wr(2, 8))).Errno, "POST-ANY-STATE: QP in ERR")
	assert.Equal(t, 2, m.Outstanding())
}

func TestPostDoesNotCheckKeys(t *testing.T) {
	m := fixture(t, Documented())
	mustRun(t, m, Invalidate{Key: 1})
	w := WR{ID: 7, NumSGE: 1, SGEs: []SGE{{Length: 64, Key: 1}}}
	assert.Equal(t, 0, mustRun(t, m, post(w)).Errno, "POST-NO-KEY-CHECK")
	assert.Equal(t, 1, m.Outstanding())
	assert.Equal(t, "POST-SGE", ruleOf(fixture(t, Documented()).Step(post(w), Observation{Errno: EINVAL, BadWR: 0})))
}

func TestPostCopiesTheWR(t *testing.T) {
	m := fixture(t, Documented())
	w := wr(8, 64)
	mustRun(t, m, post(w))
	w.ID, w.SGEs[0].Length = 99, 1 // the caller scribbles its WR (POST-COPY)
	mustRun(t, m, send(0, 32))
	obs := mustRun(t, m, Poll{})
	require.Len(t, obs.Completions, 1)
	assert.Equal(t, uint64(8), obs.Completions[0].WRID)
	assert.Equal(t, WCSuccess, obs.Completions[0].Status)
	assert.Equal(t, uint32(32), obs.Completions[0].ByteLen)
}

func TestPostEqualsOneByOne(t *testing.T) {
	list := post(wr(1, 8), wr(2, 8), wr(3, 8), wr(4, 8), wr(5, 8))
	a := fixture(t, RXE())
	got := mustRun(t, a, list)
	b := fixture(t, RXE())
	for i, w := range list.WRs {
		o := mustRun(t, b, post(w))
		if o.Errno != 0 {
			assert.Equal(t, i, got.BadWR)
			break
		}
	}
	assert.Equal(t, a.View(), b.View())
}

// TestPostRecvThatKillsBreaksPostQPRQ: a post_recv that killed the process
// making it (a driver made it in a child) refuses nothing: it breaks
// POST-QP-RQ under every profile, and the diagnosis says so.
func TestPostRecvThatKillsBreaksPostQPRQ(t *testing.T) {
	for _, p := range []Profile{Documented(), RXE()} {
		m := fixture(t, p)
		op := PostRecv{QP: 0, WR: wr(9, 8)}
		killed := Observation{BadWR: -1, Killed: "SIGFPE"}
		err := m.Step(op, killed)
		var d *Deviation
		require.ErrorAs(t, err, &d)
		require.Equal(t, RulePostQPRQ, d.Rule)
		require.Contains(t, d.Error(), "SIGFPE")
		require.Equal(t, []RuleID{RulePostQPRQ}, d.Diagnose().Rules)
		require.Equal(t, "the process making the call was killed by SIGFPE", killed.Describe(op))
	}
}

// TestAWrongErrnoIsBlamedOnTheRuleItBelongsTo: with POST-SGE already
// relaxed (a device that ignores the SGE limit), -ENOMEM where the queue
// is full is the sign convention (POST-RETURN), not a POST-FULL departure
// that the relaxed POST-SGE refusal would absorb (siw on 7.2, held to
// documented: reports/siw-root-causes.md).
func TestAWrongErrnoIsBlamedOnTheRuleItBelongsTo(t *testing.T) {
	// An RC QP in RTS, so that POST-ANY-STATE (posting with no QP ready)
	// cannot explain a refusal.
	ops := []Op{CreateSRQ{MaxWR: 4, MaxSGE: 1}, CreateQP{Type: RC}, ModifyQP{QP: 0, State: Init}, ModifyQP{QP: 0, State: RTR}, ModifyQP{QP: 0, State: RTS},
		post(wr(1, 16), wr(2, 16), wr(3, 16), wr(4, 16), wr(5, 16), wr(6, 16))}
	m := New(Documented(), testCaps)
	var steps []Step
	for _, op := range ops {
		steps = append(steps, Step{Op: op, Obs: mustRun(t, m, op)})
	}
	last := len(steps) - 1
	steps[last].Obs = Observation{Errno: -ENOMEM, BadWR: 4}
	d := Diagnose(Documented(), testCaps, []RuleID{RulePostSGE}, steps)
	assert.Equal(t, []RuleID{RulePostReturn}, d.Rules)
	// -EINVAL on a WR the model finds valid, with nothing relaxed: the
	// refusal is POST-SGE's and the sign POST-RETURN's.
	steps[last].Obs = Observation{Errno: -EINVAL, BadWR: 0}
	d = Diagnose(Documented(), testCaps, nil, steps)
	assert.ElementsMatch(t, []RuleID{RulePostReturn, RulePostSGE}, d.Rules)
}
