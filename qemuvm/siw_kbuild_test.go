package qemuvm

import "testing"

// TestKbuildVersionTakesALaterRevisionOfTheSameRelease: a security update
// that published kbuild 6.1.192-3 while the headers stay 6.1.192-2 is
// unpacked at -3; anything else keeps the kernel's version.
func TestKbuildVersionTakesALaterRevisionOfTheSameRelease(t *testing.T) {
	for _, c := range []struct{ candidate, kernel, want string }{
		{"6.1.192-3", "6.1.192-2", "6.1.192-3"},
		{"6.1.192-10", "6.1.192-9", "6.1.192-10"},
		{"6.1.192-2", "6.1.192-2", "6.1.192-2"},
		{"6.1.192-1", "6.1.192-2", "6.1.192-2"},
		{"6.1.193-1", "6.1.192-2", "6.1.192-2"},
		{"6.1.176-1", "6.1.192-2", "6.1.192-2"},
		{"weird", "6.1.192-2", "6.1.192-2"},
	} {
		if got := kbuildVersion(c.candidate, c.kernel); got != c.want {
			t.Errorf("kbuildVersion(%q, %q) = %q, want %q", c.candidate, c.kernel, got, c.want)
		}
	}
}
