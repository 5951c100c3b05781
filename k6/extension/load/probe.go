package load

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
)

// A broker without shared subscriptions may take "$share/g/test/#" as a
// literal filter: the SUBACK grants it and nothing is ever delivered, so a
// fan-in run would lose every message and say so only at the end. MQTT 5
// brokers can announce it (Shared Subscription Available); under 3.1.1, or
// when the property is absent, the group probes before any load.

// probePublisher marks probe messages in the benchmark header: groups'
// publisher ids stay below MaxPublisher, so no benchmark message has it.
// Subscribers skip such messages: probes count nowhere (receives, latency,
// streams).
const probePublisher = MaxPublisher

// probeTimeout bounds how long a probe message may take to come back.
const probeTimeout = 5 * time.Second

// probeTopic is a topic name the shared filter (without $share/<group>/)
// matches: each wildcard level becomes a literal one.
func probeTopic(filter string) string {
	levels := strings.Split(filter, "/")
	for i, l := range levels {
		if l == "+" || l == "#" {
			levels[i] = "k6-probe"
		}
	}
	return strings.Join(levels, "/")
}

// sharedFilterTail splits "$share/<group>/<filter>" and returns <filter>.
func sharedFilterTail(f string) (string, bool) {
	rest, ok := strings.CutPrefix(f, "$share/")
	if !ok {
		return "", false
	}
	_, tail, ok := strings.Cut(rest, "/")
	return tail, ok && tail != ""
}

// checkSharedDelivery proves that the broker delivers through shared
// subscriptions, unless a member's CONNACK announced them (MQTT 5). For
// each distinct filter of the group, a short-lived connection of its own
// subscribes to the same filter in a shared group of its own (so it is the
// one member that must get the message, whichever generator process holds
// the group's members) and publishes a probe on a topic the filter
// matches. Returns "announced", "received" or "" (no shared filter).
func (g *SubscriberGroup) checkSharedDelivery() (string, int, error) {
	if len(g.shared) == 0 {
		return "", 0, nil
	}
	for _, c := range g.conns {
		if c.Up() && c.SharedSubscriptions() == 1 {
			return "announced", 0, nil
		}
	}
	seen := map[string]bool{}
	for _, subs := range g.filters {
		for _, s := range subs {
			tail, ok := sharedFilterTail(s.Filter)
			if !ok || seen[tail] {
				continue
			}
			seen[tail] = true
			if err := g.probeShared(s.Filter, tail); err != nil {
				return "", len(seen), g.refuse(err)
			}
		}
	}
	return "received", len(seen), nil
}

// probeShared runs one probe: subscribe, publish (QoS 1, so the broker took
// it), wait for the message to come back.
func (g *SubscriberGroup) probeShared(filter, tail string) error {
	cfg := *g.cfg.Conn
	cfg.Poller, cfg.Pinger, cfg.Reconnect, cfg.Will = nil, nil, false, nil
	cfg.CleanStart, cfg.SessionExpiry = true, 0
	nonce := strconv.FormatInt(nowNano()%(1<<40), 36)
	h := &probeHandler{}
	c := connection.New(&cfg, "k6-probe-"+nonce, 0, h, noRecorder{})
	ctx, cancel := context.WithTimeout(g.ctx, probeTimeout)
	defer cancel()
	defer c.Close()
	if err := c.Connect(ctx); err != nil {
		return fmt.Errorf("the shared-subscription probe could not connect: %w", err)
	}
	own := "$share/k6-probe-" + nonce + "/" + tail
	if _, err := c.Subscribe(ctx, []codec.Subscription{{Filter: own, QoS: 1}}); err != nil {
		return fmt.Errorf("the shared-subscription probe could not subscribe to %q: %w", own, err)
	}
	topic := probeTopic(tail)
	payload := make([]byte, HeaderSize)
	now := nowNano()
	putHeader(payload, probePublisher, 0, now, now)
	if _, err := c.Request(ctx, func(pid uint16) []byte {
		return codec.AppendPublishPacket(nil, cfg.Version, &codec.Publish{Topic: []byte(topic), Payload: payload, QoS: 1, PacketID: pid})
	}); err != nil {
		return fmt.Errorf("the shared-subscription probe could not publish to %q: %w", topic, err)
	}
	for !h.got.Load() {
		if !c.Up() {
			return fmt.Errorf("the broker at %s closed the shared-subscription probe's connection after it published to %q", cfg.Addr, topic)
		}
		if g.ctx.Err() != nil { // the test is ending, not the broker failing the probe
			return fmt.Errorf("the shared-subscription probe of %q stopped: %w", filter, g.ctx.Err())
		}
		if ctx.Err() != nil {
			version, fix := "MQTT 3.1.1", "use MQTT 5 or a workload without shared subscriptions"
			if cfg.Version == codec.V5 {
				version = "MQTT 5 (its CONNACK does not announce Shared Subscription Available)"
				fix = "enable shared subscriptions in the broker or use a workload without them"
			}
			return fmt.Errorf("the broker at %s seems not to support shared subscriptions over %s (or does not let this client publish to %q): a probe published there did not reach the shared subscription %q within %v, so this group's %q would receive nothing; %s",
				cfg.Addr, version, topic, own, probeTimeout, filter, fix)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// probeHandler notes that the probe came back.
type probeHandler struct{ got atomic.Bool }

func (h *probeHandler) OnPublish(_ *connection.Conn, p *codec.Publish, _ int64) {
	if hd, ok := readHeader(p.Payload, nowNano()); ok && hd.pub == probePublisher {
		h.got.Store(true)
	}
}
func (h *probeHandler) OnAck(*connection.Conn, codec.Ack, int64) {}
func (h *probeHandler) OnConnect(*connection.Conn, bool)         {}
func (h *probeHandler) OnConnectionLost(*connection.Conn, error) {}

// noRecorder: the probe's connection is not one of the run's, so it counts
// in no metric.
type noRecorder struct{}

func (noRecorder) Count(connection.Event, int64)      {}
func (noRecorder) Time(connection.Timing, int, int64) {}
func (noRecorder) Open(int64)                         {}
