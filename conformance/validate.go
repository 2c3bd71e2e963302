package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/srqconform/srqconform/model"
)

// decodeArgs decodes a replay operation's arguments into p, refusing
// fields p does not have (a misspelt field would otherwise read as zero and
// replay a different trace) and anything after the object.
func decodeArgs(args json.RawMessage, p any) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	err := dec.Decode(p)
	if err == nil && dec.More() {
		err = errors.New("data after the arguments object")
	}
	if err != nil {
		var one bytes.Buffer
		if json.Compact(&one, args) != nil {
			one.Reset()
			one.Write(args)
		}
		return fmt.Errorf("arguments %s: %w", one.Bytes(), err)
	}
	return nil
}

// validateDecoded checks the operation p (a pointer, as DecodeOp decodes
// into) with validateOp.
func validateDecoded(p any) error {
	op, ok := reflect.ValueOf(p).Elem().Interface().(model.Op)
	if !ok {
		return fmt.Errorf("%T is not an operation", p)
	}
	return validateOp(op)
}

// validateOp checks that every enumerated field of op is one the model
// knows (QP type, QP state, opcode, key index) and that indexes and counts
// are not negative. It cannot check that a QP index names a QP created
// earlier in the trace: ReadReplay does.
func validateOp(op model.Op) error {
	switch o := op.(type) {
	case model.CreateSRQ:
		return checkVariant(o.Variant)
	case model.CreateOther:
		return checkVariant(o.Variant)
	case model.CreateQP:
		if o.RecvCaps > model.RecvCapsAboveSGE {
			return fmt.Errorf("field RecvCaps is %d, want 0 to %d", o.RecvCaps, model.RecvCapsAboveSGE)
		}
		return checkQPType(o.Type)
	case model.Post:
		for i, w := range o.WRs {
			if err := checkWR(fmt.Sprintf("WRs[%d].", i), w); err != nil {
				return err
			}
		}
	case model.PostRecv:
		if err := checkQPIndex(o.QP); err != nil {
			return err
		}
		return checkWR("WR.", o.WR)
	case model.ModifyQP:
		if err := checkQPIndex(o.QP); err != nil {
			return err
		}
		last := model.QPStates[len(model.QPStates)-1]
		if int(o.State) >= len(model.QPStates) {
			return fmt.Errorf("field State is %d, want 0 (%s) to %d (%s)", o.State, model.QPStates[0], last, last)
		}
	case model.Invalidate:
		return checkKey("Key", o.Key)
	case model.Arrive:
		if err := checkQPIndex(o.QP); err != nil {
			return err
		}
		last := model.Opcodes[len(model.Opcodes)-1]
		if int(o.Msg.Opcode) >= len(model.Opcodes) {
			return fmt.Errorf("field Msg.Opcode is %d, want 0 (%s) to %d (%s)", o.Msg.Opcode, model.Opcodes[0], last, last)
		}
	case model.ArriveRest:
		return checkQPIndex(o.QP)
	case model.Poll:
		if o.Max < 0 {
			return fmt.Errorf("field Max is %d, want 0 (all) or more", o.Max)
		}
	case model.InjectSQE:
		return checkQPIndex(o.QP)
	case model.DestroyQP:
		return checkQPIndex(o.QP)
	}
	return nil
}

func checkVariant(v model.CreateVariant) error {
	if int(v) >= len(model.CreateVariants) {
		return fmt.Errorf("field Variant is %d, want 0 (%s) to %d", v, model.CreateVariants[0], len(model.CreateVariants)-1)
	}
	return nil
}

func checkQPType(t model.QPType) error {
	if t != model.RC && t != model.UD {
		return fmt.Errorf("field Type is %d, want %d (%s) or %d (%s)", t, model.RC, model.RC, model.UD, model.UD)
	}
	return nil
}

func checkQPIndex(n int) error {
	if n < 0 {
		return fmt.Errorf("field QP is %d, want 0 or more (a QP's number in creation order)", n)
	}
	return nil
}

func checkKey(field string, k int) error {
	if k < 0 || k >= model.NumKeys {
		return fmt.Errorf("field %s is %d, want 0 to %d (the memory keys the SRQ registers)", field, k, model.NumKeys-1)
	}
	return nil
}

// checkWR checks a WR's SGE keys, and that a non-negative num_sge counts
// its SGEs (a negative num_sge is a test of the provider's check and
// carries any SGEs). Field names in errors start with prefix.
func checkWR(prefix string, w model.WR) error {
	if w.NumSGE >= 0 && w.NumSGE != len(w.SGEs) {
		return fmt.Errorf("field %sNumSGE is %d with %d SGEs, want %d (or negative)", prefix, w.NumSGE, len(w.SGEs), len(w.SGEs))
	}
	for i, s := range w.SGEs {
		if err := checkKey(fmt.Sprintf("%sSGEs[%d].Key", prefix, i), s.Key); err != nil {
			return err
		}
	}
	return nil
}

// qpIndex returns the QP index op names, if it names one.
func qpIndex(op model.Op) (int, bool) {
	switch o := op.(type) {
	case model.PostRecv:
		return o.QP, true
	case model.ModifyQP:
		return o.QP, true
	case model.Arrive:
		return o.QP, true
	case model.ArriveRest:
		return o.QP, true
	case model.InjectSQE:
		return o.QP, true
	case model.DestroyQP:
		return o.QP, true
	}
	return 0, false
}

// checkQPsExist checks that every operation naming a QP names one created
// by an earlier create_qp; ops[0] is operation 1.
func checkQPsExist(ops []model.Op) error {
	created := 0
	for i, op := range ops {
		if _, ok := op.(model.CreateQP); ok {
			created++
			continue
		}
		n, ok := qpIndex(op)
		if !ok || n < created {
			continue
		}
		if created == 0 {
			return fmt.Errorf("operation %d (%s): field QP is %d, but no create_qp comes before it", i+1, op.Name(), n)
		}
		return fmt.Errorf("operation %d (%s): field QP is %d, want 0 to %d (the QPs created before it)", i+1, op.Name(), n, created-1)
	}
	return nil
}
