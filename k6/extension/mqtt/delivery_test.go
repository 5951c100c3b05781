package mqtt

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/listeners"
)

func brokers(t *testing.T) map[string]func(*testing.T) string {
	return map[string]func(*testing.T) string{
		"mochi":     func(t *testing.T) string { a, _ := startMochi(t, listeners.Config{}); return a },
		"mosquitto": func(t *testing.T) string { return startMosquitto(t) },
	}
}

// Every message published at QoS 1 and 2 is received exactly once, and the
// accounting says so; QoS 0 on loopback loses nothing either. Both readers
// are checked: the poller (the default) and a goroutine per connection.
func TestP2PDeliveryIsExact(t *testing.T) {
	for name, start := range brokers(t) {
		for _, version := range []string{"3.1.1", "5"} {
			for _, qos := range []int{0, 1, 2} {
				for _, reader := range []string{"poller", "goroutine"} {
					t.Run(fmt.Sprintf("%s/v%s/qos%d/%s", name, version, qos, reader), func(t *testing.T) {
						addr := start(t)
						vu := newTestVU(t)
						poll := ""
						if reader == "goroutine" {
							poll = "poll_interval: 0,"
						}
						r := vu.run(t, fmt.Sprintf(`
const o = { url: 'mqtt://%s', count: 5, topic: 'p2p/{i}', qos: %d, version: '%s' };
const subs = new SubscriberGroup(Object.assign({ %s }, o));
await subs.connect();
const pubs = new PublisherGroup(Object.assign({ %s }, o, { payload_size: 64 }));
await pubs.connect();
const p = await pubs.publish({ count: 2000, rate: 4000 });
const s = await subs.drain({ expected: p.sent, idle: '2s', timeout: '20s' });
const ps = pubs.stats();
pubs.close(); subs.close();
result = { p, s, ps, stats: stats() };`, addr, qos, version, poll, poll))
						if got, want := r["s"].(map[string]any)["polled_sockets"].(float64), map[string]float64{"poller": pollerSockets(5), "goroutine": 0}[reader]; got != want {
							t.Fatalf("%v sockets read by the poller, want %v", got, want)
						}
						// Publishers' sockets too, whose pacing ticks are then written
						// in one system call (QoS 2 keeps reader goroutines).
						want := map[string]float64{"poller": pollerSockets(5), "goroutine": 0}[reader]
						if qos == 2 {
							want = 0
						}
						if got := r["ps"].(map[string]any)["polled_sockets"].(float64); got != want {
							t.Fatalf("%v publisher sockets read by the poller, want %v", got, want)
						}
						checkExact(t, r, 2000, qos)
					})
				}
			}
		}
	}
}

func checkExact(t *testing.T, r map[string]any, n float64, qos int) {
	t.Helper()
	p, s := r["p"].(map[string]any), r["s"].(map[string]any)
	if p["sent"].(float64) != n || s["unique"].(float64) != n || s["lost"].(float64) != 0 || s["duplicates"].(float64) != 0 {
		t.Fatalf("sent=%v unique=%v lost=%v dups=%v", p["sent"], s["unique"], s["lost"], s["duplicates"])
	}
	lat := r["stats"].(map[string]any)["mqtt_latency"].(map[string]any)
	if lat["count"].(float64) != n || lat["p99"].(float64) <= 0 {
		t.Fatalf("latency histogram: %v", lat)
	}
	if qos > 0 {
		ack := r["stats"].(map[string]any)["mqtt_puback_duration"].(map[string]any)
		if ack["count"].(float64) != n {
			t.Fatalf("puback count %v, want %v", ack["count"], n)
		}
	}
}

// A shared subscription spreads messages over its members, none twice.
func TestSharedSubscriptionSpreadsWithoutDuplicates(t *testing.T) {
	for name, start := range brokers(t) {
		t.Run(name, func(t *testing.T) {
			addr := start(t)
			vu := newTestVU(t)
			r := vu.run(t, fmt.Sprintf(`
const subs = new SubscriberGroup({ url: 'mqtt://%s', count: 4, topic: '$share/bench/shared/#', qos: 1, version: 5 });
await subs.connect();
const pubs = new PublisherGroup({ url: 'mqtt://%s', count: 8, topic: 'shared/{i}', qos: 1, version: 5 });
await pubs.connect();
const p = await pubs.publish({ count: 4000, rate: 4000 });
const s = await subs.drain({ expected: p.sent, idle: '2s' });
pubs.close(); subs.close();
result = s;`, addr, addr))
			if r["unique"].(float64) != 4000 || r["duplicates"].(float64) != 0 || r["lost"].(float64) != 0 {
				t.Fatalf("shared: %v", r)
			}
			if r["min_per_client"].(float64) == 0 || r["max_per_client"].(float64) == 4000 {
				t.Fatalf("messages were not spread over the group: %v", r)
			}
		})
	}
}

// When the broker drops a connection, the client reconnects with backoff,
// counts it, restores its subscription and keeps receiving.
func TestReconnectAfterBrokerDrop(t *testing.T) {
	addr, srv := startMochi(t, listeners.Config{})
	vu := newTestVU(t)
	go func() {
		time.Sleep(700 * time.Millisecond)
		if cl, ok := srv.Clients.Get("k6-sub-0"); ok {
			cl.Stop(fmt.Errorf("test drop"))
		}
	}()
	r := vu.run(t, fmt.Sprintf(`
const subs = new SubscriberGroup({ url: 'mqtt://%s', count: 1, topic: 'rc/{i}', qos: 1, reconnect_backoff_min: '50ms' });
await subs.connect();
const pubs = new PublisherGroup({ url: 'mqtt://%s', count: 1, topic: 'rc/{i}', qos: 1 });
await pubs.connect();
await pubs.publish({ duration: '2s', rate: 200 });
const s = await subs.drain({ idle: '1s' });
pubs.close(); subs.close();
result = { s, c: stats().counters };`, addr, addr))
	c := r["c"].(map[string]any)
	if c["mqtt_reconnects"].(float64) < 1 || c["mqtt_disconnects"].(float64) < 1 {
		t.Fatalf("no reconnect counted: %v", c)
	}
	s := r["s"].(map[string]any)
	// Messages published while the subscriber was away are lost (clean
	// session); those after the reconnect arrive.
	if s["unique"].(float64) < 200 || s["lost"].(float64) == 0 {
		t.Fatalf("after reconnect: %v", s)
	}
}

// Invalid options fail before anything connects, naming the option.
func TestInvalidOptionsFailBeforeConnecting(t *testing.T) {
	addr, srv := startMochi(t, listeners.Config{})
	for _, c := range []struct{ js, want string }{
		{`new PublisherGroup({ url: 'mqtt://` + addr + `', topic: 't', qos: 3 })`, `"qos" must be between 0 and 2`},
		{`new PublisherGroup({ url: 'mqtt://` + addr + `', topic: 't', rate: -5 })`, `"rate" must be >= 0`},
		{`new SubscriberGroup({ url: 'mqtt://` + addr + `', topic: 't', version: 4.5 })`, `unsupported MQTT version 4.5`},
		{`new SubscriberGroup({ url: 'mqtt//bad', topic: 't' })`, `option "url"`},
		{`new SubscriberGroup({ url: 'mqtt://` + addr + `', topic: 't', poll_interval: '50ms' })`, `option "poll_interval" must be at most 10ms`},
		{`new PublisherGroup({ url: 'mqtt://` + addr + `', topic: 'a/#' })`, `no + or #`},
		{`new PublisherGroup({ url: 'mqtt://` + addr + `', topic: 't', paylod_size: 3 })`, `unknown option "paylod_size"`},
		{`new PublisherGroup({ url: 'mqtt://` + addr + `', topic: 't', password: 'x' })`, `option "password" needs a username in MQTT 3.1.1`},
	} {
		// A VU each: invalid options abort the test (abortTest), and an
		// aborted VU's event loop is not meant to run again.
		msg := newTestVU(t).runExpectingFailure(t, c.js)
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s: error %q lacks %q", c.js, msg, c.want)
		}
	}
	if n := atomic.LoadInt64(&srv.Info.ClientsTotal); n != 0 {
		t.Fatalf("%d clients connected during option validation", n)
	}
	// An unreachable broker: a clear error that names the fix.
	msg := newTestVU(t).runExpectingFailure(t, `const g = new PublisherGroup({ url: 'mqtt://`+freePort(t)+`', topic: 't' }); await g.connect();`)
	if !strings.Contains(msg, "nothing listens on") {
		t.Fatalf("unreachable broker: %q", msg)
	}
}

// The low-level client follows the MQTT.js-like event API.
func TestClientEmitsConnectMessageEnd(t *testing.T) {
	addr := startMosquitto(t)
	vu := newTestVU(t)
	r := vu.run(t, fmt.Sprintf(`
const events = [];
await new Promise((resolve, reject) => {
  const c = new Client({ client_id: 'events-test' });
  // end() only once the publish is acknowledged too: the message can
  // arrive before its PUBACK, and a publish cut off by end() is not acked.
  let acked = false, got = false;
  const finish = () => { if (acked && got) c.end(); };
  c.on('connect', async () => {
    events.push('connect');
    await c.subscribeAsync('greeting', { qos: 1 });
    await c.publishAsync('greeting', 'hello', { qos: 1 });
    acked = true;
    finish();
  });
  c.on('message', (topic, payload) => {
    events.push(topic + ':' + String.fromCharCode.apply(null, new Uint8Array(payload)));
    got = true;
    finish();
  });
  c.on('end', () => { events.push('end'); resolve(); });
  c.on('error', (e) => reject(e.message));
  c.connect('mqtt://%s');
});
result = { events };`, addr))
	got := fmt.Sprint(r["events"])
	if got != "[connect greeting:hello end]" {
		t.Fatalf("events %s", got)
	}
}

// Closing leaves no goroutine behind: readers, reconnect loops, reporter.
func TestNoGoroutineLeak(t *testing.T) {
	addr := startMosquitto(t)
	before := runtime.NumGoroutine()
	vu := newTestVU(t)
	vu.run(t, fmt.Sprintf(`
const subs = new SubscriberGroup({ url: 'mqtt://%s', count: 50, topic: 'leak/{i}' });
await subs.connect();
const pubs = new PublisherGroup({ url: 'mqtt://%s', count: 50, topic: 'leak/{i}', qos: 1 });
await pubs.connect();
await pubs.publish({ count: 500, rate: 5000 });
await subs.drain({ expected: 500 });
pubs.close(); subs.close();`, addr, addr))
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+3 {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines before, %d after close:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

// max_lag_ms is the phase's own largest send lag, not the process's: a
// phase at a low rate after a late one reports only its own lag.
func TestPhaseMaxLagIsThePhases(t *testing.T) {
	addr := startMosquitto(t)
	vu := newTestVU(t)
	r := vu.run(t, fmt.Sprintf(`
const pubs = new PublisherGroup({ url: 'mqtt://%s', count: 1, topic: 'lag/{i}' });
await pubs.connect();
const late = await pubs.publish({ rate: 1000, duration: '1s', batch_interval: '200ms' });
const calm = await pubs.publish({ rate: 100, duration: '1s', batch_interval: '1ms' });
pubs.close();
result = { late: late.max_lag_ms, calm: calm.max_lag_ms };`, addr))
	late, calm := r["late"].(float64), r["calm"].(float64)
	// A process-wide maximum would give the calm phase the late one's lag or
	// more; its own stays well below it, even on a busy machine (a run drew 75
	// ms at a load average of 10, where a fixed 50 ms bound failed).
	if late < 150 || calm >= 0.75*late {
		t.Fatalf("max_lag_ms late=%v calm=%v: want the late phase >= 150 ms, the calm one its own (< 3/4 of it)", late, calm)
	}
}

// pollerSockets is how many of n plain-TCP subscriber sockets a poller takes:
// all of them on Linux, none elsewhere (goroutine readers).
func pollerSockets(n float64) float64 {
	if runtime.GOOS == "linux" {
		return n
	}
	return 0
}

// A QoS 2 subscriber that reconnects with a new session forgets the packet
// ids of the old one's unfinished flows: the broker numbers the new
// session's messages from scratch, and the exactly-once check must not
// swallow a new message that reuses an old id.
func TestQoS2SubscriberDeliversNewMessagesAfterACleanReconnect(t *testing.T) {
	addr, _ := startMochiWith(t, listeners.Config{}, nil, &dropAtFirstPubrec{prefix: "q2sub"})
	vu := newTestVU(t)
	r := vu.run(t, fmt.Sprintf(`
const o = { url: 'mqtt://%s', topic: 'q2drop', qos: 2, reconnect_backoff_min: '20ms', reconnect_backoff_max: '40ms' };
const subs = new SubscriberGroup(Object.assign({ client_id: 'q2sub-{i}' }, o));
await subs.connect();
const pubs = new PublisherGroup(Object.assign({ client_id: 'q2pub-{i}' }, o));
await pubs.connect();
await pubs.publish({ count: 1, rate: 10 });
await subs.drain({ idle: '500ms', timeout: '2s' }); // the drop, and the reconnect (20-40 ms)
await pubs.publish({ count: 5, rate: 20 });
result = await subs.drain({ expected: 6, idle: '1s', timeout: '5s' });
pubs.close(); subs.close();`, addr))
	if r["unique"].(float64) != 6 || r["lost"].(float64) != 0 {
		t.Fatalf("delivery %v: want all 6 messages, none lost", r)
	}
}
