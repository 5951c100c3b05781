package mqtt

import (
	"fmt"
	"testing"
)

// The poller reads into one 64 KB buffer: packets larger than it, and
// packets split across reads, are put together whole.
func TestPollerReassemblesLargeAndSplitPackets(t *testing.T) {
	addr := startMosquitto(t)
	for _, size := range []int{100, 70000, 300000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			vu := newTestVU(t)
			r := vu.run(t, fmt.Sprintf(`
const o = { url: 'mqtt://%s', count: 2, topic: 'big/{i}', qos: 1 };
const subs = new SubscriberGroup(o);
await subs.connect();
const pubs = new PublisherGroup(Object.assign({}, o, { payload_size: %d }));
await pubs.connect();
// 900 MB/s of 300 KB payloads is beyond a generator under the race
// detector: a generous max_lag sends every message late rather than miss it.
const p = await pubs.publish({ count: 300, rate: 3000, max_lag: '60s' });
const s = await subs.drain({ expected: p.sent, idle: '2s', timeout: '30s' });
pubs.close(); subs.close();
result = { p, s, stats: stats() };`, addr, size))
			if r["s"].(map[string]any)["polled_sockets"].(float64) != 2 {
				t.Fatalf("the poller did not read the subscribers")
			}
			checkExact(t, r, 300, 1)
		})
	}
}

// polledRun publishes rate msg/s for a while over count pairs whose
// subscribers are looked at every 10 ms, and returns stats().
func polledRun(t *testing.T, addr string, count int, duration string, rate int) map[string]any {
	t.Helper()
	return newTestVU(t).run(t, fmt.Sprintf(`
const o = { url: 'mqtt://%s', count: %d, topic: 'polled/{i}' };
const subs = new SubscriberGroup(Object.assign({ poll_interval: '10ms' }, o));
await subs.connect();
const pubs = new PublisherGroup(Object.assign({ payload_size: 16 }, o));
await pubs.connect();
const p = await pubs.publish({ duration: '%s', rate: %d });
await subs.drain({ expected: p.sent, idle: '1s' });
pubs.close(); subs.close();
result = stats();`, addr, count, duration, rate))
}

// The poller sleeps its interval between looks while traffic lasts, so a
// message can wait in the socket that long; it is timed by the kernel's
// receive time, not by when the poller got to it. Each connection gets a
// message every 20 ms, one per read, so the kernel time is exact; with a
// 10 ms interval a reader-side clock would put the median near 5 ms.
func TestPollerTimesMessagesByKernelReceiveTime(t *testing.T) {
	r := polledRun(t, startMosquitto(t), 4, "3s", 200)
	lat := r["mqtt_latency"].(map[string]any)
	if p50 := lat["p50"].(float64); p50 > 2 {
		t.Fatalf("median latency %.2f ms with a 10 ms poll interval: timed by the poller, not the kernel (%v)", p50, lat)
	}
}

// Messages read together are counted as such: one connection receiving
// 2,000 msg/s looked at every 10 ms shares nearly every read; one message
// at a time, each published only once the last was received, shares none.
// (Not 50 msg/s, one message per 20 ms: under the full suite's load the
// publisher's catch-up sends came two in a read, 7 times in one run, r36.)
func TestPollerCountsSharedReads(t *testing.T) {
	addr := startMosquitto(t)
	t.Run("2000 msg/s", func(t *testing.T) {
		counters := polledRun(t, addr, 1, "1s", 2000)["counters"].(map[string]any)
		if n, _ := counters["mqtt_receives_shared_read"].(float64); n < 1500 || n > 2000 {
			t.Fatalf("%v messages counted as sharing a read, want 1500..2000 (%v)", n, counters)
		}
	})
	t.Run("one at a time", func(t *testing.T) {
		r := newTestVU(t).run(t, fmt.Sprintf(`
const o = { url: 'mqtt://%s', count: 1, topic: 'lockstep/{i}' };
const subs = new SubscriberGroup(Object.assign({ poll_interval: '10ms' }, o));
await subs.connect();
const pubs = new PublisherGroup(Object.assign({ payload_size: 16 }, o));
await pubs.connect();
let s;
for (let i = 1; i <= 30; i++) {
  await pubs.publish({ count: 1, rate: 100 });
  s = await subs.drain({ expected: i, timeout: '10s' });
}
pubs.close(); subs.close();
result = { s, stats: stats() };`, addr))
		if got := r["s"].(map[string]any)["received"].(float64); got != 30 {
			t.Fatalf("received %v of 30 messages", got)
		}
		counters := r["stats"].(map[string]any)["counters"].(map[string]any)
		if n, _ := counters["mqtt_receives_shared_read"].(float64); n != 0 {
			t.Fatalf("%v messages counted as sharing a read, each read held one (%v)", n, counters)
		}
	})
}
