package mqtt

import (
	"fmt"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/js/promises"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
)

// PublisherGroup is the JS face of load.PublisherGroup.
type PublisherGroup struct {
	vu     modules.VU
	g      *load.PublisherGroup
	opts   publisherOptions
	record *runRecord
}

// SubscriberGroup is the JS face of load.SubscriberGroup.
type SubscriberGroup struct {
	vu     modules.VU
	g      *load.SubscriberGroup
	record *runRecord
}

// loadEnv is what the load package needs from the VU; groups and clients
// are made in VU code only (their connections outlive no VU). A group's
// connections dial through the VU's dialer (k6's counted, blocklisted one).
func (mi *ModuleInstance) loadEnv(what string, conn *connection.Config) (load.Env, error) {
	state := mi.vu.State()
	if state == nil {
		return load.Env{}, fmt.Errorf("%s must be created inside a VU function (default or setup), not in the init context", what)
	}
	if conn != nil {
		conn.Dial = state.Dialer.DialContext
		if len(conn.LocalAddrs) > 0 {
			conn.Dial = connection.LocalDialer(conn.LocalAddrs)
		}
	}
	tm := state.Tags.GetCurrentValues()
	env := load.Env{Ctx: mi.vu.Context(), Samples: state.Samples, Tags: tm.Tags, Meta: tm.Metadata,
		Logger: state.Logger, VUID: state.VUID}
	return env, nil
}

// newPublisherGroup is `new PublisherGroup(options)`: invalid options throw
// before anything connects.
func (mi *ModuleInstance) newPublisherGroup(call sobek.ConstructorCall) *sobek.Object {
	rt := mi.vu.Runtime()
	o, err := readPublisherOptions(exportArg(call.Arguments, 0))
	var env load.Env
	if err == nil {
		env, err = mi.loadEnv("PublisherGroup", o.cfg.Conn)
	}
	var g *load.PublisherGroup
	if err == nil {
		g, err = mi.root.run.NewPublisherGroup(env, o.cfg)
	}
	if err != nil {
		abortTest(rt, err)
		return rt.NewObject()
	}
	return rt.ToValue(&PublisherGroup{vu: mi.vu, g: g, opts: o, record: mi.root.record}).ToObject(rt)
}

// newSubscriberGroup is `new SubscriberGroup(options)`.
func (mi *ModuleInstance) newSubscriberGroup(call sobek.ConstructorCall) *sobek.Object {
	rt := mi.vu.Runtime()
	cfg, err := readSubscriberConfig(exportArg(call.Arguments, 0))
	var env load.Env
	if err == nil {
		env, err = mi.loadEnv("SubscriberGroup", cfg.Conn)
	}
	if err != nil {
		abortTest(rt, err)
		return rt.NewObject()
	}
	return rt.ToValue(&SubscriberGroup{vu: mi.vu, g: mi.root.run.NewSubscriberGroup(env, cfg),
		record: mi.root.record}).ToObject(rt)
}

// async runs work off the event loop and settles a promise with its result.
func async(vu modules.VU, work func() (any, error)) *sobek.Promise {
	p, resolve, reject := promises.New(vu)
	go func() {
		if v, err := work(); err != nil {
			reject(err)
		} else {
			resolve(v)
		}
	}()
	return p
}

// connected turns a connect result into the JS value; it rejects only when
// not one connection worked, since then nothing could be measured.
func connected(where, addr string, clients int, r load.ConnectResult) (any, error) {
	if r.Connected == 0 && clients > 0 {
		return nil, fmt.Errorf("%s.connect: none of %d connections to %s succeeded: %s", where, clients, addr, r.FirstErr)
	}
	out := map[string]any{"connected": r.Connected, "failed": r.Failed, "seconds": r.Seconds, "first_error": r.FirstErr,
		"transport": r.Transport}
	if r.TLSVersion != "" {
		out["tls_version"], out["cipher_suite"] = r.TLSVersion, r.CipherSuite
	}
	return out, nil
}

// Connect opens the connections at connect_rate; resolves {connected, failed, seconds}.
// The result records it, and a payload template's steady size.
func (p *PublisherGroup) Connect() *sobek.Promise {
	return async(p.vu, func() (any, error) {
		v, err := connected("PublisherGroup", p.g.Addr(), p.g.Clients(), p.g.Connect())
		p.record.connected("pub", p.g.Flow(), v, err)
		if err == nil && p.opts.cfg.Payload != nil {
			p.record.templateSize(int(result.Number(p.g.Stats()["payload_size"])))
		}
		return v, err
	})
}

// Publish runs one publishing phase and resolves with what it achieved:
//
//	await pubs.publish({ rate: 1000, duration: '60s' })      // total msg/s
//	await pubs.publish({ rate_per_client: 1, duration: '5m' })
//	await pubs.publish({ count: 10000, rate: 5000 })
func (p *PublisherGroup) Publish(arg sobek.Value) *sobek.Promise {
	ph, err := p.opts.readPhase(exportValue(arg), p.g.Clients())
	var done <-chan load.PhaseOutcome
	if err == nil {
		done, err = p.g.Start(ph)
	}
	if err != nil {
		return abortWithPromise(p.vu.Runtime(), err)
	}
	return async(p.vu, func() (any, error) {
		out := <-done
		return out.Result.Map(), out.Err
	})
}

// Close disconnects every client and pushes the final metrics.
func (p *PublisherGroup) Close() { p.g.Close() }

// Stats returns this group's counts so far.
func (p *PublisherGroup) Stats() map[string]any { return p.g.Stats() }

// Connect opens the connections and subscribes each; resolves {connected, failed, seconds}.
func (s *SubscriberGroup) Connect() *sobek.Promise {
	return async(s.vu, func() (any, error) {
		r := s.g.Connect()
		if err := s.g.Refusal(); err != nil {
			err = fmt.Errorf("SubscriberGroup.connect: %w", err)
			s.record.connected("sub", s.g.Flow(), nil, err)
			return nil, err
		}
		v, err := connected("SubscriberGroup", s.g.Addr(), s.g.Clients(), r)
		if m, ok := v.(map[string]any); ok && r.SharedCheck != "" {
			m["shared_check"] = r.SharedCheck
			if r.Probes > 0 {
				m["probes"] = r.Probes
			}
		}
		s.record.connected("sub", s.g.Flow(), v, err)
		return v, err
	})
}

// Drain waits until messages stop arriving: until `expected` messages were
// received, or nothing came for `idle`, or `timeout` passed.
//
//	await subs.drain({ expected: 60000, idle: '2s', timeout: '30s' })
func (s *SubscriberGroup) Drain(arg sobek.Value) *sobek.Promise {
	o := newOpts("SubscriberGroup.drain", exportValue(arg))
	expected := int64(o.integer("expected", 0, 0, 1<<53))
	idle := o.duration("idle", 2*time.Second)
	timeout := o.duration("timeout", 30*time.Second)
	if err := o.done(); err != nil {
		return abortWithPromise(s.vu.Runtime(), err)
	}
	if expected > 0 {
		s.g.SetExpected(expected) // at once: stats() or close() right after drain() count against it
	}
	return async(s.vu, func() (any, error) {
		stats := s.g.Drain(expected, idle, timeout)
		s.record.drained(s.g.Flow(), stats)
		return stats, nil
	})
}

// SetExpected tells the group how many messages it should receive in all,
// so that messages that never arrived on any stream count as lost.
func (s *SubscriberGroup) SetExpected(n int64) { s.g.SetExpected(n) }

// Stats returns the delivery accounting so far.
func (s *SubscriberGroup) Stats() map[string]any { return s.g.Stats() }

// Close disconnects, then pushes lost, duplicate and out-of-order counts.
func (s *SubscriberGroup) Close() { s.g.Close() }
