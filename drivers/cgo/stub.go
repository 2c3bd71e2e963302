//go:build !(linux && cgo && rdma)

package cgo

import (
	"context"
	"errors"

	"github.com/srqconform/srqconform/drivers"
)

// ErrNoRDMATag is what Open returns in a build without the rdma build tag
// (or without cgo, or off Linux): such a build holds no libibverbs code.
var ErrNoRDMATag = errors.New("srqconform was built without the rdma build tag (or without cgo, or not for Linux), so the cgo driver has no libibverbs code: rebuild with CGO_ENABLED=1 go build -tags rdma, which needs libibverbs-dev")

// stubDriver is the drivers.Driver New returns in a build without the
// rdma tag: it has the driver's name, and Open refuses.
type stubDriver struct{}

// New returns the driver "cgo". In this build, without the rdma build
// tag, its Open returns ErrNoRDMATag.
func New() drivers.Driver { return stubDriver{} }

// Name returns "cgo".
func (stubDriver) Name() string { return "cgo" }

// Open returns ErrNoRDMATag.
func (stubDriver) Open(context.Context, drivers.Config) (drivers.Device, error) {
	return nil, ErrNoRDMATag
}
