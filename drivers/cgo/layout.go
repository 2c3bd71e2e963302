package cgo

import "fmt"

// Sizes shared by the device code and the payload check.
const (
	maxMessage = 16384 // the largest message a peer sends (Info.MaxMessage)
	grhBytes   = 40    // the GRH area at the start of a UD receive buffer
	// maxLanding is the most bytes that can land in one SGE: a message and
	// a GRH area. An SGE gets min(length, maxLanding) bytes of its region.
	maxLanding = maxMessage + grhBytes
	// maxSGELength is the longest SGE the driver posts (Info.MaxSGELength):
	// an SGE must lie inside its memory region, so each gets its whole
	// length reserved, and a region of regionBytes holds hundreds of them.
	maxSGELength = 64 << 10
)

// ring hands out consecutive byte ranges of a region of size bytes,
// wrapping to the start when a range does not fit before the end. Ranges
// are 64-byte aligned. Outstanding receive WRs are bounded by the SRQ's
// max_wr, so a region much larger than max_wr WRs never hands out a range
// still in use.
type ring struct {
	size, next uint64
}

// alloc returns the offset of n fresh bytes, or false if n exceeds the
// region.
func (r *ring) alloc(n uint64) (uint64, bool) {
	if n > r.size {
		return 0, false
	}
	if r.next+n > r.size {
		r.next = 0
	}
	off := r.next
	r.next = (off + n + 63) &^ 63
	return off, true
}

// stride is the number of region bytes an SGE of length l gets: its whole
// length, so the SGE describes registered memory, and at least 1 so that
// every SGE has its own address. Lengths above maxSGELength are the
// caller's error (the suite keeps to Info.MaxSGELength).
func stride(l uint32) uint64 {
	return max(1, min(uint64(l), maxSGELength))
}

// place is where one posted SGE points: key (region index, -1 when the key
// names no region), the offset in that region, the SGE's length and the
// bytes reserved for it.
type place struct {
	key    int
	off    uint64
	length uint32
	stride uint64
}

// checkPayload reads back a successful receive of byteLen bytes (grh of
// them the GRH area) from the WR's SGEs, as the device scatters: in SGE
// order, an SGE of length 0 holding nothing. The message bytes must be
// consecutive, b, b+1, b+2, ... (mod 256) for some b. read returns n bytes
// of region key at off (nil when the region is gone). It returns the
// message's bytes read back and "", or what is out of place.
func checkPayload(places []place, byteLen, grh uint32, read func(key int, off, n uint64) []byte) ([]byte, string) {
	need := uint64(byteLen)
	if need < uint64(grh) {
		return nil, fmt.Sprintf("byte_len %d is shorter than the %d-byte GRH area", byteLen, grh)
	}
	// byte_len is the device's word: checked against what the WR could
	// hold before anything is sized by it (a byte_len of 0xffffffff once
	// made this allocate 4 GiB and killed the run).
	var hold, reserved uint64
	for _, p := range places {
		hold += uint64(p.length)
		reserved += min(uint64(p.length), p.stride)
	}
	if need > hold {
		return nil, fmt.Sprintf("byte_len %d but the WR's SGEs hold only %d bytes", byteLen, hold)
	}
	got := make([]byte, 0, min(need, reserved))
	for i, p := range places {
		if uint64(len(got)) == need {
			break
		}
		if p.length == 0 {
			continue
		}
		n := min(uint64(p.length), need-uint64(len(got)))
		if n > p.stride {
			return nil, fmt.Sprintf("SGE %d would hold %d bytes but only %d were reserved for it (driver bug)", i, n, p.stride)
		}
		if p.key < 0 {
			return nil, fmt.Sprintf("bytes %d..%d of the message belong in SGE %d, whose key names no region", len(got), uint64(len(got))+n-1, i)
		}
		b := read(p.key, p.off, n)
		if b == nil {
			return nil, fmt.Sprintf("bytes %d..%d of the message belong in SGE %d, whose region (key %d) is deregistered", len(got), uint64(len(got))+n-1, i, p.key)
		}
		got = append(got, b...)
	}
	if uint64(len(got)) < need {
		return nil, fmt.Sprintf("byte_len %d but the WR's SGEs hold only %d bytes", byteLen, len(got))
	}
	msg := got[grh:]
	for i := 1; i < len(msg); i++ {
		if msg[i] != msg[0]+byte(i) {
			return nil, fmt.Sprintf("message byte %d reads %#x, want %#x (byte 0 reads %#x; bytes must be consecutive)", i, msg[i], msg[0]+byte(i), msg[0])
		}
	}
	return msg, ""
}
