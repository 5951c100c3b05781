package mqtt

import (
	"fmt"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
)

// With a persistent session (3.1.1: clean_session false; 5: a session
// expiry), a QoS 1/2 message whose connection broke before the broker
// acknowledged it goes again after the reconnect, with DUP and its original
// sequence number (MQTT-4.4.0-1): nothing is lost, nothing counted twice,
// and the messages due while the connection was down are failed publishes.
func TestUnacknowledgedPublishIsResentWithDupAfterSessionResumes(t *testing.T) {
	sessions := map[string]string{
		"v3.1.1/clean_session=false": `version: '3.1.1', clean_session: false`,
		"v5/session_expiry=60":       `version: '5', session_expiry: 60`,
	}
	for name, session := range sessions {
		for _, qos := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/qos%d", name, qos), func(t *testing.T) {
				hook := new(dropFirstPublish)
				addr, _ := startMochiWith(t, listeners.Config{}, nil, hook)
				vu := newTestVU(t)
				r := vu.run(t, fmt.Sprintf(`
const o = { url: 'mqtt://%s', count: 2, topic: 'dup/{i}', qos: %d, %s, reconnect_backoff_min: '20ms', reconnect_backoff_max: '40ms' };
const subs = new SubscriberGroup(o);
await subs.connect();
const pubs = new PublisherGroup(o);
await pubs.connect();
const p = await pubs.publish({ count: 60, rate: 200, drain: '5s' });
const s = await subs.drain({ expected: p.sent, idle: '2s', timeout: '10s' });
pubs.close(); subs.close();
result = { p, s, c: stats().counters };`, addr, qos, session))
				p, s, c := r["p"].(map[string]any), r["s"].(map[string]any), r["c"].(map[string]any)
				if p["sent"].(float64)+p["failed"].(float64) != 60 || p["sent"].(float64) < 40 {
					t.Fatalf("publish %v: want 60 sent or failed, most sent", p)
				}
				if s["unique"].(float64) != p["sent"].(float64) || s["lost"].(float64) != 0 || s["duplicates"].(float64) != 0 {
					t.Fatalf("delivery %v for %v sent: want every message once", s, p["sent"])
				}
				// One re-send per publisher at least: what it wrote after the
				// dropped one before it saw the connection close goes again too.
				if c["mqtt_resends"].(float64) < 2 || c["mqtt_reconnects"].(float64) < 2 {
					t.Fatalf("counters %v: want a re-send per publisher after their reconnects", c)
				}
				// Per publisher: the first PUBLISH (seq 0) without DUP, dropped;
				// the next one the broker sees is seq 0 again, with DUP.
				first := map[string][]seenPublish{}
				for _, sp := range hook.publishes() {
					if len(first[sp.client]) < 2 {
						first[sp.client] = append(first[sp.client], sp)
					}
				}
				for id, two := range first {
					if len(two) != 2 || two[0] != (seenPublish{id, false, 0}) || two[1] != (seenPublish{id, true, 0}) {
						t.Errorf("%s: the broker saw %+v, want seq 0, then seq 0 again with DUP", id, two)
					}
				}
			})
		}
	}
}

// A group's first connect starts a new session even when sessions persist:
// messages a broker queued for an earlier run's session of the same client
// id would otherwise be delivered into this run's accounting.
func TestGroupsDoNotResumeAnEarlierRunsSession(t *testing.T) {
	for name, session := range map[string]string{
		"v3.1.1": `version: '3.1.1', clean_session: false`,
		"v5":     `version: '5', clean_session: false, session_expiry: 60`,
	} {
		t.Run(name, func(t *testing.T) {
			addr := startMosquitto(t)
			vu := newTestVU(t)
			r := vu.run(t, fmt.Sprintf(`
const o = { url: 'mqtt://%s', topic: 'old/{i}', qos: 1, %s };
const earlier = new SubscriberGroup(o);
await earlier.connect();
earlier.close();
const pubs = new PublisherGroup(o);
await pubs.connect();
await pubs.publish({ count: 5, rate: 1000 });
pubs.close();
const subs = new SubscriberGroup(o);
await subs.connect();
await new Promise((r) => setTimeout(r, 500));
result = subs.stats();
subs.close();`, addr, session))
			if r["received"].(float64) != 0 {
				t.Fatalf("the new group received %v messages queued for the earlier session", r["received"])
			}
		})
	}
}

// A QoS 2 message whose PUBREC came before the connection broke is not
// published again after the session resumes: its PUBREL goes again
// (MQTT-4.4.0-1), the exchange completes, and it is delivered once.
func TestPubrelIsResentAfterSessionResumes(t *testing.T) {
	for name, session := range map[string]string{
		"v3.1.1": `version: '3.1.1', clean_session: false`,
		"v5":     `version: '5', session_expiry: 60`,
	} {
		t.Run(name, func(t *testing.T) {
			hook := new(dropFirstPubrel)
			addr, _ := startMochiWith(t, listeners.Config{}, nil, hook)
			vu := newTestVU(t)
			r := vu.run(t, fmt.Sprintf(`
const o = { url: 'mqtt://%s', count: 2, topic: 'rel/{i}', qos: 2, %s, reconnect_backoff_min: '20ms', reconnect_backoff_max: '40ms' };
const subs = new SubscriberGroup(o);
await subs.connect();
const pubs = new PublisherGroup(Object.assign({ client_id: 'rel-pub-{i}' }, o));
await pubs.connect();
const p = await pubs.publish({ count: 40, rate: 200, drain: '5s' });
const s = await subs.drain({ expected: p.sent, idle: '2s', timeout: '10s' });
pubs.close(); subs.close();
result = { p, s, c: stats().counters, acked: stats().mqtt_puback_duration.count };`, addr, session))
			p, s, c := r["p"].(map[string]any), r["s"].(map[string]any), r["c"].(map[string]any)
			if s["unique"].(float64) != p["sent"].(float64) || s["lost"].(float64) != 0 || s["duplicates"].(float64) != 0 {
				t.Fatalf("delivery %v for %v sent: want every message once", s, p["sent"])
			}
			if c["mqtt_publish_failures"].(float64) != p["failed"].(float64) || r["acked"].(float64) != p["sent"].(float64) {
				t.Fatalf("counters %v, completed %v: want every message sent completed (PUBCOMP)", c, r["acked"])
			}
			for _, id := range []string{"rel-pub-0", "rel-pub-1"} {
				pid, next := hook.after(id)
				if len(next) == 0 || next[0].typ != packets.Pubrel {
					t.Errorf("%s: after the dropped PUBREL of packet id %d the broker read %+v, want PUBREL again", id, pid, next)
				}
			}
		})
	}
}

// A group's persistent session ends when the group closes: left on the
// broker, it would keep its subscriptions and queue every later run's
// messages (and the next run, with other client ids, would never resume it).
func TestPersistentGroupsLeaveNoSessionBehind(t *testing.T) {
	for name, session := range map[string]string{
		"v3.1.1/clean_session=false": `version: '3.1.1', clean_session: false`,
		"v5/session_expiry=60":       `version: '5', session_expiry: 60`,
	} {
		t.Run(name, func(t *testing.T) {
			addr, srv := startMochiWith(t, listeners.Config{}, nil)
			vu := newTestVU(t)
			vu.run(t, fmt.Sprintf(`
const o = { url: 'mqtt://%s', count: 2, topic: 'left/{i}', qos: 1, %s };
const subs = new SubscriberGroup(o);
await subs.connect();
const pubs = new PublisherGroup(o);
await pubs.connect();
await pubs.publish({ count: 10, rate: 100 });
pubs.close(); subs.close();`, addr, session))
			deadline := time.Now().Add(3 * time.Second)
			for srv.Clients.Len() > 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if n := srv.Clients.Len(); n != 0 {
				t.Fatalf("%d sessions left on the broker after the groups closed", n)
			}
		})
	}
}
