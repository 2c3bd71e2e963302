// srqcm.h declares the cgo driver's thin rdma_cm helpers (srqcm.c).
#ifndef SRQCM_H
#define SRQCM_H

#include <stdint.h>
#include <rdma/rdma_cma.h>

struct srqcm_event {
	int event;  // enum rdma_cm_event_type
	int status;
	struct rdma_cm_id *id;
	struct rdma_cm_id *listen_id;
};

int srqcm_next(struct rdma_event_channel *ch, int timeout_ms, struct srqcm_event *out);
int srqcm_bind_listen(struct rdma_cm_id *id, const char *ip, int backlog, int *port);
int srqcm_ack_timeout(struct rdma_cm_id *id, uint8_t timeout);
int srqcm_resolve_addr(struct rdma_cm_id *id, const char *ip, int port, int timeout_ms);
int srqcm_connect(struct rdma_cm_id *id);
int srqcm_accept(struct rdma_cm_id *id);
int srqcm_post_read(struct ibv_qp *qp, uint64_t wr_id, uint64_t addr, uint32_t lkey, uint64_t raddr, uint32_t rkey, uint32_t len);

#endif
