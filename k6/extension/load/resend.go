package load

import "slices"

// Re-sending after a reconnect that resumed the session (MQTT-4.4.0-1): the
// QoS 1/2 PUBLISHes the broker has not acknowledged go again, with DUP and
// their packet ids, in their original order; a QoS 2 message whose PUBREC
// came gets its PUBREL again. Each message is rebuilt from its sequence
// number and original times (the window keeps them), so no payload is kept
// per message: the subscribers time it from its original send and tell a
// re-send the broker had already delivered for a duplicate.

// inflight is one unacknowledged message of a window: a slot of it (sent 0: a free one).
type inflight struct {
	pid      uint16
	pubrec   bool
	seq      uint32
	sent     int64
	intended int64 // 24 bytes in all: a 1,024 window is 24 KB a connection
}

// pending lists the messages in flight sent before `before`, oldest first.
func (w *window) pending(before int64) []inflight {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []inflight
	for _, s := range w.slots {
		if s.sent != 0 && s.sent < before {
			out = append(out, s)
		}
	}
	// Sequence numbers grow per client: their order is the sending order.
	slices.SortFunc(out, func(a, b inflight) int { return int(int64(a.seq) - int64(b.seq)) })
	return out
}

// markPubrec notes that a QoS 2 message's PUBREC came: a re-send then
// sends PUBREL, not the PUBLISH (MQTT-4.3.3).
func (w *window) markPubrec(pid uint16) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := &w.slots[int(pid)%len(w.slots)]; s.pid == pid && s.sent != 0 {
		s.pubrec = true
	}
}

// setLimit takes the receive maximum of a new connection, keeping what is
// in flight.
func (w *window) setLimit(limit int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.limit = min(limit, len(w.slots))
}

// resend queues and flushes, on a connection that resumed its session,
// every message of pc still in flight; it returns how many PUBLISHes went
// again (PUBRELs are not counted).
func (g *PublisherGroup) resend(pc *pubClient) int64 {
	// Messages the scheduler sent on the new connection before this ran
	// are not re-sent: only those written on the connection that was lost.
	msgs := pc.win.pending(pc.c.AttachedAt())
	if len(msgs) == 0 {
		return 0
	}
	dup := append([]byte(nil), pc.prefix...)
	dup[0] |= 0x08 // DUP (§3.3.1.1)
	payload := make([]byte, g.pc.PayloadSize)
	var n int64
	for _, m := range msgs {
		if m.pubrec {
			pc.c.QueuePubrel(m.pid)
			continue
		}
		g.fillPayload(payload, pc, m.seq, m.sent, m.intended)
		pc.c.QueuePublish(dup, g.pc.QoS, m.pid, payload)
		n++
	}
	_ = pc.c.Flush() // a failure drops the connection: the next reconnect re-sends
	g.m.Add(Resends, n)
	return n
}
