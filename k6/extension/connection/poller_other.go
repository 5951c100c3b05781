//go:build !linux

package connection

import (
	"bufio"
	"errors"
	"net"
	"time"
)

// Outside Linux there is no poller (it needs epoll and SO_TIMESTAMPNS):
// every connection has its own reader goroutine, as with poll_interval 0.

// Poller is nil outside Linux.
type Poller struct{}

// NewPoller returns nil: connections keep reader goroutines.
func NewPoller(time.Duration, *WaitSlots) *Poller { return nil }

// WaitSlots is nothing outside Linux.
type WaitSlots struct{}

// NewWaitSlots returns nil.
func NewWaitSlots() *WaitSlots { return nil }

func (*Poller) adopt(*Conn, net.Conn, *bufio.Reader) (wire, error) {
	return nil, errors.New("mqtt: no poller on this system")
}

// Stop does nothing.
func (*Poller) Stop() {}

// Adopted is 0: no socket is ever polled here.
func (*Poller) Adopted() int64 { return 0 }
