package mqtt

import (
	"fmt"
	"strings"
	"testing"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
)

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

// A SUBACK that grants less than the QoS asked for fails connect(), naming
// the filter and both levels; accept_downgrade measures at the granted level
// and stats() says which.
func TestSubackDowngradeFailsConnectUnlessAccepted(t *testing.T) {
	addr, _ := startMochiWith(t, listeners.Config{}, func(c *mochi.Capabilities) { c.MaximumQos = 1 })
	vu := newTestVU(t)
	msg := vu.runExpectingFailure(t, fmt.Sprintf(`
const subs = new SubscriberGroup({ url: 'mqtt://%s', topic: 'down/{i}', qos: 2, version: 5 });
try { await subs.connect(); } finally { subs.close(); }`, addr))
	for _, want := range []string{`granted QoS 1 for "down/0" where QoS 2 was asked`, "accept_downgrade"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	r := vu.run(t, fmt.Sprintf(`
const subs = new SubscriberGroup({ url: 'mqtt://%s', topic: 'down/{i}', qos: 2, version: 5, accept_downgrade: true });
await subs.connect();
result = subs.stats();
subs.close();`, addr))
	if r["granted_qos"].(float64) != 1 || r["connected"].(float64) != 1 {
		t.Fatalf("with accept_downgrade: %v, want connected and granted_qos 1", r)
	}
}

// A broker that announces no shared subscriptions is refused before any
// load, with the property named.
func TestSharedSubscriptionRefusedWhenTheBrokerSaysItHasNone(t *testing.T) {
	addr, _ := startMochiWith(t, listeners.Config{}, nil, new(noSharedSubs))
	vu := newTestVU(t)
	msg := vu.runExpectingFailure(t, fmt.Sprintf(`
const subs = new SubscriberGroup({ url: 'mqtt://%s', count: 2, topic: '$share/g/fan/#', version: 5 });
try { await subs.connect(); } finally { subs.close(); }`, addr))
	for _, want := range []string{"Shared Subscription Available = 0", `"$share/g/fan/#"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	// The same broker's plain subscriptions are fine.
	vu.run(t, fmt.Sprintf(`
const subs = new SubscriberGroup({ url: 'mqtt://%s', topic: 'plain/{i}', version: 5 });
await subs.connect();
subs.close();`, addr))
}
