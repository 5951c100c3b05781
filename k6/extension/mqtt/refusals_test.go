package mqtt

import (
	"fmt"
	"strings"
	"testing"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
)

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

// A QoS 2 publish answered with PUBACK is a protocol error, counted on its
// own and as a failed publish, never as acknowledged: for groups and for
// the low-level client.
func TestPubackToQoS2IsAProtocolError(t *testing.T) {
	addr, _ := startMochiWith(t, listeners.Config{}, nil, new(pubackForQoS2))
	vu := newTestVU(t)
	r := vu.run(t, fmt.Sprintf(`
const pubs = new PublisherGroup({ url: 'mqtt://%s', count: 2, topic: 'q2/{i}', qos: 2 });
await pubs.connect();
const p = await pubs.publish({ count: 20, rate: 1000, drain: '2s' });
pubs.close();
result = { p, c: stats().counters, acked: stats().mqtt_puback_duration.count };`, addr))
	c := r["c"].(map[string]any)
	if c["mqtt_protocol_errors"].(float64) != 20 || c["mqtt_publish_failures"].(float64) != 20 || r["acked"].(float64) != 0 {
		t.Fatalf("counters %v, acked %v: want 20 protocol errors, 20 failed publishes, none acknowledged", c, r["acked"])
	}
	msg := vu.runExpectingFailure(t, fmt.Sprintf(`
const c = new Client({ client_id: 'q2-client' });
await c.connectAsync('mqtt://%s');
try { await c.publishAsync('q2/x', 'x', { qos: 2 }); } finally { await c.endAsync(); }`, addr))
	if !strings.Contains(msg, "protocol error") || !strings.Contains(msg, "QoS 2") {
		t.Fatalf("publishAsync: %q, want a protocol error naming QoS 2", msg)
	}
}

// A broker without MQTT 5 refuses the CONNECT of a group that asks for it:
// the error says that MQTT 5 is what it refused, and how to go on.
func TestMQTT5RefusalSaysTheRunNeedsMQTT5(t *testing.T) {
	addr, _ := startMochiWith(t, listeners.Config{}, nil, new(mqtt311Only))
	vu := newTestVU(t)
	msg := vu.runExpectingFailure(t, fmt.Sprintf(`
const subs = new SubscriberGroup({ url: 'mqtt://%s', topic: '$share/g/fan/#', version: 5 });
try { await subs.connect(); } finally { subs.close(); }`, addr))
	for _, want := range []string{"unacceptable protocol version", "does not accept MQTT 5", "MQTT_VERSION=3.1.1"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	// The same broker takes 3.1.1.
	vu.run(t, fmt.Sprintf(`
const subs = new SubscriberGroup({ url: 'mqtt://%s', topic: 'plain/{i}' });
await subs.connect();
subs.close();`, addr))
}
