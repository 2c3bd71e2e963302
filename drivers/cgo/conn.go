package cgo

import (
	"errors"
	"fmt"
	"strings"
)

// Connection modes (Config.Options["conn"]).
const (
	connVerbs  = "verbs"  // ibv_modify_qp with RoCE addressing (rxe, InfiniBand)
	connRDMACM = "rdmacm" // librdmacm: the only way an iWARP QP reaches RTS
)

// cmMode picks the connection mode: the option, else rdma_cm for iWARP
// devices and verbs for the others.
func cmMode(opt string, iwarp bool) (string, error) {
	switch strings.ToLower(opt) {
	case "":
		if iwarp {
			return connRDMACM, nil
		}
		return connVerbs, nil
	case connVerbs:
		if iwarp {
			return "", errors.New("cgo: driver option conn=verbs on an iWARP device: its QPs reach RTS only through rdma_cm; use conn=rdmacm")
		}
		return connVerbs, nil
	case connRDMACM:
		return connRDMACM, nil
	}
	return "", fmt.Errorf("cgo: driver option conn=%q; want %s or %s", opt, connVerbs, connRDMACM)
}
