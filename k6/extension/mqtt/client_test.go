package mqtt

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
)

// dropOnPublish is a broker that hangs up on a client instead of
// acknowledging its publish.
type dropOnPublish struct{ mochi.HookBase }

func (h *dropOnPublish) ID() string { return "drop-on-publish" }

func (h *dropOnPublish) Provides(b byte) bool { return b == mochi.OnPublish }

func (h *dropOnPublish) OnPublish(cl *mochi.Client, pk packets.Packet) (packets.Packet, error) {
	cl.Stop(errors.New("dropped before the ack"))
	return pk, nil
}

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
