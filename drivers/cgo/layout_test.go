package cgo

import (
	"strings"
	"testing"
)

func TestRingWraps(t *testing.T) {
	r := ring{size: 256}
	for i, want := range []uint64{0, 128, 0, 128} {
		off, ok := r.alloc(100)
		if !ok || off != want {
			t.Fatalf("alloc %d: got %d %v, want %d true", i, off, ok, want)
		}
	}
	if _, ok := r.alloc(257); ok {
		t.Fatal("alloc(257) of a 256-byte ring succeeded")
	}
}

func TestStride(t *testing.T) {
	for l, want := range map[uint32]uint64{0: 1, 1: 1, 100: 100, maxSGELength: maxSGELength, 1 << 31: maxSGELength} {
		if got := stride(l); got != want {
			t.Errorf("stride(%d) = %d, want %d", l, got, want)
		}
	}
}

func TestCheckPayload(t *testing.T) {
	regions := [][]byte{make([]byte, 64), make([]byte, 64)}
	read := func(k int, off, n uint64) []byte { return regions[k][off : off+n] }
	places := []place{{0, 0, 3, 3}, {1, 0, 0, 1}, {1, 8, 10, 10}}
	// The message 7, 8, 9, 10, 11 lands 3 bytes in SGE 0, skips SGE 1.
	copy(regions[0], []byte{7, 8, 9})
	copy(regions[1][8:], []byte{10, 11})
	if msg, s := checkPayload(places, 5, 0, read); s != "" || len(msg) != 5 || msg[0] != 7 {
		t.Fatalf("good payload: %q, message %v; want no complaint and 7..11", s, msg)
	}
	regions[1][9] = 0
	if _, s := checkPayload(places, 5, 0, read); !strings.Contains(s, "message byte 4") {
		t.Fatalf("bad byte: %q", s)
	}
	if _, s := checkPayload(places, 20, 0, read); !strings.Contains(s, "hold only 13") {
		t.Fatalf("too long: %q", s)
	}
	// UD: the first 2 bytes here play the GRH area.
	if msg, s := checkPayload(places, 4, 2, read); s != "" || len(msg) != 2 || msg[0] != 9 {
		t.Fatalf("grh: %q, message %v; want no complaint and 9, 10", s, msg)
	}
}
