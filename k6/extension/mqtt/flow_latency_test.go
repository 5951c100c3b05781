package mqtt

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/listeners"
)

// Each flow's pub-to-sub latency goes out every second under its flow's
// name (Grafana's latency by part), and the run's stays the run's: no
// flow tag on mqtt_latency_1s, whose series every flow's messages share.
func TestEachFlowsLatencyIsASeriesOfItsOwn(t *testing.T) {
	addr, _ := startMochiWith(t, listeners.Config{}, nil)
	vu := newTestVU(t)
	vu.run(t, fmt.Sprintf(`
for (const [i, flow] of ['a', 'b'].entries()) {
  const o = { url: 'mqtt://%s', count: 1, id_base: i, topic: flow + '/{i}', flow, qos: 1 };
  const subs = new SubscriberGroup(o);
  await subs.connect();
  const pubs = new PublisherGroup(o);
  await pubs.connect();
  const p = await pubs.publish({ count: 30, rate: 20 });
  await subs.drain({ expected: p.sent, idle: '1s' });
  pubs.close(); subs.close();
}`, addr))
	want := map[string]bool{}
	for _, flow := range []string{"a", "b"} {
		for _, stat := range []string{"avg", "p50", "p99", "max"} {
			want[flow+" "+stat] = true
		}
	}
	var got map[string]bool
	for range 100 { // the sample channel is read by another goroutine
		got = map[string]bool{}
		for _, tags := range vu.allTags("mqtt_flow_latency_1s") {
			got[tags["flow"]+" "+tags["stat"]] = true
		}
		if reflect.DeepEqual(got, want) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mqtt_flow_latency_1s series %v, want %v", got, want)
	}
	run := vu.allTags("mqtt_latency_1s")
	if len(run) == 0 {
		t.Fatal("no mqtt_latency_1s samples")
	}
	for _, tags := range run {
		if _, ok := tags["flow"]; ok {
			t.Fatalf("mqtt_latency_1s tagged with a flow: %v", tags)
		}
	}
}
