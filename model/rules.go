package model

// RuleKind says where a rule's authority comes from.
type RuleKind string

// Rule kinds.
const (
	// KindDocumented: a man page, the rdmamojo pages or IBTA says it.
	KindDocumented RuleKind = "documented"
	// KindImplementation: drivers differ; the profile fields named in the
	// rule decide, and the documented profile holds the documented reading.
	KindImplementation RuleKind = "implementation-defined"
	// KindConsensus: no document says it, but every driver read does it.
	KindConsensus RuleKind = "consensus"
)

// Rule is one checkable statement of SRQ semantics.
type Rule struct {
	ID        RuleID   `json:"id"`
	Statement string   `json:"statement"`
	Source    string   `json:"source"`
	Kind      RuleKind `json:"kind"`
	Fields    []string `json:"profile_fields,omitempty"`
}

// Rules returns the catalogue in its stable order.
func Rules() []Rule { return append([]Rule(nil), catalogue...) }

// RuleByID returns a rule and whether it exists.
func RuleByID(id string) (Rule, bool) {
	for _, r := range catalogue {
		if r.ID.String() == id {
			return r, true
		}
	}
	return Rule{}, false
}

var catalogue = []Rule{
	// Posting.
	{RulePostOrder, "A posted list is processed in order; the WRs before the first failing WR stay posted, it and those after it are not.",
		srcManPostSRQ + ", DESCRIPTION (stops at the first failure); the rdmamojo 'no change' reading is superseded, see the seed map", KindDocumented, nil},
	{RulePostBadWR, "On failure bad_wr names the first WR that failed, not an earlier or later one.",
		srcManPostSRQ + ", DESCRIPTION; " + srcMojoPost + ", Parameters (bad_wr)", KindDocumented, nil},
	{RulePostReturn, "A post returns 0 on success and an errno value on failure, with the sign convention of the profile.",
		srcManPostSRQ + ", RETURN VALUE", KindImplementation, []string{"PostErrno"}},
	{RulePostFull, "A WR posted while max_wr WRs are outstanding fails with ENOMEM; up to max_wr can be outstanding.",
		srcMojoPost + ", Return Values (ENOMEM) and FAQ 'How many WRs can I post?'", KindDocumented, []string{"Capacity", "SlotFree"}},
	{RulePostSGE, "A WR with num_sge above max_sge, or negative, fails with EINVAL; num_sge 0 is a valid WR.",
		srcMojoPost + ", struct ibv_recv_wr (num_sge) and Return Values (EINVAL)", KindDocumented, []string{"SGELimit", "ZeroSGE", "NegativeSGE"}},
	{RulePostCheckOrder, "A WR that has too many SGEs and meets a full queue fails with the errno of the check the profile runs first.",
		srcRCMLX5SRQ + " mlx5_post_srq_recv (num_sge first); rdma-core 691953d8 providers/rxe/rxe.c rxe_post_one_recv and " + srcRCSIW + " siw_post_srq_recv (full first)", KindImplementation, []string{"CheckOrder"}},
	{RulePostAnyState, "Posting works with no QP attached and whatever state the attached QPs are in.",
		srcMojoPost + ", DESCRIPTION", KindDocumented, nil},
	{RulePostNoKeyCheck, "A post does not check lkeys; an invalid key shows only when the WR is filled.",
		srcMojoPost + ", FAQ on deregistering an MR (the error comes as a work completion)", KindDocumented, nil},
	{RulePostCopy, "The SRQ keeps its own copy of a posted WR; the caller may change or reuse its WR and SGE array as soon as the call returns.",
		srcMojoPost + ", FAQ 'Can I (re)use the Receive Request'", KindDocumented, nil},
	{RulePostAtomic, "Posts to one SRQ from several threads are atomic: every WR of a post that returned 0 is held until a message takes it; a concurrent post neither overwrites nor drops it.",
		srcMojoThreads + " (different threads may post to the same SRQ; atomicity is guaranteed); " + srcManPostSRQ + ", RETURN VALUE", KindDocumented, nil},
	{RulePostQPRQ, "ibv_post_recv on a QP attached to an SRQ is refused, with bad_wr on the first WR.",
		srcManPostRecv + ", DESCRIPTION; " + srcMojoPost + ", DESCRIPTION; RUT srq_test PostWrongApi", KindImplementation, []string{"PostRecvBadWR"}},

	// Create, query, modify.
	{RuleCreateAttr, "Create writes back max_wr and max_sge at least as large as requested, rounded as the profile says.",
		srcManCreateSRQ + ", DESCRIPTION", KindImplementation, []string{"CapacityReport"}},
	{RuleCreateMax, "Creating an SRQ with max_wr above the device's max_srq_wr, or max_sge above its max_srq_sge, fails (EINVAL in every provider read); creating one at either limit, or both, succeeds, or fails with ENOMEM where the host cannot back the queue.",
		srcRUTCreateMax + "; " + srcRXECreateMax + "; " + srcMLX5CreateMax + "; " + srcManCreateSRQ + ", RETURN VALUE (NULL with errno set)", KindConsensus, nil},
	{RuleCreateEx, "ibv_create_srq_ex with comp_mask PD | TYPE and srq_type IBV_SRQT_BASIC makes the same SRQ as ibv_create_srq; adding IBV_SRQ_INIT_ATTR_CQ succeeds or fails with EOPNOTSUPP, and an unknown srq_type fails with EINVAL or EOPNOTSUPP.",
		srcManCreateSRQEx + "; " + srcVerbsCreateSRQEx, KindConsensus, nil},
	{RuleCreateLimit, "A srq_limit given at create does not arm the SRQ.",
		srcManCreateSRQ + ", struct ibv_srq_attr (srq_limit irrelevant at create)", KindImplementation, []string{"LimitAtCreate"}},
	{RuleQueryAttr, "Query returns max_wr and max_sge as created or resized; they change only on resize.",
		srcMojoQuery + ", FAQ on caching attributes; " + srcManQuerySRQ, KindImplementation, []string{"Query"}},
	{RuleQueryLimit, "Query returns the armed limit, and 0 when the SRQ is not armed.",
		srcManQuerySRQ + ", NOTES; " + srcMojoQuery + ", struct ibv_srq_attr (srq_limit)", KindDocumented, nil},
	{RuleDestroyBusy, "ibv_destroy_srq fails with EBUSY while a QP is attached, and the SRQ keeps working as before; once its QPs are destroyed it succeeds.",
		srcManCreateSRQ + ", NOTES (fails if any queue pair is still associated); " + srcKernelDestroySRQ + "; " + srcRXEDestroySRQ, KindDocumented, nil},
	{RuleModifyOnlyMasked, "A modify changes only the attributes its mask names, and nothing when it fails.",
		srcManModifySRQ + ", NOTES (an invalid attribute modifies none)", KindDocumented, nil},

	// The limit.
	{RuleLimitArm, "Modifying srq_limit to a non-zero value within bounds arms the SRQ.",
		srcManModifySRQ + ", NOTES", KindDocumented, []string{"ArmBelow"}},
	{RuleLimitDisarm, "A limit of 0 disarms: no limit event comes until the SRQ is armed again.",
		srcManQuerySRQ + ", NOTES; " + srcMojoQuery + ", struct ibv_srq_attr", KindDocumented, nil},
	{RuleLimitBound, "Arming with a limit above what the profile allows relative to max_wr fails with EINVAL and changes nothing.",
		srcLinuxRXESRQ + " rxe_srq_chk_attr (srq_limit above index_mask is EINVAL); " + srcLinuxMLX5SRQ + " mlx5_ib_modify_srq (srq_limit >= msrq.max is EINVAL)", KindImplementation, []string{"LimitBound"}},
	{RuleLimitFire, "When a fetch leaves fewer WRs than the armed limit, IBV_EVENT_SRQ_LIMIT_REACHED is raised.",
		srcManModifySRQ + ", NOTES; " + srcBook + ", 'The Cost of Pooling' (watermark)", KindDocumented, []string{"ArmBelow"}},
	{RuleLimitOnce, "The limit event fires at most once per arming.",
		srcManQuerySRQ + ", NOTES (no events until rearmed)", KindDocumented, nil},
	{RuleLimitAfterFire, "After the limit event, srq_limit reads 0.",
		srcMojoQuery + ", FAQ on caching attributes; " + srcManQuerySRQ + ", NOTES", KindImplementation, []string{"LimitAfterFire"}},

	// Resize.
	{RuleResizeOptional, "Resize (IBV_SRQ_MAX_WR) works only where the device advertises IBV_DEVICE_SRQ_RESIZE; elsewhere it fails and changes nothing.",
		srcManModifySRQ + ", NOTES", KindImplementation, []string{"Resize"}},
	{RuleResizeBounds, "Resize to 0 or above the device's max_srq_wr fails with EINVAL.",
		srcLinuxRXESRQ + " rxe_srq_chk_attr (max_wr <= 0 or above max_srq_wr is EINVAL)", KindConsensus, nil},
	{RuleResizeBelowCount, "Resize to a capacity that cannot hold the outstanding WRs fails with EINVAL.",
		"linux fdbdfefbabef drivers/infiniband/sw/rxe/rxe_queue.c resize_finish (EINVAL when the new size is below the count); RUT srq_test ModifyMaxWr", KindConsensus, []string{"CapacityReport"}},
	{RuleResizeBelowLimit, "Resize to fewer WRs than the armed limit is accepted or refused as the profile says.",
		srcLinuxRXESRQ + " rxe_srq_chk_attr (an armed limit above the new max_wr is EINVAL)", KindImplementation, []string{"ResizeBelowLimit"}},
	{RuleResizeCapacity, "After a resize, query reports the new max_wr (at least the request) and exactly that many WRs fit; outstanding WRs stay, in order.",
		srcManModifySRQ + ", DESCRIPTION; rdma-core 691953d8 libibverbs/cmd.c ibv_cmd_modify_srq (a command with no response: the new max_wr is not written back, query afterwards)", KindImplementation, []string{"CapacityReport"}},

	// QP state.
	{RuleQPTransitions, "ibv_modify_qp accepts the legal state transitions and refuses the others; no modify enters SQE.",
		"kernel drivers/infiniband/core/verbs.c qp_state_table (ib_modify_qp_is_ok)", KindConsensus, nil},
	{RuleQPFetchStates, "A QP in RTR, RTS, SQD or SQE takes a WR from the SRQ when a consuming message arrives.",
		srcMojoPost + ", DESCRIPTION (QP state rules)", KindDocumented, nil},
	{RuleQPNoFetchStates, "A QP in RESET, INIT or ERR takes nothing from the SRQ; its messages are not processed.",
		srcMojoPost + ", DESCRIPTION (QP state rules)", KindDocumented, nil},
	{RuleQPBeforeRTR, "Messages arriving before RTR are dropped, or buffered and processed at RTR, as the profile says.",
		"google/rdma-unit-test b5dc037f public/introspection.h BuffersMessagesWhenNotReadyToReceive (some providers, such as Mellanox, buffer; IBTA says drop)", KindImplementation, []string{"BeforeRTR"}},
	{RuleQPLastWQE, "An SRQ-attached QP entering ERR raises IBV_EVENT_QP_LAST_WQE_REACHED once.",
		srcIBTA, KindImplementation, []string{"LastWQE", "LastWQERepeat"}},
	{RuleQPErrorEvent, "An affiliated QP error event (QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR) comes only where the profile says a receive error raises one: once, on an RC QP that an error completion moved to ERR, QP_FATAL for a message too long and QP_ACCESS_ERR for a bad key.",
		srcManAsyncEvent + ", DESCRIPTION (QP_FATAL: an error moved the QP to the error state; QP_ACCESS_ERR: a local access violation)", KindImplementation, []string{"ErrorEvent"}},
	{RuleQPFlushInProgress, "A WR a QP was filling when it entered ERR completes with WR_FLUSH_ERR, or vanishes, as the profile says.",
		srcIBTA + "; the same patch: rxe_resp.c flush_recv_queue returns at once for an SRQ-attached QP, completing nothing", KindImplementation, []string{"FlushInProgress"}},

	// SRQ error.
	{RuleSRQErrEvent, "An SRQ entering its error state raises IBV_EVENT_SRQ_ERR.",
		srcMojoPost + ", DESCRIPTION", KindDocumented, nil},
	{RuleSRQErrNoFetch, "Nothing is fetched from an SRQ in error.",
		srcMojoPost + ", DESCRIPTION", KindDocumented, nil},

	// Fetching and completions.
	{RuleFetchFIFO, "WRs are fetched from the head: completions come in posting order.",
		srcMojoPost + ", DESCRIPTION (added to the tail; fetched from the head)", KindDocumented, nil},
	{RuleFetchOpcodes, "Send, Send with Immediate and RDMA Write with Immediate consume a WR; RDMA Write, RDMA Read and atomics do not.",
		srcMojoPost + ", FAQ 'Which operations will consume RRs?'", KindDocumented, nil},
	{RuleFetchOnce, "A consuming message takes exactly one WR, and no WR completes twice.",
		srcMojoPost + ", DESCRIPTION (fetched in an atomic way); RUT srq_test multithreaded", KindDocumented, nil},
	{RuleRecvCompletion, "A message that fits completes successfully with the WR's wr_id, the receiving QP and the message length.",
		srcMojoPost + ", struct ibv_recv_wr (wr_id); man ibv_poll_cq(3)", KindDocumented, nil},
	{RuleRecvImm, "A message with immediate data completes with IBV_WC_WITH_IMM and the sender's immediate.",
		"man ibv_poll_cq(3), wc_flags; " + srcManPostSend + ", opcodes", KindDocumented, nil},
	{RuleRecvWriteImm, "RDMA Write with Immediate consumes a WR without scattering into it and completes as RECV_RDMA_WITH_IMM with the write's length.",
		srcManPostSend + ", opcode table; " + srcMojoPost + ", FAQ 'Which operations will consume RRs?'", KindConsensus, nil},
	{RuleRecvFit, "A message fits when its length is at most the sum of the WR's SGE lengths.",
		srcMojoPost + ", struct ibv_recv_wr (sg_list: the sum of the buffers is the largest message)", KindDocumented, nil},
	{RuleRecvNumSGE0, "A WR with num_sge 0 holds only an empty message.",
		srcMojoPost + ", struct ibv_recv_wr (num_sge 0)", KindDocumented, nil},
	{RuleSGELen0, "An SGE of length 0 stands for 2^31 bytes.",
		srcMojoPost + ", struct ibv_sge (length)", KindImplementation, []string{"ZeroLength"}},
	{RuleUDGRH, "On UD the first 40 bytes of the scatter list hold the GRH area: a message fits only with 40 bytes to spare, and byte_len counts them.",
		srcManPostSRQ + ", DESCRIPTION (GRH); " + srcMojoPost + ", FAQ on UD buffers", KindDocumented, nil},
	{RuleRecvTooLarge, "A message larger than the WR completes with an error status, and the QP's fate follows the profile (RC: ERR).",
		srcMojoPost + ", FAQ on UD buffers", KindImplementation, []string{"OversizeRCStatus", "OversizeRCQP", "OversizeUDStatus", "OversizeUDQP"}},
	{RuleRecvBadKey, "Filling a WR through an invalidated key completes with an error status, and the QP's fate follows the profile.",
		srcMojoPost + ", FAQ on deregistering an MR", KindImplementation, []string{"KeyCheck", "KeyErrorStatus", "KeyErrorRCQP", "KeyErrorUDQP"}},
	{RuleRecvRNR, "A consuming message meeting an empty SRQ on RC gets receiver-not-ready (on iWARP, which has none, the connection is terminated, as the profile says); on UD it is dropped.",
		srcBook + ", 'The Cost of Pooling' (an exhausted pool starves every QP); RUT srq_test SendRnr; " + srcDDPNoBuf, KindImplementation, []string{"EmptySRQRC"}},
	{RuleSlotFree, "A fetched WR's slot frees at fetch or when its completion is polled, as the profile says.",
		srcMojoPost + ", FAQ 'Can I know how many WRs are outstanding'; " + srcRCMLX5CQ + " handle_responder_lazy (mlx5 frees at poll); " + srcLinuxSIWRx + " siw_rqe_get (siw frees at fetch)", KindImplementation, []string{"SlotFree"}},
	{RuleQPCreate, "QPs of each type can be created attached to the SRQ.",
		srcMojoPost + ", DESCRIPTION (QPs associated with the SRQ)", KindDocumented, nil},
	{RuleQPSRQCaps, "A QP created with the SRQ ignores cap.max_recv_wr and cap.max_recv_sge: values above the device's max_qp_wr or max_sge are accepted, or refused with EINVAL as the profile says (every other QP the suite creates asks for 0).",
		srcManCreateQP + ", NOTES (max_recv_wr and max_recv_sge are ignored with an SRQ; only RC and UD QPs may have one)", KindImplementation, []string{"QPRecvCaps"}},
}

// Invariant is a law the model checks on itself after every step.
type Invariant struct {
	ID        string `json:"id"`
	Statement string `json:"statement"`
}

// Invariants returns the model's own laws (Model.CheckInvariants).
func Invariants() []Invariant {
	return []Invariant{
		{"INV-COUNT", "The number of slots in use never exceeds max_wr."},
		{"INV-CONSERVE", "Posted WRs = outstanding WRs + fetched WRs (flushed and lost WRs were fetched)."},
		{"INV-LIMIT-ONCE", "At most one limit event per arming."},
		{"INV-ONCE", "No wr_id completes twice."},
		{"INV-HELD", "Slots held until poll are never negative and never exceed the fetched WRs."},
	}
}
