package conformance

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// FuzzReadReplay feeds arbitrary bytes to the replay reader: it must return
// an error or a valid, re-encodable replay, and never panic.
func FuzzReadReplay(f *testing.F) {
	ops := []model.Op{model.CreateSRQ{MaxWR: 4, MaxSGE: 1}, model.CreateQP{Type: model.UD},
		model.Post{WRs: []model.WR{{ID: 1, NumSGE: 1, SGEs: []model.SGE{{Length: 8}}}}},
		model.Arrive{QP: 0, Msg: model.Message{Opcode: model.SendImm, Len: 3, Imm: 9}}, model.Poll{}}
	rf, err := NewReplay("emu", drivers.Config{}, model.RXE(), model.RuleFetchFIFO, "test", ops)
	if err != nil {
		f.Fatal(err)
	}
	good, _ := json.Marshal(rf)
	f.Add(good)
	f.Add([]byte(`{"format":"srqconform-replay/1","profile":"documented","ops":[{"op":"create_srq","args":{"MaxWR":1}}]}`))
	f.Add([]byte(`{"format":"srqconform-replay/1","profile":"x","ops":[]}`))
	f.Add([]byte(`{"ops":[{"op":"post_srq_recv","args":{"WRs":[{"NumSGE":-5}]}}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rf, ops, err := ReadReplay(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(ops) != len(rf.Ops) || len(ops) == 0 {
			t.Fatalf("ReadReplay returned %d ops for %d entries", len(ops), len(rf.Ops))
		}
		again, err := NewReplay(rf.Driver, rf.Config, model.RXE(), rf.Rule, rf.Source, ops)
		if err != nil {
			t.Fatalf("re-encoding a valid replay: %v", err)
		}
		b, _ := json.Marshal(again)
		if _, _, err := ReadReplay(bytes.NewReader(b)); err != nil {
			t.Fatalf("a re-encoded replay does not read back: %v\n%s", err, b)
		}
	})
}
