package mqtt

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/promises"
)

func nowNano() int64 { return time.Now().UnixNano() }

// phase is one publish() call: a rate held for a duration or a count.
type phase struct {
	rate     float64
	duration time.Duration
	count    int64
	drain    time.Duration // how long to wait for a blocked window at the end
	batch    time.Duration // least time between wake-ups: messages due meanwhile share a write
}

// Publish runs one publishing phase and resolves with what it achieved:
//
//	await pubs.publish({ rate: 1000, duration: '60s' })      // total msg/s
//	await pubs.publish({ rate_per_client: 1, duration: '5m' })
//	await pubs.publish({ count: 10000, rate: 5000 })
//
// Calls may follow each other (step load); sequence numbers continue.
func (g *PublisherGroup) Publish(arg sobek.Value) *sobek.Promise {
	p, resolve, reject := promises.New(g.vu)
	ph, err := g.readPhase(exportValue(arg))
	if err == nil && !g.running.CompareAndSwap(false, true) {
		err = errors.New("PublisherGroup.publish: a publish phase is already running on this group")
	}
	if err != nil {
		reject(err)
		return p
	}
	g.phases.Add(1)
	go func() {
		defer g.phases.Done()
		defer g.running.Store(false)
		r := g.run(ph)
		if r.Sent == 0 && r.Failed > 0 {
			reject(fmt.Errorf("PublisherGroup.publish: nothing could be sent (%d messages failed): no client is connected to %s", r.Failed, g.cfg.addr))
			return
		}
		resolve(r.js())
	}()
	return p
}

func (g *PublisherGroup) readPhase(arg any) (phase, error) {
	o := newOpts("PublisherGroup.publish", arg)
	ph := phase{}
	ph.rate = o.num("rate", g.rate, 0, 1e9)
	perClient := o.num("rate_per_client", g.ratePerConn, 0, 1e9)
	if ph.rate == 0 {
		ph.rate = perClient * float64(len(g.clients))
	}
	ph.duration = o.duration("duration", 0)
	ph.count = int64(o.integer("count", 0, 0, math.MaxInt32))
	ph.drain = o.duration("drain", 5*time.Second)
	ph.batch = o.duration("batch_interval", g.batch)
	if ph.rate <= 0 {
		o.fail("rate", "or \"rate_per_client\" must be > 0 (messages per second)")
	}
	if ph.duration == 0 && ph.count == 0 {
		o.fail("duration", "or \"count\" is required")
	}
	return ph, o.done()
}

type phaseResult struct {
	Sent       int64
	Failed     int64
	Seconds    float64
	Target     float64
	WindowFull int64 // times a QoS 1/2 message waited for the inflight window
	MaxLagMs   float64
}

func (r phaseResult) achieved() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Sent) / r.Seconds
}

func (r phaseResult) js() map[string]any {
	return map[string]any{
		"sent": r.Sent, "failed": r.Failed, "seconds": r.Seconds, "target_rate": r.Target,
		"achieved_rate": r.achieved(), "achieved_ratio": r.achieved() / r.Target,
		"window_full": r.WindowFull, "max_lag_ms": r.MaxLagMs,
	}
}

// run paces messages at the phase rate over the clients in round-robin, so
// each client publishes at rate/N, evenly staggered. Message k is intended at
// start + k/rate; all messages already due are sent at each wake-up (several
// per connection go out in one write), so a generator that falls behind
// sends late rather than skipping, and the lag shows in send lag and in
// intended latency: no coordinated omission.
func (g *PublisherGroup) run(ph phase) phaseResult {
	n := len(g.clients)
	interval := float64(time.Second) / ph.rate
	limit := ph.count
	if limit == 0 || (ph.duration > 0 && int64(ph.duration.Seconds()*ph.rate) < limit) {
		limit = int64(math.Floor(ph.duration.Seconds() * ph.rate))
	}
	g.m.setTarget(ph.rate)
	defer g.m.setTarget(0)
	payload := make([]byte, g.payloadSize) // header + zero padding, reused
	dirty := make([]*pubClient, 0, min(n, 4096))
	var blocked []*pubClient
	var r phaseResult
	r.Target = ph.rate
	start := nowNano()
	var k int64
	for k < limit && g.ctx.Err() == nil {
		now := nowNano()
		due := min(int64(float64(now-start)/interval)+1, limit)
		// Clients whose window was full get their waiting messages out first.
		blocked = g.retryBlocked(blocked, payload, &dirty, &r)
		for ; k < due; k++ {
			pc := g.clients[g.rr%n]
			g.rr++
			intended := start + int64(float64(k)*interval)
			if len(pc.backlog) > 0 {
				pc.backlog = append(pc.backlog, intended)
				continue
			}
			switch g.send(pc, intended, payload, &dirty, &r) {
			case sendOK:
				r.Sent++
			case sendBlocked:
				pc.backlog = append(pc.backlog, intended)
				blocked = append(blocked, pc)
				r.WindowFull++
			case sendFailed:
				r.Failed++
			}
		}
		g.flushDirty(&dirty)
		// Sleep until the next message is due, but at least batch_interval:
		// waking per message at 100K msg/s would cost a syscall each. The
		// messages keep their intended times, so this shows as send lag.
		if next := start + int64(float64(k)*interval); k < limit {
			d := time.Duration(next - nowNano())
			if d < ph.batch {
				d = ph.batch
			}
			time.Sleep(d)
		}
	}
	// A phase with a duration holds it fully (its last message is due just
	// before the end), so that step boundaries are where they were planned.
	if ph.duration > 0 {
		if d := time.Until(time.Unix(0, start).Add(ph.duration)); d > 0 {
			select {
			case <-g.ctx.Done():
			case <-time.After(d):
			}
		}
	}
	// Messages still waiting for a window slot get a bounded drain time.
	deadline := time.Now().Add(ph.drain)
	for len(blocked) > 0 && time.Now().Before(deadline) && g.ctx.Err() == nil {
		blocked = g.retryBlocked(blocked, payload, &dirty, &r)
		g.flushDirty(&dirty)
		time.Sleep(time.Millisecond)
	}
	// QoS 1/2: the phase ends when the broker acknowledged what was sent.
	for g.qos > 0 && g.inFlight() > 0 && time.Now().Before(deadline) && g.ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	for _, pc := range blocked {
		r.Failed += int64(len(pc.backlog))
		g.m.add(cPublishFailures, int64(len(pc.backlog)))
		pc.backlog = nil
	}
	r.Seconds = float64(nowNano()-start) / 1e9
	if ph.duration > 0 && r.Seconds < ph.duration.Seconds() {
		r.Seconds = ph.duration.Seconds()
	}
	ratio := r.achieved() / r.Target
	g.m.setAchieved(ratio)
	if ratio < 0.95 && g.ctx.Err() == nil {
		cause := "the generator could not keep up (CPU-bound: see mqtt_send_lag); add generator processes or lower the rate"
		if r.WindowFull > 0 {
			cause = fmt.Sprintf("the broker held back acknowledgements (inflight window full %d times)", r.WindowFull)
		}
		g.logger.Warnf("PublisherGroup: achieved %.0f msg/s of the %.0f msg/s target (%.1f%%): %s",
			r.achieved(), r.Target, 100*ratio, cause)
	}
	return r
}

func (g *PublisherGroup) inFlight() int {
	n := 0
	for _, pc := range g.clients {
		n += pc.win.inFlight()
	}
	return n
}

type sendOutcome int

const (
	sendOK sendOutcome = iota
	sendBlocked
	sendFailed
)

// send builds one PUBLISH into the client's write buffer; r keeps the
// phase's largest send lag.
func (g *PublisherGroup) send(pc *pubClient, intended int64, payload []byte, dirty *[]*pubClient, r *phaseResult) sendOutcome {
	c := pc.c
	if !c.up.Load() {
		g.m.add(cPublishFailures, 1) // not connected: not sent, not expected
		return sendFailed
	}
	now := nowNano()
	var pid uint16
	if pc.win != nil {
		var ok bool
		if pid, ok = pc.win.acquire(now); !ok {
			return sendBlocked
		}
	}
	seq := pc.seq.Load()
	putHeader(payload, pc.id, seq, now, intended)
	c.mu.Lock()
	c.wbuf = appendPublish(c.wbuf, pc.prefix, g.qos, pid, g.cfg.version, payload)
	c.mu.Unlock()
	if !pc.dirty {
		pc.dirty = true
		*dirty = append(*dirty, pc)
	}
	pc.seq.Store(seq + 1)
	g.m.add(cPublishes, 1)
	g.m.add(cBytesSent, int64(len(payload)))
	global.record(histSendLag, c.idx, now-intended)
	r.MaxLagMs = max(r.MaxLagMs, float64(now-intended)/1e6)
	return sendOK
}

func (g *PublisherGroup) retryBlocked(blocked []*pubClient, payload []byte, dirty *[]*pubClient, r *phaseResult) []*pubClient {
	kept := blocked[:0]
	for _, pc := range blocked {
		for len(pc.backlog) > 0 {
			out := g.send(pc, pc.backlog[0], payload, dirty, r)
			if out == sendBlocked {
				break
			}
			if out == sendFailed {
				r.Failed++
			} else {
				r.Sent++
			}
			pc.backlog = pc.backlog[1:]
		}
		if len(pc.backlog) > 0 {
			kept = append(kept, pc)
		} else {
			pc.backlog = nil
		}
	}
	return kept
}

// flushDirty writes each touched connection once: many messages, one syscall.
func (g *PublisherGroup) flushDirty(dirty *[]*pubClient) {
	for _, pc := range *dirty {
		_ = pc.c.flush()
		pc.dirty = false
	}
	*dirty = (*dirty)[:0]
}
