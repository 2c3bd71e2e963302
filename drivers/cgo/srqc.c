//go:build linux && cgo && rdma

#define _GNU_SOURCE
#include <infiniband/verbs.h>
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "srqc.h"

// Thin helpers for what Go cannot reach directly: static inline verbs,
// macros, and structs with unions. No logic lives here.

int srqc_set_nonblock(int fd) {
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return errno;
	return 0;
}

int srqc_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a) {
	return ibv_query_port(ctx, port, a);
}

int srqc_query_gid(struct ibv_context *ctx, uint8_t port, int idx, uint8_t *out) {
	union ibv_gid g;
	int r = ibv_query_gid(ctx, port, idx, &g);
	if (r == 0)
		memcpy(out, g.raw, 16);
	return r;
}

// srqc_set_av fills a global (RoCE) address vector to gid.
void srqc_set_av(struct ibv_ah_attr *ah, const uint8_t *gid, int sgid_index, int port) {
	memset(ah, 0, sizeof *ah);
	ah->is_global = 1;
	memcpy(ah->grh.dgid.raw, gid, 16);
	ah->grh.sgid_index = sgid_index;
	ah->grh.hop_limit = 64;
	ah->port_num = port;
}

// srqc_libibverbs_path names the file libibverbs was loaded from.
const char *srqc_libibverbs_path(void) {
	Dl_info info;
	if (dladdr((void *)ibv_open_device, &info) == 0)
		return NULL;
	return info.dli_fname;
}

// srqc_get_async reads one async event (the fd is non-blocking), copies
// what srqconform needs and acknowledges it at once. It returns 0, or the
// errno of ibv_get_async_event (EAGAIN when none is pending).
int srqc_get_async(struct ibv_context *ctx, struct srqc_event *out) {
	struct ibv_async_event ev;
	if (ibv_get_async_event(ctx, &ev))
		return errno ? errno : EIO;
	memset(out, 0, sizeof *out);
	out->type = ev.event_type;
	switch (ev.event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		out->has_qp = 1;
		out->qpn = ev.element.qp->qp_num;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		out->srq = ev.element.srq;
		break;
	default:
		break;
	}
	ibv_ack_async_event(&ev);
	return 0;
}

// srqc_post_srq_recv posts the list wr (n entries, consecutive in memory)
// and turns bad_wr into an index: -1 when not set, n when it points
// outside the list.
int srqc_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, int n, int *bad_index,
                       void *scribble, size_t scribble_len) {
	struct ibv_recv_wr *bad = NULL;
	int r = ibv_post_srq_recv(srq, n > 0 ? wr : NULL, &bad);
	/* The provider must have copied the list: overwrite it at once. */
	memset(scribble, SRQC_SCRIBBLE, scribble_len);
	*bad_index = -1;
	if (bad) {
		*bad_index = n;
		for (int i = 0; i < n; i++)
			if (&wr[i] == bad)
				*bad_index = i;
	}
	return r;
}

int srqc_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, int n, int *bad_index) {
	struct ibv_recv_wr *bad = NULL;
	int r = ibv_post_recv(qp, n > 0 ? wr : NULL, &bad);
	*bad_index = -1;
	if (bad) {
		*bad_index = n;
		for (int i = 0; i < n; i++)
			if (&wr[i] == bad)
				*bad_index = i;
	}
	return r;
}

// srqc_post_send posts one signaled send WR built on the C stack.
int srqc_post_send(struct ibv_qp *qp, uint64_t wr_id, const struct srqc_send *s) {
	struct ibv_sge sge = { .addr = s->addr, .length = s->length, .lkey = s->lkey };
	struct ibv_send_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof wr);
	wr.wr_id = wr_id;
	wr.opcode = s->opcode;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = s->length > 0 ? 1 : 0;
	switch (s->opcode) {
	case IBV_WR_SEND_WITH_IMM:
		wr.imm_data = htonl(s->imm);
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		wr.imm_data = htonl(s->imm);
		// fall through
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_READ:
		wr.wr.rdma.remote_addr = s->raddr;
		wr.wr.rdma.rkey = s->rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wr.wr.atomic.remote_addr = s->raddr;
		wr.wr.atomic.rkey = s->rkey;
		wr.wr.atomic.compare_add = s->compare_add;
		wr.wr.atomic.swap = s->swap;
		break;
	}
	if (s->ah) {
		wr.wr.ud.ah = s->ah;
		wr.wr.ud.remote_qpn = s->remote_qpn;
		wr.wr.ud.remote_qkey = s->remote_qkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

// srqc_poll_cq polls up to n completions into wcs and copies their fields
// (imm_data from its union, in host order) to out.
int srqc_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wcs, struct srqc_wc *out) {
	int r = ibv_poll_cq(cq, n, wcs);
	for (int i = 0; i < r && i < n; i++) { /* r > n is the provider's bug: the caller refuses it */
		out[i].wr_id = wcs[i].wr_id;
		out[i].status = wcs[i].status;
		out[i].opcode = wcs[i].opcode;
		out[i].byte_len = wcs[i].byte_len;
		out[i].wc_flags = wcs[i].wc_flags;
		out[i].qp_num = wcs[i].qp_num;
		out[i].imm = ntohl(wcs[i].imm_data);
	}
	return r;
}

int srqc_req_notify_cq(struct ibv_cq *cq) {
	return ibv_req_notify_cq(cq, 0);
}

// srqc_get_cq_event waits up to timeout_ms (0: do not wait) for a
// completion event on ch (its fd is non-blocking) and acknowledges it. It
// returns 1 for an event, 0 for none, or -errno.
int srqc_get_cq_event(struct ibv_comp_channel *ch, int timeout_ms) {
	struct ibv_cq *cq;
	void *cq_ctx;
	if (timeout_ms > 0) {
		struct pollfd p = { .fd = ch->fd, .events = POLLIN };
		int r = poll(&p, 1, timeout_ms);
		if (r < 0)
			return errno == EINTR ? 0 : -errno;
		if (r == 0)
			return 0;
	}
	if (ibv_get_cq_event(ch, &cq, &cq_ctx)) {
		if (errno == EAGAIN)
			return 0;
		return errno ? -errno : -EIO;
	}
	ibv_ack_cq_events(cq, 1);
	return 1;
}

// srqc_bench_post posts n WRs of one 64-byte SGE to SRQs of max_wr 16383
// on pd, one WR per ibv_post_srq_recv call, as BenchmarkPost does through
// the Go driver. A full SRQ is replaced by a fresh one outside the timed
// part. It returns the nanoseconds spent posting, or -errno.
int64_t srqc_bench_post(struct ibv_pd *pd, uint64_t n)
{
	void *buf = NULL;
	if (posix_memalign(&buf, 4096, 4096))
		return -ENOMEM;
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		free(buf);
		return -errno;
	}
	struct ibv_srq_init_attr ia = {.attr = {.max_wr = 16383, .max_sge = 1}};
	struct ibv_srq *srq = NULL;
	int64_t ns = 0;
	uint64_t done = 0;
	int err = 0;
	while (done < n && !err) {
		srq = ibv_create_srq(pd, &ia);
		if (!srq) {
			err = errno;
			break;
		}
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (; done < n; done++) {
			struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey};
			struct ibv_recv_wr wr = {.wr_id = done, .sg_list = &sge, .num_sge = 1}, *bad;
			if (ibv_post_srq_recv(srq, &wr, &bad))
				break; /* full: a fresh SRQ */
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ns += (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
		if (ibv_destroy_srq(srq))
			err = errno;
	}
	ibv_dereg_mr(mr);
	free(buf);
	return err ? -err : ns;
}

struct ibv_srq *srqc_create_srq(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq,
                                int variant, struct ibv_srq_attr *attr)
{
	if (variant == SRQC_CREATE_PLAIN) {
		struct ibv_srq_init_attr ia = {.attr = *attr};
		struct ibv_srq *srq = ibv_create_srq(pd, &ia);
		if (srq)
			*attr = ia.attr;
		return srq;
	}
	struct ibv_srq_init_attr_ex ia = {
		.attr = *attr,
		.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE,
		.srq_type = IBV_SRQT_BASIC,
		.pd = pd,
	};
	switch (variant) {
	case SRQC_CREATE_EX:
		break;
	case SRQC_CREATE_EX_CQ:
		ia.comp_mask |= IBV_SRQ_INIT_ATTR_CQ;
		ia.cq = cq;
		break;
	case SRQC_CREATE_EX_BAD_TYPE:
		ia.srq_type = (enum ibv_srq_type)(IBV_SRQT_TM + 1);
		break;
	default:
		errno = EINVAL;
		return NULL;
	}
	struct ibv_srq *srq = ibv_create_srq_ex(ctx, &ia);
	if (srq)
		*attr = ia.attr;
	return srq;
}

// probe_open opens the device named name for a probe: its context, or
// NULL with *ret set to -1000 - errno.
static struct ibv_context *probe_open(const char *name, int *ret)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_context *ctx = NULL;
	*ret = -1000 - ENODEV;
	if (!list) {
		*ret = -1000 - errno;
		return NULL;
	}
	for (int i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

// probe_default_signals gives the synchronous signals their default
// action: the Go runtime turns one raised in C code into a panic and exit
// status 2, and the parent must see the signal itself.
static void probe_default_signals(void)
{
	signal(SIGFPE, SIG_DFL);
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	signal(SIGILL, SIG_DFL);
}

// srqc_probe_post_recv opens the device named name, makes on it a PD, a
// CQ, an SRQ (max_wr 4, max_sge 1) and an RC QP attached to the SRQ with
// max_recv_wr and max_recv_sge 0 (as the suite's QPs are), and calls
// ibv_post_recv on that QP with one WR of no SGEs and wr_id. It returns the
// verb's return value with *bad_index (0 for the first WR, -1 for none),
// or -1000 - errno when a resource could not be made. It is meant for a
// child process: on some providers the call kills the process
// (drivers.Info.PostRecvUnsafe), and nothing is released on that path.
int srqc_probe_post_recv(const char *name, uint64_t wr_id, int *bad_index)
{
	int ret;
	struct ibv_context *ctx = probe_open(name, &ret);
	*bad_index = -1;
	if (!ctx)
		return ret;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_srq *srq = cq ? ibv_create_srq(pd, &sa) : NULL;
	struct ibv_qp_init_attr qa = {.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 1, .max_send_sge = 1}};
	struct ibv_qp *qp = srq ? ibv_create_qp(pd, &qa) : NULL;
	if (!qp) {
		ret = -1000 - (errno ? errno : EIO);
		goto out;
	}
	struct ibv_recv_wr wr = {.wr_id = wr_id, .num_sge = 0}, *bad = NULL;
	probe_default_signals();
	ret = ibv_post_recv(qp, &wr, &bad);
	if (bad == &wr)
		*bad_index = 0;
	ibv_destroy_qp(qp);
out:
	if (srq)
		ibv_destroy_srq(srq);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return ret;
}

// srqc_probe_post_srq_recv opens the device named name, makes on it a PD
// and an SRQ (max_wr 4, max_sge 1) and calls ibv_post_srq_recv with one WR
// of wr_id and num_sge, its sg_list one valid SGE (64 bytes of a region
// registered for the purpose). It returns the verb's return value with
// *bad_index (0 for the first WR, -1 for none), or -1000 - errno when a
// resource could not be made. It is meant for a child process: on some
// providers a num_sge the provider does not check kills the process
// (drivers.Info.NegativeSGEUnsafe), and nothing is released on that path.
int srqc_probe_post_srq_recv(const char *name, uint64_t wr_id, int num_sge, int *bad_index)
{
	int ret;
	static char buf[64];
	struct ibv_context *ctx = probe_open(name, &ret);
	*bad_index = -1;
	if (!ctx)
		return ret;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_srq *srq = mr ? ibv_create_srq(pd, &sa) : NULL;
	if (!srq) {
		ret = -1000 - (errno ? errno : EIO);
		goto out;
	}
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = sizeof buf, .lkey = mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = num_sge}, *bad = NULL;
	probe_default_signals();
	ret = ibv_post_srq_recv(srq, &wr, &bad);
	if (bad == &wr)
		*bad_index = 0;
	ibv_destroy_srq(srq);
out:
	if (mr)
		ibv_dereg_mr(mr);
	if (pd)
		ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return ret;
}
