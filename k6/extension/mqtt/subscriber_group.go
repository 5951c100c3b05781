package mqtt

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/js/promises"
)

// SubscriberGroup owns many subscribing connections and accounts for every
// benchmark message: latency from the actual and the intended send, and
// lost / duplicate / out-of-order messages per stream.
type SubscriberGroup struct {
	*group
	qos      byte
	filters  [][]subscription // per client
	sets     []*streamSet     // per client, or all the same shared set
	shared   *sharedSet       // when the filter is $share/...
	sharedAt string           // that filter
	expected atomic.Int64
	received atomic.Int64
	lastRecv atomic.Int64
	perConn  []atomic.Int64 // received by each client: shows how a shared group spreads
}

type sharedSet struct {
	set  *streamSet
	refs int
}

func newSubscriberGroup(vu modules.VU, arg any) (*SubscriberGroup, error) {
	o := newOpts("SubscriberGroup", arg)
	g := &SubscriberGroup{}
	g.qos = o.qos("qos", 0)
	var topics []string
	switch t := mustGet(o, "topic").(type) {
	case string:
		topics = []string{t}
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				topics = append(topics, s)
			}
		}
	}
	// Without a topic the group only connects (connection scenarios).
	tpls := make([]template, len(topics))
	for i, t := range topics {
		var err error
		if tpls[i], err = parseTemplate(t); err != nil {
			o.fail("topic", "%v", err)
		}
	}
	pollEvery := o.duration("poll_interval", defaultPollInterval)
	if pollEvery > 10*time.Millisecond {
		o.fail("poll_interval", "must be at most 10ms (it bounds how far a message can be timed late), got %v", pollEvery)
	}
	base, err := newGroup(vu, "SubscriberGroup", "sub", o, g.qos, g)
	if err != nil {
		return nil, err
	}
	g.group = base
	if pollEvery > 0 {
		g.cfg.poller = newPoller(pollEvery)
	}
	g.perConn = make([]atomic.Int64, len(g.conns))
	g.filters = make([][]subscription, len(g.conns))
	g.sets = make([]*streamSet, len(g.conns))
	sharedFilter := ""
	for i, c := range g.conns {
		for _, t := range tpls {
			f := t.render(tplVars{i: g.idBase + i, clientID: c.id, vu: vu.State().VUID, role: "sub"})
			g.filters[i] = append(g.filters[i], subscription{filter: f, qos: g.qos})
			if strings.HasPrefix(f, "$share/") {
				sharedFilter = f
			}
		}
	}
	if sharedFilter != "" {
		// Members of one shared subscription together receive each message
		// once: they are accounted as one receiver, across VUs.
		g.shared, g.sharedAt = acquireShared(sharedFilter), sharedFilter
		for i := range g.sets {
			g.sets[i] = g.shared.set
		}
	} else {
		for i := range g.sets {
			g.sets[i] = newStreamSet()
		}
	}
	g.closeOnEnd(g.Close)
	return g, nil
}

func mustGet(o *opts, name string) any {
	v, _ := o.get(name)
	return v
}

var sharedRefs = struct {
	sync.Mutex
	m map[string]*sharedSet
}{m: map[string]*sharedSet{}}

func acquireShared(filter string) *sharedSet {
	sharedRefs.Lock()
	defer sharedRefs.Unlock()
	s := sharedRefs.m[filter]
	if s == nil {
		s = &sharedSet{set: newStreamSet()}
		sharedRefs.m[filter] = s
	}
	s.refs++
	return s
}

// releaseShared returns true for the last group of a shared subscription:
// that one reports the set's totals, so nothing is counted twice.
func releaseShared(filter string, s *sharedSet) bool {
	sharedRefs.Lock()
	defer sharedRefs.Unlock()
	s.refs--
	if s.refs == 0 {
		delete(sharedRefs.m, filter)
		return true
	}
	return false
}

// Connect opens the connections at connect_rate and subscribes each; it
// resolves {connected, failed, seconds} once all are subscribed.
func (g *SubscriberGroup) Connect() *sobek.Promise {
	return g.connectAll(func(c *conn) error {
		ctx, cancel := context.WithTimeout(g.ctx, g.cfg.connectTimeout)
		defer cancel()
		if len(g.filters[c.idx]) == 0 {
			return nil
		}
		_, err := c.subscribe(ctx, g.filters[c.idx])
		return err
	})
}

// Drain waits until messages stop arriving: until `expected` messages were
// received, or nothing came for `idle`, or `timeout` passed.
//
//	await subs.drain({ expected: 60000, idle: '2s', timeout: '30s' })
func (g *SubscriberGroup) Drain(arg sobek.Value) *sobek.Promise {
	p, resolve, reject := promises.New(g.vu)
	o := newOpts("SubscriberGroup.drain", exportValue(arg))
	expected := int64(o.integer("expected", 0, 0, 1<<53))
	idle := o.duration("idle", 2*time.Second)
	timeout := o.duration("timeout", 30*time.Second)
	if err := o.done(); err != nil {
		reject(err)
		return p
	}
	if expected > 0 {
		g.expected.Store(expected)
	}
	go func() {
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
		resolve(g.Stats())
	}()
	return p
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
		"streams": t.Streams, "expected": g.expected.Load(),
	}
}

func (g *SubscriberGroup) totals() streamTotals {
	var t streamTotals
	if g.shared != nil {
		g.shared.set.totals(&t)
	} else {
		for _, s := range g.sets {
			s.totals(&t)
		}
	}
	if e := g.expected.Load(); e > 0 && e-t.Unique > t.Lost {
		t.Lost = e - t.Unique
	}
	return t
}

// Close disconnects, then pushes lost, duplicate and out-of-order counts.
func (g *SubscriberGroup) Close() {
	g.shutdown(func() {
		if g.cfg.poller != nil {
			g.cfg.poller.stop()
		}
		if len(g.filters) > 0 && len(g.filters[0]) == 0 {
			return // connect-only: nothing to account
		}
		if g.shared != nil && !releaseShared(g.sharedAt, g.shared) {
			return // another group of this shared subscription reports it
		}
		t := g.totals()
		g.m.add(cLost, t.Lost)
		g.m.add(cDuplicates, t.Duplicates)
		g.m.add(cOutOfOrder, t.OutOfOrder)
	})
}

// onPublish runs on the connection's reader for every message.
func (g *SubscriberGroup) onPublish(c *conn, p *publishPacket) {
	now := p.recvNs
	if now == 0 {
		now = nowNano()
	}
	g.received.Add(1)
	g.perConn[c.idx].Add(1)
	g.lastRecv.Store(now)
	g.m.add(cReceives, 1)
	g.m.add(cBytesReceived, int64(len(p.payload)))
	h, ok := readHeader(p.payload, now)
	if !ok {
		return // not a benchmark message (too short): counted, not timed
	}
	global.record(histLatency, c.idx, now-h.sentNs)
	global.record(histLatencyIntended, c.idx, now-h.intendedNs)
	g.sets[c.idx].observe(h.pub, h.seq)
}

func (g *SubscriberGroup) onAck(*conn, byte, uint16, byte) {}
func (g *SubscriberGroup) onConnect(*conn, bool)           {}
func (g *SubscriberGroup) onConnectionLost(*conn, error)   {}
