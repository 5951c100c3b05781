package mqtt

// Misbehaving brokers: mochi-mqtt hooks that make the embedded broker do
// what some real brokers do, so the tests can show the run names it.

import (
	"errors"

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

// mqtt311Only is a broker that speaks only MQTT 3.1.1: it refuses an MQTT 5
// CONNECT with the 3.1.1 CONNACK "unacceptable protocol version".
type mqtt311Only struct{ mochi.HookBase }

func (h *mqtt311Only) ID() string { return "mqtt-3.1.1-only" }

func (h *mqtt311Only) Provides(b byte) bool { return b == mochi.OnConnect }

func (h *mqtt311Only) OnConnect(cl *mochi.Client, pk packets.Packet) error {
	if pk.ProtocolVersion != 5 {
		return nil
	}
	cl.Properties.ProtocolVersion = 4 // the CONNACK in 3.1.1's two-byte form
	_ = cl.WritePacket(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Connack},
		ReasonCode: packets.Err3UnsupportedProtocolVersion.Code})
	return packets.ErrUnsupportedProtocolVersion
}
