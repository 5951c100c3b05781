package mqtt

// Misbehaving brokers: mochi-mqtt hooks that make the embedded broker do
// what some real brokers do, so the tests can show the run names it.

import (
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

// disconnectStorm is a broker that hangs up on every client right after
// accepting it, `drops` times, and turns away the first redial after each
// drop; the client `refuse` it never lets in. A client's life is then exact:
// `drops` disconnects, two redials per drop (one refused, one accepted).
type disconnectStorm struct {
	mochi.HookBase
	drops  int
	refuse string

	mu      sync.Mutex
	dropped map[string]int // drops so far, per client id
	refused map[string]int // redials turned away so far, per client id
}

func newDisconnectStorm(drops int, refuse string) *disconnectStorm {
	return &disconnectStorm{drops: drops, refuse: refuse, dropped: map[string]int{}, refused: map[string]int{}}
}

func (h *disconnectStorm) ID() string { return "disconnect-storm" }

func (h *disconnectStorm) Provides(b byte) bool {
	return b == mochi.OnConnect || b == mochi.OnSessionEstablished
}

// OnConnect closes the connection without a CONNACK, as a broker at its
// connection limit does.
func (h *disconnectStorm) OnConnect(cl *mochi.Client, _ packets.Packet) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cl.ID == h.refuse {
		return errors.New("refused for good")
	}
	if h.dropped[cl.ID] > h.refused[cl.ID] {
		h.refused[cl.ID]++
		return errors.New("refused after a drop")
	}
	return nil
}

// OnSessionEstablished runs after the CONNACK went out: the client sees a
// successful connection, then the broker hanging up.
func (h *disconnectStorm) OnSessionEstablished(cl *mochi.Client, _ packets.Packet) {
	h.mu.Lock()
	drop := h.dropped[cl.ID] < h.drops
	if drop {
		h.dropped[cl.ID]++
	}
	h.mu.Unlock()
	if drop {
		cl.Stop(errors.New("disconnect storm"))
	}
}
