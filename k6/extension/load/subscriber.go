package load

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
)

// SubscriberConfig is a subscriber group's make-up.
type SubscriberConfig struct {
	GroupConfig
	QoS    byte
	Topics []Template // none: the group only connects (connection scenarios)
	// PollInterval is how often the poller looks while traffic lasts; 0
	// gives each connection its own reader goroutine.
	PollInterval time.Duration
	// AcceptDowngrade measures at whatever QoS the broker grants; without
	// it a SUBACK granting less than QoS fails Connect.
	AcceptDowngrade bool
	// Payload is the publishers' template, which says where their
	// messages carry the header (nil: binary, at the start).
	Payload *PayloadTemplate
}

// SubscriberGroup owns many subscribing connections and accounts for every
// benchmark message: latency from the actual and the intended send, and
// lost / duplicate / out-of-order messages per stream.
type SubscriberGroup struct {
	*group
	qos      byte
	filters  [][]codec.Subscription // per client
	sets     []*streamSet           // per client: its own, or its shared subscription's
	shared   map[string]*sharedSet  // by $share/... filter: each one receiver of the run
	poller   *connection.Poller
	accept   bool                  // AcceptDowngrade
	hdrAt    int                   // where the header is as text (-1: binary at 0)
	granted  atomic.Int32          // lowest QoS granted so far (3: none yet)
	refusal  atomic.Pointer[error] // the first thing the broker refused that spoils the measurement
	expected atomic.Int64
	received atomic.Int64
	lastRecv atomic.Int64
	perConn  []atomic.Int64 // received by each client: shows how a shared group spreads
	probes   atomic.Int64   // shared-subscription probe messages received, not counted
	flowLat  *shardedHist   // the flow's own pub-to-sub latency (flows.go)
}

// NewSubscriberGroup builds the group's clients; nothing connects yet.
func (r *Run) NewSubscriberGroup(env Env, cfg SubscriberConfig) *SubscriberGroup {
	g := &SubscriberGroup{qos: cfg.QoS, accept: cfg.AcceptDowngrade, hdrAt: -1}
	if cfg.Payload != nil {
		g.hdrAt = cfg.Payload.HeaderAt()
	}
	g.granted.Store(3)
	if cfg.PollInterval > 0 {
		// The group's own copy of the connection config carries its poller.
		conn := *cfg.Conn
		g.poller = connection.NewPoller(cfg.PollInterval, r.waitSlots)
		conn.Poller = g.poller
		cfg.Conn = &conn
	}
	g.group = r.newGroup(env, "sub", cfg.GroupConfig, cfg.QoS, g)
	g.flowLat = r.flowHists.get(cfg.Flow)
	g.perConn = make([]atomic.Int64, len(g.conns))
	g.filters = make([][]codec.Subscription, len(g.conns))
	g.sets = make([]*streamSet, len(g.conns))
	g.shared = map[string]*sharedSet{}
	for i, c := range g.conns {
		shared := ""
		for _, t := range cfg.Topics {
			f := t.render(tplVars{i: cfg.IDBase + i, clientID: c.ID(), vu: env.VUID, role: "sub"})
			g.filters[i] = append(g.filters[i], codec.Subscription{Filter: f, QoS: cfg.QoS})
			if shared == "" && strings.HasPrefix(f, "$share/") {
				shared = f
			}
		}
		if shared == "" {
			g.sets[i] = newStreamSet()
			if len(cfg.Topics) > 0 {
				r.addReceivers(cfg.Flow, cfg.IDBase+i, g.sets[i:i+1], "")
			}
			continue
		}
		// Members of one shared subscription (its filter: a template may
		// give each client another) together receive each message once:
		// they are accounted as one receiver, across groups and VUs, and
		// in a result file under that filter, across instances.
		ss := g.shared[shared]
		if ss == nil {
			ss = r.shared.acquire(shared)
			g.shared[shared] = ss
			r.addReceivers(cfg.Flow, 0, []*streamSet{ss.set}, shared)
		}
		g.sets[i] = ss.set
	}
	r.watchStreams(g.m, g.sets)
	g.closeOnEnd(g.Close)
	return g
}

// Connect opens the connections at the connect rate and subscribes each.
// A broker that refuses what the group measures (shared subscriptions, the
// QoS asked for) makes Refusal non-nil: the run must not start.
func (g *SubscriberGroup) Connect() ConnectResult {
	r := g.connectAll("SubscriberGroup", func(c *connection.Conn) error {
		subs := g.filters[c.Index()]
		if len(subs) == 0 {
			return nil
		}
		if err := g.checkShared(c, subs); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(g.ctx, g.cfg.Conn.ConnectTimeout)
		defer cancel()
		codes, err := c.Subscribe(ctx, subs)
		if err != nil {
			return err
		}
		return g.checkGranted(subs, codes)
	})
	if r.Connected > 0 && g.Refusal() == nil {
		r.SharedCheck, r.Probes, _ = g.checkSharedDelivery() // a failure is the Refusal
	}
	return r
}

// Drain waits until messages stop arriving: until `expected` messages were
// received (when > 0), or nothing came for `idle`, or `timeout` passed.
func (g *SubscriberGroup) Drain(expected int64, idle, timeout time.Duration) map[string]any {
	if expected > 0 {
		g.expected.Store(expected)
	}
	start := time.Now()
	g.lastRecv.CompareAndSwap(0, start.UnixNano())
	for time.Since(start) < timeout && g.ctx.Err() == nil {
		if expected > 0 && g.received.Load() >= expected {
			break
		}
		if idle > 0 && time.Since(time.Unix(0, g.lastRecv.Load())) >= idle {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return g.Stats()
}

// SetExpected tells the group how many messages it should receive in all,
// so that messages that never arrived on any stream count as lost.
func (g *SubscriberGroup) SetExpected(n int64) { g.expected.Store(n) }

// Stats returns the delivery accounting so far.
func (g *SubscriberGroup) Stats() map[string]any {
	t := g.totals()
	least, most := int64(-1), int64(0)
	for i := range g.perConn {
		n := g.perConn[i].Load()
		if least < 0 || n < least {
			least = n
		}
		most = max(most, n)
	}
	return map[string]any{
		"min_per_client": least, "max_per_client": most,
		"clients": len(g.conns), "connected": g.connected(), "received": g.received.Load(),
		"unique": t.Unique, "lost": t.Lost, "duplicates": t.Duplicates, "out_of_order": t.OutOfOrder,
		"streams": t.Streams, "expected": g.expected.Load(), "polled_sockets": g.poller.Adopted(),
		"granted_qos": g.grantedQoS(), "probes_received": g.probes.Load(),
		// Drops of its connections: a composite's background must keep every one.
		"disconnects": g.m.Get(Disconnects),
	}
}

func (g *SubscriberGroup) totals() streamTotals {
	sets := make([]*streamSet, 0, len(g.sets))
	seen := map[*streamSet]bool{}
	for _, s := range g.sets {
		if !seen[s] {
			seen[s] = true
			sets = append(sets, s)
		}
	}
	return g.totalsOf(sets, true)
}

// totalsOf sums the given sets of the group (withExpected: and holds them
// to the group's expected count).
func (g *SubscriberGroup) totalsOf(sets []*streamSet, withExpected bool) streamTotals {
	var t streamTotals
	partial := g.run.instances() > 1
	for _, s := range sets {
		s.totals(&t, &g.run.publishers, partial)
	}
	// Members of a shared subscription in other instances receive the
	// messages this one's streams skip: not lost, and only the merge knows.
	if partial && len(g.shared) > 0 {
		t.Lost = 0
	}
	if e := g.expected.Load(); withExpected && e > 0 && e-t.Unique > t.Lost {
		t.Lost = e - t.Unique
	}
	return t
}

// Close disconnects, then pushes lost, duplicate and out-of-order counts.
func (g *SubscriberGroup) Close() {
	g.shutdown(func() {
		g.poller.Stop()
		g.run.watchStreams(g.m, nil) // its loss goes into mqtt_lost now
		if len(g.filters) > 0 && len(g.filters[0]) == 0 {
			return // connect-only: nothing to account
		}
		t := g.totals()
		if len(g.shared) > 0 {
			// Each shared subscription is reported by the last group of
			// the run that has members in it, so nothing is counted twice.
			var last []*streamSet
			for f, ss := range g.shared {
				if g.run.shared.release(f, ss) {
					last = append(last, ss.set)
				}
			}
			t = g.totalsOf(last, len(last) == len(g.shared))
		}
		g.m.Add(Lost, t.Lost)
		g.m.Add(Duplicates, t.Duplicates)
		g.m.Add(OutOfOrder, t.OutOfOrder)
	})
}

// OnPublish runs on the connection's reader for every message. The message
// is accounted before it is counted as received, so that a Drain that
// returns at the expected count sees every stream up to date.
func (g *SubscriberGroup) OnPublish(c *connection.Conn, p *codec.Publish, recvNs int64) {
	now := recvNs
	if now == 0 {
		now = nowNano()
	}
	idx := c.Index()
	h, ok := readPayloadHeader(p.Payload, g.hdrAt, now)
	if ok && h.pub == probePublisher {
		g.probes.Add(1)
		return // a shared-subscription probe (probe.go): not part of the run
	}
	if ok { // too short: not a benchmark message, counted, not timed
		g.flowLat.record(idx, now-h.sentNs) // and so the run's (Run.collect)
		g.m.Record(LatencyIntended, idx, now-h.intendedNs)
		g.sets[idx].observe(h.pub, h.seq)
	}
	g.m.Add(Receives, 1)
	g.m.Add(BytesReceived, int64(len(p.Payload)))
	g.perConn[idx].Add(1)
	g.lastRecv.Store(now)
	g.received.Add(1)
}

// OnAck implements connection.Handler.
func (g *SubscriberGroup) OnAck(*connection.Conn, codec.Ack, int64) {}

// OnConnectionLost implements connection.Handler.
func (g *SubscriberGroup) OnConnectionLost(*connection.Conn, error) {}
