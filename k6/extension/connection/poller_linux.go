package connection

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
)

// A Poller reads the plain-TCP connections of one subscriber group from one
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
// A look's reads, and the acks they owe, go to the kernel in one system
// call each where it offers io_uring (batchReader), not one per socket.
//
// Latency is not blurred by the interval: each read carries the kernel's
// receive time of its newest segment (SO_TIMESTAMPNS), which is what a
// message is timed against. Only a message that shares a read with a later
// one on the same connection is timed as arriving with that later one: an
// overstatement bounded by the time between two looks (the interval, plus
// the look itself), and only for connections receiving more than one
// message in that time.
type Poller struct {
	interval time.Duration
	slots    *WaitSlots // shared by the run's pollers (nil: every wait parks in the netpoller)

	mu      sync.Mutex
	epfd    int
	epf     *os.File   // epfd in Go's netpoller: the loop waits there (wait)
	evfd    int        // eventfd: wakes the loop for new leftovers and for stop
	conns   []*rawConn // by descriptor: what a look finds ready, without a map lookup each
	live    int        // sockets in conns
	fresh   []*rawConn // adopted with bytes already read during the handshake
	running bool
	stopped bool
	done    chan struct{}

	pub     codec.Publish // the loop's: one per read would escape to the heap (the handler is an interface)
	adopted atomic.Int64  // sockets taken over so far
}

// sparse: after a quiet spell this many poll intervals long, a netpoller's
// poller reads what woke it and waits again, rather than start polling.
const sparse = 10

// NewPoller makes a poller that looks at its sockets every interval while
// traffic lasts. Its goroutine starts with the first socket. slots: the
// run's (WaitSlots).
func NewPoller(interval time.Duration, slots *WaitSlots) *Poller {
	return &Poller{interval: interval, slots: slots, epfd: -1, evfd: -1}
}

var errPollerStopped = errors.New("mqtt: poller stopped")

// Adopted is how many sockets the poller has taken over so far (0 for a
// nil poller: goroutine readers).
func (p *Poller) Adopted() int64 {
	if p == nil {
		return 0
	}
	return p.adopted.Load()
}

func (p *Poller) register(rc *rawConn) error {
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
		p.epfd, p.evfd, p.epf = ep, ev, nil
		if !p.slots.take() {
			_ = syscall.SetNonblock(ep, true) // pollable: os.NewFile puts it in Go's netpoller
			p.epf = os.NewFile(uintptr(ep), "epoll")
		}
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(rc.fd)}
	if err := syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_ADD, rc.fd, &ev); err != nil {
		return fmt.Errorf("mqtt: epoll: %w", err)
	}
	if rc.fd >= len(p.conns) {
		p.conns = append(p.conns, make([]*rawConn, rc.fd+1-len(p.conns))...)
	}
	p.conns[rc.fd] = rc
	p.live++
	if len(rc.partial) > 0 {
		p.fresh = append(p.fresh, rc)
		p.wakeLocked()
	}
	if !p.running {
		p.running = true
		p.done = make(chan struct{})
		go p.loop(p.epf, p.epfd, p.evfd, p.done)
	}
	return nil
}

func (p *Poller) wakeLocked() {
	one := [8]byte{1}
	_, _ = syscall.Write(p.evfd, one[:])
}

// Stop ends the loop once every connection is closed (the group's shutdown).
func (p *Poller) Stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.stopped = true
	done := p.done
	if p.running {
		p.wakeLocked()
	} else if p.epfd >= 0 { // a set whose first socket failed to join it: no loop closes it
		p.closeSet(p.epf, p.epfd, p.evfd)
		p.epfd, p.evfd, p.epf = -1, -1, nil
	}
	p.mu.Unlock()
	if done != nil {
		<-done
	}
}

// closeSet closes an epoll set and its eventfd, and gives back the wait
// slot of a set that held one (epf nil).
func (p *Poller) closeSet(epf *os.File, epfd, evfd int) {
	if epf != nil {
		_ = epf.Close()
	} else {
		_ = syscall.Close(epfd)
		p.slots.give()
	}
	_ = syscall.Close(evfd)
}

// loop reads the set's sockets. epf: the set in Go's netpoller, or nil for
// a set that waits blocked in epoll_wait (it holds a wait slot); epfd is
// the set's descriptor either way (epf.Fd would make it blocking, out of
// the netpoller).
func (p *Poller) loop(epf *os.File, epfd, evfd int, done chan struct{}) {
	defer close(done)
	var rc syscall.RawConn
	if epf != nil {
		rc, _ = epf.SyscallConn()
	}
	evs := make([]syscall.EpollEvent, 512)
	buf := make([]byte, 64<<10)
	oob := make([]byte, syscall.CmsgSpace(16)*2)
	ready := make([]*rawConn, 0, 512)
	reader := newBatchReader(len(oob))
	defer reader.close()
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
		var quietFrom time.Time
		if timeout < 0 && epf != nil {
			quietFrom = time.Now()
		}
		n, err := p.wait(epf, rc, epfd, evs, timeout)
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
			if fd := int(e.Fd); fd < len(p.conns) && p.conns[fd] != nil {
				ready = append(ready, p.conns[fd])
			}
		}
		fresh = append(fresh, p.fresh...)
		p.fresh = p.fresh[:0]
		if p.stopped && !stopping {
			stopping, giveUp = true, time.Now().Add(5*time.Second)
		}
		if stopping && (p.live == 0 || time.Now().After(giveUp)) {
			// Every socket has ended (or, after 5 s, is ended here: a
			// group's close must not hang on one that never reports).
			left := make([]*rawConn, 0, p.live)
			for _, rc := range p.conns {
				if rc != nil {
					left = append(left, rc)
				}
			}
			p.mu.Unlock()
			for _, rc := range left {
				p.detach(rc, net.ErrClosed)
			}
			p.mu.Lock()
			p.running = false
			p.epfd, p.evfd, p.epf = -1, -1, nil
			p.mu.Unlock()
			p.closeSet(epf, epfd, evfd)
			return
		}
		p.mu.Unlock()
		for _, rc := range fresh {
			buf = p.read(rc, buf, nil)
		}
		buf = p.readReady(reader, ready, buf, oob)
		busy = len(ready) > 0
		// In Go's netpoller a poller pays a goroutine wake-up for each
		// look after a sleep, so it polls only while traffic is dense: a
		// socket that turned readable after a long quiet spell (a fan-out
		// publisher's one PUBACK per message) is read, and the poller goes
		// back to waiting. A poller blocked in epoll_wait wakes at the
		// kernel's cost alone, and polls after every busy look.
		if busy && !quietFrom.IsZero() && time.Since(quietFrom) > sparse*p.interval {
			busy = false
		}
		if busy {
			time.Sleep(p.interval)
		}
	}
}
