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
	sent   []int64 // send time (Unix ns) by slot; 0 = free
	pids   []uint16
	next   uint16
	used   int
	limit  int
	closed bool // the connection was lost: nothing may be sent until it is back

	// By slot, for a re-send: the message's sequence number and intended
	// send time, and (QoS 2) whether its PUBREC came (then PUBCOMP is awaited).
	seqs     []uint32
	intended []int64
	pubrec   []bool
}

func newWindow(limit int) *window {
	size := 1
	for size < limit {
		size <<= 1
	}
	return &window{sent: make([]int64, size), pids: make([]uint16, size), seqs: make([]uint32, size),
		intended: make([]int64, size), pubrec: make([]bool, size), limit: limit}
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
	i := int(pid) % len(w.sent)
	if w.sent[i] != 0 {
		return 0, false
	}
	w.sent[i], w.pids[i], w.next = now, pid, pid
	w.seqs[i], w.intended[i], w.pubrec[i] = seq, intended, false
	w.used++
	return pid, true
}

// release frees a packet id and returns when it was sent.
func (w *window) release(pid uint16) (int64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := int(pid) % len(w.sent)
	if w.pids[i] != pid || w.sent[i] == 0 {
		return 0, false
	}
	t := w.sent[i]
	w.sent[i] = 0
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
	clear(w.sent)
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
	clear(w.sent)
	w.used = 0
	w.closed = false
	w.limit = min(limit, len(w.sent))
	w.mu.Unlock()
	return n
}

func (w *window) inFlight() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.used
}
