package connection

import (
	"fmt"
	"math"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
)

// batchReads is how many sockets one io_uring_enter reads at most, and
// batchBuf each read's room: a look finds a few messages per socket; a
// socket that fills it, or a packet left over that needs more, is read on
// its own (Poller.read) in the same look.
const (
	batchReads = 128
	batchBuf   = 16 << 10
	unreaped   = math.MinInt32 // a slot's result before its completion is reaped
)

// A batchReader reads a poller's ready sockets: all of a look's in one
// system call through an io_uring where the kernel offers one, else socket
// by socket. Each read still carries its socket's kernel receive time
// (SO_TIMESTAMPNS in its control message), as recvmsg does.
//
// The reads and the acks they owe share the Flusher's ring: one goroutine
// uses both, one batch after the other, and each batch is reaped whole.
type batchReader struct {
	flusher  *Flusher // its ring; the acks of a batch's reads, in one system call too
	slots    []batchSlot
	flushing []*Conn
}

// batchSlot is one read of a batch: its buffers and header stay put until
// the batch is reaped.
type batchSlot struct {
	rc  *rawConn
	k   int   // bytes of rc.partial at the front of buf
	res int32 // the read's result: bytes, or -errno
	buf []byte
	oob []byte
	iov unix.Iovec
	msg unix.Msghdr
}

// newBatchReader makes the reader of one poller loop; oobLen: the control
// buffer's size (the loop's).
func newBatchReader(oobLen int) *batchReader {
	b := &batchReader{flusher: NewFlusher()}
	if r := b.flusher.ring; r != nil {
		b.slots = make([]batchSlot, r.entries)
		for i := range b.slots {
			b.slots[i].oob = make([]byte, oobLen)
		}
	}
	return b
}

func (b *batchReader) close() { b.flusher.Close() }

// readReady reads every ready socket and dispatches what it got (consume).
// buf and oob: the loop's, for sockets read on their own; returned grown.
func (p *Poller) readReady(b *batchReader, ready []*rawConn, buf, oob []byte) []byte {
	r := b.flusher.ring
	if r == nil {
		for _, rc := range ready {
			buf = p.read(rc, buf, oob)
		}
		return buf
	}
	var got tally
	defer got.flush()
	for len(ready) > 0 {
		n := min(len(ready), len(b.slots))
		q := 0
		for _, rc := range ready[:n] {
			k := len(rc.partial)
			if rc.fd < 0 || (k > 0 && codec.PacketSize(rc.partial) > batchBuf) {
				buf = p.read(rc, buf, oob)
				continue
			}
			s := &b.slots[q]
			if s.buf == nil {
				s.buf = make([]byte, batchBuf)
			}
			copy(s.buf, rc.partial)
			rc.partial = rc.partial[:0]
			s.rc, s.k, s.res = rc, k, unreaped
			clear(s.oob)
			s.iov = unix.Iovec{Base: &s.buf[k]}
			s.iov.SetLen(batchBuf - k)
			s.msg = unix.Msghdr{Iov: &s.iov, Control: &s.oob[0]}
			s.msg.SetIovlen(1)
			s.msg.SetControllen(len(s.oob))
			r.recvmsg(rc.fd, unsafe.Pointer(&s.msg), uint64(q)) //nolint:gosec // q < batchReads
			q++
		}
		ready = ready[n:]
		if q == 0 {
			continue
		}
		if err := r.submit(q); err != nil {
			panic(fmt.Sprintf("mqtt: %v", err)) // a bug: the ring and its sockets are ours
		}
		r.reap(func(tag uint64, res int32) { b.slots[tag].res = res })
		for i := range b.slots[:q] {
			s := &b.slots[i]
			rc := s.rc
			s.rc = nil
			switch {
			case s.res == unreaped:
				panic("mqtt: io_uring_enter returned before a read of its batch was done") // MSG_DONTWAIT: a bug
			case s.res == -int32(syscall.EAGAIN) || s.res == -int32(syscall.EINTR):
				rc.partial = append(rc.partial, s.buf[:s.k]...)
			case s.res < 0:
				p.detach(rc, syscall.Errno(-s.res))
			case s.res == 0:
				p.detach(rc, errEOF)
			default:
				got.add(rc.bytesRead, int(s.res))
				if !p.consume(rc, s.buf[:s.k+int(s.res)], rxTime(s.oob), true) {
					continue
				}
				if int(s.res) == batchBuf-s.k {
					// Its room was full: the rest is read now, with its own
					// receive time, not left to the next look (which would
					// time it late by a look's interval).
					buf = p.read(rc, buf, oob)
				}
				b.flushing = append(b.flushing, rc.c)
			}
		}
		b.flusher.FlushWithin(b.flushing, 0)
		clear(b.flushing)
		b.flushing = b.flushing[:0]
	}
	return buf
}
