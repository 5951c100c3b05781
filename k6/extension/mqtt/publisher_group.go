package mqtt

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/modules"
)

// PublisherGroup owns many publishing connections. Publishing is paced from
// Go (no JS call per message); each payload carries the 16-byte header.
type PublisherGroup struct {
	*group
	qos         byte
	retain      bool
	payloadSize int
	rate        float64 // default total msg/s
	ratePerConn float64 // default msg/s per client (used when rate is 0)
	maxInflight int
	batch       time.Duration // default batch_interval of publish()
	clients     []*pubClient
	running     atomic.Bool
	phases      sync.WaitGroup
	rr          int // round-robin position, kept across phases
}

type pubClient struct {
	c       *conn
	id      uint32
	prefix  []byte
	seq     atomic.Uint32 // messages sent so far = next sequence number
	win     *window       // QoS 1/2 only
	backlog []int64       // intended send times waiting for a free window slot
	dirty   bool          // has unflushed messages (scheduler goroutine only)
	g       *PublisherGroup
}

func newPublisherGroup(vu modules.VU, arg any) (*PublisherGroup, error) {
	o := newOpts("PublisherGroup", arg)
	g := &PublisherGroup{}
	g.qos = o.qos("qos", 0)
	g.retain = o.boolean("retain", false)
	g.payloadSize = o.integer("payload_size", headerSize, headerSize, maxRemainingLength-1024)
	g.rate = o.num("rate", 0, 0, 1e9)
	g.ratePerConn = o.num("rate_per_client", 0, 0, 1e9)
	g.maxInflight = o.integer("max_inflight", 1024, 1, 65535)
	g.batch = o.duration("batch_interval", time.Millisecond)
	topicStr := o.str("topic", "")
	if topicStr == "" {
		o.fail("topic", "is required (a template such as \"test/{i}\")")
	}
	topic, err := parseTemplate(topicStr)
	if err != nil {
		o.fail("topic", "%v", err)
	}
	base, err := newGroup(vu, "PublisherGroup", "pub", o, g.qos, g)
	if err != nil {
		return nil, err
	}
	g.group = base
	g.clients = make([]*pubClient, len(g.conns))
	for i, c := range g.conns {
		pc := &pubClient{c: c, id: uint32(g.idBase + i), g: g}
		t := topic.render(tplVars{i: g.idBase + i, clientID: c.id, vu: vu.State().VUID, role: "pub"})
		if t == "" || containsWildcard(t) {
			g.shutdown(nil)
			return nil, fmt.Errorf("PublisherGroup: topic %q is not a valid topic name (no + or # when publishing)", t)
		}
		pc.prefix = publishPrefix(g.qos, g.retain, t, g.cfg.version, g.payloadSize)
		if g.qos > 0 {
			pc.win = newWindow(g.maxInflight)
		}
		if err := publishers.add(pc.id, pc); err != nil {
			g.shutdown(nil)
			return nil, err
		}
		g.clients[i] = pc
	}
	g.closeOnEnd(g.Close)
	return g, nil
}

func containsWildcard(t string) bool {
	for i := 0; i < len(t); i++ {
		if t[i] == '+' || t[i] == '#' {
			return true
		}
	}
	return false
}

func errDuplicatePublisher(id uint32) error {
	return fmt.Errorf("publisher id %d is already used by another live PublisherGroup: give each group its own id_base range", id)
}

// Connect opens the connections at connect_rate; resolves {connected, failed, seconds}.
func (g *PublisherGroup) Connect() *sobek.Promise { return g.connectAll(nil) }

// Close disconnects every client and pushes the final metrics.
func (g *PublisherGroup) Close() {
	g.shutdown(func() {
		g.phases.Wait() // the scheduler stops on the cancelled context
		for _, pc := range g.clients {
			if n := len(pc.backlog); n > 0 {
				g.m.add(cPublishFailures, int64(n))
				pc.backlog = nil
			}
		}
	})
}

// Stats returns this group's counts so far.
func (g *PublisherGroup) Stats() map[string]any {
	return map[string]any{
		"clients":    len(g.clients),
		"connected":  g.connected(),
		"published":  g.m.counts[cPublishes].Load(),
		"failed":     g.m.counts[cPublishFailures].Load(),
		"reconnects": g.m.counts[cReconnects].Load(),
	}
}

// Connection events of the publisher connections.
func (g *PublisherGroup) onPublish(*conn, *publishPacket) {}

func (g *PublisherGroup) onAck(c *conn, typ byte, pid uint16, reason byte) {
	pc := g.clients[c.idx]
	if pc.win == nil {
		return
	}
	sent, ok := pc.win.release(pid)
	if !ok {
		return
	}
	if reason >= 0x80 {
		g.m.add(cPublishFailures, 1)
		return
	}
	global.record(histPuback, c.idx, nowNano()-sent)
}

func (g *PublisherGroup) onConnect(c *conn, reconnect bool) {
	pc := g.clients[c.idx]
	if pc.win != nil {
		// A new connection: what was in flight is gone (clean session) and
		// the broker may announce another receive maximum.
		pc.win.reset(min(g.maxInflight, int(c.recvMax.Load())))
	}
}

func (g *PublisherGroup) onConnectionLost(*conn, error) {}
