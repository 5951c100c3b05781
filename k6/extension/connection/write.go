package connection

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
)

// AckResult is the broker's answer to a Request.
type AckResult struct {
	Type   byte
	Reason byte
	Codes  []byte // SUBACK / UNSUBACK reason codes
}

// queueAck appends an ack to the write buffer (sent by the next flush).
func (c *Conn) queueAck(typ byte, pid uint16) {
	c.mu.Lock()
	c.wbuf = codec.AppendAck(c.wbuf, codec.Ack{Type: typ, PacketID: pid})
	c.mu.Unlock()
}

// QueuePublish appends one PUBLISH, from its prebuilt prefix, to the write
// buffer; Flush sends it with whatever else is queued.
func (c *Conn) QueuePublish(prefix []byte, qos byte, pid uint16, payload []byte) {
	c.mu.Lock()
	c.wbuf = codec.AppendPublish(c.wbuf, prefix, qos, pid, c.cfg.Version, payload)
	c.mu.Unlock()
}

// Flush writes the buffered packets in one syscall.
func (c *Conn) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flushLocked()
}

// FlushWithin is Flush that gives up after d/2 to d: a broker that reads
// nothing for that long gets its connection closed (and redialled, when
// configured), instead of holding the writer, and whoever waits for the
// connection's lock (Close), for as long as it likes. Moving a deadline is
// a timer operation, and a publisher flushes thousands of times a second:
// the deadline moves only when less than d/2 of it is left.
func (c *Conn) FlushWithin(d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flushWithinLocked(d)
}

func (c *Conn) flushWithinLocked(d time.Duration) error {
	if nc := c.nc; nc != nil && len(c.wbuf) > 0 {
		if now := nowNano(); c.wdeadline-now < int64(d)/2 {
			c.wdeadline = now + int64(d)
			_ = nc.SetWriteDeadline(time.Unix(0, c.wdeadline))
		}
	}
	return c.writeLocked()
}

// flushLockedWithin is flushWithinLocked(d), or flushLocked for d 0.
func (c *Conn) flushLockedWithin(d time.Duration) error {
	if d == 0 {
		return c.flushLocked()
	}
	return c.flushWithinLocked(d)
}

// flushEach flushes connections one by one, each as FlushWithin(d) (d 0:
// as Flush), holding no other's lock.
func flushEach(conns []*Conn, d time.Duration) {
	for _, c := range conns {
		c.mu.Lock()
		_ = c.flushLockedWithin(d)
		c.mu.Unlock()
	}
}

// flushLocked writes without a deadline (dropping one FlushWithin left).
func (c *Conn) flushLocked() error {
	if c.wdeadline != 0 && c.nc != nil && len(c.wbuf) > 0 {
		_ = c.nc.SetWriteDeadline(time.Time{})
		c.wdeadline = 0
	}
	return c.writeLocked()
}

func (c *Conn) writeLocked() error {
	if len(c.wbuf) == 0 {
		return nil
	}
	if c.nc == nil {
		c.wbuf = c.wbuf[:0]
		return ErrNotConnected
	}
	_, err := c.nc.Write(c.wbuf)
	c.sentLocked(len(c.wbuf), nowNano()) // all of it: what a failed write left goes with its connection
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			c.stalled.Store(true) // lost() counts the disconnect as ours
		}
		_ = c.nc.Close() // the reader sees it and reconnects
	}
	return err
}

// sentLocked drops the n bytes of the write buffer that left at now, and,
// once it is empty, a burst's large buffer: not kept per connection for ever.
func (c *Conn) sentLocked(n int, now int64) {
	k := copy(c.wbuf, c.wbuf[n:])
	c.wbuf = c.wbuf[:k]
	c.lastWrite.Store(now)
	if k == 0 && cap(c.wbuf) > 64<<10 {
		c.wbuf = nil
	}
}

// Send queues one packet and flushes at once.
func (c *Conn) Send(pkt []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wbuf = append(c.wbuf, pkt...)
	return c.flushLocked()
}

// Request sends a packet that the broker acknowledges by packet id and
// waits for the ack (SUBACK, UNSUBACK, or PUBACK/PUBCOMP of a single publish).
func (c *Conn) Request(ctx context.Context, build func(pid uint16) []byte) (AckResult, error) {
	ch := make(chan AckResult, 1)
	c.mu.Lock()
	if c.nc == nil {
		c.mu.Unlock()
		return AckResult{}, ErrNotConnected
	}
	if c.waiters == nil {
		c.waiters = map[uint16]chan AckResult{}
	}
	pid := c.nextPID
	for {
		pid++
		if _, busy := c.waiters[pid]; pid != 0 && !busy {
			break
		}
	}
	c.nextPID = pid
	c.waiters[pid] = ch
	c.nwaiters.Store(int32(len(c.waiters)))
	c.wbuf = append(c.wbuf, build(pid)...)
	err := c.flushLocked()
	c.mu.Unlock()
	if err == nil {
		select {
		case r, ok := <-ch:
			if ok {
				return r, nil
			}
			return AckResult{}, ErrNotConnected // the connection was lost meanwhile
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	c.mu.Lock()
	delete(c.waiters, pid)
	c.nwaiters.Store(int32(len(c.waiters)))
	c.mu.Unlock()
	return AckResult{}, err
}

// wake hands an ack to the Request waiting for it, if any. A group's acks
// have none: they pass without the lock (a Request registers before its
// packet is written, so before its ack can come).
func (c *Conn) wake(pid uint16, r AckResult) bool {
	if c.nwaiters.Load() == 0 {
		return false
	}
	c.mu.Lock()
	ch, ok := c.waiters[pid]
	if ok {
		delete(c.waiters, pid)
		c.nwaiters.Store(int32(len(c.waiters)))
	}
	c.mu.Unlock()
	if ok {
		ch <- r
	}
	return ok
}
