package mqtt

import (
	"fmt"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/listeners"
)

// A disconnect storm is counted as what it is: initial connection failures,
// disconnects, reconnect attempts and successful reconnects each on their
// own and exactly, so that the connection success rate (about the first
// connections) is not diluted by redials; every outage window closes once
// every connection is back.
func TestDisconnectStormCountsEachConnectionEventOnItsOwn(t *testing.T) {
	const clients, drops = 4, 2 // client 3 is refused for good: 3 live through the storm
	addr, _ := startMochiWith(t, listeners.Config{}, nil, newDisconnectStorm(drops, "k6-pub-3"))
	vu := newTestVU(t)
	vu.run(t, fmt.Sprintf(`
globalThis.pubs = new PublisherGroup({ url: 'mqtt://%s', count: %d, topic: 'storm/{i}', qos: 1,
  reconnect_backoff_min: '10ms', reconnect_backoff_max: '40ms' });
await pubs.connect();`, addr, clients))
	const live = clients - 1
	var c map[string]any
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := vu.run(t, `result = { c: stats().counters, up: pubs.stats().connected };`)
		c = r["c"].(map[string]any)
		if (c["mqtt_reconnects"].(float64) == live*drops && r["up"].(float64) == live) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := vu.run(t, `pubs.close(); result = { c: stats().counters, outages: outages() };`)
	c = r["c"].(map[string]any)
	want := map[string]float64{
		"mqtt_connects":           live,
		"mqtt_connect_failures":   1,
		"mqtt_disconnects":        live * drops,
		"mqtt_reconnect_attempts": 2 * live * drops, // one refused, one accepted per drop
		"mqtt_reconnects":         live * drops,
	}
	for name, n := range want {
		if got, _ := c[name].(float64); got != n {
			t.Errorf("%s = %v, want %v (counters %v)", name, c[name], n, c)
		}
	}
	outages := r["outages"].([]any)
	if len(outages) == 0 {
		t.Fatal("no outage window for a disconnect storm")
	}
	for _, o := range outages {
		w := o.(map[string]any)
		if w["end_ms"] == nil || w["max_down"].(float64) < 1 || w["max_down"].(float64) > live ||
			w["duration_s"].(float64) <= 0 {
			t.Errorf("outage %v: want it ended (every client came back), 1..%d down, a positive duration", w, live)
		}
	}
}
