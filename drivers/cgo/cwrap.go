//go:build linux && cgo && rdma

package cgo

// This is the package's only cgo file: every call into C, every C type
// and every C constant the driver uses is named here, and nowhere else,
// as Go's net package keeps its resolver's C in cgo_unix_cgo.go. Each
// C.name has a Go name _C_name: a constant, a type alias, or a function
// that makes the one call and returns what it returned. _C2_name is the
// form that also returns errno as an error (cgo's "r, err := C.f()").
// The rest of the package is plain Go against these names.
//
// A pointer passed to a wrapper points into C memory, to a local, or into
// a Go object that holds no Go pointers: cgo sees only the wrapper's
// parameter, so it checks the whole object the pointer points into (at
// the original call, &x.f limited the check to the field). A wrapper that
// is given a field of such an object copies it (_C2_rdma_create_id).

/*
#cgo LDFLAGS: -libverbs -lrdmacm
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "srqc.h"
#include "srqcm.h"
*/
import "C"

import "unsafe"

// C constants.
const (
	_C_EADDRINUSE                    = C.EADDRINUSE
	_C_EADDRNOTAVAIL                 = C.EADDRNOTAVAIL
	_C_EAGAIN                        = C.EAGAIN
	_C_ECONNREFUSED                  = C.ECONNREFUSED
	_C_EINVAL                        = C.EINVAL
	_C_EIO                           = C.EIO
	_C_EOPNOTSUPP                    = C.EOPNOTSUPP
	_C_ETIMEDOUT                     = C.ETIMEDOUT
	_C_IBV_ACCESS_LOCAL_WRITE        = C.IBV_ACCESS_LOCAL_WRITE
	_C_IBV_ACCESS_REMOTE_ATOMIC      = C.IBV_ACCESS_REMOTE_ATOMIC
	_C_IBV_ACCESS_REMOTE_READ        = C.IBV_ACCESS_REMOTE_READ
	_C_IBV_ACCESS_REMOTE_WRITE       = C.IBV_ACCESS_REMOTE_WRITE
	_C_IBV_DEVICE_SRQ_RESIZE         = C.IBV_DEVICE_SRQ_RESIZE
	_C_IBV_EVENT_QP_ACCESS_ERR       = C.IBV_EVENT_QP_ACCESS_ERR
	_C_IBV_EVENT_QP_FATAL            = C.IBV_EVENT_QP_FATAL
	_C_IBV_EVENT_QP_LAST_WQE_REACHED = C.IBV_EVENT_QP_LAST_WQE_REACHED
	_C_IBV_EVENT_QP_REQ_ERR          = C.IBV_EVENT_QP_REQ_ERR
	_C_IBV_EVENT_SRQ_ERR             = C.IBV_EVENT_SRQ_ERR
	_C_IBV_EVENT_SRQ_LIMIT_REACHED   = C.IBV_EVENT_SRQ_LIMIT_REACHED
	_C_IBV_PORT_ACTIVE               = C.IBV_PORT_ACTIVE
	_C_IBV_QPS_ERR                   = C.IBV_QPS_ERR
	_C_IBV_QPS_INIT                  = C.IBV_QPS_INIT
	_C_IBV_QPS_RESET                 = C.IBV_QPS_RESET
	_C_IBV_QPS_RTR                   = C.IBV_QPS_RTR
	_C_IBV_QPS_RTS                   = C.IBV_QPS_RTS
	_C_IBV_QPS_SQD                   = C.IBV_QPS_SQD
	_C_IBV_QPT_RC                    = C.IBV_QPT_RC
	_C_IBV_QPT_UD                    = C.IBV_QPT_UD
	_C_IBV_QP_ACCESS_FLAGS           = C.IBV_QP_ACCESS_FLAGS
	_C_IBV_QP_AV                     = C.IBV_QP_AV
	_C_IBV_QP_DEST_QPN               = C.IBV_QP_DEST_QPN
	_C_IBV_QP_MAX_DEST_RD_ATOMIC     = C.IBV_QP_MAX_DEST_RD_ATOMIC
	_C_IBV_QP_MAX_QP_RD_ATOMIC       = C.IBV_QP_MAX_QP_RD_ATOMIC
	_C_IBV_QP_MIN_RNR_TIMER          = C.IBV_QP_MIN_RNR_TIMER
	_C_IBV_QP_PATH_MTU               = C.IBV_QP_PATH_MTU
	_C_IBV_QP_PKEY_INDEX             = C.IBV_QP_PKEY_INDEX
	_C_IBV_QP_PORT                   = C.IBV_QP_PORT
	_C_IBV_QP_QKEY                   = C.IBV_QP_QKEY
	_C_IBV_QP_RETRY_CNT              = C.IBV_QP_RETRY_CNT
	_C_IBV_QP_RNR_RETRY              = C.IBV_QP_RNR_RETRY
	_C_IBV_QP_RQ_PSN                 = C.IBV_QP_RQ_PSN
	_C_IBV_QP_SQ_PSN                 = C.IBV_QP_SQ_PSN
	_C_IBV_QP_STATE                  = C.IBV_QP_STATE
	_C_IBV_QP_TIMEOUT                = C.IBV_QP_TIMEOUT
	_C_IBV_SRQ_LIMIT                 = C.IBV_SRQ_LIMIT
	_C_IBV_SRQ_MAX_WR                = C.IBV_SRQ_MAX_WR
	_C_IBV_TRANSPORT_IWARP           = C.IBV_TRANSPORT_IWARP
	_C_IBV_WC_RETRY_EXC_ERR          = C.IBV_WC_RETRY_EXC_ERR
	_C_IBV_WC_RNR_RETRY_EXC_ERR      = C.IBV_WC_RNR_RETRY_EXC_ERR
	_C_IBV_WC_SUCCESS                = C.IBV_WC_SUCCESS
	_C_IBV_WC_WR_FLUSH_ERR           = C.IBV_WC_WR_FLUSH_ERR
	_C_IBV_WR_ATOMIC_CMP_AND_SWP     = C.IBV_WR_ATOMIC_CMP_AND_SWP
	_C_IBV_WR_ATOMIC_FETCH_AND_ADD   = C.IBV_WR_ATOMIC_FETCH_AND_ADD
	_C_IBV_WR_RDMA_READ              = C.IBV_WR_RDMA_READ
	_C_IBV_WR_RDMA_WRITE             = C.IBV_WR_RDMA_WRITE
	_C_IBV_WR_RDMA_WRITE_WITH_IMM    = C.IBV_WR_RDMA_WRITE_WITH_IMM
	_C_IBV_WR_SEND                   = C.IBV_WR_SEND
	_C_IBV_WR_SEND_WITH_IMM          = C.IBV_WR_SEND_WITH_IMM
	_C_RDMA_CM_EVENT_ADDR_RESOLVED   = C.RDMA_CM_EVENT_ADDR_RESOLVED
	_C_RDMA_CM_EVENT_CONNECT_REQUEST = C.RDMA_CM_EVENT_CONNECT_REQUEST
	_C_RDMA_CM_EVENT_ESTABLISHED     = C.RDMA_CM_EVENT_ESTABLISHED
	_C_RDMA_CM_EVENT_ROUTE_RESOLVED  = C.RDMA_CM_EVENT_ROUTE_RESOLVED
	_C_RDMA_PS_TCP                   = C.RDMA_PS_TCP
	_C_SRQC_SCRIBBLE                 = C.SRQC_SCRIBBLE
	_C_sizeof_struct_ibv_recv_wr     = C.sizeof_struct_ibv_recv_wr
	_C_sizeof_struct_ibv_sge         = C.sizeof_struct_ibv_sge
	_C_sizeof_struct_ibv_wc          = C.sizeof_struct_ibv_wc
	_C_sizeof_struct_srqc_wc         = C.sizeof_struct_srqc_wc
)

// C types.
type (
	_C_char                      = C.char
	_C_enum_ibv_mtu              = C.enum_ibv_mtu
	_C_enum_ibv_qp_state         = C.enum_ibv_qp_state
	_C_enum_ibv_qp_type          = C.enum_ibv_qp_type
	_C_enum_ibv_wc_status        = C.enum_ibv_wc_status
	_C_int                       = C.int
	_C_int64_t                   = C.int64_t
	_C_size_t                    = C.size_t
	_C_struct_ibv_ah             = C.struct_ibv_ah
	_C_struct_ibv_ah_attr        = C.struct_ibv_ah_attr
	_C_struct_ibv_comp_channel   = C.struct_ibv_comp_channel
	_C_struct_ibv_context        = C.struct_ibv_context
	_C_struct_ibv_cq             = C.struct_ibv_cq
	_C_struct_ibv_device         = C.struct_ibv_device
	_C_struct_ibv_device_attr    = C.struct_ibv_device_attr
	_C_struct_ibv_mr             = C.struct_ibv_mr
	_C_struct_ibv_pd             = C.struct_ibv_pd
	_C_struct_ibv_port_attr      = C.struct_ibv_port_attr
	_C_struct_ibv_qp             = C.struct_ibv_qp
	_C_struct_ibv_qp_attr        = C.struct_ibv_qp_attr
	_C_struct_ibv_qp_init_attr   = C.struct_ibv_qp_init_attr
	_C_struct_ibv_recv_wr        = C.struct_ibv_recv_wr
	_C_struct_ibv_sge            = C.struct_ibv_sge
	_C_struct_ibv_srq            = C.struct_ibv_srq
	_C_struct_ibv_srq_attr       = C.struct_ibv_srq_attr
	_C_struct_ibv_wc             = C.struct_ibv_wc
	_C_struct_rdma_cm_id         = C.struct_rdma_cm_id
	_C_struct_rdma_event_channel = C.struct_rdma_event_channel
	_C_struct_srqc_event         = C.struct_srqc_event
	_C_struct_srqc_send          = C.struct_srqc_send
	_C_struct_srqc_wc            = C.struct_srqc_wc
	_C_struct_srqcm_event        = C.struct_srqcm_event
	_C_uint32_t                  = C.uint32_t
	_C_uint64_t                  = C.uint64_t
	_C_uint8_t                   = C.uint8_t
)

// C memory and strings.

func _C_CString(s string) *_C_char         { return C.CString(s) }
func _C_GoString(p *_C_char) string        { return C.GoString(p) }
func _C_malloc(n _C_size_t) unsafe.Pointer { return C.malloc(n) }
func _C_free(p unsafe.Pointer)             { C.free(p) }

// libibverbs, librdmacm, libc and the helpers of srqc.c and srqcm.c.

func _C_ibv_alloc_pd(context *_C_struct_ibv_context) *_C_struct_ibv_pd {
	return C.ibv_alloc_pd(context)
}

func _C2_ibv_alloc_pd(context *_C_struct_ibv_context) (*_C_struct_ibv_pd, error) {
	r, err := C.ibv_alloc_pd(context)
	return r, err
}

func _C_ibv_close_device(context *_C_struct_ibv_context) _C_int { return C.ibv_close_device(context) }

func _C2_ibv_create_ah(pd *_C_struct_ibv_pd, attr *_C_struct_ibv_ah_attr) (*_C_struct_ibv_ah, error) {
	r, err := C.ibv_create_ah(pd, attr)
	return r, err
}

func _C2_ibv_create_comp_channel(context *_C_struct_ibv_context) (*_C_struct_ibv_comp_channel, error) {
	r, err := C.ibv_create_comp_channel(context)
	return r, err
}

func _C2_ibv_create_cq(context *_C_struct_ibv_context, cqe _C_int, cqContext unsafe.Pointer, channel *_C_struct_ibv_comp_channel, compVector _C_int) (*_C_struct_ibv_cq, error) {
	r, err := C.ibv_create_cq(context, cqe, cqContext, channel, compVector)
	return r, err
}

func _C2_ibv_create_qp(pd *_C_struct_ibv_pd, qpInitAttr *_C_struct_ibv_qp_init_attr) (*_C_struct_ibv_qp, error) {
	r, err := C.ibv_create_qp(pd, qpInitAttr)
	return r, err
}

func _C_ibv_dealloc_pd(pd *_C_struct_ibv_pd) _C_int { return C.ibv_dealloc_pd(pd) }

func _C_ibv_dereg_mr(mr *_C_struct_ibv_mr) _C_int { return C.ibv_dereg_mr(mr) }

func _C_ibv_destroy_ah(ah *_C_struct_ibv_ah) _C_int { return C.ibv_destroy_ah(ah) }

func _C_ibv_destroy_comp_channel(channel *_C_struct_ibv_comp_channel) _C_int {
	return C.ibv_destroy_comp_channel(channel)
}

func _C_ibv_destroy_cq(cq *_C_struct_ibv_cq) _C_int { return C.ibv_destroy_cq(cq) }

func _C_ibv_destroy_qp(qp *_C_struct_ibv_qp) _C_int { return C.ibv_destroy_qp(qp) }

func _C_ibv_destroy_srq(srq *_C_struct_ibv_srq) _C_int { return C.ibv_destroy_srq(srq) }

func _C_ibv_free_device_list(list **_C_struct_ibv_device) { C.ibv_free_device_list(list) }

func _C2_ibv_get_device_list(numDevices *_C_int) (**_C_struct_ibv_device, error) {
	r, err := C.ibv_get_device_list(numDevices)
	return r, err
}

func _C_ibv_get_device_name(device *_C_struct_ibv_device) *_C_char {
	return C.ibv_get_device_name(device)
}

func _C_ibv_modify_qp(qp *_C_struct_ibv_qp, attr *_C_struct_ibv_qp_attr, attrMask _C_int) _C_int {
	return C.ibv_modify_qp(qp, attr, attrMask)
}

func _C_ibv_modify_srq(srq *_C_struct_ibv_srq, srqAttr *_C_struct_ibv_srq_attr, srqAttrMask _C_int) _C_int {
	return C.ibv_modify_srq(srq, srqAttr, srqAttrMask)
}

func _C_ibv_node_type_str(nodeType int32) *_C_char { return C.ibv_node_type_str(nodeType) }

func _C2_ibv_open_device(device *_C_struct_ibv_device) (*_C_struct_ibv_context, error) {
	r, err := C.ibv_open_device(device)
	return r, err
}

func _C_ibv_poll_cq(cq *_C_struct_ibv_cq, numEntries _C_int, wc *_C_struct_ibv_wc) _C_int {
	return C.ibv_poll_cq(cq, numEntries, wc)
}

func _C_ibv_query_device(context *_C_struct_ibv_context, deviceAttr *_C_struct_ibv_device_attr) _C_int {
	return C.ibv_query_device(context, deviceAttr)
}

func _C_ibv_query_qp(qp *_C_struct_ibv_qp, attr *_C_struct_ibv_qp_attr, attrMask _C_int, initAttr *_C_struct_ibv_qp_init_attr) _C_int {
	return C.ibv_query_qp(qp, attr, attrMask, initAttr)
}

func _C_ibv_query_srq(srq *_C_struct_ibv_srq, srqAttr *_C_struct_ibv_srq_attr) _C_int {
	return C.ibv_query_srq(srq, srqAttr)
}

func _C2_ibv_reg_mr(pd *_C_struct_ibv_pd, addr unsafe.Pointer, length _C_size_t, access _C_int) (*_C_struct_ibv_mr, error) {
	r, err := C.ibv_reg_mr(pd, addr, length, access)
	return r, err
}

func _C_memset(s unsafe.Pointer, c _C_int, n _C_size_t) unsafe.Pointer {
	return C.memset(s, c, n)
}

func _C_posix_memalign(memptr *unsafe.Pointer, alignment _C_size_t, size _C_size_t) _C_int {
	return C.posix_memalign(memptr, alignment, size)
}

func _C2_rdma_create_event_channel() (*_C_struct_rdma_event_channel, error) {
	r, err := C.rdma_create_event_channel()
	return r, err
}

// _C2_rdma_create_id passes C a local copy of *id and stores what C wrote
// there back in *id: id is a field of a Go struct that holds Go pointers,
// and cgo checks the whole object a pointer argument points into unless
// the call itself takes the field's address (see the cgo documentation,
// "Passing pointers").

func _C2_rdma_create_id(ch *_C_struct_rdma_event_channel, id **_C_struct_rdma_cm_id, ctx unsafe.Pointer, ps uint32) (_C_int, error) {
	v := *id
	r, err := C.rdma_create_id(ch, &v, ctx, ps)
	*id = v
	return r, err
}

func _C2_rdma_create_qp(id *_C_struct_rdma_cm_id, pd *_C_struct_ibv_pd, qpInitAttr *_C_struct_ibv_qp_init_attr) (_C_int, error) {
	r, err := C.rdma_create_qp(id, pd, qpInitAttr)
	return r, err
}

func _C_rdma_destroy_event_channel(channel *_C_struct_rdma_event_channel) {
	C.rdma_destroy_event_channel(channel)
}

func _C2_rdma_destroy_id(id *_C_struct_rdma_cm_id) (_C_int, error) {
	r, err := C.rdma_destroy_id(id)
	return r, err
}

func _C_rdma_destroy_qp(id *_C_struct_rdma_cm_id) { C.rdma_destroy_qp(id) }

func _C2_rdma_disconnect(id *_C_struct_rdma_cm_id) (_C_int, error) {
	r, err := C.rdma_disconnect(id)
	return r, err
}

func _C_rdma_free_devices(list **_C_struct_ibv_context) { C.rdma_free_devices(list) }

func _C2_rdma_get_devices(numDevices *_C_int) (**_C_struct_ibv_context, error) {
	r, err := C.rdma_get_devices(numDevices)
	return r, err
}

func _C2_rdma_init_qp_attr(id *_C_struct_rdma_cm_id, qpAttr *_C_struct_ibv_qp_attr, qpAttrMask *_C_int) (_C_int, error) {
	r, err := C.rdma_init_qp_attr(id, qpAttr, qpAttrMask)
	return r, err
}

func _C2_rdma_resolve_route(id *_C_struct_rdma_cm_id, timeoutMs _C_int) (_C_int, error) {
	r, err := C.rdma_resolve_route(id, timeoutMs)
	return r, err
}

func _C_srqc_bench_post(pd *_C_struct_ibv_pd, n _C_uint64_t) _C_int64_t {
	return C.srqc_bench_post(pd, n)
}

func _C2_srqc_create_srq(ctx *_C_struct_ibv_context, pd *_C_struct_ibv_pd, cq *_C_struct_ibv_cq, variant _C_int, attr *_C_struct_ibv_srq_attr) (*_C_struct_ibv_srq, error) {
	r, err := C.srqc_create_srq(ctx, pd, cq, variant, attr)
	return r, err
}

func _C_srqc_get_async(ctx *_C_struct_ibv_context, out *_C_struct_srqc_event) _C_int {
	return C.srqc_get_async(ctx, out)
}

func _C_srqc_get_cq_event(ch *_C_struct_ibv_comp_channel, timeoutMs _C_int) _C_int {
	return C.srqc_get_cq_event(ch, timeoutMs)
}

func _C_srqc_libibverbs_path() *_C_char { return C.srqc_libibverbs_path() }

func _C_srqc_poll_cq(cq *_C_struct_ibv_cq, n _C_int, wcs *_C_struct_ibv_wc, out *_C_struct_srqc_wc) _C_int {
	return C.srqc_poll_cq(cq, n, wcs, out)
}

func _C_srqc_post_recv(qp *_C_struct_ibv_qp, wr *_C_struct_ibv_recv_wr, n _C_int, badIndex *_C_int) _C_int {
	return C.srqc_post_recv(qp, wr, n, badIndex)
}

func _C_srqc_post_send(qp *_C_struct_ibv_qp, wrID _C_uint64_t, s *_C_struct_srqc_send) _C_int {
	return C.srqc_post_send(qp, wrID, s)
}

func _C_srqc_post_srq_recv(srq *_C_struct_ibv_srq, wr *_C_struct_ibv_recv_wr, n _C_int, badIndex *_C_int, scribble unsafe.Pointer, scribbleLen _C_size_t) _C_int {
	return C.srqc_post_srq_recv(srq, wr, n, badIndex, scribble, scribbleLen)
}

func _C_srqc_probe_post_recv(name *_C_char, wrID _C_uint64_t, badIndex *_C_int) _C_int {
	return C.srqc_probe_post_recv(name, wrID, badIndex)
}

func _C_srqc_probe_post_srq_recv(name *_C_char, wrID _C_uint64_t, numSGE _C_int, badIndex *_C_int) _C_int {
	return C.srqc_probe_post_srq_recv(name, wrID, numSGE, badIndex)
}

func _C_srqc_query_gid(ctx *_C_struct_ibv_context, port _C_uint8_t, idx _C_int, out *_C_uint8_t) _C_int {
	return C.srqc_query_gid(ctx, port, idx, out)
}

func _C_srqc_query_port(ctx *_C_struct_ibv_context, port _C_uint8_t, a *_C_struct_ibv_port_attr) _C_int {
	return C.srqc_query_port(ctx, port, a)
}

func _C_srqc_req_notify_cq(cq *_C_struct_ibv_cq) _C_int { return C.srqc_req_notify_cq(cq) }

func _C_srqc_set_av(ah *_C_struct_ibv_ah_attr, gid *_C_uint8_t, sgidIndex _C_int, port _C_int) {
	C.srqc_set_av(ah, gid, sgidIndex, port)
}

func _C2_srqc_set_nonblock(fd _C_int) (_C_int, error) {
	r, err := C.srqc_set_nonblock(fd)
	return r, err
}

func _C_srqcm_accept(id *_C_struct_rdma_cm_id) _C_int { return C.srqcm_accept(id) }

func _C_srqcm_ack_timeout(id *_C_struct_rdma_cm_id, timeout _C_uint8_t) _C_int {
	return C.srqcm_ack_timeout(id, timeout)
}

func _C_srqcm_bind_listen(id *_C_struct_rdma_cm_id, ip *_C_char, backlog _C_int, port *_C_int) _C_int {
	return C.srqcm_bind_listen(id, ip, backlog, port)
}

func _C_srqcm_connect(id *_C_struct_rdma_cm_id) _C_int { return C.srqcm_connect(id) }

func _C_srqcm_next(ch *_C_struct_rdma_event_channel, timeoutMs _C_int, out *_C_struct_srqcm_event) _C_int {
	return C.srqcm_next(ch, timeoutMs, out)
}

func _C_srqcm_post_read(qp *_C_struct_ibv_qp, wrID _C_uint64_t, addr _C_uint64_t, lkey _C_uint32_t, raddr _C_uint64_t, rkey _C_uint32_t, length _C_uint32_t) _C_int {
	return C.srqcm_post_read(qp, wrID, addr, lkey, raddr, rkey, length)
}

func _C_srqcm_resolve_addr(id *_C_struct_rdma_cm_id, ip *_C_char, port _C_int, timeoutMs _C_int) _C_int {
	return C.srqcm_resolve_addr(id, ip, port, timeoutMs)
}
