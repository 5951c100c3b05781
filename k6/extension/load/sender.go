package load

import "time"

// sender is one phase's scheduler state: the payload buffer it reuses, the
// connections written since the last flush, the clients whose QoS 1/2
// window is full, and the result so far. It runs on the phase's goroutine.
type sender struct {
	g       *PublisherGroup
	payload []byte // header + zero padding, reused
	dirty   []*pubClient
	blocked []*pubClient
	r       PhaseResult
}

type sendOutcome int

const (
	sendOK sendOutcome = iota
	sendBlocked
	sendFailed
)

// offer sends message intended at `intended` on pc, or queues it behind
// the client's backlog when its window is full.
func (s *sender) offer(pc *pubClient, intended int64) {
	if len(pc.backlog) > 0 {
		pc.backlog = append(pc.backlog, intended)
		return
	}
	switch s.send(pc, intended) {
	case sendOK:
		s.r.Sent++
	case sendBlocked:
		pc.backlog = append(pc.backlog, intended)
		s.blocked = append(s.blocked, pc)
		s.r.WindowFull++
	case sendFailed:
		s.r.Failed++
	}
}

// send builds one PUBLISH into the client's write buffer and keeps the
// phase's largest send lag.
func (s *sender) send(pc *pubClient, intended int64) sendOutcome {
	g, c := s.g, pc.c
	if !c.Up() {
		g.m.Add(PublishFailures, 1) // not connected: not sent, not expected
		return sendFailed
	}
	now := nowNano()
	var pid uint16
	if pc.win != nil {
		var ok bool
		if pid, ok = pc.win.acquire(now, pc.seq.Load(), intended); !ok {
			return sendBlocked
		}
	}
	seq := pc.seq.Load()
	putHeader(s.payload, pc.id, seq, now, intended)
	c.QueuePublish(pc.prefix, g.pc.QoS, pid, s.payload)
	if !pc.dirty {
		pc.dirty = true
		s.dirty = append(s.dirty, pc)
	}
	pc.seq.Store(seq + 1)
	g.m.Add(Publishes, 1)
	g.m.Add(BytesSent, int64(len(s.payload)))
	g.m.Record(SendLag, c.Index(), now-intended)
	s.r.MaxLagMs = max(s.r.MaxLagMs, float64(now-intended)/1e6)
	return sendOK
}

// retryBlocked sends what waits in the backlogs of blocked clients, as far
// as their windows allow.
func (s *sender) retryBlocked() {
	kept := s.blocked[:0]
	for _, pc := range s.blocked {
		for len(pc.backlog) > 0 {
			out := s.send(pc, pc.backlog[0])
			if out == sendBlocked {
				break
			}
			if out == sendFailed {
				s.r.Failed++
			} else {
				s.r.Sent++
			}
			pc.backlog = pc.backlog[1:]
		}
		if len(pc.backlog) > 0 {
			kept = append(kept, pc)
		} else {
			pc.backlog = nil
		}
	}
	s.blocked = kept
}

// flushDirty writes each touched connection once: many messages, one syscall.
func (s *sender) flushDirty() {
	for _, pc := range s.dirty {
		_ = pc.c.Flush()
		pc.dirty = false
	}
	s.dirty = s.dirty[:0]
}

// drain gives messages still waiting for a window slot until deadline, then
// waits for the broker to acknowledge what was sent (QoS 1/2); what is
// still waiting then failed.
func (s *sender) drain(deadline time.Time) {
	g := s.g
	for len(s.blocked) > 0 && time.Now().Before(deadline) && g.ctx.Err() == nil {
		s.retryBlocked()
		s.flushDirty()
		time.Sleep(time.Millisecond)
	}
	for g.pc.QoS > 0 && g.inFlight() > 0 && time.Now().Before(deadline) && g.ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	for _, pc := range s.blocked {
		s.r.Failed += int64(len(pc.backlog))
		g.m.Add(PublishFailures, int64(len(pc.backlog)))
		pc.backlog = nil
	}
}
