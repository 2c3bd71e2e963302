package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// replayWith is a replay file that creates an SRQ and one RC QP, then runs
// the operations ops (JSON objects), which are operations 3 on.
func replayWith(ops ...string) string {
	all := append([]string{`{"op":"create_srq","args":{"MaxWR":8,"MaxSGE":2}}`, `{"op":"create_qp","args":{"Type":0}}`}, ops...)
	return fmt.Sprintf(`{"format":%q,"driver":"emu","profile":"documented","ops":[%s]}`, ReplayFormat, strings.Join(all, ","))
}

func TestReadReplayRefusesOutOfRangeFields(t *testing.T) {
	for _, tc := range []struct {
		op, msg string
	}{
		{`{"op":"modify_qp","args":{"QP":0,"State":42}}`, `replay file operation 3: operation "modify_qp": field State is 42, want 0 (RESET) to 6 (ERR)`},
		{`{"op":"modify_qp","args":{"QP":0,"State":7}}`, `field State is 7, want 0 (RESET) to 6 (ERR)`},
		{`{"op":"arrive","args":{"QP":0,"Msg":{"Opcode":99,"Len":4}}}`, `replay file operation 3: operation "arrive": field Msg.Opcode is 99, want 0 (SEND) to 6 (ATOMIC_FETCH_AND_ADD)`},
		{`{"op":"create_qp","args":{"Type":2}}`, `replay file operation 3: operation "create_qp": field Type is 2, want 0 (RC) or 1 (UD)`},
		{`{"op":"dereg_mr","args":{"Key":2}}`, `field Key is 2, want 0 to 1`},
		{`{"op":"dereg_mr","args":{"Key":-1}}`, `field Key is -1, want 0 to 1`},
		{`{"op":"post_srq_recv","args":{"WRs":[{"ID":1,"NumSGE":1,"SGEs":[{"Length":4,"Key":0}]},{"ID":2,"NumSGE":1,"SGEs":[{"Length":4,"Key":9}]}]}}`, `field WRs[1].SGEs[0].Key is 9, want 0 to 1`},
		{`{"op":"post_srq_recv","args":{"WRs":[{"ID":1,"NumSGE":3,"SGEs":[{"Length":4}]}]}}`, `field WRs[0].NumSGE is 3 with 1 SGEs, want 1 (or negative)`},
		{`{"op":"post_recv","args":{"QP":-1,"WR":{"ID":1,"NumSGE":0}}}`, `field QP is -1, want 0 or more`},
		{`{"op":"poll","args":{"Max":-3}}`, `field Max is -3, want 0 (all) or more`},
		{`{"op":"modify_qp","args":{"QP":1,"State":1}}`, `replay file operation 3 (modify_qp): field QP is 1, want 0 to 0 (the QPs created before it)`},
		{`{"op":"inject_sqe","args":{"QP":4}}`, `replay file operation 3 (inject_sqe): field QP is 4`},
		{`{"op":"modify_qp","args":{"QP":0,"State":300}}`, `cannot unmarshal number 300`},
	} {
		_, _, err := ReadReplay(strings.NewReader(replayWith(tc.op)))
		if assert.Error(t, err, tc.op) {
			assert.Contains(t, err.Error(), tc.msg, tc.op)
			assert.NotContains(t, err.Error(), "\n", tc.op)
		}
	}
}

func TestReadReplayNeedsTheQPCreatedFirst(t *testing.T) {
	in := fmt.Sprintf(`{"format":%q,"driver":"emu","profile":"documented","ops":[{"op":"create_srq","args":{"MaxWR":8,"MaxSGE":2}},{"op":"arrive_rest","args":{"QP":0}}]}`, ReplayFormat)
	_, _, err := ReadReplay(strings.NewReader(in))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "replay file operation 2 (arrive_rest): field QP is 0, but no create_qp comes before it")
}

func TestReadReplayRefusesUnknownArgumentFields(t *testing.T) {
	for _, op := range []string{
		`{"op":"poll","args":{"Max":1,"Bogus":2}}`,
		`{"op":"modify_qp","args":{"QP":0,"Sate":3}}`,
		`{"op":"post_srq_recv","args":{"WRs":[{"ID":1,"NumSGE":1,"SGEs":[{"Length":4,"Key":0,"Addr":7}]}]}}`,
	} {
		_, _, err := ReadReplay(strings.NewReader(replayWith(op)))
		if assert.Error(t, err, op) {
			assert.Contains(t, err.Error(), "unknown field", op)
			assert.Contains(t, err.Error(), "replay file operation 3:", op)
		}
	}
}

func TestReadReplayTakesEveryValidValue(t *testing.T) {
	var ops []model.Op
	ops = append(ops, model.CreateSRQ{MaxWR: 8, MaxSGE: 2}, model.CreateQP{Type: model.RC}, model.CreateQP{Type: model.UD})
	for _, s := range model.QPStates {
		ops = append(ops, model.ModifyQP{QP: 1, State: s})
	}
	for _, o := range model.Opcodes {
		ops = append(ops, model.Arrive{QP: 0, Msg: model.Message{Opcode: o, Len: 1}})
	}
	for k := range model.NumKeys {
		ops = append(ops, model.Invalidate{Key: k},
			model.Post{WRs: []model.WR{{ID: 1, NumSGE: 1, SGEs: []model.SGE{{Length: 1, Key: k}}}, {ID: 2, NumSGE: -1}}})
	}
	ops = append(ops, model.PostRecv{QP: 1, WR: model.WR{ID: 3}}, model.ArriveRest{QP: 1}, model.InjectSQE{QP: 0}, model.Poll{Max: 2})
	rf, err := NewReplay("emu", drivers.Config{}, model.Documented(), 0, "test", ops)
	require.NoError(t, err)
	b, err := json.MarshalIndent(rf, "", "  ")
	require.NoError(t, err)
	_, got, err := ReadReplay(bytes.NewReader(b))
	require.NoError(t, err)
	assert.Equal(t, ops, got)
}
