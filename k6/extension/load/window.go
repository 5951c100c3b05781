package load

import "sync"

// window tracks a publisher's QoS 1/2 messages in flight: packet id → send
// time, for PUBACK/PUBCOMP latency, capped at the broker's receive maximum
// (or max_inflight, when lower). It is the only place a QoS 1/2 message
// waits for the broker, so what a publisher holds is bounded by its limit.
// It also keeps what rebuilds each message (sequence number, intended time)
// for a re-send after a reconnect that resumed the session (resend.go).
type window struct {
	mu     sync.Mutex
	slots  []inflight // by packet id modulo its length; sent 0 = free
	next   uint16
	used   int
	limit  int
	closed bool // the connection was lost: nothing may be sent until it is back
}

// newWindow makes a window of limit slots, rounded up to a power of two. A
// slot keeps what its message needs side by side (one cache line for its
// send and its ack), with what a re-send rebuilds it from: its sequence
// number and intended send time, and (QoS 2) whether its PUBREC came (then
// PUBCOMP is awaited).
func newWindow(limit int) *window {
	size := 1
	for size < limit {
		size <<= 1
	}
	return &window{slots: make([]inflight, size), limit: limit}
}

// acquire takes the next packet id for message seq (sent now, intended at
// intended), or reports the window full (or closed).
func (w *window) acquire(now int64, seq uint32, intended int64) (uint16, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.used >= w.limit || w.closed {
		return 0, false
	}
	pid := w.next + 1
	if pid == 0 {
		pid = 1
	}
	s := &w.slots[int(pid)%len(w.slots)]
	if s.sent != 0 {
		return 0, false
	}
	*s = inflight{pid: pid, seq: seq, sent: now, intended: intended}
	w.next = pid
	w.used++
	return pid, true
}

// release frees a packet id and returns when it was sent.
func (w *window) release(pid uint16) (int64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := &w.slots[int(pid)%len(w.slots)]
	if s.pid != pid || s.sent == 0 {
		return 0, false
	}
	t := s.sent
	s.sent = 0
	w.used--
	return t, true
}

// abandon forgets everything in flight and returns how many messages that
// was: their acknowledgements will never come (the connection is gone and
// its session with it). Until reopen, acquire refuses, so that nothing is
// counted as in flight on a connection that is not there.
func (w *window) abandon() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.used
	clear(w.slots)
	w.used = 0
	w.closed = true
	return n
}

// reopen takes a (re)connected connection's limit (the broker may announce
// another receive maximum); what is still in flight from before is
// abandoned and counted as abandon does.
func (w *window) reopen(limit int) int {
	w.mu.Lock()
	n := w.used
	clear(w.slots)
	w.used = 0
	w.closed = false
	w.limit = min(limit, len(w.slots))
	w.mu.Unlock()
	return n
}

func (w *window) inFlight() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.used
}
