package load

import (
	"math"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
)

// sender is one phase's scheduler state: the payload buffer it reuses, the
// connections written since the last flush, the clients whose QoS 1/2
// window is full, and the result so far. It runs on the phase's goroutine.
//
// What it holds is bounded whatever the rate: a wake-up takes at most
// `budget` messages (so write buffers stay small), and a message due longer
// than maxLag ago is missed rather than kept (so nothing queues up behind a
// generator or a window that cannot keep up).
type sender struct {
	g        *PublisherGroup
	payload  []byte // header + zero padding, reused
	dirty    []*pubClient
	blocked  []*pubClient
	start    int64   // the phase's start (Unix ns): message k is intended at start + k*interval
	interval float64 // ns between two messages of the group
	maxLag   int64   // ns: a message due longer ago is missed
	budget   int     // messages one wake-up may take
	taken    int     // messages taken in this wake-up
	r        PhaseResult
	flusher  *connection.Flusher // a wake-up's writes in one system call
	flushing []*connection.Conn  // the dirty clients' connections, reused
}

// backlog is a client's messages waiting for a window slot. The round-robin
// gives a client every n-th message of the phase, so the waiting ones are
// first, first+n, first+2n...: two numbers, however many wait.
type backlog struct {
	first int64 // index in the phase of the first waiting message
	n     int64 // how many wait
}

// The bounds of one wake-up: at most maxWakeBytes of PUBLISH packets and at
// most maxWakeMessages. Far above what a wake-up needs at the rate one
// process reaches (1,000 messages at 1M msg/s and 1 ms), they keep the write
// buffers of a generator asked for more than it can send to a few MiB, and a
// wake-up short enough to notice a stop at once.
const (
	maxWakeBytes    = 4 << 20
	maxWakeMessages = 1 << 16
)

// DefaultMaxLag is how late a message may still be sent: later than this
// behind its intended time, it is missed (mqtt_missed_sends). A second
// covers pauses of the generator (GC, scheduling) and a broker's slow
// acknowledgements, which show as send lag and intended latency, while what
// waits stays bounded.
const DefaultMaxLag = time.Second

// writeTimeout bounds one flush: a broker that reads none of it for half
// this to this long (Conn.FlushWithin) has the connection closed (and redialled) rather than stall the
// whole phase past its end, or a stop past a few seconds. Its messages then
// count as lost at the subscribers (QoS 0) or failed (QoS 1/2).
const writeTimeout = 2 * time.Second

func wakeBudget(packetBytes int) int {
	return max(1, min(maxWakeMessages, maxWakeBytes/max(1, packetBytes)))
}

func (s *sender) intended(k int64) int64 { return s.start + int64(float64(k)*s.interval) }

// firstOnTime is the index of the first message not yet missed at now.
func (s *sender) firstOnTime(now int64) int64 {
	return int64(math.Ceil(float64(now-s.maxLag-s.start) / s.interval))
}

// miss counts n messages that will never be sent; window: they waited for
// a full QoS 1/2 window (else the scheduler did not get to them in time).
func (s *sender) miss(n int64, window bool) {
	if n > 0 {
		s.r.Missed += n
		if window {
			s.r.MissedWindow += n
		}
		s.g.m.Add(MissedSends, n)
	}
}

// offer sends message k of the phase on pc, or queues it behind the
// client's backlog when its window is full.
func (s *sender) offer(pc *pubClient, k int64) {
	s.taken++
	if pc.backlog.n > 0 {
		pc.backlog.n++
		return
	}
	switch s.send(pc, s.intended(k)) {
	case sendOK:
		s.r.Sent++
	case sendBlocked:
		pc.backlog = backlog{first: k, n: 1}
		s.blocked = append(s.blocked, pc)
		s.r.WindowFull++
	case sendFailed:
		s.r.Failed++
	}
}

type sendOutcome int

const (
	sendOK sendOutcome = iota
	sendBlocked
	sendFailed
)

// send builds one PUBLISH into the client's write buffer and keeps the
// phase's largest send lag. A QoS 0 message is published once written; a
// QoS 1/2 one when the broker acknowledges it (OnAck).
func (s *sender) send(pc *pubClient, intended int64) sendOutcome {
	g, c := s.g, pc.c
	if !c.Up() {
		g.m.Add(PublishFailures, 1) // not connected: not sent, not expected
		return sendFailed
	}
	now := nowNano()
	seq := pc.seq.Load()
	var pid uint16
	if pc.win != nil {
		var ok bool
		if pid, ok = pc.win.acquire(now, seq, intended); !ok {
			return sendBlocked
		}
	} else {
		g.m.Add(Publishes, 1)
	}
	g.fillPayload(s.payload, pc, seq, now, intended)
	c.QueuePublish(pc.prefix, g.pc.QoS, pid, s.payload)
	if !pc.dirty {
		pc.dirty = true
		s.dirty = append(s.dirty, pc)
	}
	pc.seq.Store(seq + 1)
	g.m.Add(BytesSent, int64(len(s.payload)))
	g.m.Record(SendLag, c.Index(), now-intended)
	s.r.MaxLagMs = max(s.r.MaxLagMs, float64(now-intended)/1e6)
	return sendOK
}

// retryBlocked drops, as missed, what waited in the backlogs of blocked
// clients longer than maxLag, then sends what it can as far as their
// windows and the wake-up's budget allow.
func (s *sender) retryBlocked(now int64) {
	onTime := s.firstOnTime(now)
	step := int64(len(s.g.clients))
	kept := s.blocked[:0]
	for _, pc := range s.blocked {
		b := &pc.backlog
		if late := min(b.n, ceilDiv(onTime-b.first, step)); late > 0 {
			s.miss(late, true)
			b.first += late * step
			b.n -= late
		}
		for b.n > 0 && s.taken < s.budget {
			out := s.send(pc, s.intended(b.first))
			if out == sendBlocked {
				break
			}
			s.taken++
			if out == sendFailed {
				s.r.Failed++
			} else {
				s.r.Sent++
			}
			b.first += step
			b.n--
		}
		if b.n > 0 {
			kept = append(kept, pc)
		}
	}
	clear(s.blocked[len(kept):])
	s.blocked = kept
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

// flushDirty writes each touched connection once: many messages, one syscall.
func (s *sender) flushDirty() {
	s.flushing = s.flushing[:0]
	for _, pc := range s.dirty {
		s.flushing = append(s.flushing, pc.c)
		pc.dirty = false
	}
	s.flusher.FlushWithin(s.flushing, writeTimeout)
	s.dirty = s.dirty[:0]
	s.taken = 0
}

// sendBlocked gives messages still waiting for a window slot until deadline
// (or until they are missed); what still waits then is missed. A stop (the
// VU's context) ends it at once.
func (s *sender) sendBlocked(deadline time.Time) {
	g := s.g
	for len(s.blocked) > 0 && time.Now().Before(deadline) && g.ctx.Err() == nil {
		s.retryBlocked(nowNano())
		s.flushDirty()
		sleepCtx(g.ctx, time.Millisecond)
	}
	for _, pc := range s.blocked {
		s.miss(pc.backlog.n, true)
		pc.backlog = backlog{}
	}
	s.blocked = s.blocked[:0]
}

// waitAcks waits until deadline for the broker to acknowledge what was
// sent (QoS 1/2). What is unacknowledged then stays in flight (Close counts
// it as failed if it stays so). A stop ends it at once.
func (s *sender) waitAcks(deadline time.Time) {
	g := s.g
	for g.pc.QoS > 0 && g.inFlight() > 0 && time.Now().Before(deadline) && g.ctx.Err() == nil {
		sleepCtx(g.ctx, time.Millisecond)
	}
}
