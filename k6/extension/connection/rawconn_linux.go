package connection

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"go.k6.io/k6/lib/netext"
	"golang.org/x/sys/unix"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
)

// rawConn is a connection's socket once the poller owns it. Writes go
// straight to the non-blocking socket; the poller alone reads and closes it.
//
// What a batch touches of each connection comes first, in one cache line:
// the kernel's work for a batch's sockets leaves little of ours in cache.
type rawConn struct {
	fd                      int
	c                       *Conn
	p                       *Poller
	bytesRead, bytesWritten *int64     // k6's data_received / data_sent, when the dialer counts
	mu                      sync.Mutex // fd lifetime against writes
	closing                 bool       // shutdown(2) done: the poller will see EOF
	released                bool       // fd closed by the poller

	partial   []byte // an incomplete packet carried to the next read
	wdeadline time.Time
}

// adopt takes over a connected socket: it duplicates the descriptor, closes
// the net.Conn (which leaves Go's netpoller) and registers the copy. Bytes
// the handshake already buffered are parsed first. c.mu is held.
func (p *Poller) adopt(c *Conn, nc net.Conn, br *bufio.Reader) (*rawConn, error) {
	inner := nc
	var counted *netext.Conn
	if w, ok := nc.(*netext.Conn); ok {
		counted, inner = w, w.Conn
	}
	tc, ok := inner.(*net.TCPConn)
	if !ok {
		return nil, fmt.Errorf("mqtt: poller needs a TCP connection, got %T", inner)
	}
	sc, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	cerr := sc.Control(func(s uintptr) { fd, err = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) })
	if cerr != nil || err != nil {
		return nil, errors.Join(cerr, err)
	}
	rc := &rawConn{fd: fd, c: c, p: p}
	if counted != nil {
		rc.bytesRead, rc.bytesWritten = counted.BytesRead, counted.BytesWritten
	}
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		rc.partial = append([]byte(nil), b...)
	}
	_ = syscall.SetNonblock(fd, true)
	_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	if err := p.register(rc); err != nil {
		_ = syscall.Close(fd)
		return nil, err
	}
	_ = nc.Close() // the duplicate keeps the socket open
	p.adopted.Add(1)
	return rc, nil
}

// read takes what one socket has (or, with oob nil, only the bytes left from
// the handshake), dispatches every whole packet and keeps the tail. It
// returns the shared buffer, grown if a packet needed more room.
func (p *Poller) read(rc *rawConn, buf, oob []byte) []byte {
	if rc.fd < 0 {
		return buf
	}
	k := len(rc.partial)
	if k > 0 {
		if need := codec.PacketSize(rc.partial); need > len(buf) {
			buf = make([]byte, max(need, 2*len(buf)))
		}
		copy(buf, rc.partial)
		rc.partial = rc.partial[:0]
	}
	recvNs := int64(0)
	if oob != nil {
		n, oobn, _, _, err := syscall.Recvmsg(rc.fd, buf[k:], oob, 0)
		switch {
		case errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR):
			rc.partial = append(rc.partial, buf[:k]...)
			return buf
		case err != nil:
			p.detach(rc, err)
			return buf
		case n == 0:
			p.detach(rc, errEOF)
			return buf
		}
		k += n
		recvNs = rxTime(oob[:oobn])
		rc.countRead(n)
	}
	if p.consume(rc, buf[:k], recvNs, oob != nil) {
		_ = rc.c.Flush() // acks queued by dispatch
	}
	return buf
}

// consume dispatches every whole packet of data, read from rc at recvNs (0:
// now; read: from the socket, not the handshake's leftovers), and keeps the
// tail for the next read. The acks it queues are the caller's to flush,
// unless it returns false: the connection failed and is detached.
func (p *Poller) consume(rc *rawConn, data []byte, recvNs int64, read bool) bool {
	if recvNs == 0 {
		recvNs = nowNano()
	}
	c := rc.c
	pub := &p.pub
	publishes := int64(0)
	for len(data) > 0 {
		first, body, size, err := codec.Split(data)
		if err != nil {
			p.detach(rc, err)
			return false
		}
		if size == 0 {
			break // incomplete
		}
		if first>>4 == codec.PUBLISH {
			publishes++
		}
		if err := c.dispatch(first, body, pub, recvNs); err != nil {
			p.detach(rc, err)
			return false
		}
		data = data[size:]
	}
	if publishes > 1 && read {
		c.rec.Count(SharedRead, publishes-1)
	}
	if len(data) > 0 {
		rc.partial = append(rc.partial, data...)
	} else if cap(rc.partial) > 4<<10 {
		rc.partial = nil // do not keep a large packet's room per connection
	}
	return true
}

var errEOF = errors.New("mqtt: connection closed by the broker")

// detach leaves the epoll set, closes the socket and reports the loss on a
// new goroutine (it may reconnect, with backoff: not on the poller).
func (p *Poller) detach(rc *rawConn, err error) {
	p.mu.Lock()
	if rc.fd >= 0 && rc.fd < len(p.conns) && p.conns[rc.fd] == rc {
		p.conns[rc.fd] = nil
		p.live--
	}
	_ = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_DEL, rc.fd, nil)
	p.mu.Unlock()
	rc.mu.Lock()
	rc.released = true
	_ = syscall.Close(rc.fd)
	rc.fd = -1
	closing := rc.closing
	rc.mu.Unlock()
	if closing && errors.Is(err, errEOF) {
		err = net.ErrClosed
	}
	go func() {
		defer rc.c.bg.Done()
		rc.c.lost(rc, err)
	}()
}

// rxTime is the kernel's receive time (Unix ns) from an SCM_TIMESTAMPNS
// control message, or 0. (syscall.ParseSocketControlMessage would allocate
// on every read.)
func rxTime(oob []byte) int64 {
	for len(oob) >= syscall.SizeofCmsghdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		if h.Len < syscall.SizeofCmsghdr || int(h.Len) > len(oob) {
			return 0
		}
		data := oob[syscall.CmsgLen(0):h.Len]
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS && len(data) >= 16 {
			return (*syscall.Timespec)(unsafe.Pointer(&data[0])).Nano()
		}
		oob = oob[min(syscall.CmsgSpace(int(h.Len)-syscall.CmsgLen(0)), len(oob)):]
	}
	return 0
}

// countRead and countWritten add to k6's data_received and data_sent, when
// the dialer counts.
func (rc *rawConn) countRead(n int) {
	if rc.bytesRead != nil {
		atomic.AddInt64(rc.bytesRead, int64(n))
	}
}

func (rc *rawConn) countWritten(n int) {
	if rc.bytesWritten != nil {
		atomic.AddInt64(rc.bytesWritten, int64(n))
	}
}

// tally adds a batch's bytes to k6's counters once per counter, not once
// per socket: a group's connections share their dialer's, and an atomic add
// for each socket of a batch cost more than the rest of its bookkeeping.
type tally struct {
	ctr *int64
	n   int64
}

func (t *tally) add(ctr *int64, n int) {
	if ctr != t.ctr {
		t.flush()
		t.ctr = ctr
	}
	t.n += int64(n)
}

func (t *tally) flush() {
	if t.ctr != nil && t.n != 0 {
		atomic.AddInt64(t.ctr, t.n)
	}
	t.ctr, t.n = nil, 0
}

// Write sends b on the non-blocking socket, waiting for room when the
// broker reads slowly (until the write deadline, if one is set). The lock
// guards the descriptor against the poller closing it; it is not held while
// waiting, so Close can always proceed.
func (rc *rawConn) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		rc.mu.Lock()
		if rc.released || rc.closing {
			rc.mu.Unlock()
			return done, net.ErrClosed
		}
		fd, deadline := rc.fd, rc.wdeadline
		n, err := syscall.Write(fd, b[done:])
		rc.mu.Unlock()
		if n > 0 {
			done += n
			rc.countWritten(n)
		}
		switch {
		case err == nil || errors.Is(err, syscall.EINTR):
		case errors.Is(err, syscall.EAGAIN):
			wait := time.Second
			if !deadline.IsZero() {
				if wait = min(time.Until(deadline), wait); wait <= 0 {
					return done, fmt.Errorf("mqtt: write: %w", syscall.ETIMEDOUT)
				}
			}
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			_, _ = unix.Poll(fds, int(wait/time.Millisecond)+1)
		default:
			return done, fmt.Errorf("mqtt: write: %w", err)
		}
	}
	return done, nil
}

// Close shuts the socket down; the poller then sees the end, closes the
// descriptor and reports the loss (which is how the reader ends).
func (rc *rawConn) Close() error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.closing || rc.released {
		return nil
	}
	rc.closing = true
	return syscall.Shutdown(rc.fd, syscall.SHUT_RDWR)
}

func (rc *rawConn) SetWriteDeadline(t time.Time) error {
	rc.mu.Lock()
	rc.wdeadline = t
	rc.mu.Unlock()
	return nil
}
