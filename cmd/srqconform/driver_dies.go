//go:build srqconformtest

package main

import (
	"context"
	"os"
	"slices"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
)

// dieSeedEnv names, for the driver emu-dies, the seed whose run dies: a
// process whose command line has -seed=N panics when it opens the device,
// as one that a device's value killed (the Go runtime's fatal errors exit
// 2 too).
const dieSeedEnv = "SRQCONFORM_TEST_DIE_SEED"

func init() {
	registry["emu-dies"] = func() drivers.Driver { return diesDriver{emu.New()} }
}

type diesDriver struct{ drivers.Driver }

func (d diesDriver) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	if s := os.Getenv(dieSeedEnv); s != "" && slices.Contains(os.Args, "-seed="+s) {
		panic("emu-dies: the run with seed " + s + " dies here")
	}
	return d.Driver.Open(ctx, cfg)
}
