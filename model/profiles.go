package model

import "strings"

// Source names used in notes and rules. Sections are named as the documents
// name them.
const (
	srcManPostSRQ   = "man ibv_post_srq_recv(3)"
	srcManPostRecv  = "man ibv_post_recv(3)"
	srcManCreateSRQ = "man ibv_create_srq(3)"
	srcManModifySRQ = "man ibv_modify_srq(3)"
	srcManQuerySRQ  = "man ibv_query_srq(3)"
	srcManPostSend  = "man ibv_post_send(3)"
	srcMojoPost     = "rdmamojo, ibv_post_srq_recv()"
	srcMojoQuery    = "rdmamojo, ibv_query_srq()"
	srcMojoThreads  = "rdmamojo, 'libibverbs thread safe level' (2013-07-26)"
	srcBook         = "book chapter 13.5, Shared Receive Queue"
	// Upstream sources, each at the commit it was read at. The linux
	// commits are those of the file versions read (the tree is too large
	// to mirror whole).
	srcRCMLX5SRQ    = "rdma-core 691953d8 providers/mlx5/srq.c"
	srcRCMLX5Verbs  = "rdma-core 691953d8 providers/mlx5/verbs.c"
	srcRCMLX5CQ     = "rdma-core 691953d8 providers/mlx5/cq.c"
	srcRCSIW        = "rdma-core 691953d8 providers/siw/siw.c"
	srcLinuxMLX5SRQ = "linux 023349192e79 drivers/infiniband/hw/mlx5/srq.c"
	srcLinuxSIWVerb = "linux 03c601927b67 drivers/infiniband/sw/siw/siw_verbs.c"
	srcLinuxSIWRx   = "linux 03b0f2ce735e drivers/infiniband/sw/siw/siw_qp_rx.c"
	srcLinuxRXESRQ  = "linux a23e19669324 drivers/infiniband/sw/rxe/rxe_srq.c"
	// srcKernelDestroySRQ: the linux tree is too large to mirror here; the
	// check was read through code search, in every version it found.
	srcKernelDestroySRQ = "kernel drivers/infiniband/core/verbs.c ib_destroy_srq_user (if (atomic_read(&srq->usecnt)) return -EBUSY; usecnt counts the QPs created with the SRQ), read through code search, no commit pinned"
	srcRXEDestroySRQ    = "rdma-core 691953d8 providers/rxe/rxe.c rxe_destroy_srq and providers/mlx5/verbs.c mlx5_destroy_srq (the kernel's errno returned, the SRQ kept on failure)"
	srcRUTCreateMax     = "google/rdma-unit-test 1f368ab3 unit/srq_test.cc SrqTest.DeviceCap, ExceedDeviceMaxWr, ExceedDeviceMaxSge (create fails, errno unchecked)"
	srcRXECreateMax     = "linux a23e19669324 drivers/infiniband/sw/rxe/rxe_srq.c rxe_srq_chk_init (EINVAL above max_srq_wr or max_srq_sge) and rxe_srq_from_init (ENOMEM when the queue cannot be allocated)"
	srcMLX5CreateMax    = "rdma-core 691953d8 providers/mlx5/verbs.c mlx5_create_srq (EINVAL above max_srq_recv_wr)"
	srcManCreateSRQEx   = "man ibv_create_srq_ex(3), DESCRIPTION (basic and XRC modes; cq is for XRC)"
	srcVerbsCreateSRQEx = "rdma-core 691953d8 libibverbs/verbs.h ibv_create_srq_ex (a comp_mask of PD, or PD | TYPE with IBV_SRQT_BASIC, is ibv_create_srq; anything else goes to the provider's create_srq_ex, EOPNOTSUPP where there is none: rxe, siw) and providers/mlx5/verbs.c mlx5_create_srq_ex (BASIC is mlx5_create_srq, the CQ ignored; a type other than XRC or TM is EINVAL)"
	srcManCreateQP      = "man ibv_create_qp(3)"
	srcManAsyncEvent    = "man ibv_get_async_event(3)"
	srcDDPNoBuf         = "RFC 5041 (DDP) 7.2 and 7.3: an untagged message with no buffer available is the error 'Invalid MSN - no buffer available', reported in a Terminate, and the stream is closed; iWARP has no receiver-not-ready"
	srcIBTA             = "IBTA o11-5.2.5, as quoted in the patch 'RDMA/rxe: Send last wqe reached event on qp cleanup' (Bob Pearson, linux-rdma, 2 June 2023)"
)

func doc(source string) Note    { return Note{Source: source} }
func seen(source string) Note   { return Note{Source: source, Verified: true} }
func unread(source string) Note { return Note{Source: source + "; unverified"} }

// verify marks fields of p as seen on a device, saying where.
func verify(p *Profile, where string, fields ...string) {
	for _, f := range fields {
		n := p.Notes[f]
		n.Source = strings.TrimSuffix(n.Source, "; unverified") + "; seen " + where
		n.Verified = true
		p.Notes[f] = n
	}
}

// Documented returns the documented semantics: what the man pages, the
// rdmamojo pages and the IBTA statement promise. Where they say nothing or
// can be read two ways, the choice is open and the model accepts each value.
func Documented() Profile {
	return Profile{
		Name:        "documented",
		Description: "The documented semantics (man pages, rdmamojo, IBTA); open where the documents are silent.",

		PostErrno:   One(ErrnoPositive),
		CheckOrder:  Either(FullFirst, SGEFirst),
		SGELimit:    One(SGEAgainstSRQ),
		ZeroSGE:     One(Accepted),
		NegativeSGE: One(Rejected),

		CapacityReport: One(ReportAtLeast),
		Capacity:       One(CapacityExact),
		Query:          Either(QuerySame, QueryENOSYS),
		SlotFree:       Either(FreeAtFetch, FreeAtPoll),

		LimitAtCreate:  One(Rejected),
		LimitBound:     Either(LimitUpToCapacity, LimitBelowCapacity),
		ArmBelow:       Either(FireAtNextFetch, FireAtOnce),
		LimitAfterFire: One(LimitReadsZero),

		ZeroLength: One(ZeroIs2GiB),
		BeforeRTR:  One(Dropped),

		EmptySRQRC: One(EmptyRNR),

		OversizeRCStatus: AnyError,
		OversizeRCQP:     One(ToErr),
		OversizeUDStatus: AnyError,
		OversizeUDQP:     Either(Unchanged, ToErr),

		KeyCheck:       Either(CheckAllSGEs, CheckTouchedSGEs),
		KeyErrorStatus: Statuses(WCLocProtErr),
		KeyErrorRCQP:   One(ToErr),
		KeyErrorUDQP:   Either(Unchanged, ToErr),

		Resize:           One(ResizeAsAdvertised),
		ResizeBelowLimit: Either(Accepted, Rejected),

		PostRecvBadWR: One(BadWRFirst),
		QPRecvCaps:    One(RecvCapsIgnored),

		LastWQE:         One(Raise),
		LastWQERepeat:   One(OncePerEntry),
		FlushInProgress: One(Raise),
		ErrorEvent:      Either(NoRaise, Raise),

		Notes: map[string]Note{
			"PostErrno":        doc(srcManPostSRQ + ", RETURN VALUE: 0 or the value of errno"),
			"CheckOrder":       doc("no document orders the checks; " + srcMojoPost + ", Return Values lists both errors"),
			"SGELimit":         doc(srcMojoPost + ", struct ibv_recv_wr, num_sge: at most the SRQ's max_sge"),
			"ZeroSGE":          doc(srcMojoPost + ", struct ibv_recv_wr, num_sge: 0 means a message of size 0"),
			"NegativeSGE":      doc(srcMojoPost + ", Return Values: EINVAL for an invalid value in wr"),
			"CapacityReport":   doc(srcManCreateSRQ + ", DESCRIPTION: max_wr and max_sge written back are >= the request"),
			"Capacity":         doc(srcMojoPost + ", FAQ 'How many WRs can I post?'; " + srcMojoQuery + ", max_wr"),
			"Query":            doc(srcMojoQuery + ", FAQ on caching: max_wr and max_sge change only on resize; Return Values: ENOSYS when unsupported"),
			"SlotFree":         doc(srcMojoPost + ", FAQ 'Can I know how many WRs are outstanding': count by polled completions; when the device frees a slot is not said"),
			"LimitAtCreate":    doc(srcManCreateSRQ + ", struct ibv_srq_attr: srq_limit is irrelevant for ibv_create_srq"),
			"LimitBound":       doc("no document bounds srq_limit; " + srcManModifySRQ + " only says invalid attributes change nothing"),
			"ArmBelow":         doc(srcManModifySRQ + ", NOTES: fires once the number of WRs drops below srq_limit; silent on a limit already above the count"),
			"LimitAfterFire":   doc(srcManQuerySRQ + ", NOTES; " + srcMojoQuery + ", FAQ on caching: 0 after the event"),
			"ZeroLength":       doc(srcMojoPost + ", struct ibv_sge, length: 0 stands for 2^31 bytes"),
			"BeforeRTR":        doc(srcMojoPost + ", DESCRIPTION: in RESET, INIT or ERROR incoming messages are not processed"),
			"EmptySRQRC":       doc(srcBook + ", 'The Cost of Pooling'; IBTA: an RC responder with no receive WQE answers RNR NAK"),
			"OversizeRCStatus": doc(srcMojoPost + ", FAQ on UD buffers: a message too large completes with an error; no status named"),
			"OversizeRCQP":     doc("IBTA: an RC responder error completion leaves the QP in ERR (issue #2 statement)"),
			"OversizeUDStatus": doc(srcMojoPost + ", FAQ on UD buffers: a work completion with error"),
			"OversizeUDQP":     doc("no document says whether a UD QP survives an oversize message"),
			"KeyCheck":         doc(srcMojoPost + ", FAQ on deregistering an MR: an invalid MR 'specified in the WR' gives an error; which SGEs are checked is not said"),
			"KeyErrorStatus":   doc(srcMojoPost + ", FAQ on deregistering an MR; a local protection error"),
			"KeyErrorRCQP":     doc("IBTA: an RC responder error completion leaves the QP in ERR"),
			"KeyErrorUDQP":     doc("no document says whether a UD QP survives a protection error"),
			"Resize":           doc(srcManModifySRQ + ", NOTES: resize only where IBV_DEVICE_SRQ_RESIZE is set"),
			"ResizeBelowLimit": doc("no document relates resize to the armed limit"),
			"PostRecvBadWR":    doc(srcManPostRecv + ", DESCRIPTION: processing stops at the first failure, returned through bad_wr"),
			"QPRecvCaps":       doc(srcManCreateQP + ", NOTES: max_recv_wr and max_recv_sge are ignored if the QP is to be associated with an SRQ"),
			"LastWQE":          doc(srcIBTA),
			"LastWQERepeat":    doc(srcIBTA + ": generated on entering Error"),
			"FlushInProgress":  doc(srcIBTA + ": the last WQE's completion comes before the event"),
			"ErrorEvent":       doc(srcManAsyncEvent + ", DESCRIPTION: QP_FATAL is an error that moved a QP to the error state, QP_ACCESS_ERR a local access violation; whether an error already reported in a completion also raises one is not said"),
		},
	}
}

// rxeRunFields are the rxe profile fields that real runs exercised: held
// to the profile, 20 seeded runs per kernel passed; held to the documented
// profile, the departures showed and the open choices resolved to these
// values (reports/rxe-*.md). KeyErrorUDQP and FlushInProgress were not
// exercised.
var rxeRunFields = []string{
	"PostErrno", "CheckOrder", "SGELimit", "ZeroSGE", "NegativeSGE", "CapacityReport", "Capacity", "Query",
	"SlotFree", "LimitAtCreate", "LimitBound", "ArmBelow", "LimitAfterFire", "ZeroLength", "BeforeRTR",
	"OversizeRCStatus", "OversizeRCQP", "OversizeUDStatus", "OversizeUDQP", "KeyCheck", "KeyErrorStatus",
	"KeyErrorRCQP", "Resize", "ResizeBelowLimit", "LastWQE",
}

// RXE returns the profile of the soft-RoCE driver rxe on Linux 6.10 (and the
// stable 6.6.36 and 6.9.7, which carry the UD oversize fix) and
// later (Debian trixie and sid) with rdma-core 40 or later.
func RXE() Profile {
	p := Documented()
	p.Name = "rxe"
	p.Description = "Soft-RoCE (rdma_rxe) on Linux >= 6.10, and stable >= 6.6.36 and >= 6.9.7 (UD oversize fix f67ac0061c76, LAST_WQE event c3e1bf626eb3), rdma-core >= 40 rxe provider."
	p.Notes = map[string]Note{}
	set := func(field string, n Note) { p.Notes[field] = n }

	set("PostErrno", unread("rdma-core providers/rxe/rxe.c rxe_post_srq_recv: positive errno since rdma-core v40 (80df17ced); negative before"))
	p.CheckOrder = One(FullFirst)
	set("CheckOrder", unread("rdma-core providers/rxe/rxe.c rxe_post_srq_recv: full (ENOMEM) is checked before num_sge (EINVAL)"))
	set("SGELimit", unread("rdma-core providers/rxe/rxe.c: num_sge against the SRQ's max_sge"))
	set("ZeroSGE", unread("rdma-core providers/rxe/rxe.c: num_sge 0 is accepted"))
	set("NegativeSGE", unread("rdma-core providers/rxe/rxe.c: the compare with the unsigned max_sge rejects a negative num_sge"))
	p.CapacityReport = One(ReportPow2Less1)
	set("CapacityReport", unread("kernel rxe_queue.c rxe_queue_init: roundup_pow_of_two(max_wr+1)-1 slots, reported by create and query"))
	set("Capacity", unread("kernel rxe_queue.c: one sentinel slot; the reported number is what fits"))
	p.Query = One(QuerySame)
	set("Query", unread("kernel rxe_srq.c/rxe_verbs.c rxe_query_srq: max_wr is the queue's index_mask"))
	p.SlotFree = One(FreeAtFetch)
	set("SlotFree", unread("kernel rxe_resp.c get_srq_wqe: the WQE is copied out and the consumer index advanced at fetch"))
	p.LimitAtCreate = One(Accepted)
	set("LimitAtCreate", unread("kernel rxe_srq.c rxe_srq_from_init: srq->limit is taken from the create attributes, unchecked"))
	p.LimitBound = One(LimitUpToCapacity)
	set("LimitBound", unread("kernel rxe_srq.c rxe_srq_chk_attr: srq_limit > index_mask is EINVAL; equal is accepted"))
	p.ArmBelow = One(FireAtNextFetch)
	set("ArmBelow", unread("kernel rxe_resp.c get_srq_wqe: the limit is compared only after a dequeue"))
	set("LimitAfterFire", unread("kernel rxe_resp.c get_srq_wqe: srq->limit is set to 0 when the event is raised"))
	p.ZeroLength = One(ZeroIsZero)
	set("ZeroLength", unread("kernel rxe_resp.c copy_data: an SGE of length 0 is skipped (0 bytes)"))
	set("BeforeRTR", unread("kernel rxe_resp.c: requests to a QP in RESET or INIT are dropped"))
	p.OversizeRCStatus = Statuses(WCLocQPOpErr)
	set("OversizeRCStatus", unread("kernel rxe_resp.c: a too-long send completes with IB_WC_LOC_QP_OP_ERR"))
	set("EmptySRQRC", seen("kernel rxe_resp.c get_srq_wqe: an empty SRQ is RESPST_ERR_RNR, an RNR NAK; RECV-RNR passed on 6.1, 6.12 and 7.2 (reports/rxe-*.md)"))
	set("OversizeRCQP", unread("kernel rxe_resp.c: the QP moves to ERR"))
	p.OversizeUDStatus = Statuses(WCRemInvReq)
	set("OversizeUDStatus", unread("kernel commit f67ac0061c76 \"RDMA/rxe: Fix responder length checking for UD request packets\" (v6.10; backported to stable 6.6.36 and 6.9.7 as 163868ec1f6c and 943c94f41dfe, the CVE-2024-40992 references): UD with SRQ completes IB_WC_REM_INV_REQ_ERR"))
	p.OversizeUDQP = One(Unchanged)
	set("OversizeUDQP", unread("kernel commit f67ac0061c76 (v6.10; stable 6.6.36, 6.9.7): the UD QP stays as it was"))
	p.KeyCheck = One(CheckTouchedSGEs)
	set("KeyCheck", unread("kernel rxe_resp.c copy_data: an SGE's key is looked up only when bytes land in it"))
	p.KeyErrorStatus = Statuses(WCLocQPOpErr)
	set("KeyErrorStatus", unread("kernel rxe_resp.c: a failed copy completes with IB_WC_LOC_QP_OP_ERR"))
	set("KeyErrorRCQP", unread("kernel rxe_resp.c: the QP moves to ERR"))
	p.KeyErrorUDQP = One(ToErr)
	set("KeyErrorUDQP", unread("kernel rxe_resp.c: the QP moves to ERR on UD too"))
	set("Resize", unread("kernel rxe_verbs.c: IB_DEVICE_SRQ_RESIZE is advertised and rxe_modify_srq resizes"))
	p.ResizeBelowLimit = One(Rejected)
	set("ResizeBelowLimit", unread("kernel rxe_srq.c rxe_srq_chk_attr: a requested max_wr below the current limit is EINVAL"))
	p.PostRecvBadWR = One(BadWRNull)
	set("PostRecvBadWR", seen("rdma-core providers/rxe/rxe.c rxe_post_recv: a QP with an SRQ has no receive queue; bad_wr is set to NULL before EINVAL (seen on 6.12 and 7.2)"))
	set("QPRecvCaps", unread("linux a23e19669324 drivers/infiniband/sw/rxe/rxe_qp.c rxe_qp_chk_cap checks the receive caps only without an SRQ; rdma-core 691953d8 providers/rxe/rxe.c rxe_create_qp sets no receive queue up with one"))
	set("LastWQE", unread("kernel commit c3e1bf626eb3 (v6.5): rxe raises IB_EVENT_QP_LAST_WQE_REACHED in ERR"))
	p.LastWQERepeat = One(PerPacket)
	set("LastWQERepeat", seen("kernel rxe_resp.c rxe_receiver: in ERR every packet runs flush_recv_queue with notify and raises the event again (seen on 6.12 and 7.2)"))
	p.FlushInProgress = One(NoRaise)
	set("FlushInProgress", unread("kernel commit 49dc9c1f0c7e (v6.4): an in-progress SRQ WQE gets no completion in ERR"))
	p.ErrorEvent = One(NoRaise)
	set("ErrorEvent", unread("linux 6.12.118 drivers/infiniband/sw/rxe: IB_EVENT_QP_FATAL, IB_EVENT_QP_REQ_ERR and IB_EVENT_QP_ACCESS_ERR appear nowhere (rxe_qp_error raises no event); 6.1 not read"))
	verify(&p, "on 6.12 and 7.2 (srqconform vm, reports/rxe-*.md)", rxeRunFields...)
	return p
}

// RXE61 returns the rxe profile for Linux 6.1 (Debian bookworm): before the
// error-state rework of v6.4/v6.5 and before the UD oversize fix.
func RXE61() Profile {
	p := RXE()
	p.Name = "rxe-6.1"
	p.Description = "Soft-RoCE (rdma_rxe) on Linux 6.1 (Debian bookworm), rdma-core >= 40 rxe provider."
	notes := map[string]Note{}
	for k, v := range p.Notes {
		notes[k] = v
	}
	p.Notes = notes
	p.OversizeUDStatus = Statuses(WCLocQPOpErr)
	p.Notes["OversizeUDStatus"] = unread("kernel rxe_resp.c before f67ac0061c76: LOC_QP_OP_ERR on UD as on RC")
	p.OversizeUDQP = One(ToErr)
	p.Notes["OversizeUDQP"] = unread("kernel rxe_resp.c before f67ac0061c76: the UD QP moves to ERR")
	p.LastWQE = One(NoRaise)
	p.Notes["LastWQE"] = unread("kernel before c3e1bf626eb3 (v6.5): no LAST_WQE_REACHED event")
	p.LastWQERepeat = One(OncePerEntry)
	p.Notes["LastWQERepeat"] = unread("no LAST_WQE_REACHED event before v6.5")
	p.CapacityReport = One(ReportUnchanged)
	p.Notes["CapacityReport"] = seen("kernel before commit cc28f351155d \"RDMA/rxe: Fix rxe_modify_srq\" (v6.6; stable 6.4.16 and 6.5.3): create does not write the rounded max_wr back (seen on 6.1)")
	p.Capacity = One(CapacityPow2)
	p.Notes["Capacity"] = unread("kernel rxe_queue.c rxe_queue_init: the queue still holds roundup_pow2(max_wr+1)-1; query reports it")
	p.PostRecvBadWR = One(BadWRNull)
	p.Notes["PostRecvBadWR"] = unread("rdma-core providers/rxe/rxe.c rxe_post_recv: the provider, not the kernel, decides; same rdma-core as on newer kernels")
	p.FlushInProgress = One(Raise)
	p.Notes["FlushInProgress"] = unread("kernel v6.1-v6.3 rxe_resp.c: the in-progress SRQ WQE completes with IB_WC_WR_FLUSH_ERR")
	// RXE's marks were made on newer kernels: drop them, then mark what
	// 20 seeded runs on 6.1 bore out.
	for f, n := range p.Notes {
		if n.Verified {
			p.Notes[f] = Note{Source: strings.Split(n.Source, "; seen ")[0] + "; unverified"}
		}
	}
	verify(&p, "on 6.1 (srqconform vm, reports/rxe-bookworm.md)", append(rxeRunFields, "PostRecvBadWR")...)
	return p
}

// MLX5 returns the profile of the mlx5 provider (ConnectX-4 and later).
func MLX5() Profile {
	p := Documented()
	p.Name = "mlx5"
	p.Description = "NVIDIA/Mellanox mlx5 (rdma-core providers/mlx5, kernel mlx5_ib), read from sources, never run here."
	p.Notes = map[string]Note{}
	set := func(field string, n Note) { p.Notes[field] = n }
	set("PostErrno", unread(srcRCMLX5SRQ+" mlx5_post_srq_recv: returns EINVAL or ENOMEM, positive"))
	p.CheckOrder = One(SGEFirst)
	set("CheckOrder", unread(srcRCMLX5SRQ+" mlx5_post_srq_recv: num_sge above max_gs (EINVAL) is checked before a full queue (ENOMEM)"))
	set("SGELimit", unread(srcRCMLX5SRQ+" mlx5_post_srq_recv: num_sge against srq->max_gs, the max_sge mlx5_create_srq writes back"))
	set("ZeroSGE", unread(srcRCMLX5SRQ+" mlx5_post_srq_recv: num_sge 0 is not checked (the SGE loop runs no times)"))
	p.NegativeSGE = One(Accepted)
	set("NegativeSGE", unread("rdma-core providers/mlx5/srq.c mlx5_post_srq_recv: a negative num_sge passes the signed compare"))
	p.CapacityReport = One(ReportPow2Less1)
	set("CapacityReport", unread(srcRCMLX5Verbs+" mlx5_create_srq writes back srq->tail, which mlx5_alloc_srq_buf (srq.c) sets to align_queue_size(max_wr+1)-1"))
	set("Capacity", unread(srcRCMLX5SRQ+" mlx5_alloc_srq_buf: the srq->tail WQEs create reports come before the wait queue; mlx5_post_srq_recv: ENOMEM when the queue is full"))
	p.Query = One(QueryAtLeast)
	set("Query", unread(srcLinuxMLX5SRQ+" mlx5_ib_query_srq reports msrq.max - 1, sized by mlx5_ib_create_srq from the max_wr that "+srcRCMLX5Verbs+" mlx5_create_srq passes with the wait queue (srq->max - 1, about twice the request: mlx5_alloc_srq_buf)"))
	p.SlotFree = One(FreeAtPoll)
	set("SlotFree", unread(srcRCMLX5CQ+" handle_responder_lazy: mlx5_free_srq_wqe returns the WQE when its completion is polled"))
	set("LimitAtCreate", unread(srcLinuxMLX5SRQ+" mlx5_ib_create_srq reads no srq_limit; only mlx5_ib_modify_srq arms"))
	p.LimitBound = One(LimitUpToCapacity)
	set("LimitBound", unread(srcLinuxMLX5SRQ+" mlx5_ib_modify_srq: srq_limit >= msrq.max (roundup_pow_of_two(max_wr+1)) is EINVAL"))
	set("ArmBelow", unread(srcLinuxMLX5SRQ+" mlx5_ib_modify_srq hands the limit to the firmware (mlx5_cmd_arm_srq): when the event comes is not in the source"))
	p.LimitAfterFire = Either(LimitReadsZero, LimitKept)
	set("LimitAfterFire", unread(srcLinuxMLX5SRQ+" mlx5_ib_query_srq reads srq_limit from the firmware (lwm): what it reads after the event is not in the source"))
	set("ZeroLength", unread(srcMojoPost+", struct ibv_sge, length: 0 stands for 2^31 bytes; a Mellanox convention (rdma-core 691953d8 providers/mlx4/qp.c set_data_seg writes 0x80000000 for a length-0 SGE; the mlx5 code was not read for it)"))
	p.BeforeRTR = One(Buffered)
	set("BeforeRTR", unread("google/rdma-unit-test b5dc037f public/introspection.h BuffersMessagesWhenNotReadyToReceive: some providers (such as Mellanox) buffer a message that arrives before RTR; internal/introspection_mlx4.h (6c107e67) says so for mlx4, internal/introspection_mlx5.h (26abbe5f) not for mlx5"))
	p.OversizeRCStatus = Statuses(WCLocLenErr)
	set("OversizeRCStatus", unread(srcRCMLX5CQ+" mlx5_handle_error_cqe: the local length error syndrome is IBV_WC_LOC_LEN_ERR (which syndrome an oversize message gets is the hardware's)"))
	set("EmptySRQRC", unread(srcIBTA+": InfiniBand answers a missing receive WQE with an RNR NAK"))
	set("OversizeRCQP", unread("IBTA responder error"))
	p.OversizeUDStatus = Statuses(WCLocLenErr)
	set("OversizeUDStatus", unread(srcRCMLX5CQ+" mlx5_handle_error_cqe: the local length error syndrome is IBV_WC_LOC_LEN_ERR (which syndrome an oversize message gets is the hardware's)"))
	set("OversizeUDQP", unread("nothing read"))
	set("KeyCheck", unread("nothing read"))
	set("KeyErrorStatus", unread("nothing read"))
	set("KeyErrorRCQP", unread("IBTA responder error"))
	set("KeyErrorUDQP", unread("nothing read"))
	p.Resize = One(ResizeUnsupported)
	set("Resize", unread(srcLinuxMLX5SRQ+" mlx5_ib_modify_srq: IB_SRQ_MAX_WR is EINVAL (resizing not supported)"))
	set("ResizeBelowLimit", unread("resize unsupported"))
	set("PostRecvBadWR", unread("nothing read"))
	p.QPRecvCaps = One(RecvCapsWRChecked)
	set("QPRecvCaps", unread("rdma-core 691953d8 providers/mlx5/verbs.c mlx5_calc_rq_size: mlx5_get_max_recv_wr returns EINVAL for max_recv_wr above ctx->max_recv_wr (the device's max_qp_wr) before the SRQ is looked at; mlx5_calc_rcv_wqe ignores max_recv_sge with an SRQ"))
	set("LastWQE", unread(srcIBTA))
	set("LastWQERepeat", unread(srcIBTA))
	set("FlushInProgress", unread(srcIBTA))
	set("ErrorEvent", unread("nothing read"))
	return p
}

// SIW returns the profile of the soft-iWARP driver siw. It has no UD.
func SIW() Profile {
	p := Documented()
	p.Name = "siw"
	p.Description = "Soft-iWARP (siw) with rdma-core's siw provider, read from sources; the verified fields were seen on Linux 6.1, 6.12 and 7.2 (srqconform vm -provider siw, siw.ko built out of tree)."
	p.Notes = map[string]Note{}
	set := func(field string, n Note) { p.Notes[field] = n }
	p.PostErrno = One(ErrnoNegative)
	set("PostErrno", unread(srcRCSIW+" siw_post_srq_recv: returns -EINVAL and -ENOMEM"))
	p.CheckOrder = One(FullFirst)
	set("CheckOrder", unread(srcRCSIW+" siw_post_srq_recv: a slot still valid (full, -ENOMEM) is checked before push_recv_wqe checks num_sge (-EINVAL)"))
	p.SGELimit = One(SGEAgainstDevice)
	set("SGELimit", unread(srcRCSIW+" push_recv_wqe: num_sge up to SIW_MAX_SGE (6, kernel-headers/rdma/siw-abi.h), not the SRQ's max_sge"))
	p.ZeroSGE = One(Rejected)
	set("ZeroSGE", unread(srcRCSIW+" push_recv_wqe: num_sge 0 is -EINVAL"))
	p.NegativeSGE = One(Accepted)
	set("NegativeSGE", seen("rdma-core 691953d8 providers/siw/siw.c push_recv_wqe: a negative num_sge passes num_sge <= SIW_MAX_SGE and memcpy copies sizeof(struct ibv_sge) times it; seen on 6.1, 6.12 and 7.2 (srqconform vm -provider siw -profile documented: the post, made in a child process, kills it with SIGSEGV; reports/siw-root-causes.md). Not checked, so the suite never posts it under this profile; held to documented, it is a POST-SGE finding"))
	p.CapacityReport = One(ReportUnchanged)
	set("CapacityReport", unread(srcLinuxSIWVerb+" siw_create_srq: num_rqe = roundup_pow_of_two(max_wr); attrs->max_wr is not written back"))
	p.Capacity = One(CapacityAtLeast)
	set("Capacity", unread(srcLinuxSIWVerb+" siw_create_srq: num_rqe = roundup_pow_of_two(max_wr) slots, and "+srcRCSIW+" siw_post_srq_recv fills any slot not valid: more than max_wr can be posted"))
	p.Query = One(QueryEOPNOTSUPP)
	set("Query", unread(srcRCSIW+" sets no query_srq, so rdma-core 691953d8 libibverbs/dummy_ops.c query_srq returns EOPNOTSUPP"))
	p.SlotFree = One(FreeAtFetch)
	set("SlotFree", unread(srcLinuxSIWRx+" siw_rqe_get: the RQE's flags are cleared for reuse when it is fetched"))
	p.LimitAtCreate = One(Accepted)
	set("LimitAtCreate", seen("linux 6.1.192, 6.12.117 and 7.2.13 drivers/infiniband/sw/siw/siw_verbs.c siw_create_srq: srq->limit = attrs->srq_limit; if (srq->limit) srq->armed = true; seen on 6.1 (srqconform vm: the limit event fired with no modify)"))
	set("LimitBound", unread("nothing read"))
	set("ArmBelow", unread("nothing read"))
	p.LimitAfterFire = One(LimitKept)
	set("LimitAfterFire", unread(srcLinuxSIWRx+" siw_rqe_get: the event clears srq->armed and leaves srq->limit"))
	p.ZeroLength = One(ZeroIsZero)
	set("ZeroLength", unread(srcLinuxSIWRx+" siw_proc_send: empty SGEs are skipped"))
	set("BeforeRTR", unread("nothing read"))
	p.OversizeRCStatus = Statuses(WCLocLenErr)
	p.EmptySRQRC = One(EmptyTerminate)
	set("EmptySRQRC", seen("linux 6.1.192, 6.12.117 and 7.2.13 drivers/infiniband/sw/siw/siw_qp_rx.c siw_proc_send: no receive WQE (siw_rqe_get NULL) is siw_init_terminate(TERM_ERROR_LAYER_DDP, DDP_ETYPE_UNTAGGED_BUF, DDP_ECODE_UT_INVALID_MSN_NOBUF) and -ENOENT, which siw_tcp_rx_data answers with siw_qp_cm_drop: the QP enters ERR and the peer's Send completes only flushed ("+srcDDPNoBuf+"); seen on 6.1: the peer's Send and witness Read complete nothing until the peer disconnects, then in error, and the receiver takes nothing more"))
	set("OversizeRCStatus", unread(srcLinuxSIWRx+" siw_send_check_ntoh: a message longer than the WQE is SIW_WC_LOC_LEN_ERR"))
	set("OversizeRCQP", unread(srcLinuxSIWRx+" siw_send_check_ntoh: a message longer than the WQE starts a DDP terminate (siw_init_terminate), and siw_proc_send raises IB_EVENT_QP_FATAL and returns the error"))
	set("OversizeUDStatus", doc("siw has no UD"))
	set("OversizeUDQP", doc("siw has no UD"))
	set("KeyCheck", unread("nothing read"))
	p.KeyErrorStatus = Statuses(WCGeneralErr)
	set("KeyErrorStatus", seen("linux 6.1.192, 6.12.117 and 7.2.13 drivers/infiniband/sw/siw/siw_qp_rx.c siw_proc_send: a failing siw_check_sge is siw_init_terminate and IB_EVENT_QP_ACCESS_ERR, and siw_rdmap_complete turns the WQE's SUCCESS status into SIW_WC_GENERAL_ERR for any error; seen on 6.1"))
	p.KeyErrorRCQP = One(ToErr)
	set("KeyErrorRCQP", seen("linux 6.1.192, 6.12.117 and 7.2.13 drivers/infiniband/sw/siw/siw_qp_rx.c siw_tcp_rx_data: an error from the data handler is siw_qp_cm_drop, the QP to ERR; seen on 6.1 (the QP took nothing more)"))
	set("KeyErrorUDQP", doc("siw has no UD"))
	p.Resize = One(ResizeUnsupported)
	set("Resize", unread(srcLinuxSIWVerb+" siw_modify_srq: IB_SRQ_MAX_WR is -EOPNOTSUPP"))
	set("ResizeBelowLimit", unread("resize unsupported"))
	p.QPRecvCaps = One(RecvCapsBothChecked)
	set("QPRecvCaps", unread("linux 5dcf8655cc80 drivers/infiniband/sw/siw/siw_verbs.c siw_create_qp: max_recv_wr above SIW_MAX_QP_WR or max_recv_sge above SIW_MAX_SGE is EINVAL, SRQ or not"))
	set("PostRecvBadWR", unread("nothing read"))
	p.LastWQE = One(NoRaise)
	set("LastWQE", seen("linux 6.1.192, 6.12.117 and 7.2.13 drivers/infiniband/sw/siw/: IB_EVENT_QP_LAST_WQE_REACHED appears nowhere; siw_qp_event is called with QP_FATAL, QP_ACCESS_ERR, QP_REQ_ERR and SQ_DRAINED only (6.1); seen on 6.1: no event after a QP entered ERR, by modify or by a terminated connection"))
	set("LastWQERepeat", unread(srcIBTA))
	set("FlushInProgress", unread(srcIBTA))
	p.ErrorEvent = One(Raise)
	set("ErrorEvent", unread("linux 6.12.118 drivers/infiniband/sw/siw/siw_qp_rx.c siw_proc_send: a message longer than the WQE fails siw_send_check_ntoh (receive space short, LOC_LEN_ERR) and raises IB_EVENT_QP_FATAL; a failed siw_check_sge raises IB_EVENT_QP_ACCESS_ERR; an empty SRQ terminates the connection with no event"))
	verify(&p, "on 6.1, 6.12 and 7.2 (srqconform vm -provider siw: reports/siw-20-seeds.md, reports/siw-root-causes.md)", siwRunFields...)
	return p
}

// siwRunFields are the siw profile fields real runs exercised: held to the
// profile, the seeded runs on 6.1, 6.12 and 7.2 failed only POST-QP-RQ
// (libsiw's SIGFPE); held to the documented profile, each field where siw
// departs showed as its own failing rule (reports/siw-root-causes.md), and
// the others' rules ran and agreed with the siw value.
var siwRunFields = []string{
	"PostErrno", "CheckOrder", "SGELimit", "ZeroSGE", "CapacityReport", "Capacity", "Query", "SlotFree",
	"ZeroLength", "OversizeRCStatus", "OversizeRCQP", "ErrorEvent",
}
