package mqtt

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mochi-mqtt/server/v2/listeners"
)

// A QoS 1 publish whose connection is lost before the PUBACK is not
// acknowledged: publishAsync rejects, and the publish counts as failed.
func TestPublishCutOffBeforeItsAckRejects(t *testing.T) {
	addr, srv := startMochi(t, listeners.Config{})
	if err := srv.AddHook(new(dropOnPublish), nil); err != nil {
		t.Fatal(err)
	}
	vu := newTestVU(t)
	msg := vu.runExpectingFailure(t, fmt.Sprintf(`
const c = new Client({ client_id: 'dropped', reconnect: false });
await c.connectAsync('mqtt://%s');
try { await c.publishAsync('t', 'x', { qos: 1 }); } finally { await c.endAsync(); }`, addr))
	if !strings.Contains(msg, "not connected") {
		t.Fatalf("publishAsync: %q, want a rejection for the lost connection", msg)
	}
	r := vu.run(t, `result = stats().counters;`)
	if r["mqtt_publish_failures"].(float64) != 1 || r["mqtt_publishes"].(float64) != 0 {
		t.Fatalf("counters %v: want 1 failed publish, none published", r)
	}
}
