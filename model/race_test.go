package model

// A WR handed to two messages (two QPs fetching at once, the second
// given the WR the first took) is diagnosed as FETCH-ONCE.

import "testing"

func TestARacingFetchHandingAWROutTwiceIsFetchOnce(t *testing.T) {
	p := Documented()
	c := Caps{MaxSRQWR: 1024, MaxSRQSGE: 4}
	steps := []Step{{Op: CreateSRQ{MaxWR: 8, MaxSGE: 1}, Obs: Observation{BadWR: -1, Attr: SRQAttr{MaxWR: 8, MaxSGE: 1}}},
		{Op: CreateQP{Type: RC}, Obs: Observation{BadWR: -1}}, {Op: CreateQP{Type: RC}, Obs: Observation{BadWR: -1}}}
	for q := 0; q < 2; q++ {
		for _, s := range []QPState{Init, RTR, RTS} {
			steps = append(steps, Step{Op: ModifyQP{QP: q, State: s}, Obs: Observation{BadWR: -1}})
		}
	}
	w := func(id uint64) WR { return WR{ID: id, NumSGE: 1, SGEs: []SGE{{Length: 128}}} }
	steps = append(steps, Step{Op: Post{WRs: []WR{w(1), w(2), w(3)}}, Obs: Observation{BadWR: -1}})
	for q, imm := range []uint32{3, 4} {
		steps = append(steps, Step{Op: Arrive{QP: q, Msg: Message{Opcode: SendImm, Len: 10, Imm: imm}}, Obs: Observation{BadWR: -1}})
		steps = append(steps, Step{Op: Poll{Scope: PollCQ}, Obs: Observation{BadWR: -1, Completions: []Completion{{WRID: 1, QP: q, ByteLen: 10, HasImm: true, Imm: imm}}}})
	}
	d := DiagnoseAmong(p, c, nil, steps, nil)
	if len(d.Rules) != 1 || d.Rules[0] != RuleFetchOnce {
		t.Errorf("diagnosis %+v, want FETCH-ONCE", d)
	}
}
