package connection

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
)

type nopHandler struct{}

func (nopHandler) OnPublish(*Conn, *codec.Publish, int64) {}
func (nopHandler) OnAck(*Conn, codec.Ack, int64)          {}
func (nopHandler) OnConnect(*Conn, bool)                  {}
func (nopHandler) OnConnectionLost(*Conn, error)          {}

type nopRecorder struct{}

func (nopRecorder) Count(Event, int64)      {}
func (nopRecorder) Time(Timing, int, int64) {}
func (nopRecorder) Open(int64)              {}

// Of a run's idle pollers, at most GOMAXPROCS-1 wait blocked in epoll_wait,
// the others in Go's netpoller: a thread blocked in a system call keeps its
// P until the runtime takes it back (20 us to 10 ms later), so a publisher
// group's poller and a subscriber group's, on a two-core machine, would
// hold both Ps and delay whatever runs next, such as the scheduler between
// stamping its messages and writing them.
func TestIdlePollersLeaveAPForTheRest(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	slots := NewWaitSlots()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() { // a broker that accepts every CONNECT
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = nc.Close() })
			_, _ = nc.Write([]byte{codec.CONNACK << 4, 2, 0, 0})
		}
	}()
	for i := range 3 {
		p := NewPoller(100*time.Microsecond, slots)
		cfg := NewConfig()
		cfg.Addr, cfg.Poller, cfg.Pinger, cfg.Reconnect = ln.Addr().String(), p, nil, false
		c := New(cfg, fmt.Sprint("idle-", i), i, nopHandler{}, nopRecorder{})
		if err := c.Connect(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(); p.Stop() })
	}
	time.Sleep(200 * time.Millisecond)
	tasks, _ := filepath.Glob("/proc/self/task/*/syscall")
	blocked := 0
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if nr, _ := strconv.Atoi(strings.Fields(string(b) + " x")[0]); nr == syscall.SYS_EPOLL_WAIT {
			blocked++
		}
	}
	if blocked != 1 {
		t.Fatalf("%d threads blocked in epoll_wait with three idle pollers and 2 Ps, want 1", blocked)
	}
}
