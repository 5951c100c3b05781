package testbroker

import (
	"sync"
	"time"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Reorder is a broker that delivers out of order, as NanoMQ 0.23.10 did
// under QoS 1 load (issue 27): of every Every messages published to a
// topic it acknowledges one, holds it back, and routes it after the next
// message of that topic, so that subscribers receive the later one first.
// A held message with no successor within Hold is routed anyway (nothing
// is lost). It needs the server's inline client (mochi.Options.InlineClient).
type Reorder struct {
	mochi.HookBase
	Server *mochi.Server
	Every  int
	Hold   time.Duration

	mu   sync.Mutex
	seen map[string]int
	held map[string]*time.Timer
	pks  map[string]packets.Packet
}

// ID names the hook.
func (h *Reorder) ID() string { return "reorder" }

// Provides says which events the hook handles.
func (h *Reorder) Provides(b byte) bool { return b == mochi.OnPublish || b == mochi.OnPublished }

// OnPublish holds every Every-th message of a topic: acknowledged, not routed.
func (h *Reorder) OnPublish(cl *mochi.Client, pk packets.Packet) (packets.Packet, error) {
	if cl.Net.Inline || h.Every < 2 {
		return pk, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen == nil {
		h.seen, h.held, h.pks = map[string]int{}, map[string]*time.Timer{}, map[string]packets.Packet{}
	}
	h.seen[pk.TopicName]++
	if _, busy := h.pks[pk.TopicName]; busy || h.seen[pk.TopicName]%h.Every != 0 {
		return pk, nil
	}
	topic := pk.TopicName
	h.pks[topic] = pk.Copy(false)
	h.held[topic] = time.AfterFunc(h.Hold, func() { h.release(topic) })
	return pk, packets.CodeSuccessIgnore
}

// OnPublished routes the held message of the topic after the one just routed.
func (h *Reorder) OnPublished(cl *mochi.Client, pk packets.Packet) {
	if cl.Net.Inline || pk.Ignore {
		return
	}
	h.release(pk.TopicName)
}

func (h *Reorder) release(topic string) {
	h.mu.Lock()
	pk, ok := h.pks[topic]
	if ok {
		h.held[topic].Stop()
		delete(h.pks, topic)
		delete(h.held, topic)
	}
	h.mu.Unlock()
	if ok {
		_ = h.Server.Publish(topic, pk.Payload, false, pk.FixedHeader.Qos)
	}
}
