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
	// Facts are what the diagnosis and the concurrent checker know of
	// the rule; reports and the rules listing do not show them.
	Facts `json:"-"`
}

// Facts are what the diagnosis and the concurrent checker know of a
// rule. The lists that used to be kept beside the catalogue are derived
// from them: Specificity (Rank), ConcurrentOnly, WorkloadRules (Workload)
// and FieldOwner (Owns).
type Facts struct {
	// Owns lists the profile fields whose departure is this rule's: a
	// device that departs from the profile on one fails this rule.
	// Fields may name more (the fields the rule's statement depends on);
	// every profile field has exactly one owner.
	Owns []string
	// Rank is the rule's place, from 1, in the order that breaks ties
	// between diagnoses (Specificity); 0 ranks it after every ranked
	// rule, in catalogue order.
	Rank int
	// ConcurrentOnly: only concurrent calls can break the rule (package
	// concurrent checks it); a sequential trace is never diagnosed with
	// it unless asked for by name.
	ConcurrentOnly bool
	// Workload: a concurrent workload's operations (posts, messages, QP
	// moves, arming, events) can show the rule broken.
	Workload bool
}

// rulesWhere lists the IDs of the rules that have a fact, in catalogue
// order.
func rulesWhere(has func(Facts) bool) []RuleID {
	var ids []RuleID
	for _, r := range catalogue {
		if has(r.Facts) {
			ids = append(ids, r.ID)
		}
	}
	return ids
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
		srcManPostSRQ + ", DESCRIPTION (stops at the first failure); the rdmamojo 'no change' reading is superseded, see the seed map", KindDocumented, nil, Facts{Rank: 40, Workload: true}},
	{RulePostBadWR, "On failure bad_wr names the first WR that failed, not an earlier or later one.",
		srcManPostSRQ + ", DESCRIPTION; " + srcMojoPost + ", Parameters (bad_wr)", KindDocumented, nil, Facts{Rank: 23, Workload: true}},
	{RulePostReturn, "A post returns 0 on success and an errno value on failure, with the sign convention of the profile.",
		srcManPostSRQ + ", RETURN VALUE", KindImplementation, []string{"PostErrno"}, Facts{Owns: []string{"PostErrno"}, Rank: 24, Workload: true}},
	{RulePostFull, "A WR posted while max_wr WRs are outstanding fails with ENOMEM; up to max_wr can be outstanding.",
		srcMojoPost + ", Return Values (ENOMEM) and FAQ 'How many WRs can I post?'", KindDocumented, []string{"Capacity", "SlotFree"}, Facts{Owns: []string{"Capacity"}, Rank: 21, Workload: true}},
	{RulePostSGE, "A WR with num_sge above max_sge, or negative, fails with EINVAL; num_sge 0 is a valid WR.",
		srcMojoPost + ", struct ibv_recv_wr (num_sge) and Return Values (EINVAL)", KindDocumented, []string{"SGELimit", "ZeroSGE", "NegativeSGE"}, Facts{Owns: []string{"SGELimit", "ZeroSGE", "NegativeSGE"}, Rank: 22}},
	{RulePostCheckOrder, "A WR that has too many SGEs and meets a full queue fails with the errno of the check the profile runs first.",
		srcRCMLX5SRQ + " mlx5_post_srq_recv (num_sge first); rdma-core 691953d8 providers/rxe/rxe.c rxe_post_one_recv and " + srcRCSIW + " siw_post_srq_recv (full first)", KindImplementation, []string{"CheckOrder"}, Facts{Owns: []string{"CheckOrder"}, Rank: 2}},
	{RulePostAnyState, "Posting works with no QP attached and whatever state the attached QPs are in.",
		srcMojoPost + ", DESCRIPTION", KindDocumented, nil, Facts{Rank: 4, Workload: true}},
	{RulePostNoKeyCheck, "A post does not check lkeys; an invalid key shows only when the WR is filled.",
		srcMojoPost + ", FAQ on deregistering an MR (the error comes as a work completion)", KindDocumented, nil, Facts{Rank: 3}},
	{RulePostCopy, "The SRQ keeps its own copy of a posted WR; the caller may change or reuse its WR and SGE array as soon as the call returns.",
		srcMojoPost + ", FAQ 'Can I (re)use the Receive Request'", KindDocumented, nil, Facts{Rank: 41}},
	{RulePostAtomic, "Posts to one SRQ from several threads are atomic: every WR of a post that returned 0 is held until a message takes it; a concurrent post neither overwrites nor drops it.",
		srcMojoThreads + " (different threads may post to the same SRQ; atomicity is guaranteed); " + srcManPostSRQ + ", RETURN VALUE", KindDocumented, nil, Facts{Rank: 44, ConcurrentOnly: true, Workload: true}},
	{RulePostQPRQ, "ibv_post_recv on a QP attached to an SRQ is refused, with bad_wr on the first WR.",
		srcManPostRecv + ", DESCRIPTION; " + srcMojoPost + ", DESCRIPTION; RUT srq_test PostWrongApi", KindImplementation, []string{"PostRecvBadWR"}, Facts{Owns: []string{"PostRecvBadWR"}, Rank: 25}},

	// Create, query, modify.
	{RuleCreateAttr, "Create writes back max_wr and max_sge at least as large as requested, rounded as the profile says.",
		srcManCreateSRQ + ", DESCRIPTION", KindImplementation, []string{"CapacityReport"}, Facts{Owns: []string{"CapacityReport"}, Rank: 20, Workload: true}},
	{RuleCreateMax, "Creating an SRQ with max_wr above the device's max_srq_wr, or max_sge above its max_srq_sge, fails (EINVAL in every provider read); creating one at either limit, or both, succeeds, or fails with ENOMEM where the host cannot back the queue.",
		srcRUTCreateMax + "; " + srcRXECreateMax + "; " + srcMLX5CreateMax + "; " + srcManCreateSRQ + ", RETURN VALUE (NULL with errno set)", KindConsensus, nil, Facts{}},
	{RuleCreateEx, "ibv_create_srq_ex with comp_mask PD | TYPE and srq_type IBV_SRQT_BASIC makes the same SRQ as ibv_create_srq; adding IBV_SRQ_INIT_ATTR_CQ succeeds or fails with EOPNOTSUPP, and an unknown srq_type fails with EINVAL or EOPNOTSUPP.",
		srcManCreateSRQEx + "; " + srcVerbsCreateSRQEx, KindConsensus, nil, Facts{Rank: 51}},
	{RuleCreateLimit, "A srq_limit given at create does not arm the SRQ.",
		srcManCreateSRQ + ", struct ibv_srq_attr (srq_limit irrelevant at create)", KindImplementation, []string{"LimitAtCreate"}, Facts{Owns: []string{"LimitAtCreate"}, Rank: 5}},
	{RuleQueryAttr, "Query returns max_wr and max_sge as created or resized; they change only on resize.",
		srcMojoQuery + ", FAQ on caching attributes; " + srcManQuerySRQ, KindImplementation, []string{"Query"}, Facts{Owns: []string{"Query"}, Rank: 19}},
	{RuleQueryLimit, "Query returns the armed limit, and 0 when the SRQ is not armed.",
		srcManQuerySRQ + ", NOTES; " + srcMojoQuery + ", struct ibv_srq_attr (srq_limit)", KindDocumented, nil, Facts{Rank: 16}},
	{RuleDestroyBusy, "ibv_destroy_srq fails with EBUSY while a QP is attached, and the SRQ keeps working as before; once its QPs are destroyed it succeeds.",
		srcManCreateSRQ + ", NOTES (fails if any queue pair is still associated); " + srcKernelDestroySRQ + "; " + srcRXEDestroySRQ, KindDocumented, nil, Facts{}},
	{RuleModifyOnlyMasked, "A modify changes only the attributes its mask names, and nothing when it fails.",
		srcManModifySRQ + ", NOTES (an invalid attribute modifies none)", KindDocumented, nil, Facts{Rank: 10}},

	// The limit.
	{RuleLimitArm, "Modifying srq_limit to a non-zero value within bounds arms the SRQ.",
		srcManModifySRQ + ", NOTES", KindDocumented, []string{"ArmBelow"}, Facts{Rank: 17, Workload: true}},
	{RuleLimitDisarm, "A limit of 0 disarms: no limit event comes until the SRQ is armed again.",
		srcManQuerySRQ + ", NOTES; " + srcMojoQuery + ", struct ibv_srq_attr", KindDocumented, nil, Facts{Rank: 14}},
	{RuleLimitBound, "Arming with a limit above what the profile allows relative to max_wr fails with EINVAL and changes nothing.",
		srcLinuxRXESRQ + " rxe_srq_chk_attr (srq_limit above index_mask is EINVAL); " + srcLinuxMLX5SRQ + " mlx5_ib_modify_srq (srq_limit >= msrq.max is EINVAL)", KindImplementation, []string{"LimitBound"}, Facts{Owns: []string{"LimitBound"}, Rank: 18, Workload: true}},
	{RuleLimitFire, "When a fetch leaves fewer WRs than the armed limit, IBV_EVENT_SRQ_LIMIT_REACHED is raised.",
		srcManModifySRQ + ", NOTES; " + srcBook + ", 'The Cost of Pooling' (watermark)", KindDocumented, []string{"ArmBelow"}, Facts{Owns: []string{"ArmBelow"}, Rank: 15, Workload: true}},
	{RuleLimitOnce, "The limit event fires at most once per arming.",
		srcManQuerySRQ + ", NOTES (no events until rearmed)", KindDocumented, nil, Facts{Rank: 13, Workload: true}},
	{RuleLimitAfterFire, "After the limit event, srq_limit reads 0.",
		srcMojoQuery + ", FAQ on caching attributes; " + srcManQuerySRQ + ", NOTES", KindImplementation, []string{"LimitAfterFire"}, Facts{Owns: []string{"LimitAfterFire"}, Rank: 12, Workload: true}},

	// Resize.
	{RuleResizeOptional, "Resize (IBV_SRQ_MAX_WR) works only where the device advertises IBV_DEVICE_SRQ_RESIZE; elsewhere it fails and changes nothing.",
		srcManModifySRQ + ", NOTES", KindImplementation, []string{"Resize"}, Facts{Owns: []string{"Resize"}, Rank: 11}},
	{RuleResizeBounds, "Resize to 0 or above the device's max_srq_wr fails with EINVAL.",
		srcLinuxRXESRQ + " rxe_srq_chk_attr (max_wr <= 0 or above max_srq_wr is EINVAL)", KindConsensus, nil, Facts{Rank: 8}},
	{RuleResizeBelowCount, "Resize to a capacity that cannot hold the outstanding WRs fails with EINVAL.",
		"linux fdbdfefbabef drivers/infiniband/sw/rxe/rxe_queue.c resize_finish (EINVAL when the new size is below the count); RUT srq_test ModifyMaxWr", KindConsensus, []string{"CapacityReport"}, Facts{Rank: 7}},
	{RuleResizeBelowLimit, "Resize to fewer WRs than the armed limit is accepted or refused as the profile says.",
		srcLinuxRXESRQ + " rxe_srq_chk_attr (an armed limit above the new max_wr is EINVAL)", KindImplementation, []string{"ResizeBelowLimit"}, Facts{Owns: []string{"ResizeBelowLimit"}, Rank: 6}},
	{RuleResizeCapacity, "After a resize, query reports the new max_wr (at least the request) and exactly that many WRs fit; outstanding WRs stay, in order.",
		srcManModifySRQ + ", DESCRIPTION; rdma-core 691953d8 libibverbs/cmd.c ibv_cmd_modify_srq (a command with no response: the new max_wr is not written back, query afterwards)", KindImplementation, []string{"CapacityReport"}, Facts{Rank: 9}},

	// QP state.
	{RuleQPTransitions, "ibv_modify_qp accepts the legal state transitions and refuses the others; no modify enters SQE.",
		"kernel drivers/infiniband/core/verbs.c qp_state_table (ib_modify_qp_is_ok)", KindConsensus, nil, Facts{Rank: 48, Workload: true}},
	{RuleQPFetchStates, "A QP in RTR, RTS, SQD or SQE takes a WR from the SRQ when a consuming message arrives.",
		srcMojoPost + ", DESCRIPTION (QP state rules)", KindDocumented, nil, Facts{Rank: 28, Workload: true}},
	{RuleQPNoFetchStates, "A QP in RESET, INIT or ERR takes nothing from the SRQ; its messages are not processed.",
		srcMojoPost + ", DESCRIPTION (QP state rules)", KindDocumented, nil, Facts{Rank: 29, Workload: true}},
	{RuleQPBeforeRTR, "Messages arriving before RTR are dropped, or buffered and processed at RTR, as the profile says.",
		"google/rdma-unit-test b5dc037f public/introspection.h BuffersMessagesWhenNotReadyToReceive (some providers, such as Mellanox, buffer; IBTA says drop)", KindImplementation, []string{"BeforeRTR"}, Facts{Owns: []string{"BeforeRTR"}, Rank: 27}},
	{RuleQPLastWQE, "An SRQ-attached QP entering ERR raises IBV_EVENT_QP_LAST_WQE_REACHED once.",
		srcIBTA, KindImplementation, []string{"LastWQE", "LastWQERepeat"}, Facts{Owns: []string{"LastWQE", "LastWQERepeat"}, Rank: 46, Workload: true}},
	{RuleQPErrorEvent, "An affiliated QP error event (QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR) comes only where the profile says a receive error raises one: once, on an RC QP that an error completion moved to ERR, QP_FATAL for a message too long and QP_ACCESS_ERR for a bad key.",
		srcManAsyncEvent + ", DESCRIPTION (QP_FATAL: an error moved the QP to the error state; QP_ACCESS_ERR: a local access violation)", KindImplementation, []string{"ErrorEvent"}, Facts{Owns: []string{"ErrorEvent"}}},
	{RuleQPFlushInProgress, "A WR a QP was filling when it entered ERR completes with WR_FLUSH_ERR, or vanishes, as the profile says.",
		srcIBTA + "; the same patch: rxe_resp.c flush_recv_queue returns at once for an SRQ-attached QP, completing nothing", KindImplementation, []string{"FlushInProgress"}, Facts{Owns: []string{"FlushInProgress"}, Rank: 26}},

	// SRQ error.
	{RuleSRQErrEvent, "An SRQ entering its error state raises IBV_EVENT_SRQ_ERR.",
		srcMojoPost + ", DESCRIPTION", KindDocumented, nil, Facts{Rank: 47}},
	{RuleSRQErrNoFetch, "Nothing is fetched from an SRQ in error.",
		srcMojoPost + ", DESCRIPTION", KindDocumented, nil, Facts{Rank: 30}},

	// Fetching and completions.
	{RuleFetchFIFO, "WRs are fetched from the head: completions come in posting order.",
		srcMojoPost + ", DESCRIPTION (added to the tail; fetched from the head)", KindDocumented, nil, Facts{Rank: 42, Workload: true}},
	{RuleFetchOpcodes, "Send, Send with Immediate and RDMA Write with Immediate consume a WR; RDMA Write, RDMA Read and atomics do not.",
		srcMojoPost + ", FAQ 'Which operations will consume RRs?'", KindDocumented, nil, Facts{Rank: 32}},
	{RuleFetchOnce, "A consuming message takes exactly one WR, and no WR completes twice.",
		srcMojoPost + ", DESCRIPTION (fetched in an atomic way); RUT srq_test multithreaded", KindDocumented, nil, Facts{Rank: 43, Workload: true}},
	{RuleRecvCompletion, "A message that fits completes successfully with the WR's wr_id, the receiving QP and the message length.",
		srcMojoPost + ", struct ibv_recv_wr (wr_id); man ibv_poll_cq(3)", KindDocumented, nil, Facts{Rank: 49, Workload: true}},
	{RulePollMax, "A poll returns the CQ's oldest completions: num_entries of them, or all it holds when fewer; the rest stay in the CQ.",
		"man ibv_poll_cq(3), DESCRIPTION (returns the first num_entries, or all available when the CQ holds fewer)", KindDocumented, nil, Facts{Rank: 52}},
	{RuleRecvImm, "A message with immediate data completes with IBV_WC_WITH_IMM and the sender's immediate.",
		"man ibv_poll_cq(3), wc_flags; " + srcManPostSend + ", opcodes", KindDocumented, nil, Facts{Rank: 45, Workload: true}},
	{RuleRecvWriteImm, "RDMA Write with Immediate consumes a WR without scattering into it and completes as RECV_RDMA_WITH_IMM with the write's length.",
		srcManPostSend + ", opcode table; " + srcMojoPost + ", FAQ 'Which operations will consume RRs?'", KindConsensus, nil, Facts{Rank: 33}},
	{RuleRecvFit, "A message fits when its length is at most the sum of the WR's SGE lengths.",
		srcMojoPost + ", struct ibv_recv_wr (sg_list: the sum of the buffers is the largest message)", KindDocumented, nil, Facts{Rank: 37, Workload: true}},
	{RuleRecvNumSGE0, "A WR with num_sge 0 holds only an empty message.",
		srcMojoPost + ", struct ibv_recv_wr (num_sge 0)", KindDocumented, nil, Facts{Rank: 34}},
	{RuleSGELen0, "An SGE of length 0 stands for 2^31 bytes.",
		srcMojoPost + ", struct ibv_sge (length)", KindImplementation, []string{"ZeroLength"}, Facts{Owns: []string{"ZeroLength"}, Rank: 35}},
	{RuleUDGRH, "On UD the first 40 bytes of the scatter list hold the GRH area: a message fits only with 40 bytes to spare, and byte_len counts them.",
		srcManPostSRQ + ", DESCRIPTION (GRH); " + srcMojoPost + ", FAQ on UD buffers", KindDocumented, nil, Facts{Rank: 36, Workload: true}},
	{RuleRecvTooLarge, "A message larger than the WR completes with an error status, and the QP's fate follows the profile (RC: ERR).",
		srcMojoPost + ", FAQ on UD buffers", KindImplementation, []string{"OversizeRCStatus", "OversizeRCQP", "OversizeUDStatus", "OversizeUDQP"}, Facts{Owns: []string{"OversizeRCStatus", "OversizeRCQP", "OversizeUDStatus", "OversizeUDQP"}, Rank: 39}},
	{RuleRecvBadKey, "Filling a WR through an invalidated key completes with an error status, and the QP's fate follows the profile.",
		srcMojoPost + ", FAQ on deregistering an MR", KindImplementation, []string{"KeyCheck", "KeyErrorStatus", "KeyErrorRCQP", "KeyErrorUDQP"}, Facts{Owns: []string{"KeyCheck", "KeyErrorStatus", "KeyErrorRCQP", "KeyErrorUDQP"}, Rank: 38}},
	{RuleRecvRNR, "A consuming message meeting an empty SRQ on RC gets receiver-not-ready (on iWARP, which has none, the connection is terminated, as the profile says); on UD it is dropped.",
		srcBook + ", 'The Cost of Pooling' (an exhausted pool starves every QP); RUT srq_test SendRnr; " + srcDDPNoBuf, KindImplementation, []string{"EmptySRQRC"}, Facts{Owns: []string{"EmptySRQRC"}, Rank: 31, Workload: true}},
	{RuleSlotFree, "A fetched WR's slot frees at fetch or when its completion is polled, as the profile says.",
		srcMojoPost + ", FAQ 'Can I know how many WRs are outstanding'; " + srcRCMLX5CQ + " handle_responder_lazy (mlx5 frees at poll); " + srcLinuxSIWRx + " siw_rqe_get (siw frees at fetch)", KindImplementation, []string{"SlotFree"}, Facts{Owns: []string{"SlotFree"}, Rank: 1, Workload: true}},
	{RuleQPCreate, "QPs of each type can be created attached to the SRQ.",
		srcMojoPost + ", DESCRIPTION (QPs associated with the SRQ)", KindDocumented, nil, Facts{}},
	{RuleQPSRQCaps, "A QP created with the SRQ ignores cap.max_recv_wr and cap.max_recv_sge: values above the device's max_qp_wr or max_sge are accepted, or refused with EINVAL as the profile says (every other QP the suite creates asks for 0).",
		srcManCreateQP + ", NOTES (max_recv_wr and max_recv_sge are ignored with an SRQ; only RC and UD QPs may have one)", KindImplementation, []string{"QPRecvCaps"}, Facts{Owns: []string{"QPRecvCaps"}, Rank: 50}},
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
