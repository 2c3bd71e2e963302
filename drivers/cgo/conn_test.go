package cgo

import (
	"strings"
	"testing"
)

func TestCMMode(t *testing.T) {
	for _, c := range []struct {
		opt   string
		iwarp bool
		want  string
	}{{"", false, connVerbs}, {"", true, connRDMACM}, {"rdmacm", false, connRDMACM}, {"RDMACM", true, connRDMACM}, {"verbs", false, connVerbs}} {
		if got, err := cmMode(c.opt, c.iwarp); err != nil || got != c.want {
			t.Errorf("cmMode(%q, iwarp %v) = %q, %v; want %q", c.opt, c.iwarp, got, err, c.want)
		}
	}
	if _, err := cmMode("verbs", true); err == nil || !strings.Contains(err.Error(), "only through rdma_cm") {
		t.Errorf("cmMode(verbs, iWARP) = %v, want a refusal", err)
	}
	if _, err := cmMode("tcp", false); err == nil || !strings.Contains(err.Error(), `"tcp"`) {
		t.Errorf("cmMode(tcp) = %v, want a refusal naming it", err)
	}
}
