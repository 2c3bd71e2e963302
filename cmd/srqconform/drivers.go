package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
)

// registry holds the drivers this binary was built with. The cgo driver
// adds itself from a file built only with cgo and the rdma build tag.
var registry = map[string]func() drivers.Driver{
	"emu": func() drivers.Driver { return emu.New() },
}

func driverByName(name string) (drivers.Driver, error) {
	mk, ok := registry[name]
	if ok {
		return mk(), nil
	}
	var names []string
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	hint := ""
	if name == "cgo" {
		hint = " (this binary was built without it: build with CGO_ENABLED=1 go build -tags rdma ./cmd/srqconform, which needs libibverbs-dev)"
	}
	return nil, fmt.Errorf("unknown driver %q%s; this binary has: %s", name, hint, strings.Join(names, ", "))
}
