package mqtt

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
)

// defaultPollInterval: 100 µs keeps the timing error of a message that shares
// a read small against loopback latencies, and still lets one wake-up serve
// many sockets (see k6/extension/README.md for the figures).
const defaultPollInterval = 100 * time.Microsecond

// A poller reads the plain-TCP connections of one subscriber group from one
// goroutine, with its own level-triggered epoll set, instead of a reader
// goroutine per connection.
//
// Why: on loopback most of a generator's CPU is the kernel path of each
// received message, and the biggest part of it that a generator controls is
// waking up once per message (epoll, futex, context switch, a read that
// returns EAGAIN). The poller wakes on the first message after a quiet spell,
// then polls every interval while traffic lasts, so one wake-up serves every
// socket that became readable meanwhile.
//
// Latency is not blurred by the interval: each read carries the kernel's
// receive time of its newest segment (SO_TIMESTAMPNS), which is what a
// message is timed against. Only a message that shares a read with a later
// one on the same connection is timed as arriving with that later one: an
// overstatement bounded by the time between two looks (the interval, plus
// the look itself), and only for connections receiving more than one
// message in that time.
type poller struct {
	interval time.Duration

	mu      sync.Mutex
	epfd    int
	evfd    int // eventfd: wakes the loop for new leftovers and for stop
	conns   map[int32]*rawConn
	fresh   []*rawConn // adopted with bytes already read during the handshake
	running bool
	stopped bool
	done    chan struct{}

	pub publishPacket // the loop's: one per read would escape to the heap (the handler is an interface)
}

func newPoller(interval time.Duration) *poller {
	return &poller{interval: interval, epfd: -1, evfd: -1, conns: map[int32]*rawConn{}}
}

// rawConn is a connection's socket once the poller owns it. Writes go
// straight to the non-blocking socket; the poller alone reads and closes it.
type rawConn struct {
	fd      int
	c       *conn
	p       *poller
	partial []byte // an incomplete packet carried to the next read

	mu        sync.Mutex // fd lifetime against writes
	closing   bool       // shutdown(2) done: the poller will see EOF
	released  bool       // fd closed by the poller
	wdeadline time.Time

	bytesRead, bytesWritten *int64 // k6's data_received / data_sent, when the dialer counts
}

var errPollerStopped = errors.New("mqtt: poller stopped")

// adopted counts the sockets pollers took over (tests check the poller ran).
var adopted atomic.Int64

// adopt takes over a connected socket: it duplicates the descriptor, closes
// the net.Conn (which leaves Go's netpoller) and registers the copy. Bytes
// the handshake already buffered are parsed first. c.mu is held.
func (p *poller) adopt(c *conn, nc net.Conn, br *bufio.Reader) (*rawConn, error) {
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
	adopted.Add(1)
	return rc, nil
}

func (p *poller) register(rc *rawConn) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return errPollerStopped
	}
	if p.epfd < 0 {
		ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			return fmt.Errorf("mqtt: epoll: %w", err)
		}
		ev, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			_ = syscall.Close(ep)
			return fmt.Errorf("mqtt: eventfd: %w", err)
		}
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, ev, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(ev)}); err != nil {
			_ = syscall.Close(ep)
			_ = syscall.Close(ev)
			return fmt.Errorf("mqtt: epoll: %w", err)
		}
		p.epfd, p.evfd = ep, ev
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(rc.fd)}
	if err := syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_ADD, rc.fd, &ev); err != nil {
		return fmt.Errorf("mqtt: epoll: %w", err)
	}
	p.conns[int32(rc.fd)] = rc
	if len(rc.partial) > 0 {
		p.fresh = append(p.fresh, rc)
		p.wakeLocked()
	}
	if !p.running {
		p.running = true
		p.done = make(chan struct{})
		go p.loop(p.epfd, p.evfd, p.done)
	}
	return nil
}

func (p *poller) wakeLocked() {
	one := [8]byte{1}
	_, _ = syscall.Write(p.evfd, one[:])
}

// stop ends the loop once every connection is closed (the group's shutdown).
func (p *poller) stop() {
	p.mu.Lock()
	p.stopped = true
	done := p.done
	if p.running {
		p.wakeLocked()
	}
	p.mu.Unlock()
	if done != nil {
		<-done
	}
}

func (p *poller) loop(epfd, evfd int, done chan struct{}) {
	defer close(done)
	evs := make([]syscall.EpollEvent, 512)
	buf := make([]byte, 64<<10)
	oob := make([]byte, syscall.CmsgSpace(16)*2)
	ready := make([]*rawConn, 0, 512)
	var fresh []*rawConn
	busy, stopping := false, false
	var giveUp time.Time
	for {
		timeout := 0 // busy: just look, the interval was slept already
		if !busy {
			timeout = -1 // quiet: sleep until the first socket is readable
			if stopping {
				timeout = 100
			}
		}
		n, err := syscall.EpollWait(epfd, evs, timeout)
		if err != nil && !errors.Is(err, syscall.EINTR) {
			panic(fmt.Sprintf("mqtt: epoll_wait: %v", err)) // a bug: the set is ours
		}
		ready, fresh = ready[:0], fresh[:0]
		p.mu.Lock()
		for _, e := range evs[:max(n, 0)] {
			if int(e.Fd) == evfd {
				var b [8]byte
				_, _ = syscall.Read(evfd, b[:])
				continue
			}
			if rc := p.conns[e.Fd]; rc != nil {
				ready = append(ready, rc)
			}
		}
		fresh = append(fresh, p.fresh...)
		p.fresh = p.fresh[:0]
		if p.stopped && !stopping {
			stopping, giveUp = true, time.Now().Add(5*time.Second)
		}
		if stopping && (len(p.conns) == 0 || time.Now().After(giveUp)) {
			// Every socket has ended (or, after 5 s, is ended here: a
			// group's close must not hang on one that never reports).
			left := make([]*rawConn, 0, len(p.conns))
			for _, rc := range p.conns {
				left = append(left, rc)
			}
			p.mu.Unlock()
			for _, rc := range left {
				p.detach(rc, net.ErrClosed)
			}
			p.mu.Lock()
			p.running = false
			p.epfd, p.evfd = -1, -1
			p.mu.Unlock()
			_ = syscall.Close(epfd)
			_ = syscall.Close(evfd)
			return
		}
		p.mu.Unlock()
		for _, rc := range fresh {
			buf = p.read(rc, buf, nil)
		}
		for _, rc := range ready {
			buf = p.read(rc, buf, oob)
		}
		busy = len(ready) > 0
		if busy {
			time.Sleep(p.interval)
		}
	}
}

// read takes what one socket has (or, with oob nil, only the bytes left from
// the handshake), dispatches every whole packet and keeps the tail. It
// returns the shared buffer, grown if a packet needed more room.
func (p *poller) read(rc *rawConn, buf, oob []byte) []byte {
	if rc.fd < 0 {
		return buf
	}
	k := len(rc.partial)
	if k > 0 {
		if need := packetSize(rc.partial); need > len(buf) {
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
		if rc.bytesRead != nil {
			atomic.AddInt64(rc.bytesRead, int64(n))
		}
	}
	if recvNs == 0 {
		recvNs = nowNano()
	}
	c := rc.c
	data := buf[:k]
	pub := &p.pub
	pub.recvNs = recvNs
	publishes := int64(0)
	for len(data) > 0 {
		first, body, size, err := splitPacket(data)
		if err != nil {
			p.detach(rc, err)
			return buf
		}
		if size == 0 {
			break // incomplete
		}
		if first>>4 == pktPublish {
			publishes++
		}
		if err := c.dispatch(first, body, pub); err != nil {
			p.detach(rc, err)
			return buf
		}
		data = data[size:]
	}
	if publishes > 1 && oob != nil {
		c.m.add(cReceivesSharedRead, publishes-1)
	}
	if len(data) > 0 {
		rc.partial = append(rc.partial, data...)
	} else if cap(rc.partial) > 4<<10 {
		rc.partial = nil // do not keep a large packet's room per connection
	}
	_ = c.flush() // acks queued by dispatch
	return buf
}

var errEOF = errors.New("mqtt: connection closed by the broker")

// detach leaves the epoll set, closes the socket and reports the loss on a
// new goroutine (it may reconnect, with backoff: not on the poller).
func (p *poller) detach(rc *rawConn, err error) {
	p.mu.Lock()
	delete(p.conns, int32(rc.fd))
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

// splitPacket finds the first whole packet in b: size 0 means incomplete.
func splitPacket(b []byte) (first byte, body []byte, size int, err error) {
	if len(b) < 2 {
		return 0, nil, 0, nil
	}
	rem, n, err := readVarint(b[1:])
	if err != nil {
		if len(b) < 5 { // fewer than 4 length bytes so far: more may come
			return 0, nil, 0, nil
		}
		return 0, nil, 0, err
	}
	if size = 1 + n + rem; size > len(b) {
		return 0, nil, 0, nil
	}
	return b[0], b[1+n : size], size, nil
}

// packetSize is the full size of the packet b starts with, or len(b) while
// its length is not readable yet.
func packetSize(b []byte) int {
	if len(b) < 2 {
		return len(b)
	}
	rem, n, err := readVarint(b[1:])
	if err != nil {
		return len(b)
	}
	return 1 + n + rem
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
			if rc.bytesWritten != nil {
				atomic.AddInt64(rc.bytesWritten, int64(n))
			}
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
