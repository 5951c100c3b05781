package mqtt

// Misbehaving brokers: mochi-mqtt hooks that make the embedded broker do
// what some real brokers do, so the tests can show the run names it.

import (
	"errors"
	"sync/atomic"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// dropOnPublish is a broker that hangs up on a client instead of
// acknowledging its publish.
type dropOnPublish struct{ mochi.HookBase }

func (h *dropOnPublish) ID() string { return "drop-on-publish" }

func (h *dropOnPublish) Provides(b byte) bool { return b == mochi.OnPublish }

func (h *dropOnPublish) OnPublish(cl *mochi.Client, pk packets.Packet) (packets.Packet, error) {
	cl.Stop(errors.New("dropped before the ack"))
	return pk, nil
}

// noSharedSubs is a broker whose CONNACK says it offers no shared
// subscriptions (mochi does not announce its capability by itself).
type noSharedSubs struct{ mochi.HookBase }

func (h *noSharedSubs) ID() string { return "no-shared-subscriptions" }

func (h *noSharedSubs) Provides(b byte) bool { return b == mochi.OnPacketEncode }

func (h *noSharedSubs) OnPacketEncode(_ *mochi.Client, pk packets.Packet) packets.Packet {
	if pk.FixedHeader.Type == packets.Connack {
		pk.Properties.SharedSubAvailable, pk.Properties.SharedSubAvailableFlag = 0, true
	}
	return pk
}

// pubackForQoS2 is a broker that answers a QoS 2 publish with PUBACK, as a
// QoS 1 broker would: a publish it never completes to QoS 2.
type pubackForQoS2 struct{ mochi.HookBase }

func (h *pubackForQoS2) ID() string { return "puback-for-qos2" }

func (h *pubackForQoS2) Provides(b byte) bool { return b == mochi.OnPacketEncode }

func (h *pubackForQoS2) OnPacketEncode(_ *mochi.Client, pk packets.Packet) packets.Packet {
	if pk.FixedHeader.Type == packets.Pubrec {
		pk.FixedHeader.Type = packets.Puback
	}
	return pk
}

// refuseEveryOther is an MQTT 5 broker that refuses every other publish
// with PUBACK reason 0x87 (not authorised) and forwards the rest, as an ACL
// would: the refused messages never reach a subscriber.
type refuseEveryOther struct {
	mochi.HookBase
	seen, refused atomic.Int64
}

func (h *refuseEveryOther) ID() string { return "refuse-every-other" }

func (h *refuseEveryOther) Provides(b byte) bool { return b == mochi.OnPublish }

func (h *refuseEveryOther) OnPublish(_ *mochi.Client, pk packets.Packet) (packets.Packet, error) {
	if h.seen.Add(1)%2 == 0 {
		h.refused.Add(1)
		return pk, packets.ErrNotAuthorized
	}
	return pk, nil
}

// swallowPublishes is a broker that takes publishes and never answers them:
// a QoS 1/2 window that fills and never frees.
type swallowPublishes struct{ mochi.HookBase }

func (h *swallowPublishes) ID() string { return "swallow-publishes" }

func (h *swallowPublishes) Provides(b byte) bool { return b == mochi.OnPublish }

func (h *swallowPublishes) OnPublish(_ *mochi.Client, pk packets.Packet) (packets.Packet, error) {
	return pk, packets.ErrRejectPacket
}
