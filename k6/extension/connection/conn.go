package connection

import (
	"bufio"
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
)

// ErrNotConnected: a write or request while the connection is down.
var ErrNotConnected = errors.New("mqtt: not connected")

// wire is where a connection writes: a net.Conn, or a socket the poller owns.
type wire interface {
	Write(b []byte) (int, error)
	Close() error
	SetWriteDeadline(t time.Time) error
}

// Conn is one MQTT connection: one reader, a write buffer that callers fill
// and flush (so many packets go out in one syscall), and reconnection with
// backoff when the broker drops it.
type Conn struct {
	cfg *Config
	id  string
	idx int // index in its group: spreads histogram shards
	h   Handler
	rec Recorder

	mu        sync.Mutex
	nc        wire
	wbuf      []byte
	lastWrite atomic.Int64 // beside wbuf: a flush writes both, in one cache line
	closed    bool
	waiters   map[uint16]chan AckResult
	nextPID   uint16
	inQoS2    pidSet               // inbound QoS 2 ids awaiting PUBREL
	subs      []codec.Subscription // re-subscribed after a reconnect
	granted   []byte               // the SUBACK code of each of subs
	quit      chan struct{}        // closed by Close(): stops reconnecting
	bg        sync.WaitGroup       // the reader (and its reconnect loop)

	nwaiters   atomic.Int32  // len(waiters): an ack no Request waits for takes no lock for it
	recvMax    atomic.Uint32 // broker's receive maximum
	sharedSubs atomic.Int32  // CONNACK's Shared Subscription Available; -1: not announced
	keepAlive  atomic.Uint32 // effective keep-alive (the broker may override it)
	wdeadline  int64         // the write deadline on nc (Unix ns), 0 = none; c.mu
	up         atomic.Bool

	sessionPresent atomic.Bool   // the last CONNACK's Session Present
	sessionStarted atomic.Bool   // a CONNACK was received: reconnects resume
	forceClean     atomic.Bool   // endSession's CONNECT
	stalled        atomic.Bool   // the connection was closed here: a write stalled
	attachedAt     atomic.Int64  // when the current network connection was installed (Unix ns)
	tlsParams      atomic.Uint32 // the last TLS handshake's version<<16 | cipher suite; 0: none
}

// New makes a connection; nothing is dialled before Connect.
func New(cfg *Config, id string, idx int, h Handler, rec Recorder) *Conn {
	return &Conn{cfg: cfg, id: id, idx: idx, h: h, rec: rec, quit: make(chan struct{})}
}

// ID is the client identifier (the broker's, if it assigned one).
func (c *Conn) ID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.id
}

// Index is the connection's index in its group.
func (c *Conn) Index() int { return c.idx }

// Config is the configuration the connection was made with.
func (c *Conn) Config() *Config { return c.cfg }

// Up tells whether the connection is open now.
func (c *Conn) Up() bool { return c.up.Load() }

// ReceiveMax is the broker's receive maximum (65535 when it sent none).
func (c *Conn) ReceiveMax() int { return int(c.recvMax.Load()) }

// SharedSubscriptions is the CONNACK's Shared Subscription Available (MQTT 5
// §3.2.2.3.13): 1 or 0, or -1 when the broker did not say (then they are
// available by the spec, and untested).
func (c *Conn) SharedSubscriptions() int { return int(c.sharedSubs.Load()) }

// Connect dials and completes the CONNECT/CONNACK handshake, then starts
// the reader. It counts success or failure and times the handshake.
func (c *Conn) Connect(ctx context.Context) error {
	if err := c.discardOldSession(ctx); err != nil {
		c.rec.Count(ConnectFailed, 1)
		return err
	}
	start := time.Now()
	nc, br, err := c.handshake(ctx)
	if err != nil {
		c.rec.Count(ConnectFailed, 1)
		return err
	}
	c.rec.Time(ConnectTime, c.idx, time.Since(start).Nanoseconds())
	c.rec.Count(Connected, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = nc.Close()
		return errors.New("mqtt: connection closed while connecting")
	}
	c.attach(nc, br)
	c.startReader(nc, br)
	c.mu.Unlock()
	c.h.OnConnect(c, false)
	return nil
}

// attach installs a fresh network connection, which takes writes at once;
// startReader then starts its reader. c.mu is held.
func (c *Conn) attach(nc net.Conn, br *bufio.Reader) {
	if !c.sessionPresent.Load() {
		// A new session: no inbound QoS 2 message of the old one comes
		// again, and its packet ids may carry new messages, which the
		// exactly-once check would otherwise swallow.
		c.inQoS2.reset()
	}
	c.wdeadline = 0               // a new socket has none
	c.attachedAt.Store(nowNano()) // before up: whoever sees up writes after it
	c.up.Store(true)
	c.rec.Open(1)
	c.lastWrite.Store(nowNano())
	if c.cfg.Pinger != nil {
		c.cfg.Pinger.add(c)
	}
	c.bg.Add(1) // the reader's, counted before anyone can Close and wait
	c.nc = nc
}

// startReader starts the reader of nc, which attach installed: the poller
// when it can take the socket (writes then go to its copy), else a
// goroutine. A connection closed meanwhile gets a reader too, which sees
// the end and reports it. c.mu is held.
func (c *Conn) startReader(nc net.Conn, br *bufio.Reader) {
	if c.cfg.Poller != nil && c.nc == nc { // it takes plain TCP only: TLS keeps a reader goroutine
		if rc, err := c.cfg.Poller.adopt(c, nc, br); err == nil {
			c.nc = rc
			return
		}
	}
	go c.readLoop(nc, br)
}
