package emu

import "github.com/srqconform/srqconform/drivers"

// PeerGivesUp plays the emulator's RC peer on a busy machine: its
// transport gives up before the receiver's RNR NAK comes back, so every
// send the receiver answers with RNR reports drivers.PeerSilent. It is
// not a departure of the device: the suite counts those steps
// inconclusive, never failures.
const PeerGivesUp Switch = "peer-gives-up"

// silenceCatalogue describes PeerGivesUp.
var silenceCatalogue = []SwitchInfo{
	{PeerGivesUp, KindBehaviour, "harness:PeerSilent", "not the device: an RC peer whose transport gives up before the receiver's RNR NAK comes back (IBV_WC_RETRY_EXC_ERR on a busy machine) reports silence (peer status 3) in place of RNR; the suite counts those steps inconclusive", nil},
}

// heard is what the peer reports for what the receiver answered: silence
// in place of an RNR NAK under PeerGivesUp.
//
// rule: none (the peer-gives-up behaviour's switch: the harness's peer, not the SRQ)
func (c *config) heard(p drivers.PeerStatus) drivers.PeerStatus {
	if p == peerRNR && c.has(PeerGivesUp) {
		return drivers.PeerSilent
	}
	return p
}
