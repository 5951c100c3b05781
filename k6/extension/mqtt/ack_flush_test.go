package mqtt

import (
	"fmt"
	"sync"
	"testing"
	"time"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
)

// ackTimer is a broker that times each of its packets that a client must
// answer (PUBLISH at QoS 1/2, PUBREC, PUBREL) until the client's answer
// (PUBACK, PUBREC, PUBREL, PUBCOMP) with the same packet id comes in.
type ackTimer struct {
	mochi.HookBase
	mu      sync.Mutex
	pending map[string]time.Time // client, answer type, packet id → when the broker wrote what it answers
	delays  map[string][]time.Duration
}

func (h *ackTimer) ID() string { return "ack-timer" }

func (h *ackTimer) Provides(b byte) bool { return b == mochi.OnPacketEncode || b == mochi.OnPacketRead }

// answer is the packet type a client owes for what the broker sent (0: none).
func answer(pk packets.Packet) byte {
	switch pk.FixedHeader.Type {
	case packets.Publish:
		return map[byte]byte{1: packets.Puback, 2: packets.Pubrec}[pk.FixedHeader.Qos]
	case packets.Pubrec:
		return packets.Pubrel
	case packets.Pubrel:
		return packets.Pubcomp
	}
	return 0
}

func ackKey(client string, typ byte, pid uint16) string {
	return fmt.Sprintf("%s/%d/%d", client, typ, pid)
}

// OnPacketEncode starts the clock just before the packet is written (after
// the write, the answer could come first).
func (h *ackTimer) OnPacketEncode(cl *mochi.Client, pk packets.Packet) packets.Packet {
	if a := answer(pk); a != 0 {
		h.mu.Lock()
		h.pending[ackKey(cl.ID, a, pk.PacketID)] = time.Now()
		h.mu.Unlock()
	}
	return pk
}

func (h *ackTimer) OnPacketRead(cl *mochi.Client, pk packets.Packet) (packets.Packet, error) {
	k := ackKey(cl.ID, pk.FixedHeader.Type, pk.PacketID)
	h.mu.Lock()
	if t, ok := h.pending[k]; ok {
		delete(h.pending, k)
		name := fmt.Sprintf("%s %s", cl.ID[:6], packets.PacketNames[pk.FixedHeader.Type])
		h.delays[name] = append(h.delays[name], time.Since(t))
	}
	h.mu.Unlock()
	return pk, nil
}

// At one message per second, every ack a poller's read produces goes out
// in that poll cycle: the publisher's PUBREL, the subscriber's PUBACK,
// PUBREC and PUBCOMP each reach the broker within a few milliseconds of
// what they answer, never with the next message a second later (an ack
// left for a later flush would wait for the next readable socket).
func TestAcksAreWrittenInThePollCycleThatReadWhatTheyAnswer(t *testing.T) {
	for _, qos := range []int{1, 2} {
		t.Run(fmt.Sprintf("qos%d", qos), func(t *testing.T) {
			h := &ackTimer{pending: map[string]time.Time{}, delays: map[string][]time.Duration{}}
			addr, _ := startMochiWith(t, listeners.Config{}, nil, h)
			vu := newTestVU(t)
			r := vu.run(t, fmt.Sprintf(`
const o = { url: 'mqtt://%s', count: 1, topic: 'slow/{i}', qos: %d };
const subs = new SubscriberGroup(o);
await subs.connect();
const pubs = new PublisherGroup(o);
await pubs.connect();
const p = await pubs.publish({ count: 3, rate: 1 });
const s = await subs.drain({ expected: p.sent, idle: '2s' });
pubs.close(); subs.close();
result = { s, pub: pubs.stats(), polled: s.polled_sockets };`, addr, qos))
			if s := r["s"].(map[string]any); s["unique"].(float64) != 3 || s["polled_sockets"].(float64) == 0 {
				t.Fatalf("not 3 messages through the poller: %v", s)
			}
			want := map[int][]string{1: {"k6-sub Puback"}, 2: {"k6-pub Pubrel", "k6-sub Pubrec", "k6-sub Pubcomp"}}[qos]
			h.mu.Lock()
			defer h.mu.Unlock()
			for _, name := range want {
				d := h.delays[name]
				if len(d) != 3 {
					t.Fatalf("%s: %d answers timed, want 3 (%v)", name, len(d), h.delays)
				}
				for _, x := range d {
					// One poll cycle is 100 µs plus the read; 250 ms leaves a
					// loaded machine (and -race) room, and is far from 1 s.
					if x > 250*time.Millisecond {
						t.Errorf("%s came %v after what it answers: not written in the poll cycle that read it (all: %v)", name, x, d)
					}
				}
			}
		})
	}
}
