// srqc.h declares the thin C helpers of the cgo driver (srqc.c).
#ifndef SRQC_H
#define SRQC_H

#include <stdint.h>
#include <infiniband/verbs.h>

struct srqc_event {
	int type;
	int has_qp;
	uint32_t qpn;
	struct ibv_srq *srq;
};

struct srqc_send {
	int opcode;           // enum ibv_wr_opcode
	uint64_t addr;        // local buffer
	uint32_t length;
	uint32_t lkey;
	uint32_t imm;         // host order; sent as htonl(imm)
	uint64_t raddr;       // RDMA and atomics
	uint32_t rkey;
	uint64_t compare_add, swap;
	struct ibv_ah *ah;    // UD
	uint32_t remote_qpn, remote_qkey;
};

struct srqc_wc {
	uint64_t wr_id;
	uint32_t status, opcode, byte_len, wc_flags, qp_num, imm;
};

int srqc_set_nonblock(int fd);
int srqc_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a);
int srqc_query_gid(struct ibv_context *ctx, uint8_t port, int idx, uint8_t *out);
void srqc_set_av(struct ibv_ah_attr *ah, const uint8_t *gid, int sgid_index, int port);
const char *srqc_libibverbs_path(void);
int srqc_get_async(struct ibv_context *ctx, struct srqc_event *out);
int srqc_probe_post_recv(const char *name, uint64_t wr_id, int *bad_index);
int srqc_probe_post_srq_recv(const char *name, uint64_t wr_id, int num_sge, int *bad_index);
#define SRQC_SCRIBBLE 0xA5
int srqc_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, int n, int *bad_index,
                       void *scribble, size_t scribble_len);
int srqc_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, int n, int *bad_index);
int srqc_post_send(struct ibv_qp *qp, uint64_t wr_id, const struct srqc_send *s);
int srqc_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wcs, struct srqc_wc *out);
int srqc_req_notify_cq(struct ibv_cq *cq);
int srqc_get_cq_event(struct ibv_comp_channel *ch, int timeout_ms);
int64_t srqc_bench_post(struct ibv_pd *pd, uint64_t n);

/* The variants of srqc_create_srq, as drivers.CreateVariant numbers them. */
enum {
	SRQC_CREATE_PLAIN,       /* ibv_create_srq */
	SRQC_CREATE_EX,          /* ibv_create_srq_ex, comp_mask PD | TYPE, IBV_SRQT_BASIC */
	SRQC_CREATE_EX_CQ,       /* ... | IBV_SRQ_INIT_ATTR_CQ, with cq */
	SRQC_CREATE_EX_BAD_TYPE, /* PD | TYPE with srq_type IBV_SRQT_TM + 1 */
};
/* srqc_create_srq creates an SRQ on pd the way variant says and writes the
 * attributes back into *attr; NULL with errno set when the create fails. */
struct ibv_srq *srqc_create_srq(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq,
                                int variant, struct ibv_srq_attr *attr);

#endif
