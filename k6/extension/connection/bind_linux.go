package connection

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// bindNoPort defers the choice of the source port from bind() to
// connect() (IP_BIND_ADDRESS_NO_PORT), where the kernel knows the
// destination: a source address then has its ~28,000 ephemeral ports for
// each broker address, not for all of them together.
func bindNoPort(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
	})
	if err != nil {
		return err
	}
	return serr
}
