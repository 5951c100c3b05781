package mqtt

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/grafana/sobek"
	"github.com/sirupsen/logrus"
	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/js/promises"
)

// group is what publisher and subscriber groups share: many connections
// owned by one VU object, opened at a controlled rate.
type group struct {
	vu          modules.VU
	where       string // for messages: "PublisherGroup"
	role        string
	cfg         *connConfig
	m           *meter
	conns       []*conn
	idBase      int
	connectRate float64
	concurrency int
	logger      logrus.FieldLogger
	ctx         context.Context
	cancel      context.CancelFunc
	once        sync.Once
}

// newGroup reads the options every group has and builds its connections.
func newGroup(vu modules.VU, where, role string, o *opts, qos byte, h connHandler) (*group, error) {
	state := vu.State()
	if state == nil {
		return nil, fmt.Errorf("%s must be created inside a VU function (default or setup), not in the init context", where)
	}
	g := &group{vu: vu, where: where, role: role, logger: state.Logger}
	g.cfg = readConnConfig(o)
	count := o.integer("count", 1, 1, maxPublisher)
	g.idBase = o.integer("id_base", 0, 0, maxPublisher)
	if g.idBase+count > maxPublisher {
		o.fail("id_base", "+ count must stay below %d", maxPublisher)
	}
	idTpl, err := parseTemplate(o.str("client_id", "k6-{role}-{i}"))
	if err != nil {
		o.fail("client_id", "%v", err)
	}
	g.connectRate = o.num("connect_rate", 0, 0, 1e7)
	g.concurrency = o.integer("connect_concurrency", 128, 1, 100000)
	extra := readTags(o)
	g.cfg.dial = state.Dialer.DialContext
	if err := o.done(); err != nil {
		return nil, err
	}
	tm := state.Tags.GetCurrentValues()
	base := tm.Tags.WithTagsFromMap(extra)
	g.m = &meter{role: role, base: base, tags: base.With("role", role).With("qos", strconv.Itoa(int(qos))),
		meta: tm.Metadata, ctx: vu.Context(), samples: state.Samples}
	vuID := state.VUID
	g.conns = make([]*conn, count)
	for i := range g.conns {
		id := idTpl.render(tplVars{i: g.idBase + i, vu: vuID, role: role})
		g.conns[i] = newConn(g.cfg, id, i, h, g.m)
	}
	g.ctx, g.cancel = context.WithCancel(vu.Context())
	global.register(g.m)
	return g, nil
}

// closeOnEnd closes the group when the VU ends, if the script did not.
func (g *group) closeOnEnd(close func()) {
	go func() { <-g.ctx.Done(); close() }()
}

// connectAll opens every connection (then runs after(c) on each, e.g. to
// subscribe) and resolves with the counts; it rejects only when not one
// connection worked, since then nothing could be measured.
func (g *group) connectAll(after func(c *conn) error) *sobek.Promise {
	p, resolve, reject := promises.New(g.vu)
	go func() {
		r := openAll(g.ctx, len(g.conns), g.connectRate, g.concurrency, func(i int) error {
			c := g.conns[i]
			if err := c.connect(g.ctx); err != nil {
				return explainDial(g.cfg.addr, err)
			}
			if after != nil {
				return after(c)
			}
			return nil
		})
		if r.Connected == 0 {
			reject(fmt.Errorf("%s.connect: none of %d connections to %s succeeded: %s", g.where, len(g.conns), g.cfg.addr, r.FirstErr))
			return
		}
		if r.Failed > 0 {
			g.logger.Warnf("%s: %d of %d connections failed; first error: %s", g.where, r.Failed, len(g.conns), r.FirstErr)
		}
		resolve(map[string]any{"connected": r.Connected, "failed": r.Failed, "seconds": r.Seconds, "first_error": r.FirstErr})
	}()
	return p
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
		global.unregister(g.m)
	})
}

func (g *group) closeConns() {
	done := make(chan struct{}, len(g.conns))
	sem := make(chan struct{}, 256)
	for _, c := range g.conns {
		sem <- struct{}{}
		go func(c *conn) { c.close(); <-sem; done <- struct{}{} }(c)
	}
	for range g.conns {
		<-done
	}
}

func (g *group) connected() int {
	n := 0
	for _, c := range g.conns {
		if c.up.Load() {
			n++
		}
	}
	return n
}
