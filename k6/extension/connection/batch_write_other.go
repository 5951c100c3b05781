//go:build !linux

package connection

import "time"

// Flusher flushes connections one by one outside Linux (no io_uring).
type Flusher struct{}

// NewFlusher returns nil: FlushWithin flushes one by one.
func NewFlusher() *Flusher { return nil }

// Close does nothing.
func (*Flusher) Close() {}

// FlushWithin flushes every connection as Conn.FlushWithin(d) does (d 0:
// as Conn.Flush, with no deadline).
func (*Flusher) FlushWithin(conns []*Conn, d time.Duration) {
	flushEach(conns, d)
}
