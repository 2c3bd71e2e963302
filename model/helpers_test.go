package model

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var testCaps = Caps{MaxSRQWR: 1 << 14, MaxSRQSGE: 6, Resize: true}

// fixture is a model with an SRQ (max_wr 4 requested, max_sge 2) and QPs
// qp0 (RC) and qp1 (UD) in RTS, under a profile.
func fixture(t *testing.T, p Profile) *Model {
	t.Helper()
	m := New(p, testCaps)
	mustRun(t, m, CreateSRQ{MaxWR: 4, MaxSGE: 2})
	mustRun(t, m, CreateQP{Type: RC})
	mustRun(t, m, CreateQP{Type: UD})
	for qpn := range 2 {
		for _, s := range []QPState{Init, RTR, RTS} {
			mustRun(t, m, ModifyQP{QP: qpn, State: s})
		}
	}
	return m
}

func mustRun(t *testing.T, m *Model, op Op) Observation {
	t.Helper()
	obs, err := m.Run(op)
	require.NoError(t, err, "%s", op)
	return obs
}

// wr builds a WR with SGEs of the given lengths on key 0.
func wr(id uint64, lengths ...uint32) WR {
	w := WR{ID: id, NumSGE: len(lengths)}
	for _, l := range lengths {
		w.SGEs = append(w.SGEs, SGE{Length: l})
	}
	return w
}

func post(ws ...WR) Post { return Post{WRs: ws} }

func send(qpn int, n uint32) Arrive { return Arrive{QP: qpn, Msg: Message{Opcode: Send, Len: n}} }

// ruleOf returns the diagnosis of a deviation (its rules joined with "+"),
// or "" when err is nil or no deviation.
func ruleOf(err error) string {
	if d, ok := err.(*Deviation); ok {
		dg := d.Diagnose()
		if len(dg.Rules) == 0 {
			return "unexplained (noticed by " + d.Rule.String() + ")"
		}
		return strings.Join(RuleNames(dg.Rules), "+")
	}
	if err != nil {
		return "error: " + err.Error()
	}
	return ""
}

// deviate checks that the model rejects got for op with the given rule,
// starting from a clone-free fresh fixture built by build.
func deviate(t *testing.T, build func() *Model, op Op, got Observation) string {
	t.Helper()
	return ruleOf(build().Step(op, got))
}

func ok(errno int) Observation { return Observation{Errno: errno, BadWR: -1} }
