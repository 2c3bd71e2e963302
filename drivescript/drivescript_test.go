package drivescript

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
)

func TestTranscriptIsAFunctionOfTheSeed(t *testing.T) {
	ctx := context.Background()
	a := Transcript(ctx, emu.New(), 7, 60)
	b := Transcript(ctx, emu.New(), 7, 60)
	c := Transcript(ctx, emu.New(), 8, 60)
	require.NotEmpty(t, a)
	assert.Equal(t, a, b)
	assert.Equal(t, Digest(a), Digest(b))
	assert.NotEqual(t, Digest(a), Digest(c))
	assert.Equal(t, -1, FirstDifference(a, b))
}

func TestScriptsReachEveryVerb(t *testing.T) {
	seen := map[string]int{}
	for seed := range uint64(60) {
		for _, l := range Transcript(context.Background(), emu.New(), seed, 80) {
			verb, _, _ := strings.Cut(strings.Replace(l, ":", "", 1), " ")
			seen[verb]++
		}
	}
	for _, v := range []string{"create", "post", "deliver", "poll", "modify", "resize", "query", "first", "rest",
		"invalidate", "inject", "destroy", "close"} {
		assert.Positive(t, seen[v], "no %q step in 60 scripts", v)
	}
}

// TestScriptsTellMutantsApart: hand-written mutants of the emulator differ
// from it on some script of the first 200.
func TestScriptsTellMutantsApart(t *testing.T) {
	for _, m := range []emu.Switch{emu.LIFO, emu.LimitAtEqual, emu.CapacityOneOver, emu.WrongByteLen, emu.SRQErrorSilent} {
		found := -1
		for seed := range uint64(200) {
			a := Transcript(context.Background(), emu.New(), seed, 80)
			b := Transcript(context.Background(), emu.New(m), seed, 80)
			if i := FirstDifference(a, b); i >= 0 {
				found = int(seed)
				break
			}
		}
		assert.GreaterOrEqual(t, found, 0, "mutant %s agrees with the emulator on 200 scripts", m)
	}
}

// TestNoVerbOnADestroyedSRQ: after Destroy takes the SRQ, a script only
// closes what it opened.
func TestNoVerbOnADestroyedSRQ(t *testing.T) {
	destroyed := 0
	for seed := range uint64(300) {
		lines := Transcript(context.Background(), emu.New(), seed, 80)
		for i, l := range lines {
			if l != "destroy srq: 0 <nil>" {
				continue
			}
			destroyed++
			for _, after := range lines[i+1:] {
				assert.True(t, strings.HasPrefix(after, "close "), "script %d calls %q after the SRQ was destroyed", seed, after)
			}
		}
	}
	assert.Positive(t, destroyed, "no script of 300 destroyed its SRQ")
}

func TestFirstDifference(t *testing.T) {
	assert.Equal(t, 1, FirstDifference([]string{"a", "b"}, []string{"a", "c"}))
	assert.Equal(t, 1, FirstDifference([]string{"a"}, []string{"a", "c"}))
	assert.Equal(t, -1, FirstDifference(nil, nil))
}

// otherErrno is the emulator with every refused ibv_modify_qp and every
// refused create of another SRQ reporting errno 23 (ENFILE) instead of
// its own: where no rule names the errno, the same device to the suite.
type otherErrno struct{ drivers.Driver }

type otherErrnoDevice struct{ drivers.Device }

type otherErrnoSRQ struct{ drivers.SRQ }

type otherErrnoQP struct{ drivers.QP }

func (d otherErrno) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	dev, err := d.Driver.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return otherErrnoDevice{dev}, nil
}

func (d otherErrnoDevice) CreateSRQ(ctx context.Context, attr drivers.SRQAttr, keys int) (drivers.SRQ, drivers.SRQAttr, error) {
	s, got, err := d.Device.CreateSRQ(ctx, attr, keys)
	if s != nil {
		s = otherErrnoSRQ{s}
	}
	return s, got, err
}

func (d otherErrnoDevice) CreateSRQEx(ctx context.Context, attr drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQ, drivers.SRQAttr, error) {
	s, got, err := d.Device.CreateSRQEx(ctx, attr, keys, v)
	if s != nil {
		s = otherErrnoSRQ{s}
	}
	return s, got, err
}

func (s otherErrnoSRQ) CreateQP(ctx context.Context, t drivers.QPType) (drivers.QP, error) {
	q, err := s.SRQ.CreateQP(ctx, t)
	if q != nil {
		q = otherErrnoQP{q}
	}
	return q, err
}

func (s otherErrnoSRQ) CreateQPCaps(ctx context.Context, t drivers.QPType, caps drivers.RecvCaps) (drivers.QP, int, error) {
	q, e, err := s.SRQ.CreateQPCaps(ctx, t, caps)
	if q != nil {
		q = otherErrnoQP{q}
	}
	return q, e, err
}

func (s otherErrnoSRQ) CreateOther(attr drivers.SRQAttr, v drivers.CreateVariant) (int, error) {
	e, err := s.SRQ.CreateOther(attr, v)
	if e == 22 && (attr.MaxWR == 0 || attr.MaxSGE == 0 || attr.MaxWR > 16384 || attr.MaxSGE > 6) {
		e = 23
	}
	return e, err
}

func (q otherErrnoQP) Modify(st drivers.QPState) int {
	if e := q.QP.Modify(st); e != 0 {
		return 23
	}
	return 0
}

// TestAnErrnoNoRuleNamesIsNotADifference: a device that refuses the same
// calls with another errno, where the rules name none (QP-TRANSITIONS,
// CREATE-MAX above the limits), has the emulator's transcripts; the
// generated mutants that did only this were counted escaped, not
// equivalent (reports/blame-unseen.md).
func TestAnErrnoNoRuleNamesIsNotADifference(t *testing.T) {
	refusedModify, refusedCreate := 0, 0
	for seed := range uint64(200) {
		a := Transcript(context.Background(), emu.New(), seed, 80)
		b := Transcript(context.Background(), otherErrno{emu.New()}, seed, 80)
		require.Equal(t, -1, FirstDifference(a, b), "script %d: %q", seed, line(a, FirstDifference(a, b)))
		for _, l := range a {
			switch {
			case strings.HasPrefix(l, "modify qp") && strings.HasSuffix(l, ": refused"):
				refusedModify++
			case strings.HasPrefix(l, "create other") && strings.Contains(l, ": refused"):
				refusedCreate++
			}
		}
	}
	assert.Positive(t, refusedModify, "no refused modify in 200 scripts")
	assert.Positive(t, refusedCreate, "no refused create in 200 scripts")
}

func line(lines []string, i int) string {
	if i < 0 || i >= len(lines) {
		return ""
	}
	return lines[i]
}
