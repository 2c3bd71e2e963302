package conformance_test

import (
	"context"
	"strings"
	"testing"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
)

// panicCloseDriver is the emulator whose SRQs panic when closed, as a
// driver's bug in teardown would.
type panicCloseDriver struct{ drivers.Driver }

type panicCloseDevice struct{ drivers.Device }

type panicCloseSRQ struct{ drivers.SRQ }

func (d panicCloseDriver) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	dev, err := d.Driver.Open(ctx, cfg)
	return panicCloseDevice{dev}, err
}

func (d panicCloseDevice) CreateSRQ(ctx context.Context, a drivers.SRQAttr, keys int) (drivers.SRQ, drivers.SRQAttr, error) {
	s, attr, err := d.Device.CreateSRQ(ctx, a, keys)
	if err != nil {
		return nil, attr, err
	}
	return panicCloseSRQ{s}, attr, nil
}

func (s panicCloseSRQ) Close() error {
	var none []int
	_ = none[len(none)-1] // index out of range [-1], as the mutant srq.srq.destroy.off-by-one.cce828 did
	return nil
}

// TestAPanicInTeardownEndsTheRunWithItsReport: a driver that panics while
// the SRQ is closed after a case must not take the process down (the
// runner of generated mutants crashed on one): the run stops with a
// report whose error names the call and the panic.
func TestAPanicInTeardownEndsTheRunWithItsReport(t *testing.T) {
	rep, err := conformance.Check(context.Background(), panicCloseDriver{emu.New()}, drivers.Config{}, conformance.Options{Seed: 1, Cases: 5})
	if err == nil {
		t.Fatalf("Check returned no error; report error %q", rep.Error)
	}
	if rep == nil {
		t.Fatalf("Check returned no report with its error %v", err)
	}
	for _, want := range []string{"closing the SRQ and its QPs", "it panicked", "index out of range"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Check's error %q does not say %q", err, want)
		}
	}
}
