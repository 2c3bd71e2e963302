package conformance

import (
	"github.com/srqconform/srqconform/model"
)

// Features are the state-space features a run drove the device through,
// counted over the steps that agreed with the model. They are the states
// real driver bugs live in (issue 8): a QP brought back through RESET and
// sent to, a limit armed again after it fired, a ring that wrapped, the
// failing WR's place in a list, empty SGEs past the first, traffic from
// several QPs at once, a resize with WRs outstanding, and messages at the
// fit boundary. FeatureNames lists them in report order.
var FeatureNames = func() []string {
	var names []string
	for _, f := range model.Features {
		names = append(names, f.Name)
	}
	return names
}()

// Feature indexes into FeatureNames.
const (
	featRevived = iota
	featAfterErr
	featSQDSQE
	featResumed
	featRearmed
	featRearmedSame
	featFull
	featWrapped
	featBadFirst
	featBadMid
	featBadLast
	featZeroPastFirst
	featThreeQPs
	featResizeOutstanding
	featUnder
	featExact
	featOver
	featNoQP
)

// featureTracker counts features in one session.
type featureTracker struct {
	counts   map[string]int
	revived  map[int]bool // QP went through RESET after it had been up
	wasUp    map[int]bool
	fired    bool         // the limit fired since it was last armed
	limit    uint32       // the limit last armed
	resumed  map[int]bool // QP went SQD -> RTS
	wasSQD   map[int]bool
	qpsTook  map[int]bool
	postedIn int  // WRs posted in this session
	wrapped  bool // more were posted than the SRQ holds
}

func newFeatureTracker() *featureTracker {
	return &featureTracker{counts: map[string]int{}, revived: map[int]bool{}, wasUp: map[int]bool{}, resumed: map[int]bool{}, wasSQD: map[int]bool{}, qpsTook: map[int]bool{}}
}

// observe counts the features of one step that agreed: before is the
// model's view before it, got what the device did.
func (f *featureTracker) observe(op model.Op, before model.View, got model.Observation) {
	switch o := op.(type) {
	case model.ModifyQP:
		if o.QP < len(before.QPStates) && got.Errno == 0 {
			switch {
			case o.State == model.Reset && f.wasUp[o.QP]:
				f.revived[o.QP] = true
			case o.State == model.RTS:
				f.wasUp[o.QP] = true
				f.resumed[o.QP] = f.resumed[o.QP] || f.wasSQD[o.QP]
			}
			f.wasSQD[o.QP] = o.State == model.SQD
			if o.State != model.RTS {
				f.resumed[o.QP] = false
			}
		}
	case model.Arm:
		if got.Errno == 0 && o.Limit > 0 && f.fired {
			f.hit(featRearmed)
			if o.Limit == f.limit {
				f.hit(featRearmedSame)
			}
			f.fired = false
		}
		if got.Errno == 0 {
			f.limit = o.Limit
			if noQPAttached(before) {
				f.hit(featNoQP)
			}
		}
	case model.Poll:
		for _, e := range got.Events {
			if e.Type == model.EventSRQLimitReached {
				f.fired = true
			}
		}
	case model.Post:
		f.observePost(o, before, got)
	case model.Resize:
		if got.Errno == 0 && before.Outstanding > 0 {
			f.hit(featResizeOutstanding)
		}
	case model.Arrive:
		f.observeArrive(o, before)
	}
}

// observePost counts the features of a post that agreed.
func (f *featureTracker) observePost(o model.Post, before model.View, got model.Observation) {
	if got.Errno != 0 && got.BadWR >= 0 {
		if got.Errno == model.ENOMEM || got.Errno == -model.ENOMEM {
			f.hit(featFull)
		}
		if len(o.WRs) > 1 {
			switch got.BadWR {
			case 0:
				f.hit(featBadFirst)
			case len(o.WRs) - 1:
				f.hit(featBadLast)
			default:
				f.hit(featBadMid)
			}
		}
	}
	taken := len(o.WRs)
	if got.Errno != 0 && got.BadWR >= 0 {
		taken = got.BadWR
	}
	if taken > 0 && noQPAttached(before) {
		f.hit(featNoQP)
	}
	f.postedIn += taken
	if !f.wrapped && before.Capacity > 0 && f.postedIn > int(before.Capacity) {
		f.wrapped = true
		f.hit(featWrapped)
	}
}

// observeArrive counts the features of a message that agreed.
func (f *featureTracker) observeArrive(o model.Arrive, before model.View) {
	if o.QP >= len(before.QPStates) || !before.QPStates[o.QP].Fetches() && before.QPStates[o.QP] != model.Err {
		return
	}
	st := before.QPStates[o.QP]
	switch {
	case st == model.Err:
		f.hit(featAfterErr)
	case st == model.SQD || st == model.SQE:
		f.hit(featSQDSQE)
	case st == model.RTS && f.revived[o.QP]:
		f.hit(featRevived)
	}
	if st == model.RTS && f.resumed[o.QP] {
		f.hit(featResumed)
	}
	if !o.Msg.Opcode.Consumes() || before.Outstanding == 0 || !st.Fetches() {
		return
	}
	f.qpsTook[o.QP] = true
	if len(f.qpsTook) >= 3 {
		f.hit(featThreeQPs)
	}
	need := uint64(o.Msg.Len)
	if before.QPTypes[o.QP] == model.UD {
		need += model.UDHeader
	}
	switch {
	case need+1 == before.HeadBytes:
		f.hit(featUnder)
	case need == before.HeadBytes:
		f.hit(featExact)
	case need == before.HeadBytes+1:
		f.hit(featOver)
	}
	if before.HeadZeroPastFirst && o.Msg.Opcode.Scatters() {
		f.hit(featZeroPastFirst)
	}
}

// hit counts one occurrence of feature i.
func (f *featureTracker) hit(i int) { f.counts[FeatureNames[i]]++ }

// noQPAttached reports whether no QP of the view is attached: none made,
// or every one destroyed.
func noQPAttached(v model.View) bool {
	for q := range v.QPTypes {
		if q >= len(v.QPGone) || !v.QPGone[q] {
			return false
		}
	}
	return true
}
