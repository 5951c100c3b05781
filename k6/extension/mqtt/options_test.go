package mqtt

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"testing"
)

func TestOptionErrorsNameTheOption(t *testing.T) {
	o := newOpts("PublisherGroup", map[string]any{"qos": int64(3), "rate": int64(-1), "url": "http://x", "colour": "red"})
	o.qos("qos", 0)
	o.num("rate", 0, 0, 1e9)
	readConnConfig(o)
	err := o.done()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`"qos" must be between 0 and 2`, `"rate" must be >= 0`, `unknown scheme "http"`, `unknown option "colour"`} {
		if !contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// The module lowers the GC target for the generator, unless GOGC is set.
func TestGCTargetIsLoweredUnlessGOGCIsSet(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set: the module leaves it")
	}
	newTestVU(t)
	got := debug.SetGCPercent(100)
	debug.SetGCPercent(got)
	if got != generatorGCPercent {
		t.Fatalf("GC percent %d, want %d", got, generatorGCPercent)
	}
}

// A group's tags are k6 tags on its samples; the low-level client takes
// tags in its constructor only, and nothing takes a list of servers: those
// are refused by name instead of being silently dropped.
func TestTagsReachSamplesAndUnsupportedOptionsAreRefused(t *testing.T) {
	addr := startMosquitto(t)
	vu := newTestVU(t)
	vu.run(t, fmt.Sprintf(`
const pubs = new PublisherGroup({ url: 'mqtt://%s', topic: 'tags/{i}', tags: { phase: 'warmup' } });
await pubs.connect();
await pubs.publish({ count: 10, rate: 1000 });
pubs.close();`, addr))
	if got := vu.sampleTags("mqtt_publishes"); got["phase"] != "warmup" || got["role"] != "pub" {
		t.Fatalf("mqtt_publishes tags %v, want phase=warmup role=pub", got)
	}
	// Run-wide gauges carry the test's tags, not some group's.
	if got := vu.sampleTags("mqtt_target_rate"); got == nil || got["phase"] != "" {
		t.Fatalf("mqtt_target_rate tags %v: want the test's tags only", got)
	}
	for _, c := range []struct{ js, want string }{
		{`new PublisherGroup({ url: 'mqtt://` + addr + `', topic: 't', servers: ['mqtt://a', 'mqtt://b'] })`, `option "servers" is not supported`},
		{`new SubscriberGroup({ url: 'mqtt://` + addr + `', topic: 't', tags: { nested: { a: 1 } } })`, `option "tags" values must be strings`},
		{`new Client({ servers: ['mqtt://a'] })`, `option "servers" is not supported`},
		{`await new Client().publishAsync('t', 'x', { tags: { a: 'b' } })`, `option "tags" is not supported: tags go in the Client constructor`},
		{`await new Client().subscribeAsync('t', { tags: { a: 'b' } })`, `option "tags" is not supported: tags go in the Client constructor`},
		{`await new Client({ tags: { a: 'b' } }).connectAsync('mqtt://` + addr + `', { tags: { c: 'd' } })`, `option "tags" go in the Client constructor`},
	} {
		// A VU each: an aborted VU's event loop is not meant to run again
		// (k6 stops the test there).
		if msg := newTestVU(t).runExpectingFailure(t, c.js); !strings.Contains(msg, c.want) {
			t.Errorf("%s: error %q lacks %q", c.js, msg, c.want)
		}
	}
}

// Two tests in one process (two root modules) keep their own counts and
// histograms: nothing the extension counts is package-level.
func TestTwoTestsInOneProcessDoNotShareState(t *testing.T) {
	addr := startMosquitto(t)
	first, second := newTestVU(t), newTestVU(t)
	first.run(t, fmt.Sprintf(`
const pubs = new PublisherGroup({ url: 'mqtt://%s', topic: 'apart/{i}' });
await pubs.connect();
await pubs.publish({ count: 10, rate: 1000 });
pubs.close();`, addr))
	r := second.run(t, `result = stats();`)
	if n := r["counters"].(map[string]any)["mqtt_publishes"].(float64); n != 0 {
		t.Fatalf("the second test sees %v publishes of the first", n)
	}
	if n := r["mqtt_send_lag"].(map[string]any)["count"].(float64); n != 0 {
		t.Fatalf("the second test's send-lag histogram holds %v samples of the first", n)
	}
}

// A mistake in the script's options stops the whole test, as
// exec.test.abort() does: a try/catch around it cannot turn it into a run
// that goes on without the load it was written to make.
func TestInvalidOptionsAbortTheTestEvenWhenCaught(t *testing.T) {
	for _, js := range []string{
		`try { new PublisherGroup({ topic: 't/{i}', qos: 7 }) } catch (e) {} var wentOn = true;`,
		`try { new SubscriberGroup({ topic: 't', colour: 'red' }) } catch (e) {} var wentOn = true;`,
		`try { new Client({ keepalive: -1 }) } catch (e) {} var wentOn = true;`,
	} {
		msg := newTestVU(t).runExpectingFailure(t, js)
		if !strings.Contains(msg, "test aborted") {
			t.Errorf("%s: %q is not an abort", js, msg)
		}
	}
}
