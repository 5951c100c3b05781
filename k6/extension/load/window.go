package load

import "sync"

// window tracks a publisher's QoS 1/2 messages in flight: packet id → send
// time, for PUBACK/PUBCOMP latency, capped at the broker's receive maximum;
// and what rebuilds each message (sequence number, intended time) for a
// re-send after a reconnect that resumed the session (resend.go).
type window struct {
	mu    sync.Mutex
	sent  []int64 // send time (Unix ns) by slot; 0 = free
	pids  []uint16
	next  uint16
	used  int
	limit int

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
// intended), or reports the window full.
func (w *window) acquire(now int64, seq uint32, intended int64) (uint16, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.used >= w.limit {
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

// reset forgets everything in flight (after a reconnect with a clean session).
func (w *window) reset(limit int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	clear(w.sent)
	w.used = 0
	w.limit = min(limit, len(w.sent))
}

func (w *window) inFlight() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.used
}
