package main

import "testing"

func TestGuestRDMACore(t *testing.T) {
	for _, c := range [][3]string{
		{"56.1-1 (trixie)", "libibverbs.so.1.14.56.1", "56.1-1 (trixie), libibverbs.so.1.14.56.1"},
		{"44.0-2 (host)", "unknown", "44.0-2 (host)"},
		{"44.0-2 (host)", "", "44.0-2 (host)"},
		{"", "libibverbs.so.1.14.44.0", "libibverbs.so.1.14.44.0"},
		{"65.0-1.1 (sid)", "44.0-2 (from SRQCONFORM_RDMA_CORE)", "65.0-1.1 (sid)"},
	} {
		if got := guestRDMACore(c[0], c[1]); got != c[2] {
			t.Errorf("guestRDMACore(%q, %q) = %q; want %q", c[0], c[1], got, c[2])
		}
	}
}
