//go:build !(linux && cgo && rdma)

package cgo

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/srqconform/srqconform/drivers"
)

// TestStubOpenSaysNoRDMATag checks that a build without the rdma tag still
// has New, and that its Open names the missing tag instead of failing
// obscurely.
func TestStubOpenSaysNoRDMATag(t *testing.T) {
	d := New()
	if d.Name() != "cgo" {
		t.Errorf("New().Name() = %q, want %q", d.Name(), "cgo")
	}
	dev, err := d.Open(context.Background(), drivers.Config{})
	if dev != nil || !errors.Is(err, ErrNoRDMATag) {
		t.Fatalf("New().Open() = %v, %v; want nil, ErrNoRDMATag", dev, err)
	}
	if !strings.Contains(err.Error(), "-tags rdma") {
		t.Errorf("New().Open() error %q does not say how to rebuild (-tags rdma)", err)
	}
}
