package load

import (
	"context"
	"sync"

	"github.com/sirupsen/logrus"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
)

// GroupConfig is what every group has: how many connections, their ids and
// how fast they open.
type GroupConfig struct {
	Conn        *connection.Config
	Count       int
	IDBase      int      // the first client's index {i}
	ClientID    Template // rendered per client
	ConnectRate float64  // connections opened per second; 0 = as fast as concurrency allows
	Concurrency int      // handshakes in flight at most
	Tags        map[string]string
	// Flow names the traffic the group belongs to in a result file's
	// per-stream accounting, so that instances' files merge by flow.
	Flow string
}

// group is what publisher and subscriber groups share: many connections
// owned by one VU object, opened at a controlled rate.
type group struct {
	run    *Run
	cfg    GroupConfig
	m      *Meter
	conns  []*connection.Conn
	logger logrus.FieldLogger
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once
}

func (r *Run) newGroup(env Env, role string, cfg GroupConfig, qos byte, h connection.Handler) *group {
	// A group's first connect starts a new session even when it is to
	// persist: an earlier run's session would deliver that run's messages
	// into this run's accounting.
	conn := *cfg.Conn
	conn.FreshSession = true
	cfg.Conn = &conn
	g := &group{run: r, cfg: cfg, logger: env.Logger}
	g.m = r.NewMeter(env, role, int(qos), cfg.Tags)
	g.conns = make([]*connection.Conn, cfg.Count)
	for i := range g.conns {
		id := cfg.ClientID.render(tplVars{i: cfg.IDBase + i, vu: env.VUID, role: role})
		g.conns[i] = connection.New(cfg.Conn, id, i, h, g.m)
	}
	g.ctx, g.cancel = context.WithCancel(env.Ctx)
	return g
}

// closeOnEnd runs the owner's close when the VU ends, if the script did not.
func (g *group) closeOnEnd(close func()) {
	go func() { <-g.ctx.Done(); close() }()
}

// connectAll opens every connection (then runs after(c) on each, e.g. to
// subscribe); where names the group in the log line about failures.
func (g *group) connectAll(where string, after func(c *connection.Conn) error) ConnectResult {
	r := openAll(g.ctx, len(g.conns), g.cfg.ConnectRate, g.cfg.Concurrency, func(i int) error {
		c := g.conns[i]
		if err := c.Connect(g.ctx); err != nil {
			return connection.Explain(g.cfg.Conn.Addr, err)
		}
		if after != nil {
			return after(c)
		}
		return nil
	})
	g.m.Push()
	r.Transport = "tcp"
	if g.cfg.Conn.WSPath != "" {
		r.Transport = "ws"
	}
	if g.cfg.Conn.TLS != nil {
		r.Transport = map[string]string{"tcp": "tls", "ws": "wss"}[r.Transport]
		for _, c := range g.conns {
			if v, cs, ok := c.TLSParams(); ok {
				r.TLSVersion, r.CipherSuite = v, cs
				break
			}
		}
	}
	if r.Failed > 0 && r.Connected > 0 {
		g.logger.Warnf("%s: %d of %d connections failed; first error: %s", where, r.Failed, len(g.conns), r.FirstErr)
	}
	return r
}

// shutdown disconnects everything, lets the owner account (finish), then
// pushes the final counts. Only the first call does anything.
func (g *group) shutdown(finish func()) {
	g.once.Do(func() {
		g.cancel()
		g.closeConns()
		if finish != nil {
			finish()
		}
		g.m.Close()
	})
}

func (g *group) closeConns() {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 256)
	for _, c := range g.conns {
		sem <- struct{}{}
		wg.Add(1)
		go func(c *connection.Conn) { defer wg.Done(); c.Close(); <-sem }(c)
	}
	wg.Wait()
}

// Clients is the number of connections of the group.
func (g *group) Clients() int { return len(g.conns) }

// Addr is the broker address the group connects to.
func (g *group) Addr() string { return g.cfg.Conn.Addr }

// Flow is the flow the group's streams belong to (GroupConfig.Flow).
func (g *group) Flow() string { return g.cfg.Flow }

func (g *group) connected() int {
	n := 0
	for _, c := range g.conns {
		if c.Up() {
			n++
		}
	}
	return n
}
