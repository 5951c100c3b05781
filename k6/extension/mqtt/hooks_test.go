package mqtt

// Misbehaving brokers: mochi-mqtt hooks that make the embedded broker do
// what some real brokers do, so the tests can show the run names it.

import (
	"encoding/binary"
	"errors"
	"sync"

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

// dropFirstPublish is a broker whose connection breaks while a client's
// first QoS 1/2 PUBLISH is in flight: it hangs up without acknowledging or
// routing it, once per client id. It records the DUP flag and the header's
// sequence number of every PUBLISH it gets, so a test can see the re-send.
type dropFirstPublish struct {
	mochi.HookBase
	mu      sync.Mutex
	dropped map[string]bool
	seen    []seenPublish
}

type seenPublish struct {
	client string
	dup    bool
	seq    uint32
}

func (h *dropFirstPublish) ID() string { return "drop-first-publish" }

func (h *dropFirstPublish) Provides(b byte) bool { return b == mochi.OnPublish }

func (h *dropFirstPublish) OnPublish(cl *mochi.Client, pk packets.Packet) (packets.Packet, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(pk.Payload) >= 7 {
		h.seen = append(h.seen, seenPublish{cl.ID, pk.FixedHeader.Dup, binary.BigEndian.Uint32(pk.Payload[3:7])})
	}
	if h.dropped == nil {
		h.dropped = map[string]bool{}
	}
	if !h.dropped[cl.ID] {
		h.dropped[cl.ID] = true
		cl.Stop(errors.New("dropped before the ack"))
		return pk, packets.ErrRejectPacket
	}
	return pk, nil
}

func (h *dropFirstPublish) publishes() []seenPublish {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]seenPublish(nil), h.seen...)
}
