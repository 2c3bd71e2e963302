package conformance_test

import (
	"context"
	"testing"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// refusingDriver is the emulator with a size check turned around: every
// ibv_create_srq and ibv_create_srq_ex of the SRQ under test within the
// device's limits fails with EINVAL, as if it were above them.
type refusingDriver struct{ drivers.Driver }

type refusingDevice struct{ drivers.Device }

func (d refusingDriver) Open(ctx context.Context, cfg drivers.Config) (drivers.Device, error) {
	dev, err := d.Driver.Open(ctx, cfg)
	return refusingDevice{dev}, err
}

func (d refusingDevice) CreateSRQ(ctx context.Context, a drivers.SRQAttr, keys int) (drivers.SRQ, drivers.SRQAttr, error) {
	return nil, drivers.SRQAttr{}, &drivers.Refused{Call: "ibv_create_srq", Errno: 22}
}

func (d refusingDevice) CreateSRQEx(ctx context.Context, a drivers.SRQAttr, keys int, v drivers.CreateVariant) (drivers.SRQ, drivers.SRQAttr, error) {
	return nil, drivers.SRQAttr{}, &drivers.Refused{Call: "ibv_create_srq_ex", Errno: 22}
}

// TestADeviceRefusingEveryCreateIsOneDeparture: the plain and the ex
// create both refused with EINVAL is CREATE-MAX's one departure (which
// sizes a create accepts), not CREATE-ATTR for one and CREATE-EX for the
// other; and the cases that cannot go on without the SRQ end there,
// with no harness error.
func TestADeviceRefusingEveryCreateIsOneDeparture(t *testing.T) {
	opts := conformance.Options{Profile: model.Documented(), Seed: 1, Cases: 20}
	rep, err := conformance.Check(context.Background(), refusingDriver{emu.New()}, drivers.Config{}, opts)
	if err != nil {
		t.Fatalf("Check of a device refusing every create: %v", err)
	}
	var failing []string
	for _, f := range rep.Failures {
		failing = append(failing, f.Rule.String())
	}
	if len(rep.Broken) != 1 || rep.Broken[0] != model.RuleCreateMax {
		t.Errorf("broken rules %v (failures on %v); want only CREATE-MAX", model.RuleNames(rep.Broken), failing)
	}
}
