package mqtt

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/listeners"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/internal/testbroker"
)

// A broker that takes $share/... literally grants the subscription and
// delivers nothing: under MQTT 3.1.1 (no CONNACK property to read) connect()
// probes and rejects before any load, naming the filter and the version,
// within the probe's bound; the probe's own connection counts nowhere.
func TestSharedSubscriptionProbeRefusesALiteralShareBroker(t *testing.T) {
	addr, _ := startMochiWith(t, listeners.Config{}, nil, new(testbroker.LiteralShare))
	vu := newTestVU(t)
	start := time.Now()
	msg := vu.runExpectingFailure(t, fmt.Sprintf(`
const subs = new SubscriberGroup({ url: 'mqtt://%s', count: 2, topic: '$share/g/fan/#', qos: 1 });
try { await subs.connect(); } finally { subs.close(); }`, addr))
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("the probe took %v: it must be bounded (5 s)", took)
	}
	for _, want := range []string{"seems not to support shared subscriptions over MQTT 3.1.1", `"$share/g/fan/#"`, `"fan/k6-probe"`, "MQTT 5"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	r := vu.run(t, `result = stats().counters;`)
	if r["mqtt_connects"].(float64) != 2 {
		t.Errorf("mqtt_connects = %v: want the group's 2, not the probe's connection", r["mqtt_connects"])
	}
}

// Where shared subscriptions work and the CONNACK does not announce them
// (3.1.1; mochi under 5 sends no property), the probe passes, and its
// message is not part of the run: receives, streams and latency count
// exactly the benchmark's messages.
func TestSharedSubscriptionProbePassesAndIsNotAccounted(t *testing.T) {
	for name, start := range brokers(t) {
		for _, version := range []string{"3.1.1", "5"} {
			t.Run(fmt.Sprintf("%s/v%s", name, version), func(t *testing.T) {
				addr := start(t)
				vu := newTestVU(t)
				r := vu.run(t, fmt.Sprintf(`
const subs = new SubscriberGroup({ url: 'mqtt://%s', count: 3, topic: '$share/g/fan/#', qos: 1, version: '%s' });
const c = await subs.connect();
const pubs = new PublisherGroup({ url: 'mqtt://%s', count: 4, topic: 'fan/{i}', qos: 1, version: '%s' });
await pubs.connect();
const p = await pubs.publish({ count: 400, rate: 2000 });
await new Promise((r) => setTimeout(r, 300));
const s = await subs.drain({ expected: p.sent, idle: '2s', timeout: '10s' });
pubs.close(); subs.close();
result = { c, p, s, stats: stats() };`, addr, version, addr, version))
				if got := r["c"].(map[string]any)["shared_check"]; got != "received" {
					t.Fatalf("shared_check = %v, want received", got)
				}
				s := r["s"].(map[string]any)
				if s["received"].(float64) != 400 || s["unique"].(float64) != 400 || s["lost"].(float64) != 0 {
					t.Fatalf("delivery %v: want exactly the 400 benchmark messages", s)
				}
				c := r["stats"].(map[string]any)["counters"].(map[string]any)
				lat := r["stats"].(map[string]any)["mqtt_latency"].(map[string]any)
				if c["mqtt_receives"].(float64) != 400 || lat["count"].(float64) != 400 {
					t.Fatalf("mqtt_receives %v, latency count %v: want 400", c["mqtt_receives"], lat["count"])
				}
			})
		}
	}
}
