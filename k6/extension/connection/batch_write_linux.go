package connection

import (
	"fmt"
	"syscall"
	"time"
)

// A Flusher writes what many connections have buffered in one system call
// (io_uring), each connection's packets in one send as Flush would, where
// the kernel offers io_uring; else, and for a connection the poller does
// not own (TLS, WebSocket, a reader goroutine), it flushes them one by
// one. Why: a publisher group's pacing tick has one message for each of
// many connections, and a write each would cost a system call per message.
//
// Each connection's lock (and its socket's) is held from its send's queuing
// until its result is in, so its bytes stay in order with every other
// writer's; a send the kernel took only part of (MSG_DONTWAIT: a full
// socket buffer) is finished by the usual write, which waits for room.
type Flusher struct {
	ring  *ring
	slots []flushSlot
	busy  []*Conn // a batch's connections whose lock another held
	calls int     // io_uring_enter calls so far (what a test counts)
}

type flushSlot struct {
	c   *Conn
	rc  *rawConn
	res int32
}

// NewFlusher makes the flusher of one goroutine (a ring has one submitter).
func NewFlusher() *Flusher {
	r, err := newRing(batchReads)
	if err != nil {
		return &Flusher{}
	}
	return &Flusher{ring: r, slots: make([]flushSlot, r.entries)}
}

// Close gives the ring back.
func (f *Flusher) Close() {
	if f != nil && f.ring != nil {
		f.ring.close()
		f.ring = nil
	}
}

// FlushWithin flushes every connection as Conn.FlushWithin(d) does (d 0:
// as Conn.Flush, with no deadline).
func (f *Flusher) FlushWithin(conns []*Conn, d time.Duration) {
	if f == nil || f.ring == nil {
		flushEach(conns, d)
		return
	}
	var sent tally
	defer sent.flush()
	for len(conns) > 0 {
		n := min(len(conns), len(f.slots))
		q := 0
		busy := f.busy[:0]
		for _, c := range conns[:n] {
			// Two flushers (a poller's acks, a publisher's tick) may share
			// connections: waiting for one's lock while holding others'
			// could wait for ever. A busy one is flushed after the batch.
			if !c.mu.TryLock() {
				busy = append(busy, c)
				continue
			}
			if len(c.wbuf) == 0 {
				c.mu.Unlock()
				continue
			}
			rc, raw := c.nc.(*rawConn)
			if raw {
				rc.mu.Lock()
			}
			if !raw || rc.released || rc.closing { // not the poller's, or closed: its own write says how
				if raw {
					rc.mu.Unlock()
				}
				c.mu.Unlock()
				busy = append(busy, c)
				continue
			}
			f.slots[q] = flushSlot{c: c, rc: rc, res: unreaped}
			f.ring.send(rc.fd, c.wbuf, uint64(q)) //nolint:gosec // q < batchReads
			q++
		}
		conns = conns[n:]
		if q == 0 {
			f.flushBusy(busy, d)
			continue
		}
		f.calls++
		if err := f.ring.submit(q); err != nil {
			panic(fmt.Sprintf("mqtt: %v", err)) // a bug: the ring and its sockets are ours
		}
		f.ring.reap(func(tag uint64, res int32) { f.slots[tag].res = res })
		now := nowNano() // the batch's sends ended together: one clock read
		for i := range f.slots[:q] {
			s := &f.slots[i]
			c, rc, res := s.c, s.rc, s.res
			*s = flushSlot{}
			rc.mu.Unlock()
			if res == unreaped {
				panic("mqtt: io_uring_enter returned before a send of its batch was done") // MSG_DONTWAIT: a bug
			}
			if res > 0 {
				sent.add(rc.bytesWritten, int(res))
				c.sentLocked(int(res), now)
			}
			retry := len(c.wbuf) > 0 && (res >= 0 || res == -int32(syscall.EAGAIN) || res == -int32(syscall.EINTR))
			if res < 0 && !retry {
				c.wbuf = c.wbuf[:0]
				_ = c.nc.Close() // the reader sees it and reconnects
			}
			c.mu.Unlock()
			if retry { // the rest waits for room, as a write does, once no other lock is held
				busy = append(busy, c)
			}
		}
		f.flushBusy(busy, d)
	}
}

// flushBusy flushes a batch's left-over connections one by one, once no
// other lock is held, and keeps the list's room for the next batch.
func (f *Flusher) flushBusy(busy []*Conn, d time.Duration) {
	flushEach(busy, d)
	clear(busy)
	f.busy = busy[:0]
}
