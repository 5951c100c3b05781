package mqtt

// Misbehaving brokers: mochi-mqtt hooks that make the embedded broker do
// what some real brokers do, so the tests can show the run names it.

import (
	"encoding/binary"
	"errors"
	"strings"
	"sync"
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

// dropFirstPublish is a broker whose connection breaks while a client's
// first QoS 1/2 PUBLISH is in flight: it hangs up without acknowledging or
// routing it, once per client id. It records the DUP flag and the header's
// sequence number of every PUBLISH it gets, so a test can see the re-send.
type dropFirstPublish struct {
	mochi.HookBase
	mu      sync.Mutex
	dropped map[string]bool
	stopped map[*mochi.Client]bool
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
	// What the client wrote after the dropped one may still be read from
	// the connection being stopped: a broker whose connection broke never
	// sees it.
	if h.stopped[cl] {
		return pk, packets.ErrRejectPacket
	}
	if len(pk.Payload) >= 7 {
		h.seen = append(h.seen, seenPublish{cl.ID, pk.FixedHeader.Dup, binary.BigEndian.Uint32(pk.Payload[3:7])})
	}
	if h.dropped == nil {
		h.dropped, h.stopped = map[string]bool{}, map[*mochi.Client]bool{}
	}
	if !h.dropped[cl.ID] {
		h.dropped[cl.ID] = true
		h.stopped[cl] = true
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

// dropFirstPubrel is a broker whose connection breaks while a client's
// first QoS 2 message waits for PUBCOMP: it hangs up on the client's first
// PUBREL, once per client id. It records the PUBLISHes and PUBRELs it reads
// (packet id, DUP), so a test can see what the client sent again.
type dropFirstPubrel struct {
	mochi.HookBase
	mu      sync.Mutex
	dropped map[string]uint16 // client id → packet id of the PUBREL dropped
	read    map[string][]readPacket
}

type readPacket struct {
	typ byte
	pid uint16
	dup bool
}

func (h *dropFirstPubrel) ID() string { return "drop-first-pubrel" }

func (h *dropFirstPubrel) Provides(b byte) bool { return b == mochi.OnPacketRead }

func (h *dropFirstPubrel) OnPacketRead(cl *mochi.Client, pk packets.Packet) (packets.Packet, error) {
	t := pk.FixedHeader.Type
	if t != packets.Publish && t != packets.Pubrel {
		return pk, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.read == nil {
		h.read, h.dropped = map[string][]readPacket{}, map[string]uint16{}
	}
	h.read[cl.ID] = append(h.read[cl.ID], readPacket{t, pk.PacketID, pk.FixedHeader.Dup})
	if _, done := h.dropped[cl.ID]; t == packets.Pubrel && !done {
		h.dropped[cl.ID] = pk.PacketID
		cl.Stop(errors.New("dropped before PUBCOMP"))
		// Only a rejection stops Mochi from handling the PUBREL: with any
		// other error it releases the message, and re-sends the PUBCOMP it
		// could not write on the resumed session, which may come before the
		// client's PUBREL (or, at v5, after it, making that PUBCOMP 0x92).
		return pk, packets.ErrRejectPacket
	}
	return pk, nil
}

// after is what client id sent about the dropped PUBREL's packet id after it.
func (h *dropFirstPubrel) after(id string) (uint16, []readPacket) {
	h.mu.Lock()
	defer h.mu.Unlock()
	pid, ok := h.dropped[id]
	if !ok {
		return 0, nil
	}
	var out []readPacket
	seen := false
	for _, p := range h.read[id] {
		if seen && p.pid == pid {
			out = append(out, p)
		}
		seen = seen || (p.typ == packets.Pubrel && p.pid == pid)
	}
	return pid, out
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

// dropAtFirstPubrec is a broker that hangs up on a client (whose id starts
// with prefix) when it answers its first QoS 2 PUBLISH with PUBREC: the
// PUBREL never comes, and the packet id stays marked on the client's side.
type dropAtFirstPubrec struct {
	mochi.HookBase
	prefix  string
	dropped atomic.Bool
}

func (h *dropAtFirstPubrec) ID() string { return "drop-at-first-pubrec" }

func (h *dropAtFirstPubrec) Provides(b byte) bool { return b == mochi.OnPacketRead }

func (h *dropAtFirstPubrec) OnPacketRead(cl *mochi.Client, pk packets.Packet) (packets.Packet, error) {
	if pk.FixedHeader.Type == packets.Pubrec && strings.HasPrefix(cl.ID, h.prefix) && h.dropped.CompareAndSwap(false, true) {
		cl.Stop(errors.New("dropped before PUBREL"))
		return pk, packets.ErrRejectPacket
	}
	return pk, nil
}

// dropEveryTenth is a broker that routes nothing of every tenth benchmark
// message (sequence numbers 9, 19, ...), silently, as a QoS 0 broker under
// pressure may: the subscribers see a gap before the next one.
type dropEveryTenth struct{ mochi.HookBase }

func (h *dropEveryTenth) ID() string { return "drop-every-tenth" }

func (h *dropEveryTenth) Provides(b byte) bool { return b == mochi.OnPublish }

func (h *dropEveryTenth) OnPublish(_ *mochi.Client, pk packets.Packet) (packets.Packet, error) {
	if len(pk.Payload) >= 7 && binary.BigEndian.Uint32(pk.Payload[3:7])%10 == 9 {
		return pk, packets.ErrRejectPacket
	}
	return pk, nil
}
