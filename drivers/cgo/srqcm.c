//go:build linux && cgo && rdma

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "srqcm.h"

// Thin rdma_cm helpers: sockaddr building, the event channel's poll and
// ack, and the connection parameters. The logic is in Go (cm.go).

// srqcm_next waits up to timeout_ms for the next event on the channel
// (its fd is non-blocking), copies what the driver needs and acks it at
// once. It returns 0, ETIMEDOUT, or an errno.
int srqcm_next(struct rdma_event_channel *ch, int timeout_ms, struct srqcm_event *out) {
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	for (;;) {
		if (rdma_get_cm_event(ch, &ev) == 0)
			break;
		if (errno != EAGAIN)
			return errno;
		int r = poll(&p, 1, timeout_ms);
		if (r == 0)
			return ETIMEDOUT;
		if (r < 0 && errno != EINTR)
			return errno;
	}
	out->event = ev->event;
	out->status = ev->status;
	out->id = ev->id;
	out->listen_id = ev->listen_id;
	rdma_ack_cm_event(ev);
	return 0;
}

static int fill(struct sockaddr_in *sa, const char *ip, int port) {
	memset(sa, 0, sizeof *sa);
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	return inet_pton(AF_INET, ip, &sa->sin_addr) == 1 ? 0 : EINVAL;
}

// srqcm_bind_listen binds id to ip on an ephemeral port, listens, and
// returns the port.
int srqcm_bind_listen(struct rdma_cm_id *id, const char *ip, int backlog, int *port) {
	struct sockaddr_in sa;
	if (fill(&sa, ip, 0))
		return EINVAL;
	if (rdma_bind_addr(id, (struct sockaddr *)&sa))
		return errno;
	if (rdma_listen(id, backlog))
		return errno;
	*port = ntohs(rdma_get_src_port(id));
	return 0;
}

int srqcm_resolve_addr(struct rdma_cm_id *id, const char *ip, int port, int timeout_ms) {
	struct sockaddr_in sa;
	if (fill(&sa, ip, port))
		return EINVAL;
	return rdma_resolve_addr(id, NULL, (struct sockaddr *)&sa, timeout_ms) ? errno : 0;
}

// One outstanding RDMA Read each way (the peer's witness read); no RNR
// retry: iWARP has none, and on rxe a refused message is a result.
static void params(struct rdma_conn_param *p) {
	memset(p, 0, sizeof *p);
	p->responder_resources = 1;
	p->initiator_depth = 1;
	p->retry_count = 1;
	p->rnr_retry_count = 0;
}

// srqcm_ack_timeout sets the local ACK timeout rdma_cm gives the id's QP
// when it moves it to RTS (RDMA_OPTION_ID_ACK_TIMEOUT; otherwise the
// timeout comes from the route's packet lifetime).
int srqcm_ack_timeout(struct rdma_cm_id *id, uint8_t timeout) {
	return rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof timeout) ? errno : 0;
}

int srqcm_connect(struct rdma_cm_id *id) {
	struct rdma_conn_param p;
	params(&p);
	return rdma_connect(id, &p) ? errno : 0;
}

int srqcm_accept(struct rdma_cm_id *id) {
	struct rdma_conn_param p;
	params(&p);
	return rdma_accept(id, &p) ? errno : 0;
}

// srqcm_post_read posts one signaled RDMA Read of len bytes.
int srqcm_post_read(struct ibv_qp *qp, uint64_t wr_id, uint64_t addr, uint32_t lkey, uint64_t raddr, uint32_t rkey, uint32_t len) {
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof wr);
	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}
