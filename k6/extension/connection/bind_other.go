//go:build !linux

package connection

import "syscall"

// bindNoPort: Linux only; elsewhere the port is chosen at bind().
func bindNoPort(_, _ string, _ syscall.RawConn) error { return nil }
