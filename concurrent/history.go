package concurrent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/srqconform/srqconform/model"
)

// Kind names what an operation did.
type Kind string

// The kinds of operation in a history.
const (
	KindPost    Kind = "post"    // ibv_post_srq_recv of a list
	KindMessage Kind = "message" // a peer's consuming message, to its completion
	KindModify  Kind = "modify"  // ibv_modify_qp of a receiving QP
	KindArm     Kind = "arm"     // ibv_modify_srq with IBV_SRQ_LIMIT
	KindEvents  Kind = "events"  // one read of the async events that had come
	KindFinal   Kind = "final"   // after every thread stopped: what was left
)

// Input is what an operation asked for.
type Input struct {
	Kind  Kind          `json:"kind"`
	WRs   []model.WR    `json:"wrs,omitempty"`   // post
	QP    int           `json:"qp,omitempty"`    // message, modify
	Msg   model.Message `json:"msg,omitzero"`    // message (Imm: its number)
	State model.QPState `json:"state,omitempty"` // modify
	Limit uint32        `json:"limit,omitempty"` // arm
}

// Output is what an operation was seen to do.
type Output struct {
	Errno int              `json:"errno,omitempty"`
	BadWR int              `json:"bad_wr,omitempty"`
	Peer  model.PeerStatus `json:"peer,omitempty"`
	// Completions of a message: those carrying its number (normally one,
	// none when it was dropped or refused). Of the final operation: every
	// completion no message claimed.
	Completions []model.Completion `json:"completions,omitempty"`
	Events      []model.Event      `json:"events,omitempty"`
	// Unknown says the outcome was not learnt (Jepsen's "info"): the
	// operation may or may not have taken effect.
	Unknown bool `json:"unknown,omitempty"`
}

// Operation is one call in the history, by one client (thread), with its
// call and return times from the start of the run. Return is Forever for
// an info operation.
type Operation struct {
	Client int           `json:"client"`
	Input  Input         `json:"input"`
	Output Output        `json:"output"`
	Call   time.Duration `json:"call_ns"`
	Return time.Duration `json:"return_ns"`
}

// Forever is the return time of an operation whose outcome is unknown.
const Forever = time.Duration(math.MaxInt64)

// Setup is what the sequential start of a run did: create the SRQ (Attr
// is what create wrote back) and its QPs, and bring each QP to RTS.
type Setup struct {
	SRQ  model.CreateSRQ `json:"srq"`
	Attr model.SRQAttr   `json:"attr"`
	QPs  []model.QPType  `json:"qps"`
}

// Steps returns the setup as model steps.
func (s Setup) Steps() []model.Step {
	steps := []model.Step{{Op: s.SRQ, Obs: model.Observation{BadWR: -1, Attr: s.Attr}}}
	for _, t := range s.QPs {
		steps = append(steps, model.Step{Op: model.CreateQP{Type: t}, Obs: model.Observation{BadWR: -1}})
	}
	for i := range s.QPs {
		for _, st := range []model.QPState{model.Init, model.RTR, model.RTS} {
			steps = append(steps, model.Step{Op: model.ModifyQP{QP: i, State: st}, Obs: model.Observation{BadWR: -1}})
		}
	}
	return steps
}

// History is a recorded concurrent run: the sequential setup that made
// the SRQ and brought its QPs up, then the concurrent operations.
type History struct {
	Profile string `json:"profile"`
	// ProfileFile holds the profile itself when it is not a built-in one
	// (concurrent -profile FILE): its name alone would not find it again.
	ProfileFile json.RawMessage `json:"profile_file,omitempty"`
	Caps        model.Caps      `json:"caps"`
	Setup       Setup           `json:"setup"`
	Clients     []string        `json:"clients"` // what each client did, by ID
	Ops         []Operation     `json:"ops"`
	// Device, Kernel and Seed say where the history came from.
	Device string        `json:"device,omitempty"`
	Kernel string        `json:"kernel,omitempty"`
	Seed   uint64        `json:"seed"`
	Wall   time.Duration `json:"wall_ns"`
}

// ProfileOf returns the profile the history is checked under: the one it
// holds (ProfileFile), else the built-in profile it names.
func (h *History) ProfileOf() (model.Profile, error) {
	return model.EmbeddedProfile("history", h.Profile, h.ProfileFile)
}

// Complete says the history ran to its final poll, so that it can be
// checked: a run stopped by an error before has none.
func (h *History) Complete() bool {
	return len(h.Ops) > 0 && h.Ops[len(h.Ops)-1].Input.Kind == KindFinal
}

// String describes an operation for people: "post [7 8] -> 0",
// "message qp1 #12 -> ok, wr 7".
func (o Operation) String() string {
	in, out := o.Input, o.Output
	var b strings.Builder
	switch in.Kind {
	case KindPost:
		ids := make([]string, len(in.WRs))
		for i, w := range in.WRs {
			ids[i] = fmt.Sprint(w.ID)
		}
		fmt.Fprintf(&b, "post [%s]", strings.Join(ids, " "))
	case KindMessage:
		fmt.Fprintf(&b, "message #%d to qp%d (%s, %d bytes)", in.Msg.Imm, in.QP, in.Msg.Opcode, in.Msg.Len)
	case KindModify:
		fmt.Fprintf(&b, "modify qp%d to %s", in.QP, in.State)
	case KindArm:
		fmt.Fprintf(&b, "arm limit %d", in.Limit)
	case KindEvents:
		b.WriteString("read events")
	case KindFinal:
		b.WriteString("final poll")
	default:
		fmt.Fprintf(&b, "%s", in.Kind)
	}
	b.WriteString(" -> ")
	if out.Unknown {
		b.WriteString("unknown")
		return b.String()
	}
	switch in.Kind {
	case KindPost:
		if out.Errno == 0 {
			b.WriteString("0")
		} else {
			fmt.Fprintf(&b, "%s, bad_wr %d", model.ErrnoName(out.Errno), out.BadWR)
		}
	case KindMessage:
		b.WriteString("peer " + out.Peer.String())
		if len(out.Completions) == 0 {
			b.WriteString(", no completion")
		}
		for _, c := range out.Completions {
			fmt.Fprintf(&b, ", %v", c)
		}
	case KindEvents, KindFinal:
		if in.Kind == KindFinal {
			fmt.Fprintf(&b, "completions %v, ", out.Completions)
		}
		fmt.Fprintf(&b, "events %v", out.Events)
	default:
		b.WriteString(model.ErrnoName(out.Errno))
	}
	return b.String()
}

// Steps returns the model operations an operation stands for, each with
// its observation: a message is the arrival and the read of its
// completions; an info operation has none (see Check).
func (o Operation) Steps() []model.Step {
	in, out := o.Input, o.Output
	switch in.Kind {
	case KindPost:
		return []model.Step{{Op: model.Post{WRs: in.WRs}, Obs: model.Observation{Errno: out.Errno, BadWR: out.BadWR}}}
	case KindMessage:
		return []model.Step{
			{Op: model.Arrive{QP: in.QP, Msg: in.Msg}, Obs: model.Observation{BadWR: -1, Peer: out.Peer}},
			{Op: model.Poll{Scope: model.PollCQ}, Obs: model.Observation{BadWR: -1, Completions: out.Completions}},
		}
	case KindModify:
		return []model.Step{{Op: model.ModifyQP{QP: in.QP, State: in.State}, Obs: model.Observation{Errno: out.Errno, BadWR: -1}}}
	case KindArm:
		return []model.Step{{Op: model.Arm{Limit: in.Limit}, Obs: model.Observation{Errno: out.Errno, BadWR: -1}}}
	case KindEvents:
		return []model.Step{{Op: model.Poll{Scope: model.PollEventsArrived}, Obs: model.Observation{BadWR: -1, Events: out.Events}}}
	case KindFinal:
		return []model.Step{{Op: model.Poll{}, Obs: model.Observation{BadWR: -1, Completions: out.Completions, Events: out.Events}}}
	}
	return nil
}

// Write writes h as indented JSON.
func (h *History) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(h)
}

// WriteFile writes h to path.
func (h *History) WriteFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := h.Write(f); err != nil {
		f.Close()
		return fmt.Errorf("write history %s: %w", path, err)
	}
	return f.Close()
}

// ReadHistory reads a history written by Write, and checks that it can be
// checked: a known profile, known operation kinds, calls before returns.
func ReadHistory(path string) (*History, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var h History
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	if _, err := h.ProfileOf(); err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	if err := h.validate(); err != nil {
		return nil, fmt.Errorf("history %s %w", path, err)
	}
	return &h, nil
}

// validate refuses what the model cannot take: unknown kinds, QPs,
// states, opcodes or events, and returns before calls.
func (h *History) validate() error {
	for i, t := range h.Setup.QPs {
		if t != model.RC && t != model.UD {
			return fmt.Errorf("setup QP %d: type %d, want 0 (RC) or 1 (UD)", i, t)
		}
	}
	switch {
	case len(h.Ops) == 0:
		return errors.New("has no operations: nothing to check")
	case len(h.Clients) == 0:
		return errors.New("has no clients: want the list of what each client did")
	}
	kinds := []Kind{KindPost, KindMessage, KindModify, KindArm, KindEvents, KindFinal}
	for i, o := range h.Ops {
		in := o.Input
		switch {
		case o.Client < 0 || o.Client >= len(h.Clients):
			return fmt.Errorf("operation %d: client %d, want 0 to %d (the clients list)", i+1, o.Client, len(h.Clients)-1)
		case !slices.Contains(kinds, in.Kind):
			return fmt.Errorf("operation %d: kind %q, want one of %v", i+1, in.Kind, kinds)
		case o.Return < o.Call:
			return fmt.Errorf("operation %d: returns at %v before its call at %v", i+1, o.Return, o.Call)
		case (in.Kind == KindMessage || in.Kind == KindModify) && (in.QP < 0 || in.QP >= len(h.Setup.QPs)):
			return fmt.Errorf("operation %d: QP %d, want 0 to %d", i+1, in.QP, len(h.Setup.QPs)-1)
		case in.Kind == KindModify && int(in.State) >= len(model.QPStates):
			return fmt.Errorf("operation %d: state %d, want 0 (RESET) to %d (ERR)", i+1, in.State, len(model.QPStates)-1)
		case in.Kind == KindMessage && int(in.Msg.Opcode) >= len(model.Opcodes):
			return fmt.Errorf("operation %d: opcode %d, want 0 to %d", i+1, in.Msg.Opcode, len(model.Opcodes)-1)
		case in.Kind == KindMessage && !in.Msg.Opcode.ValidOn(h.Setup.QPs[in.QP]):
			return fmt.Errorf("operation %d: opcode %d on a %s QP", i+1, in.Msg.Opcode, h.Setup.QPs[in.QP])
		}
		for _, e := range o.Output.Events {
			if e.Type > model.EventQPAccessErr {
				return fmt.Errorf("operation %d: event type %d, want 0 to %d", i+1, e.Type, model.EventQPAccessErr)
			}
		}
	}
	return nil
}
