package connection

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// wait is epoll_wait on the set, but a wait that blocks parks the goroutine
// in Go's netpoller (the set's descriptor is readable when a socket of it
// is) instead of blocking its thread in the system call. A thread blocked
// in a system call keeps its P until the runtime's monitor takes it back,
// after 20 us to 10 ms: with a poller per group and as many Ps as cores
// (two here), both Ps could wait in epoll_wait while the publisher's
// scheduler, between stamping its messages and writing them, waited for
// one. timeout as for epoll_wait (ms; -1: none).
func wait(epf *os.File, rc syscall.RawConn, epfd int, evs []syscall.EpollEvent, timeout int) (int, error) {
	if timeout == 0 || rc == nil {
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
