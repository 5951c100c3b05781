package load

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
)

// PublisherConfig is a publisher group's make-up.
type PublisherConfig struct {
	GroupConfig
	QoS         byte
	Retain      bool
	PayloadSize int // >= HeaderSize; a template's steady size when Payload is set
	// Payload fills each message from a template (nil: the header, then
	// zero filler).
	Payload     *PayloadTemplate
	MaxInflight int // QoS 1/2 window per client, further capped by the broker's receive maximum
	Topic       Template
	// PollInterval: at QoS 0 and 1 the group's plain-TCP connections are
	// read (their acks, at QoS 1) by one poller, as a subscriber group's
	// messages are, which looks every interval; 0, and QoS 2, give each
	// connection a reader goroutine.
	PollInterval time.Duration
}

// PublisherGroup owns many publishing connections. Publishing is paced from
// Go (no JS call per message); each payload carries the 16-byte header.
type PublisherGroup struct {
	*group
	pc      PublisherConfig
	poller  *connection.Poller
	clients []*pubClient
	running atomic.Bool
	phases  sync.WaitGroup
	rr      int // round-robin position, kept across phases
}

type pubClient struct {
	c        *connection.Conn
	id       uint32
	clientID string // for payload templates: Conn.ID() takes a lock
	prefix   []byte
	seq      atomic.Uint32 // messages sent so far = next sequence number
	rejected atomic.Int64  // of those, refused by the broker: never delivered, so never expected
	win      *window       // QoS 1/2 only
	backlog  backlog       // messages waiting for a free window slot (scheduler goroutine only)
	dirty    bool          // has unflushed messages (scheduler goroutine only)
	g        *PublisherGroup
}

// NewPublisherGroup builds the group's clients; nothing connects yet. It
// fails when a rendered topic is not a valid topic name, or an id is taken.
func (r *Run) NewPublisherGroup(env Env, cfg PublisherConfig) (*PublisherGroup, error) {
	g := &PublisherGroup{pc: cfg}
	if cfg.PollInterval > 0 && cfg.QoS <= 1 {
		// A reader goroutine per connection woke once per PUBACK: the
		// poller reads every socket that became readable in one wake-up.
		// Nothing waits for a PUBACK (it is timed at its kernel receive
		// time), so acks can wait for the interval's look. At QoS 0 there
		// is next to nothing to read, but the poller's sockets are what a
		// pacing tick's Flusher writes in one system call (one write per
		// connection else), and its epoll set waits in Go's netpoller,
		// leaving the one blocking wait (WaitSlots) to a group that reads
		// (a subscriber's, QoS 1 acks'). QoS 2 keeps
		// the goroutines: the broker delivers a message when its PUBREL
		// comes, and a poller that looked at once, measured back to back
		// with them, delivered fewer messages per CPU-second and, parked
		// in Go's netpoller beside a poller blocked in epoll_wait, tripled
		// p99 latency at 1,000 msg/s (docs/benchmarks.md).
		conn := *cfg.Conn
		slots := r.waitSlots
		if cfg.QoS == 0 {
			slots = nil
		}
		g.poller = connection.NewPoller(cfg.PollInterval, slots)
		conn.Poller = g.poller
		cfg.GroupConfig.Conn = &conn
	}
	g.group = r.newGroup(env, "pub", cfg.GroupConfig, cfg.QoS, g)
	g.clients = make([]*pubClient, len(g.conns))
	for i, c := range g.conns {
		pc := &pubClient{c: c, id: uint32(cfg.IDBase + i), clientID: c.ID(), g: g}
		t := cfg.Topic.render(tplVars{i: cfg.IDBase + i, clientID: c.ID(), vu: env.VUID, role: "pub"})
		if t == "" || containsWildcard(t) {
			g.shutdown(nil)
			return nil, fmt.Errorf("PublisherGroup: topic %q is not a valid topic name (no + or # when publishing)", t)
		}
		pc.prefix = codec.PublishPrefix(cfg.QoS, cfg.Retain, t, cfg.Conn.Version, cfg.PayloadSize)
		if cfg.QoS > 0 {
			pc.win = newWindow(cfg.MaxInflight)
		}
		if err := r.publishers.add(pc.id, pc); err != nil {
			g.shutdown(nil)
			return nil, err
		}
		g.clients[i] = pc
	}
	g.closeOnEnd(g.Close)
	return g, nil
}

// fillPayload writes message seq of pc into b: the template's rendering,
// or the header over zero filler.
func (g *PublisherGroup) fillPayload(b []byte, pc *pubClient, seq uint32, sentNs, intendedNs int64) {
	if t := g.pc.Payload; t != nil {
		t.render(b, pc.clientID, pc.id, seq, sentNs, intendedNs)
		return
	}
	putHeader(b, pc.id, seq, sentNs, intendedNs)
}

func containsWildcard(t string) bool {
	for i := 0; i < len(t); i++ {
		if t[i] == '+' || t[i] == '#' {
			return true
		}
	}
	return false
}

// Connect opens the connections at the configured connect rate.
func (g *PublisherGroup) Connect() ConnectResult { return g.connectAll("PublisherGroup", nil) }

// Close disconnects every client and pushes the final metrics. A QoS 1/2
// message still unacknowledged now never will be: it is a failed publish
// (each message sent ends up published, rejected or failed).
func (g *PublisherGroup) Close() {
	g.shutdown(func() {
		g.phases.Wait() // the scheduler stops on the cancelled context
		g.poller.Stop()
		for _, pc := range g.clients {
			if pc.win != nil {
				g.m.Add(PublishFailures, int64(pc.win.abandon()))
			}
		}
	})
}

// Stats returns this group's counts so far.
func (g *PublisherGroup) Stats() map[string]any {
	return map[string]any{
		"clients":      len(g.clients),
		"payload_size": g.pc.PayloadSize,
		"connected":    g.connected(),
		"published":    g.m.Get(Publishes),
		"failed":       g.m.Get(PublishFailures),
		"rejected":     g.m.Get(PublishRejected),
		"missed":       g.m.Get(MissedSends),
		"reconnects":   g.m.Get(Reconnects),
		// Connections read by the group's poller, whose writes a pacing
		// tick's Flusher batches (QoS 0 and 1, plain TCP, Linux).
		"polled_sockets": g.poller.Adopted(),
	}
}

// OnPublish implements connection.Handler: publishers receive nothing.
func (g *PublisherGroup) OnPublish(*connection.Conn, *codec.Publish, int64) {}

// OnAck checks that the ack belongs to the publish's QoS flow (QoS 1:
// PUBACK; QoS 2: PUBREC, then PUBCOMP), then frees the message's window
// slot and times it. Only then is a QoS 1/2 message published: a refusal
// (PUBACK or PUBREC reason >= 0x80) is a rejected publish, an ack of the
// wrong flow or a failing PUBCOMP a failed one. The ack is timed at the
// kernel's receive time when the poller read it.
func (g *PublisherGroup) OnAck(c *connection.Conn, a codec.Ack, recvNs int64) {
	pc := g.clients[c.Index()]
	if pc.win == nil {
		return
	}
	flowOK, done := codec.AckFits(g.pc.QoS, a)
	if flowOK && !done {
		// After a reconnect that resumes the session, PUBREL is what goes again.
		pc.win.markPubrec(a.PacketID)
		return // QoS 2's PUBREC: PUBREL is on its way, PUBCOMP ends it
	}
	sent, ok := pc.win.release(a.PacketID)
	switch {
	case !ok:
	case !flowOK:
		g.m.Add(ProtocolErrors, 1)
		g.m.Add(PublishFailures, 1)
		if g.m.Get(ProtocolErrors) == 1 {
			g.logger.Warnf("PublisherGroup: the broker answered a QoS %d publish with %s: not the QoS %d flow (counted in %s)",
				g.pc.QoS, codec.TypeName(a.Type), g.pc.QoS, MetricProtocolErrors)
		}
	case a.Reason >= 0x80 && a.Type != codec.PUBCOMP:
		pc.rejected.Add(1)
		if g.m.Get(PublishRejected) == 0 {
			g.logger.Warnf("PublisherGroup: the broker refused a QoS %d publish with %s reason 0x%02x (counted in %s, not as published)",
				g.pc.QoS, codec.TypeName(a.Type), a.Reason, MetricPublishRejected)
		}
		g.m.Add(PublishRejected, 1)
	case a.Reason >= 0x80: // PUBCOMP 0x92: the broker lost the flow after accepting it
		g.m.Add(PublishFailures, 1)
	default:
		g.m.Add(Publishes, 1)
		if recvNs == 0 {
			recvNs = nowNano()
		}
		g.m.Record(PubackDuration, c.Index(), recvNs-sent)
	}
}

// OnConnect opens the window with the connection's limit (the broker may
// announce another receive maximum). A reconnect that resumed the session
// keeps the window (Resume re-sent what is in it). Otherwise whatever is
// still in it was sent on an earlier connection and will never be
// acknowledged: a failed publish.
func (g *PublisherGroup) OnConnect(c *connection.Conn, reconnect bool) {
	if pc := g.clients[c.Index()]; pc.win != nil && !(reconnect && c.SessionPresent()) {
		g.m.Add(PublishFailures, int64(pc.win.reopen(min(g.pc.MaxInflight, c.ReceiveMax()))))
	}
}

// Resume implements connection.Resumer: after a reconnect that resumed the
// session, the window takes the connection's limit and what is in it goes
// again (resend.go), before the broker's answers are read.
func (g *PublisherGroup) Resume(c *connection.Conn) {
	if pc := g.clients[c.Index()]; pc.win != nil {
		pc.win.setLimit(min(g.pc.MaxInflight, c.ReceiveMax()))
		g.resend(pc)
	}
}

// OnConnectionLost counts the QoS 1/2 messages in flight as failed when the
// session goes with the connection: no broker will acknowledge them. Until
// the connection is back, nothing more is sent on it. A persistent session
// (3.1.1 without clean session, 5 with a session expiry) keeps them for
// the re-send after the reconnect.
func (g *PublisherGroup) OnConnectionLost(c *connection.Conn, _ error) {
	if pc := g.clients[c.Index()]; pc.win != nil && !c.Persistent() {
		g.m.Add(PublishFailures, int64(pc.win.abandon()))
	}
}
