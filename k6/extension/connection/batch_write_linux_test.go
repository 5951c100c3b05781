package connection

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
)

// Fifty connections, each owing an ack, are flushed in one system call:
// each peer gets exactly its own bytes, whole and in order after what was
// already buffered. Where io_uring is not offered the flusher writes one
// by one, and the bytes must be the same.
func TestFlusherWritesManyConnectionsAcksInOneSystemCall(t *testing.T) {
	f := NewFlusher()
	defer f.Close()
	const n = 50
	conns, peers := make([]*Conn, n), make([]int, n)
	for i := range conns {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		_ = syscall.SetNonblock(fds[0], true)
		t.Cleanup(func() { _ = syscall.Close(fds[0]); _ = syscall.Close(fds[1]) })
		conns[i] = &Conn{nc: &rawConn{fd: fds[0]}, wbuf: []byte(fmt.Sprintf("first %d;", i))}
		conns[i].queueAck(codec.PUBACK, uint16(i+1)) //nolint:gosec // id i+1 of 50
		peers[i] = fds[1]
	}
	f.FlushWithin(conns, 0)
	if f.ring == nil {
		t.Log("no io_uring here: flushed one by one")
	} else if f.calls != 1 {
		t.Errorf("%d connections flushed in %d io_uring_enter calls, want 1", n, f.calls)
	}
	for i, fd := range peers {
		want := fmt.Sprintf("first %d;\x40\x02\x00%c", i, byte(i+1))
		got := make([]byte, 64)
		k, err := syscall.Read(fd, got)
		if err != nil || string(got[:k]) != want {
			t.Fatalf("connection %d's peer read %q (%v), want %q", i, got[:k], err, want)
		}
		if len(conns[i].wbuf) != 0 {
			t.Fatalf("connection %d keeps %d bytes after its flush", i, len(conns[i].wbuf))
		}
	}
}
