package emu

import (
	"math/rand/v2"
	"testing"
)

// TestStreamChunksAreTheStreamBytes: fillStream writes, byte for byte,
// what streamByte says the stream holds, across the GRH area's end and
// the pattern's wrap; streamDiff finds a byte changed anywhere, and only
// that one.
func TestStreamChunksAreTheStreamBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		p, n := uint64(rng.IntN(700)), rng.IntN(1200)
		grh := []uint64{0, 40, 300}[rng.IntN(3)]
		pattern := byte(rng.IntN(256))
		b := make([]byte, n)
		fillStream(b, p, grh, pattern)
		for i := range b {
			if want := streamByte(p+uint64(i), grh, pattern); b[i] != want {
				t.Fatalf("p %d n %d grh %d pattern %#x: byte %d is %#x, want %#x", p, n, grh, pattern, i, b[i], want)
			}
		}
		if d := streamDiff(b, p, grh, pattern); d != -1 {
			t.Fatalf("p %d n %d grh %d: streamDiff of the stream itself is %d, want -1", p, n, grh, d)
		}
		if n == 0 {
			continue
		}
		i := rng.IntN(n)
		b[i]++
		if d := streamDiff(b, p, grh, pattern); d != i {
			t.Fatalf("p %d n %d grh %d: byte %d changed, streamDiff says %d", p, n, grh, i, d)
		}
	}
}
