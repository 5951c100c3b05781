//go:build !linux

package mqtt

import (
	"bufio"
	"errors"
	"net"
	"sync/atomic"
	"time"
)

// Outside Linux there is no poller (it needs epoll and SO_TIMESTAMPNS):
// every connection has its own reader goroutine, as with poll_interval 0.

const defaultPollInterval = 100 * time.Microsecond

type poller struct{}

func newPoller(time.Duration) *poller { return nil }

func (*poller) adopt(*conn, net.Conn, *bufio.Reader) (wire, error) {
	return nil, errors.New("mqtt: no poller on this system")
}

func (*poller) stop() {}

var adopted atomic.Int64
