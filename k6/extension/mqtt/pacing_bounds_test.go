package mqtt

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/listeners"
)

// A QoS 1 window that never frees holds the publisher back: what waits for
// it longer than max_lag is missed (counted, never sent, never expected),
// the phase ends on time, and the unacknowledged messages fail at close.
func TestFullWindowMissesSendsInsteadOfQueueing(t *testing.T) {
	addr, _ := startMochiWith(t, listeners.Config{}, nil, new(swallowPublishes))
	vu := newTestVU(t)
	start := time.Now()
	r := vu.run(t, fmt.Sprintf(`
const pubs = new PublisherGroup({ url: 'mqtt://%s', count: 2, topic: 'full/{i}', qos: 1, max_inflight: 3 });
await pubs.connect();
const p = await pubs.publish({ rate: 1000, duration: '1s', max_lag: '100ms', drain: '200ms' });
pubs.close();
result = { p, c: stats().counters };`, addr))
	took := time.Since(start)
	p, c := r["p"].(map[string]any), r["c"].(map[string]any)
	if p["sent"] != 6.0 || p["missed"] != 994.0 || p["missed_window"] != 994.0 || p["failed"] != 0.0 {
		t.Fatalf("phase %v: want 6 sent (two windows of 3), the other 994 missed waiting for the window", p)
	}
	if c["mqtt_missed_sends"] != 994.0 || c["mqtt_publish_failures"] != 6.0 || c["mqtt_publishes"] != 0.0 {
		t.Fatalf("counters %v: want 994 missed, the 6 unacknowledged failed at close", c)
	}
	if took > 4*time.Second {
		t.Fatalf("a 1 s phase took %v", took)
	}
}

// A rate far beyond the generator (the extension's ceiling) ends when the
// phase does, with every message sent or missed, and the heap bounded.
func TestUnreachableRateEndsOnTimeWithBoundedMemory(t *testing.T) {
	addr, _ := startMochi(t, listeners.Config{})
	vu := newTestVU(t)
	stop := make(chan struct{})
	peak := make(chan uint64, 1)
	go func() { // the heap's high-water mark while the phase runs
		var top uint64
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				peak <- top
				return
			case <-time.After(50 * time.Millisecond):
				runtime.ReadMemStats(&ms)
				top = max(top, ms.HeapInuse)
			}
		}
	}()
	start := time.Now()
	r := vu.run(t, fmt.Sprintf(`
const pubs = new PublisherGroup({ url: 'mqtt://%s', count: 4, topic: 'flood/{i}', qos: 0 });
await pubs.connect();
const t0 = Date.now();
const p = await pubs.publish({ rate: limits.rate, duration: '2s' });
const t1 = Date.now();
pubs.close();
result = { p, c: stats().counters, publish_ms: t1 - t0, close_ms: Date.now() - t1 };`, addr))
	took := time.Since(start)
	close(stop)
	heap := <-peak
	p, c := r["p"].(map[string]any), r["c"].(map[string]any)
	want := 2 * float64(maxRate)
	if got := p["sent"].(float64) + p["missed"].(float64) + p["failed"].(float64); got != want || p["missed"].(float64) == 0 ||
		p["missed_window"] != 0.0 {
		t.Fatalf("phase %v: want sent + missed + failed = %v, some missed by the scheduler (QoS 0: no window)", p, want)
	}
	if c["mqtt_missed_sends"] != p["missed"] || c["mqtt_publishes"] != p["sent"] {
		t.Fatalf("counters %v disagree with the phase %v", c, p)
	}
	t.Logf("a 2 s phase at %g msg/s: %v (publish %v ms, close %v ms), %v sent, peak heap %d MiB",
		float64(maxRate), took, r["publish_ms"], r["close_ms"], p["sent"], heap>>20)
	if took > 6*time.Second {
		t.Fatalf("a 2 s phase took %v", took)
	}
	if heap > 256<<20 {
		t.Fatalf("peak heap %d MiB: the generator queued what it could not send", heap>>20)
	}
}
