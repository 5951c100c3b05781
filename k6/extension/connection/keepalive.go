package connection

import (
	"sync"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
)

// Pinger sends PINGREQ on the idle connections of one Config from one
// goroutine, which runs only while it has connections: a timer per
// connection would cost memory at 10K+ clients.
type Pinger struct {
	mu      sync.Mutex
	conns   map[*Conn]struct{}
	running bool
}

// NewPinger returns a pinger with no connections (and no goroutine yet).
func NewPinger() *Pinger { return &Pinger{conns: map[*Conn]struct{}{}} }

func (p *Pinger) add(c *Conn) {
	if c.keepAlive.Load() == 0 {
		return
	}
	p.mu.Lock()
	p.conns[c] = struct{}{}
	if !p.running {
		p.running = true
		go p.loop()
	}
	p.mu.Unlock()
}

func (p *Pinger) remove(c *Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *Pinger) loop() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	ping := codec.AppendPingreq(nil)
	var due []*Conn
	for range t.C {
		now := nowNano()
		due = due[:0]
		p.mu.Lock()
		if len(p.conns) == 0 {
			p.running = false
			p.mu.Unlock()
			return
		}
		for c := range p.conns {
			ka := int64(c.keepAlive.Load()) * int64(time.Second)
			if ka > 0 && now-c.lastWrite.Load() >= ka*3/4 {
				due = append(due, c)
			}
		}
		p.mu.Unlock()
		for _, c := range due {
			_ = c.Send(ping)
		}
	}
}
