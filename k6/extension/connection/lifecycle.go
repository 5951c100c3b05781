package connection

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
)

// lost runs when the reader stops: closed by us, or dropped by the broker.
func (c *Conn) lost(nc wire, err error) {
	// The drop as the client first knows it: a reconnect's delay runs from
	// here, the handler's work and the backoff included.
	down := time.Now()
	c.mu.Lock()
	if c.nc == nc {
		c.nc = nil
		c.up.Store(false)
		c.rec.Open(-1)
		if c.cfg.Pinger != nil {
			c.cfg.Pinger.remove(c)
		}
	}
	closed := c.closed
	for pid, ch := range c.waiters {
		delete(c.waiters, pid)
		close(ch)
	}
	c.nwaiters.Store(0)
	c.mu.Unlock()
	_ = nc.Close()
	stalled := c.stalled.Swap(false)
	if closed {
		return
	}
	c.rec.Count(Disconnected, 1)
	if stalled {
		c.rec.Count(WriteStalled, 1)
	}
	c.h.OnConnectionLost(c, err)
	if c.cfg.Reconnect {
		c.rec.Count(Down, 1)
		c.reconnectLoop(down)
	}
}

// reconnectLoop redials with exponential backoff and jitter until it works
// or the connection is closed; subscriptions are restored. Every redial is
// a reconnect attempt, never a connect failure: those are the first
// connections' (the connection success rate is about them), so an outage
// shows as disconnects, attempts and reconnects, each counted once. The
// reconnect that works is timed from down, when the connection was lost.
func (c *Conn) reconnectLoop(down time.Time) {
	backoff := c.cfg.BackoffMin
	for {
		select {
		case <-c.quit:
			c.rec.Count(DownAtClose, 1)
			return
		case <-time.After(backoff/2 + rand.N(backoff/2+1)):
		}
		c.rec.Count(ReconnectAttempt, 1)
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ConnectTimeout)
		nc, br, err := c.handshake(ctx)
		cancel()
		if err != nil {
			backoff = min(backoff*2, c.cfg.BackoffMax)
			continue
		}
		away := time.Since(down) // its CONNACK is in: before any lock
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			_ = nc.Close()
			c.rec.Count(DownAtClose, 1)
			return
		}
		c.rec.Count(Reconnected, 1)
		c.rec.Time(ReconnectTime, c.idx, away.Nanoseconds())
		c.rec.Count(Down, -1)
		c.attach(nc, br)
		subs := append([]codec.Subscription(nil), c.subs...)
		c.subs, c.granted = c.subs[:0], c.granted[:0]
		if r, ok := c.h.(Resumer); ok && c.sessionPresent.Load() {
			c.mu.Unlock()
			r.Resume(c)
			c.mu.Lock()
		}
		c.startReader(nc, br)
		c.mu.Unlock()
		if len(subs) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ConnectTimeout)
			_, err := c.Subscribe(ctx, subs)
			cancel()
			if err != nil {
				c.rec.Count(ErrorSeen, 1)
			}
		}
		c.h.OnConnect(c, true)
		return
	}
}

// Drop closes the socket as if the broker had: the connection reconnects
// (when configured to) with backoff.
func (c *Conn) Drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nc != nil {
		_ = c.nc.Close()
	}
}

// Close sends DISCONNECT, closes the socket and waits (at most 5 s) for the
// reader to end. A group's persistent session ends with it (MQTT 5: in the
// DISCONNECT; 3.1.1, which has no such field: with a clean connect). Only
// the first call does anything.
func (c *Conn) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	close(c.quit)
	ending := c.endsSessionOnClose()
	if nc := c.nc; nc != nil {
		_ = nc.SetWriteDeadline(time.Now().Add(time.Second))
		if ending && c.cfg.Version == codec.V5 {
			c.wbuf = codec.AppendDisconnectEndingSession(c.wbuf)
			ending = false
		} else {
			c.wbuf = codec.AppendDisconnect(c.wbuf, 0)
		}
		_ = c.writeLocked() // under the deadline just set (flushLocked would drop it)
		_ = nc.Close()
	}
	c.mu.Unlock()
	done := make(chan struct{})
	go func() { c.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	if ending {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ConnectTimeout)
		_ = c.endSession(ctx)
		cancel()
	}
}
