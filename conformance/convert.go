package conformance

import (
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// The drivers and model packages number their enums alike; these functions
// are the only place the two vocabularies meet.

func toDriverWR(w model.WR) drivers.RecvWR {
	out := drivers.RecvWR{ID: w.ID, NumSGE: w.NumSGE}
	for _, s := range w.SGEs {
		out.SGEs = append(out.SGEs, drivers.SGE{Length: s.Length, Key: s.Key})
	}
	return out
}

func toDriverWRs(ws []model.WR) []drivers.RecvWR {
	out := make([]drivers.RecvWR, len(ws))
	for i, w := range ws {
		out[i] = toDriverWR(w)
	}
	return out
}

func toDriverAttr(a model.SRQAttr) drivers.SRQAttr {
	return drivers.SRQAttr{MaxWR: a.MaxWR, MaxSGE: a.MaxSGE, SRQLimit: a.SRQLimit}
}

func fromDriverAttr(a drivers.SRQAttr) model.SRQAttr {
	return model.SRQAttr{MaxWR: a.MaxWR, MaxSGE: a.MaxSGE, SRQLimit: a.SRQLimit}
}

func toDriverMessage(m model.Message, pattern byte) drivers.Message {
	return drivers.Message{Opcode: drivers.Opcode(m.Opcode), Len: m.Len, Imm: m.Imm, Pattern: pattern}
}

func fromDriverCompletion(c drivers.Completion) model.Completion {
	return model.Completion{WRID: c.WRID, Status: model.WCStatus(c.Status), Opcode: model.WCOpcode(c.Opcode),
		ByteLen: c.ByteLen, HasImm: c.HasImm, Imm: c.Imm, QP: c.QP, PayloadErr: c.PayloadErr}
}

func fromDriverEvent(e drivers.Event) model.Event {
	return model.Event{Type: model.EventType(e.Type), QP: e.QP}
}

// capsOf is what the model needs to know of a device.
func capsOf(i drivers.Info) model.Caps {
	return model.Caps{MaxSRQWR: i.MaxSRQWR, MaxSRQSGE: i.MaxSRQSGE, Resize: i.SRQResize}
}
