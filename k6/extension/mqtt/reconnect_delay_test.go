package mqtt

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
)

// awayAfterDrop is a broker that hangs up on each client once, right after
// its first CONNACK, and then refuses that client for `away`, as a broker
// that restarts refuses everyone until it listens again.
type awayAfterDrop struct {
	mochi.HookBase
	away    time.Duration
	mu      sync.Mutex
	dropped map[string]time.Time
}

func (h *awayAfterDrop) ID() string { return "away-after-drop" }

func (h *awayAfterDrop) Provides(b byte) bool {
	return b == mochi.OnConnect || b == mochi.OnSessionEstablished
}

func (h *awayAfterDrop) OnConnect(cl *mochi.Client, _ packets.Packet) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if at, ok := h.dropped[cl.ID]; ok && time.Since(at) < h.away {
		return errors.New("away")
	}
	return nil
}

func (h *awayAfterDrop) OnSessionEstablished(cl *mochi.Client, _ packets.Packet) {
	h.mu.Lock()
	_, done := h.dropped[cl.ID]
	if !done {
		h.dropped[cl.ID] = time.Now()
	}
	h.mu.Unlock()
	if !done {
		cl.Stop(errors.New("drop"))
	}
}

// Each reconnect is timed from its connection's drop to the CONNACK of the
// redial that worked, the refused redials and the backoff between them
// included; first connections are not reconnects and are never timed here.
func TestReconnectsAreTimedFromTheDropToTheirConnack(t *testing.T) {
	const clients, away = 4, 400 * time.Millisecond
	addr, _ := startMochiWith(t, listeners.Config{}, nil, &awayAfterDrop{away: away, dropped: map[string]time.Time{}})
	vu := newTestVU(t)
	vu.run(t, fmt.Sprintf(`
globalThis.pubs = new PublisherGroup({ url: 'mqtt://%s', count: %d, topic: 'away/{i}',
  reconnect_backoff_min: '10ms', reconnect_backoff_max: '40ms' });
await pubs.connect();`, addr, clients))
	var r map[string]any
	deadline := time.Now().Add(10 * time.Second)
	for {
		r = vu.run(t, `result = stats();`)
		if r["counters"].(map[string]any)["mqtt_reconnects"].(float64) == clients || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	vu.run(t, `pubs.close();`)
	rec := r["mqtt_reconnect_duration"].(map[string]any)
	if rec["count"].(float64) != clients {
		t.Fatalf("%v reconnects timed, want %d (one per client's drop): %v", rec["count"], clients, rec)
	}
	// The client learns of the drop a moment after the broker made it, so
	// its wait may fall short of `away` by that moment; once the broker
	// takes it back, the next redial is at most the 40 ms backoff away.
	low, high := float64((away - 20*time.Millisecond).Milliseconds()), float64((2 * away).Milliseconds())
	if rec["min"].(float64) < low || rec["max"].(float64) > high {
		t.Fatalf("reconnect delay %v ms .. %v ms, want within %v .. %v ms", rec["min"], rec["max"], low, high)
	}
	if c := r["mqtt_connack_duration"].(map[string]any)["count"].(float64); c != 2*clients {
		t.Fatalf("%v CONNACKs timed, want %d: each client's first connection and its reconnect", c, 2*clients)
	}
}
