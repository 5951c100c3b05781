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
			before := adopted.Load()
			r := vu.run(t, fmt.Sprintf(`
const o = { url: 'mqtt://%s', count: 2, topic: 'big/{i}', qos: 1 };
const subs = new SubscriberGroup(o);
await subs.connect();
const pubs = new PublisherGroup(Object.assign({}, o, { payload_size: %d }));
await pubs.connect();
const p = await pubs.publish({ count: 300, rate: 3000 });
const s = await subs.drain({ expected: p.sent, idle: '2s', timeout: '30s' });
pubs.close(); subs.close();
result = { p, s, stats: stats() };`, addr, size))
			if adopted.Load()-before != 2 {
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
// 2,000 msg/s looked at every 10 ms shares nearly every read; with one
// message per 20 ms, almost none does.
func TestPollerCountsSharedReads(t *testing.T) {
	addr := startMosquitto(t)
	for _, c := range []struct {
		rate     int
		min, max float64
	}{{2000, 1500, 2000}, {50, 0, 5}} {
		t.Run(fmt.Sprint(c.rate), func(t *testing.T) {
			counters := polledRun(t, addr, 1, "1s", c.rate)["counters"].(map[string]any)
			if n, _ := counters["mqtt_receives_shared_read"].(float64); n < c.min || n > c.max {
				t.Fatalf("%v messages counted as sharing a read, want %v..%v (%v)", n, c.min, c.max, counters)
			}
		})
	}
}

// splitPacket tells a whole packet from one still arriving (even inside its
// length bytes) and from a malformed length.
func TestSplitPacket(t *testing.T) {
	big := append([]byte{0x30, 0x80, 0x01}, make([]byte, 128)...) // remaining length 128: two length bytes
	for _, c := range []struct {
		name    string
		b       []byte
		size    int
		bodyLen int
		bad     bool
	}{
		{"empty", nil, 0, 0, false},
		{"type byte only", []byte{0x30}, 0, 0, false},
		{"length cut", big[:2], 0, 0, false},
		{"body cut", big[:100], 0, 0, false},
		{"whole", big, 131, 128, false},
		{"whole and more", append(append([]byte(nil), big...), 0xd0, 0x00), 131, 128, false},
		{"pingresp", []byte{0xd0, 0x00}, 2, 0, false},
		{"five length bytes", []byte{0x30, 0xff, 0xff, 0xff, 0xff, 0x01}, 0, 0, true},
	} {
		_, body, size, err := splitPacket(c.b)
		if (err != nil) != c.bad || size != c.size || len(body) != c.bodyLen {
			t.Errorf("%s: size %d body %d err %v; want size %d body %d malformed %v", c.name, size, len(body), err, c.size, c.bodyLen, c.bad)
		}
		if !c.bad && c.size == 0 && len(c.b) >= 3 && packetSize(c.b) != 131 {
			t.Errorf("%s: packetSize %d, want 131", c.name, packetSize(c.b))
		}
	}
}
