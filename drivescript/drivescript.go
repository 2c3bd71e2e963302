package drivescript

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/srqconform/srqconform/drivers"
)

// Transcript runs script seed of steps random steps on drv and returns one
// line per call: the call and what came back. A panic of the driver ends
// the transcript with a line saying so.
func Transcript(ctx context.Context, drv drivers.Driver, seed uint64, steps int) (lines []string) {
	s := &script{ctx: ctx, r: rand.New(rand.NewPCG(seed, 0x5eed)), log: &lines}
	defer func() {
		if p := recover(); p != nil {
			lines = append(lines, fmt.Sprintf("panic: %v", p))
		}
	}()
	s.run(drv, steps)
	return lines
}

// Digest returns a short hash of a transcript.
func Digest(lines []string) string {
	h := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(h[:8])
}

// FirstDifference returns the index of the first line where a and b
// differ (len of the shorter when one is a prefix of the other), or -1.
func FirstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// script is one script's state: what it made and its random source.
type script struct {
	ctx    context.Context
	r      *rand.Rand
	log    *[]string
	srq    drivers.SRQ
	qps    []drivers.QP
	maxWR  uint32
	maxSGE int
	// devWR and devSGE are the device's max_srq_wr and max_srq_sge.
	devWR, devSGE uint32
	keys          int
	nextID        uint64
	// gone says Destroy took the SRQ: no verb is called on it after, as
	// none is on a destroyed QP (a verb on a destroyed object is
	// undefined, and the suite makes none).
	gone bool
}

func (s *script) say(format string, a ...any) {
	*s.log = append(*s.log, fmt.Sprintf(format, a...))
}

func (s *script) pick(vals ...uint32) uint32 { return vals[s.r.IntN(len(vals))] }

func (s *script) run(drv drivers.Driver, steps int) {
	dev, err := drv.Open(s.ctx, drivers.Config{})
	if err != nil {
		s.say("open: %v", err)
		return
	}
	defer func() { s.say("close device: %v", dev.Close()) }()
	info := dev.Info()
	s.say("info max_srq_wr %d max_srq_sge %d", info.MaxSRQWR, info.MaxSRQSGE)
	s.devWR, s.devSGE = info.MaxSRQWR, info.MaxSRQSGE
	s.maxWR = s.pick(1, 2, 3, 4, 5, 7, 8, 16)
	s.maxSGE = 1 + s.r.IntN(3)
	s.keys = 3
	attr := drivers.SRQAttr{MaxWR: s.maxWR, MaxSGE: uint32(s.maxSGE)}
	if s.r.IntN(8) == 0 {
		attr.SRQLimit = s.pick(1, 2)
	}
	var got drivers.SRQAttr
	if v := drivers.CreateVariant(s.r.IntN(6)); v > drivers.CreatePlain && v <= drivers.CreateExCQ {
		s.srq, got, err = dev.CreateSRQEx(s.ctx, attr, s.keys, v)
		s.say("create srq ex %d %+v: %+v %v", v, attr, got, err)
	} else {
		s.srq, got, err = dev.CreateSRQ(s.ctx, attr, s.keys)
		s.say("create srq %+v: %+v %v", attr, got, err)
	}
	if err != nil {
		return
	}
	defer func() { s.say("close srq: %v", s.srq.Close()) }()
	for range 1 + s.r.IntN(3) {
		s.createQP()
	}
	for i := range s.qps {
		if s.r.IntN(6) > 0 {
			s.up(i)
		}
	}
	for range steps {
		if s.gone {
			return
		}
		s.step()
	}
	s.pollCQ(0)
	s.pollEvents()
}

func (s *script) createQP() {
	t := drivers.QPType(s.r.IntN(2))
	if s.r.IntN(6) == 0 {
		caps := drivers.RecvCaps(s.r.IntN(3))
		q, e, err := s.srq.CreateQPCaps(s.ctx, t, caps)
		s.say("create qp %d caps %d: %d %v", t, caps, e, err)
		if q != nil {
			s.qps = append(s.qps, q)
		}
		return
	}
	q, err := s.srq.CreateQP(s.ctx, t)
	s.say("create qp %d: %v", t, err)
	if q != nil {
		s.qps = append(s.qps, q)
	}
}

// up takes QP i along RESET -> INIT -> RTR -> RTS.
func (s *script) up(i int) {
	for _, st := range []drivers.QPState{drivers.Reset, drivers.Init, drivers.RTR, drivers.RTS} {
		s.modify(i, st)
	}
}

// modify records only whether the modify was refused: QP-TRANSITIONS
// promises a refusal of an illegal transition, with no errno named (the
// model takes any).
func (s *script) modify(i int, st drivers.QPState) {
	s.say("modify qp %d %v: %s", i, st, refusal(s.qps[i].Modify(st)))
}

// refusal is what a result whose rule names no errno promises: that the
// call was refused or not (ibv_post_recv to a QP with an SRQ, POST-QP-RQ;
// ibv_modify_qp, QP-TRANSITIONS; a create above the device's limits,
// CREATE-MAX), or the signal that killed the caller.
func refusal(e int) string {
	if sig, ok := drivers.KilledBy(e); ok {
		return "killed by " + drivers.SignalName(sig)
	}
	if e != 0 {
		return "refused"
	}
	return "0"
}

func (s *script) destroySRQ() {
	e, err := s.srq.Destroy()
	s.say("destroy srq: %d %v", e, err)
	s.gone = e == 0 && err == nil
}

func (s *script) qp() int { return s.r.IntN(len(s.qps)) }

func (s *script) pollCQ(max int) {
	cs, err := s.srq.PollCQ(max)
	s.say("poll cq %d: %+v %v", max, cs, err)
}

func (s *script) pollEvents() {
	ev, err := s.srq.PollEvents()
	s.say("poll events: %+v %v", ev, err)
}

// wr makes a WR: mostly valid, sometimes with too many or negative SGEs,
// lengths around the message sizes, a key that may be invalidated or
// names no region.
func (s *script) wr() drivers.RecvWR {
	s.nextID++
	n := s.r.IntN(s.maxSGE + 1)
	switch s.r.IntN(12) {
	case 0:
		n = s.maxSGE + 1
	case 1:
		n = -1
	}
	w := drivers.RecvWR{ID: s.nextID, NumSGE: n}
	for range max(n, 0) {
		w.SGEs = append(w.SGEs, drivers.SGE{Length: s.pick(0, 1, 8, 40, 41, 64, 100, 4096), Key: s.r.IntN(s.keys)})
	}
	return w
}

func (s *script) message() drivers.Message {
	op := drivers.Opcode(s.r.IntN(7))
	if s.r.IntN(2) == 0 {
		op = drivers.Opcode(s.r.IntN(3)) // the consuming ones more often
	}
	return drivers.Message{Opcode: op, Len: s.pick(0, 1, 8, 24, 40, 64, 100, 200, 4096), Imm: s.r.Uint32(), Pattern: byte(s.r.IntN(256))}
}

func (s *script) step() {
	if len(s.qps) == 0 {
		if s.r.IntN(3) == 0 {
			s.destroySRQ()
			return
		}
		s.createQP()
		return
	}
	switch k := s.r.IntN(40); {
	case k < 10:
		wrs := make([]drivers.RecvWR, 1+s.r.IntN(4))
		for i := range wrs {
			wrs[i] = s.wr()
		}
		e, bad := s.srq.Post(wrs)
		if e == 0 {
			bad = -1 // bad_wr is set only when the post fails
		}
		s.say("post %+v: %d %d", wrs, e, bad)
	case k < 20:
		i := s.qp()
		m := s.message()
		st, err := s.qps[i].Deliver(s.ctx, m)
		s.say("deliver qp %d %+v: %d %v", i, m, st, err)
	case k < 24:
		s.pollCQ(s.r.IntN(4))
	case k < 26:
		s.pollEvents()
	case k < 28:
		i := s.qp()
		s.modify(i, drivers.QPState(s.r.IntN(7)))
	case k < 29:
		s.up(s.qp())
	case k == 29:
		a, e := s.srq.Query()
		s.say("query: %+v %d", a, e)
	case k == 30:
		l := uint32(s.r.IntN(int(s.maxWR) + 2))
		s.say("modify limit %d: %d", l, s.srq.ModifyLimit(l))
	case k == 31:
		n := uint32(s.r.IntN(2*int(s.maxWR) + 2))
		s.say("resize %d: %d", n, s.srq.Resize(n))
	case k == 32:
		i := s.qp()
		m := s.message()
		m.Opcode = drivers.Opcode(s.r.IntN(2))
		err := s.qps[i].DeliverFirstPacket(s.ctx, m)
		s.say("first packet qp %d %+v: %v", i, m, err)
	case k == 33:
		i := s.qp()
		st, err := s.qps[i].DeliverRest(s.ctx)
		s.say("rest qp %d: %d %v", i, st, err)
	case k == 34:
		key := s.r.IntN(s.keys + 1)
		s.say("invalidate %d: %v", key, s.srq.InvalidateKey(key))
	case k == 35:
		i := s.qp()
		if s.r.IntN(2) == 0 {
			s.say("inject sqe qp %d: %v", i, s.qps[i].InjectSQE())
		} else {
			e, bad := s.qps[i].PostRecv(s.wr())
			s.say("post recv qp %d: %s %d", i, refusal(e), bad)
		}
	case k == 36:
		if s.r.IntN(4) == 0 {
			s.say("inject srq error: %v", s.srq.InjectSRQError())
		}
	case k == 37:
		attr := drivers.SRQAttr{MaxWR: s.pick(0, 1, 16384, 16385), MaxSGE: s.pick(0, 1, 6, 7)}
		v := drivers.CreateVariant(s.r.IntN(5))
		e, err := s.srq.CreateOther(attr, v)
		if attr.MaxWR == 0 || attr.MaxSGE == 0 || attr.MaxWR > s.devWR || attr.MaxSGE > s.devSGE {
			// Above the device's limits CREATE-MAX promises a
			// failure of any errno; with a zero the suite makes no
			// such create (the model leaves it unmodelled).
			s.say("create other %+v %d: %s %v", attr, v, refusal(e), err)
		} else {
			s.say("create other %+v %d: %d %v", attr, v, e, err)
		}
	case k == 38:
		if s.r.IntN(3) == 0 {
			i := s.qp()
			e, err := s.qps[i].Destroy()
			s.say("destroy qp %d: %d %v", i, e, err)
			if e == 0 && err == nil {
				s.qps = append(s.qps[:i], s.qps[i+1:]...)
			}
		} else if len(s.qps) < 4 {
			s.createQP()
		}
	default:
		if s.r.IntN(4) == 0 {
			s.destroySRQ()
		}
	}
}
