package connection

import (
	"errors"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// WaitSlots bounds how many pollers of a run wait blocked in epoll_wait:
// one fewer than Go's Ps (at least one). A thread blocked in a system call
// keeps its P until the runtime's monitor takes it back, 20 us to 10 ms
// later: with a publisher group's poller and a subscriber group's on two
// cores, both Ps could wait in epoll_wait while the publisher's scheduler,
// between stamping its messages and writing them, waited for one (p99
// latency at 1,000 msg/s doubled). The other pollers park in Go's
// netpoller, which frees the P but costs more per wake-up (the netpoller's
// own epoll_wait and a goroutine hand-over).
//
// A poller holds its slot, or not, for the life of its epoll set: a set
// that is in Go's netpoller wakes the runtime each time it turns readable,
// whether or not a goroutine waits there, and a blocking poller's set put
// there too cost QoS 0 an eighth of its messages per CPU-second.
type WaitSlots struct{ free atomic.Int32 }

// NewWaitSlots makes the slots of one run, for GOMAXPROCS as it is now.
func NewWaitSlots() *WaitSlots {
	s := &WaitSlots{}
	s.free.Store(int32(max(1, runtime.GOMAXPROCS(0)-1))) //nolint:gosec // a handful
	return s
}

func (s *WaitSlots) take() bool {
	if s == nil {
		return false
	}
	if s.free.Add(-1) >= 0 {
		return true
	}
	s.free.Add(1)
	return false
}

func (s *WaitSlots) give() {
	if s != nil {
		s.free.Add(1)
	}
}

// wait is epoll_wait on the set: blocked in the system call for a poller
// that holds a slot (epf nil), else parked in Go's netpoller (the set's
// descriptor is readable when a socket of it is). timeout as for
// epoll_wait (ms; -1: none).
func (p *Poller) wait(epf *os.File, rc syscall.RawConn, epfd int, evs []syscall.EpollEvent, timeout int) (int, error) {
	if timeout == 0 || epf == nil || rc == nil {
		return syscall.EpollWait(epfd, evs, timeout)
	}
	if timeout > 0 {
		_ = epf.SetReadDeadline(time.Now().Add(time.Duration(timeout) * time.Millisecond))
	}
	var n int
	var err error
	rerr := rc.Read(func(fd uintptr) bool {
		n, err = syscall.EpollWait(int(fd), evs, 0)
		return n != 0 || (err != nil && !errors.Is(err, syscall.EINTR))
	})
	switch {
	case errors.Is(rerr, os.ErrDeadlineExceeded):
		return 0, nil
	case rerr != nil: // not in the netpoller after all: block in the call
		return syscall.EpollWait(epfd, evs, timeout)
	}
	return n, err
}
