//go:build linux && cgo && rdma

package main

import (
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/cgo"
)

func init() { registry["cgo"] = func() drivers.Driver { return cgo.New() } }
