package mqtt

import (
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
	"go.k6.io/k6/lib"
)

// Every instance of a segmented test takes k6's share of the clients as a
// consecutive range: over the whole sequence the ranges cover 0..n-1 once,
// whatever the sequence and n (no rounding loss), and one instance alone
// takes everything.
func TestShareCoversEveryClientOnceOverTheSequence(t *testing.T) {
	vu := newTestVU(t)
	opts := &vu.rt.VU.StateField.Options
	if r := vu.run(t, `result = Object.assign(share(7), { seg: segment() });`); r["count"].(float64) != 7 ||
		r["base"].(float64) != 0 || r["seg"].(map[string]any)["count"].(float64) != 1 {
		t.Fatalf("one instance: %v, want all 7 from 0", r)
	}
	for _, seqText := range []string{"0,1/4,2/4,3/4,1", "0,1/3,2/3,1", "0,1/2,3/4,1", "0,1/7,1"} {
		seq, err := lib.NewExecutionSegmentSequenceFromString(seqText)
		if err != nil {
			t.Fatal(err)
		}
		opts.ExecutionSegmentSequence = &seq
		for _, n := range []int{0, 1, 3, 4, 5, 100, 4501, 18000} {
			next := 0.0
			for i, s := range seq {
				opts.ExecutionSegment = s
				r := vu.run(t, fmt.Sprintf(`result = Object.assign(share(%d), { seg: segment() });`, n))
				if r["base"].(float64) != next {
					t.Fatalf("%s, n=%d: segment %s starts at %v, want %v", seqText, n, s, r["base"], next)
				}
				if got := r["seg"].(map[string]any); got["index"].(float64) != float64(i) || got["count"].(float64) != float64(len(seq)) {
					t.Fatalf("%s: segment() = %v, want index %d of %d", seqText, got, i, len(seq))
				}
				next += r["count"].(float64)
			}
			if next != float64(n) {
				t.Fatalf("%s, n=%d: the shares add up to %v", seqText, n, next)
			}
		}
	}
}

// local_address makes a group's connections dial from those source
// addresses, one after the other, so that several generator processes on
// one host reach one broker address from distinct addresses.
func TestLocalAddressDialsFromEachAddressInTurn(t *testing.T) {
	seen := &remoteAddrs{}
	addr, _ := startMochiWith(t, listeners.Config{}, nil, seen)
	vu := newTestVU(t)
	vu.run(t, fmt.Sprintf(`
const subs = new SubscriberGroup({ url: 'mqtt://%s', count: 4, topic: 'la/{i}', local_address: '127.0.0.2-127.0.0.3' });
await subs.connect();
subs.close();`, addr))
	got := seen.list()
	want := []string{"127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the broker saw connections from %v, want %v", got, want)
	}
	msg := vu.runExpectingFailure(t, fmt.Sprintf(`new SubscriberGroup({ url: 'mqtt://%s', topic: 'x', local_address: '127.0.0.9-127.0.0.3' });`, addr))
	if want := "local_address"; !strings.Contains(msg, want) {
		t.Fatalf("a reversed range: %q, want it to name %s", msg, want)
	}
}

// remoteAddrs records the source IP of every connection the broker accepts.
type remoteAddrs struct {
	mochi.HookBase
	mu  sync.Mutex
	ips []string
}

func (h *remoteAddrs) ID() string           { return "remote-addrs" }
func (h *remoteAddrs) Provides(b byte) bool { return b == mochi.OnConnect }
func (h *remoteAddrs) OnConnect(cl *mochi.Client, _ packets.Packet) error {
	host, _, _ := net.SplitHostPort(cl.Net.Remote)
	h.mu.Lock()
	h.ips = append(h.ips, host)
	h.mu.Unlock()
	return nil
}

func (h *remoteAddrs) list() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := append([]string(nil), h.ips...)
	sort.Strings(out)
	return out
}
