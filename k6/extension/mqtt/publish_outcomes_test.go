package mqtt

import (
	"fmt"
	"testing"

	"github.com/mochi-mqtt/server/v2/listeners"
)

// Every QoS 1/2 message a group sends ends as exactly one of: published
// (acknowledged), rejected (refused by a reason code), failed. These tests
// make a broker refuse or drop, and check that nothing vanishes and nothing
// refused counts as published or as lost.

// A PUBACK with reason 0x87 is a rejected publish: not published, not a
// failure, and not expected at the subscribers, so the messages the broker
// let through are all delivered and none is lost.
func TestRefusedPublishIsRejectedNotPublishedNorLost(t *testing.T) {
	hook := new(refuseEveryOther)
	addr, _ := startMochiWith(t, listeners.Config{}, nil, hook)
	vu := newTestVU(t)
	r := vu.run(t, fmt.Sprintf(`
const o = { url: 'mqtt://%s', count: 4, topic: 'refused/{i}', qos: 1, version: 5 };
const subs = new SubscriberGroup(o);
await subs.connect();
const pubs = new PublisherGroup(o);
await pubs.connect();
const p = await pubs.publish({ count: 400, rate: 2000 });
const s = await subs.drain({ expected: p.sent - p.rejected, idle: '1s', timeout: '10s' });
pubs.close(); subs.close();
result = { p, s, c: stats().counters, acked: stats().mqtt_puback_duration.count };`, addr))
	refused := float64(hook.refused.Load())
	p, s, c := r["p"].(map[string]any), r["s"].(map[string]any), r["c"].(map[string]any)
	if refused == 0 || p["sent"].(float64) != 400 || p["rejected"] != refused {
		t.Fatalf("phase %v: want 400 sent and the %v refused as rejected", p, refused)
	}
	if c["mqtt_publish_rejected"] != refused || c["mqtt_publishes"] != 400-refused || c["mqtt_publish_failures"] != 0.0 ||
		r["acked"] != 400-refused {
		t.Fatalf("counters %v, acked %v: want %v rejected, %v published, no failure", c, r["acked"], refused, 400-refused)
	}
	if s["unique"] != 400-refused || s["lost"] != 0.0 || c["mqtt_lost"] != 0.0 {
		t.Fatalf("delivery %v, lost counter %v: want the %v accepted messages and nothing lost", s, c["mqtt_lost"], 400-refused)
	}
}

// A broker that hangs up on every QoS 2 publish (NATS's MQTT gateway does)
// gets no publish counted: what was in flight when the connection went,
// and what could not be sent while it was down, are failed publishes.
func TestPublishesInFlightOnALostConnectionAreFailures(t *testing.T) {
	addr, _ := startMochiWith(t, listeners.Config{}, nil, new(dropOnPublish))
	vu := newTestVU(t)
	r := vu.run(t, fmt.Sprintf(`
const pubs = new PublisherGroup({ url: 'mqtt://%s', count: 2, topic: 'drop/{i}', qos: 2,
  reconnect_backoff_min: '10ms', reconnect_backoff_max: '20ms' });
await pubs.connect();
const p = await pubs.publish({ count: 40, rate: 200, drain: '1s' });
pubs.close();
result = { p, c: stats().counters };`, addr))
	p, c := r["p"].(map[string]any), r["c"].(map[string]any)
	if c["mqtt_publishes"] != 0.0 || c["mqtt_publish_failures"] != 40.0 || p["missed"] != 0.0 {
		t.Fatalf("phase %v, counters %v: want all 40 messages failed, none published", p, c)
	}
}
