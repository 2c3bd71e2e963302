//go:build srqconformtest

package main

import (
	"context"
	"time"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
)

// The srqconformtest build tag, which only the command's signal tests use,
// adds the driver emu-slow-close: the emulator with a device whose Close
// takes slowClose, as a device slow to release its resources. A run
// interrupted once waits for it; a second signal must not.
func init() {
	registry["emu-slow-close"] = func() drivers.Driver { return slowCloseDriver{emu.New()} }
}

const slowClose = time.Minute

type slowCloseDriver struct{ drivers.Driver }

type slowCloseDevice struct{ drivers.Device }

func (d slowCloseDriver) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	dev, err := d.Driver.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return slowCloseDevice{dev}, nil
}

func (d slowCloseDevice) Close() error {
	time.Sleep(slowClose)
	return d.Device.Close()
}
