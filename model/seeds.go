package model

// SeedStatement is one statement about SRQs in the seed documents, and what
// the catalogue does with it: the rules that check it, or why it is out of
// scope.
type SeedStatement struct {
	Seed       string   `json:"seed"`
	Section    string   `json:"section"`
	Statement  string   `json:"statement"` // paraphrased
	Rules      []RuleID `json:"rules,omitempty"`
	OutOfScope string   `json:"out_of_scope,omitempty"`
}

const (
	seedManSRQ  = "manpage-ibv_post_srq_recv.txt"
	seedManRecv = "manpage-ibv_post_recv.txt"
	seedMojo    = "rdmamojo-ibv_post_srq_recv.txt"
	seedMojoQ   = "rdmamojo-ibv_query_srq.txt"
	seedBook    = "book-chapter-13.5-srq.txt"
)

func r(ids ...RuleID) []RuleID { return ids }

// SeedMap returns every SRQ statement of the seed documents with its rules
// or its out-of-scope reason.
func SeedMap() []SeedStatement { return append([]SeedStatement(nil), seedMap...) }

var seedMap = []SeedStatement{
	// man ibv_post_srq_recv(3)
	{seedManSRQ, "DESCRIPTION", "The call posts a linked list of WRs to the SRQ.", r(RulePostOrder), ""},
	{seedManSRQ, "DESCRIPTION", "Processing stops at the first failure that can be detected at post time; that WR is returned through bad_wr.", r(RulePostOrder, RulePostBadWR), ""},
	{seedManSRQ, "RETURN VALUE", "The call returns 0 on success or the errno value on failure.", r(RulePostReturn), ""},
	{seedManSRQ, "NOTES", "Buffers may be reused only once the WR has completed and its completion was polled.", nil, "application guidance about buffer ownership; a device cannot be seen to break it"},
	{seedManSRQ, "NOTES", "On UD the first 40 bytes of the scatter list receive the GRH; data starts at offset 40.", r(RuleUDGRH), ""},
	{seedManSRQ, "NOTES", "When the message carries no GRH the first 40 bytes are undefined.", nil, "RoCE always carries a GRH and the content of an undefined area cannot be checked"},

	// man ibv_post_recv(3)
	{seedManRecv, "DESCRIPTION", "A QP associated with an SRQ must be given receives with ibv_post_srq_recv, not ibv_post_recv; its own receive queue is unused.", r(RulePostQPRQ), ""},
	{seedManRecv, "DESCRIPTION", "ibv_post_recv stops at the first failing WR and returns it through bad_wr.", nil, "ibv_post_recv on a QP without an SRQ is not SRQ behaviour; on an SRQ-attached QP it is POST-QP-RQ"},

	// rdmamojo ibv_post_srq_recv
	{seedMojo, "Description", "Each WR is checked, turned into a device receive request and added to the tail of the SRQ.", r(RuleFetchFIFO, RulePostOrder), ""},
	{seedMojo, "Description", "The device takes a WR when a message that consumes one arrives at an associated QP.", r(RuleQPFetchStates, RuleFetchOpcodes), ""},
	{seedMojo, "Description", "On a full queue or a bad attribute the call stops at once and returns that WR.", r(RulePostFull, RulePostSGE, RulePostBadWR), ""},
	{seedMojo, "Description", "The call works whether or not QPs are associated, whatever their state.", r(RulePostAnyState), ""},
	{seedMojo, "Description", "QPs in RESET, INIT or ERROR process no messages and fetch nothing.", r(RuleQPNoFetchStates, RuleQPBeforeRTR), ""},
	{seedMojo, "Description", "QPs in RTR, RTS, SQD or SQE process messages and fetch as needed.", r(RuleQPFetchStates), ""},
	{seedMojo, "Description", "An SRQ entering its error state raises IBV_EVENT_SRQ_ERR.", r(RuleSRQErrEvent), ""},
	{seedMojo, "Description", "Nothing is fetched from an SRQ in error, or with no QP associated.", r(RuleSRQErrNoFetch), ""},
	{seedMojo, "Description", "Receives for an SRQ-associated QP go through ibv_post_srq_recv, not ibv_post_recv.", r(RulePostQPRQ), ""},
	{seedMojo, "Description", "On UD the GRH lands in the first 40 bytes and data starts at offset 40.", r(RuleUDGRH), ""},
	{seedMojo, "struct ibv_recv_wr", "wr_id is returned in the work completion of the WR.", r(RuleRecvCompletion), ""},
	{seedMojo, "struct ibv_recv_wr", "The largest message a WR can take is the sum of its SGE lengths; SGEs may belong to different MRs.", r(RuleRecvFit, RuleRecvTooLarge), ""},
	{seedMojo, "struct ibv_recv_wr", "num_sge may be at most the SRQ's max_sge; 0 means a message of size 0.", r(RulePostSGE, RuleRecvNumSGE0), ""},
	{seedMojo, "struct ibv_sge", "The MR of an SGE must stay registered while the WR is outstanding.", r(RuleRecvBadKey), ""},
	{seedMojo, "struct ibv_sge", "The order in which the device writes the SGEs is undefined; overlapping SGEs give undefined content.", nil, "undefined behaviour: nothing to check"},
	{seedMojo, "struct ibv_sge", "An SGE length of 0 stands for 2^31 bytes.", r(RuleSGELen0), ""},
	{seedMojo, "struct ibv_sge", "The buffer of an outstanding WR must not be read.", nil, "application guidance"},
	{seedMojo, "Description", "A WR is fetched from the head of the SRQ, atomically, when the SRQ is not in error.", r(RuleFetchFIFO, RuleFetchOnce, RuleSRQErrNoFetch), ""},
	{seedMojo, "Description", "Every WR should be able to take the largest message any associated QP may receive.", nil, "application guidance; the device's side is RECV-TOO-LARGE"},
	{seedMojo, "Return Values", "On failure nothing changes in the SRQ or its QPs and bad_wr points at the failing WR.", r(RulePostOrder, RulePostBadWR), ""},
	{seedMojo, "Return Values", "EINVAL: an invalid value in the WR.", r(RulePostSGE), ""},
	{seedMojo, "Return Values", "ENOMEM: the SRQ is full or resources ran out.", r(RulePostFull), ""},
	{seedMojo, "Return Values", "EFAULT: an invalid value in qp.", nil, "needs an invalid object pointer; the process would crash rather than fail"},
	{seedMojo, "FAQ", "Posting does not cause a context switch.", nil, "performance property, not observable through the verbs"},
	{seedMojo, "FAQ", "Outstanding WRs are limited by the max_wr given at creation.", r(RulePostFull, RuleCreateAttr), ""},
	{seedMojo, "FAQ", "The number of outstanding WRs cannot be read; count posts and polled completions, or use the limit event.", r(RuleSlotFree, RuleLimitFire), ""},
	{seedMojo, "FAQ", "Which QP fetches a given WR cannot be known in advance.", nil, "application guidance; the device's side is FETCH-FIFO across QPs"},
	{seedMojo, "FAQ", "Send, Send with Immediate and RDMA Write with Immediate consume a WR.", r(RuleFetchOpcodes, RuleRecvWriteImm, RuleRecvImm), ""},
	{seedMojo, "FAQ", "A WR whose MR was deregistered completes with an error when processed.", r(RuleRecvBadKey, RulePostNoKeyCheck), ""},
	{seedMojo, "FAQ", "A segmentation fault comes from a bad sg_list address, a bad next pointer, or a NULL bad_wr on failure.", nil, "memory-safety misuse; testing it would crash the process"},
	{seedMojo, "FAQ", "To debug a missing completion check the sender, the receiver, the wait, the port state and that the QP is in RTR, RTS, SQD, SQE or ERROR.", nil, "debugging checklist; ERROR appears because flushed WRs complete there (QP-FLUSH-INPROGRESS)"},
	{seedMojo, "FAQ", "UD receive buffers need 40 extra bytes or completions fail.", r(RuleUDGRH, RuleRecvTooLarge), ""},
	{seedMojo, "FAQ", "The WR and its SGE list may be reused as soon as the call returns.", r(RulePostCopy), ""},
	{seedMojo, "Comments", "Mixed message sizes: size every WR for the largest message, or use two SRQs.", nil, "application design advice from reader comments"},
	{seedMojo, "Comments", "wr_id is application-defined and may repeat.", nil, "the suite gives every WR a unique wr_id so completions can be attributed; repeated ids are never posted"},

	// rdmamojo ibv_query_srq
	{seedMojoQ, "Description", "Query returns the SRQ's attributes: max_wr, max_sge, srq_limit.", r(RuleQueryAttr, RuleQueryLimit), ""},
	{seedMojoQ, "struct ibv_srq_attr", "max_wr is the most WRs that can be outstanding; max_sge the most SGEs per WR.", r(RuleQueryAttr, RulePostFull, RulePostSGE), ""},
	{seedMojoQ, "struct ibv_srq_attr", "srq_limit 0 means the limit event will not be generated.", r(RuleQueryLimit, RuleLimitDisarm), ""},
	{seedMojoQ, "Return Values", "ENOMEM when resources are short; ENOSYS when the device does not support query.", r(RuleQueryAttr), ""},
	{seedMojoQ, "FAQ", "max_wr and max_sge change only on resize; cache them.", r(RuleQueryAttr, RuleResizeCapacity), ""},
	{seedMojoQ, "FAQ", "srq_limit holds the armed value, reads 0 after the event, until rearmed.", r(RuleQueryLimit, RuleLimitAfterFire, RuleLimitOnce), ""},

	// book chapter 13.5
	{seedBook, "Why Do We Need SRQ?", "An SRQ pools receive buffers for many QPs so fewer WRs are posted in total.", r(RuleQPCreate, RuleFetchFIFO), ""},
	{seedBook, "The Cost of Pooling", "Which QP takes a buffer is unknown, so every buffer must fit the largest message; tier SRQs by size.", nil, "application design advice"},
	{seedBook, "The Cost of Pooling", "When the pool runs dry every attached QP starves.", r(RuleRecvRNR), ""},
	{seedBook, "The Cost of Pooling", "An event fires when the available WRs drop below srq_limit, so the pool can be refilled.", r(RuleLimitFire), ""},
	{seedBook, "SRQ Lifecycle Management", "An SRQ belongs to a PD; only QPs of that PD share it.", nil, "the suite uses one PD; drivers differ on which PD they check (notes, Order and PD) and the seeds do not settle it"},
	{seedBook, "SRQ Lifecycle Management", "Create takes the maximum WRs and SGEs per WR.", r(RuleCreateAttr), ""},
	{seedBook, "SRQ Lifecycle Management", "Modify with the limit mask sets the watermark; some devices also resize.", r(RuleLimitArm, RuleResizeOptional), ""},
	{seedBook, "SRQ Lifecycle Management", "Never set the watermark to 0; leave a margin.", nil, "application guidance"},
	{seedBook, "SRQ Lifecycle Management", "Query shows the limit; 0 means never set or turned off.", r(RuleQueryLimit, RuleLimitDisarm), ""},
	{seedBook, "SRQ Lifecycle Management", "Destroy the SRQ only after its QPs are destroyed; otherwise behaviour is undefined.", r(RuleDestroyBusy), ""},
	{seedBook, "The Real Work", "Receives go to an SRQ with ib_post_srq_recv; wr_id should lead back to the context.", r(RuleRecvCompletion), ""},
	{seedBook, "The Real Work", "On failure bad_wr names the first failed WR of the list.", r(RulePostBadWR), ""},
	{seedBook, "SRQ Lifecycle Management", "The chapter uses the kernel verbs (ib_*); the user verbs follow the same semantics.", nil, "the suite tests the user verbs; kernel ULP verbs are not reached from userspace"},
}
