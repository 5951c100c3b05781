package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

func nowNano() int64 { return time.Now().UnixNano() }

// Phase is one publish() call: a rate held for a duration or a count.
type Phase struct {
	Rate     float64       // msg/s over the whole group
	Duration time.Duration // how long (0: until Count)
	Count    int64         // how many messages (0: for Duration)
	Drain    time.Duration // how long to wait for a blocked window at the end
	Batch    time.Duration // least time between wake-ups: messages due meanwhile share a write
	MaxLag   time.Duration // a message later than this behind its intended time is missed (0: DefaultMaxLag)
}

// PhaseResult is what a phase achieved.
type PhaseResult struct {
	Sent     int64 // written to the broker (QoS 1/2: acknowledged, rejected or failed later)
	Failed   int64
	Rejected int64 // refused by the broker (reason >= 0x80): not delivered, not expected
	Missed   int64 // never sent: due longer than max_lag ago
	// MissedWindow of Missed waited for a full QoS 1/2 window: the broker's
	// acknowledgements held them back. The rest the scheduler did not reach
	// in time: the generator could not send at the rate.
	MissedWindow int64
	// Seconds is the send window: from the phase's start until its
	// duration ended or its last message went out, whichever is later.
	// The achieved rate is what the generator sent in it, never diluted
	// by the wait for the broker's acknowledgements (AckSeconds).
	Seconds float64
	// AckSeconds runs until the last acknowledgement came in (QoS 1/2), or
	// the drain gave up on it (Unacked then says how many were missing):
	// the broker's side, which its ack latency (mqtt_puback_duration) measures.
	AckSeconds float64
	Unacked    int64
	Target     float64
	WindowFull int64 // times a QoS 1/2 message waited for the inflight window
	MaxLagMs   float64
}

// Achieved is the achieved rate in msg/s.
func (r PhaseResult) Achieved() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Sent) / r.Seconds
}

// Map is the result as the JS API returns it.
func (r PhaseResult) Map() map[string]any {
	return map[string]any{
		"sent": r.Sent, "failed": r.Failed, "rejected": r.Rejected, "missed": r.Missed, "missed_window": r.MissedWindow, "seconds": r.Seconds, "target_rate": r.Target,
		"achieved_rate": r.Achieved(), "achieved_ratio": r.Achieved() / r.Target,
		"ack_seconds": r.AckSeconds, "unacked": r.Unacked,
		"window_full": r.WindowFull, "max_lag_ms": r.MaxLagMs,
	}
}

// PhaseOutcome is a finished phase: its result, or why nothing was sent.
type PhaseOutcome struct {
	Result PhaseResult
	Err    error
}

// Start runs one publishing phase in the background and delivers its
// outcome on the channel. Phases may follow each other (step load) and
// sequence numbers continue; only one runs at a time.
func (g *PublisherGroup) Start(ph Phase) (<-chan PhaseOutcome, error) {
	if !g.running.CompareAndSwap(false, true) {
		return nil, errors.New("PublisherGroup.publish: a publish phase is already running on this group")
	}
	out := make(chan PhaseOutcome, 1)
	g.phases.Add(1)
	go func() {
		defer g.phases.Done()
		r := g.run(ph)
		// Free before the outcome is handed over: the script may start the
		// next phase the moment its promise resolves.
		g.running.Store(false)
		if r.Sent == 0 && r.Failed > 0 {
			out <- PhaseOutcome{r, fmt.Errorf("PublisherGroup.publish: nothing could be sent (%d messages failed): no client is connected to %s", r.Failed, g.cfg.Conn.Addr)}
			return
		}
		out <- PhaseOutcome{Result: r}
	}()
	return out, nil
}

// run paces messages at the phase rate over the clients in round-robin, so
// each client publishes at rate/N, evenly staggered. Message k is intended at
// start + k/rate; the messages due are sent at each wake-up (several per
// connection go out in one write), so a generator that falls behind sends
// late rather than skipping, and the lag shows in send lag and in intended
// latency: no coordinated omission. Up to a bound: a wake-up takes at most
// the sender's budget, and a message due longer than MaxLag ago is missed
// (counted, never sent), so a rate beyond reach ends on time with bounded
// memory and the shortfall in mqtt_missed_sends.
func (g *PublisherGroup) run(ph Phase) PhaseResult {
	n := len(g.clients)
	interval := float64(time.Second) / ph.Rate
	limit := ph.Count
	if limit == 0 || (ph.Duration > 0 && int64(ph.Duration.Seconds()*ph.Rate) < limit) {
		limit = int64(math.Floor(ph.Duration.Seconds() * ph.Rate))
	}
	if ph.MaxLag <= 0 {
		ph.MaxLag = DefaultMaxLag
	}
	g.m.setTarget(ph.Rate)
	defer g.m.setTarget(0)
	s := &sender{g: g, payload: make([]byte, g.pc.PayloadSize), dirty: make([]*pubClient, 0, min(n, 4096)),
		interval: interval, maxLag: int64(ph.MaxLag), budget: wakeBudget(len(g.clients[0].prefix) + 2 + g.pc.PayloadSize)}
	s.flusher = connection.NewFlusher()
	defer s.flusher.Close()
	s.r.Target = ph.Rate
	rejected := g.m.Get(PublishRejected)
	start := nowNano()
	s.start = start
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var k int64
	for k < limit && g.ctx.Err() == nil {
		now := nowNano()
		due := min(int64(float64(now-start)/interval)+1, limit)
		// Clients whose window was full get their waiting messages out first.
		s.retryBlocked(now)
		// What the generator could not offer within MaxLag of its time is
		// missed: each client's share, as the round-robin would have given.
		if late := min(s.firstOnTime(now), due) - k; late > 0 {
			s.miss(late, false)
			g.rr += int(late % int64(n))
			k += late
		}
		for ; k < due && s.taken < s.budget; k++ {
			pc := g.clients[g.rr%n]
			g.rr++
			s.offer(pc, k)
		}
		s.flushDirty()
		// Sleep until the next message is due, but at least batch_interval:
		// waking per message at 100K msg/s would cost a syscall each. The
		// messages keep their intended times, so this shows as send lag.
		if k < limit {
			timer.Reset(max(time.Duration(s.intended(k)-nowNano()), ph.Batch))
			select {
			case <-g.ctx.Done():
			case <-timer.C:
			}
		}
	}
	// A phase with a duration holds it fully (its last message is due just
	// before the end), so that step boundaries are where they were planned.
	if ph.Duration > 0 {
		if d := time.Until(time.Unix(0, start).Add(ph.Duration)); d > 0 {
			sleepCtx(g.ctx, d)
		}
	}
	deadline := time.Now().Add(ph.Drain)
	s.sendBlocked(deadline)
	sent := nowNano()
	s.waitAcks(deadline)
	r := s.r
	r.Rejected = g.m.Get(PublishRejected) - rejected
	r.Seconds = max(float64(sent-start)/1e9, ph.Duration.Seconds())
	r.AckSeconds = max(float64(nowNano()-start)/1e9, ph.Duration.Seconds())
	if g.pc.QoS > 0 {
		r.Unacked = int64(g.inFlight())
	}
	ratio := r.Achieved() / r.Target
	g.m.setAchieved(ratio)
	if ratio < verdict.RateReached && g.ctx.Err() == nil {
		g.logger.Warnf("PublisherGroup: achieved %.0f msg/s of the %.0f msg/s target (%.1f%%): %s",
			r.Achieved(), r.Target, 100*ratio, g.shortfallCause(r, time.Unix(0, start)))
	}
	return r
}

// shortfallCause names why a phase fell short, from the evidence at hand,
// in the order of the result's diagnosis (the verdict package): messages
// with no connection to go out on while the scheduler kept pace are the
// broker's outage; messages the scheduler itself got to too late are the
// generator's limit (a connection it closed on a stalled write is not an
// outage of the broker's); then acks the broker held back.
func (g *PublisherGroup) shortfallCause(r PhaseResult, start time.Time) string {
	late := r.Missed - r.MissedWindow
	if n := g.group.run.outagesSince(start); (n > 0 || r.Failed > 0) && late == 0 {
		return fmt.Sprintf("%d messages had no open connection to go out on (%d outage(s) during the phase; "+
			"connections the broker refused or dropped: see mqtt_connect_failures, mqtt_disconnects, "+
			"mqtt_connections_down), not the generator's pace", r.Failed, n)
	}
	if late > 0 || (r.WindowFull == 0 && r.MissedWindow == 0) {
		return fmt.Sprintf("the generator could not keep up: it cannot reach the target rate (%d messages due more "+
			"than max_lag ago were never sent, mqtt_missed_sends; CPU-bound: see mqtt_send_lag); "+
			"add generator processes or lower the rate", late)
	}
	return fmt.Sprintf("the broker held back acknowledgements (inflight window full %d times, %d messages "+
		"never sent)", r.WindowFull, r.MissedWindow)
}

// sleepCtx sleeps for d, or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (g *PublisherGroup) inFlight() int {
	n := 0
	for _, pc := range g.clients {
		n += pc.win.inFlight()
	}
	return n
}
