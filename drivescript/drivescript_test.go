package drivescript

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
