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
var FeatureNames = []string{
	"traffic after RESET->INIT->RTR->RTS (a QP brought back up)",
	"traffic after ERR",
	"traffic in SQD or SQE",
	"limit armed, fired, re-armed",
	"post refused at full",
	"ring wrapped (more posted than it holds)",
	"failing WR first in a list",
	"failing WR mid-list",
	"failing WR last in a list",
	"0-length SGE past the first, filled",
	"3 or more QPs took WRs in one case",
	"resize with WRs outstanding",
	"message one byte under the head WR",
	"message exactly the head WR",
	"message one byte over the head WR",
}

// featureTracker counts features in one session.
type featureTracker struct {
	counts   map[string]int
	revived  map[int]bool // QP went through RESET after it had been up
	wasUp    map[int]bool
	fired    bool // the limit fired since it was last armed
	qpsTook  map[int]bool
	postedIn int  // WRs posted in this session
	wrapped  bool // more were posted than the SRQ holds
}

func newFeatureTracker() *featureTracker {
	return &featureTracker{counts: map[string]int{}, revived: map[int]bool{}, wasUp: map[int]bool{}, qpsTook: map[int]bool{}}
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
			}
		}
	case model.Arm:
		if got.Errno == 0 && o.Limit > 0 && f.fired {
			f.counts[FeatureNames[3]]++
			f.fired = false
		}
	case model.Poll:
		for _, e := range got.Events {
			if e.Type == model.EventSRQLimitReached {
				f.fired = true
			}
		}
	case model.Post:
		if got.Errno != 0 && got.BadWR >= 0 {
			if got.Errno == model.ENOMEM || got.Errno == -model.ENOMEM {
				f.counts[FeatureNames[4]]++
			}
			if len(o.WRs) > 1 {
				switch got.BadWR {
				case 0:
					f.counts[FeatureNames[6]]++
				case len(o.WRs) - 1:
					f.counts[FeatureNames[8]]++
				default:
					f.counts[FeatureNames[7]]++
				}
			}
		}
		taken := len(o.WRs)
		if got.Errno != 0 && got.BadWR >= 0 {
			taken = got.BadWR
		}
		f.postedIn += taken
		if !f.wrapped && before.Capacity > 0 && f.postedIn > int(before.Capacity) {
			f.wrapped = true
			f.counts[FeatureNames[5]]++
		}
	case model.Resize:
		if got.Errno == 0 && before.Outstanding > 0 {
			f.counts[FeatureNames[11]]++
		}
	case model.Arrive:
		if o.QP >= len(before.QPStates) || !before.QPStates[o.QP].Fetches() && before.QPStates[o.QP] != model.Err {
			return
		}
		st := before.QPStates[o.QP]
		switch {
		case st == model.Err:
			f.counts[FeatureNames[1]]++
		case st == model.SQD || st == model.SQE:
			f.counts[FeatureNames[2]]++
		case st == model.RTS && f.revived[o.QP]:
			f.counts[FeatureNames[0]]++
		}
		if !o.Msg.Opcode.Consumes() || before.Outstanding == 0 || !st.Fetches() {
			return
		}
		f.qpsTook[o.QP] = true
		if len(f.qpsTook) >= 3 {
			f.counts[FeatureNames[10]]++
		}
		need := uint64(o.Msg.Len)
		if before.QPTypes[o.QP] == model.UD {
			need += model.UDHeader
		}
		switch {
		case need+1 == before.HeadBytes:
			f.counts[FeatureNames[12]]++
		case need == before.HeadBytes:
			f.counts[FeatureNames[13]]++
		case need == before.HeadBytes+1:
			f.counts[FeatureNames[14]]++
		}
		if before.HeadZeroPastFirst && o.Msg.Opcode.Scatters() {
			f.counts[FeatureNames[9]]++
		}
	}
}
