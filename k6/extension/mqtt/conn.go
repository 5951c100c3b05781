package mqtt

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// connConfig is what every connection of a group (or a client) shares.
type connConfig struct {
	addr           string // host:port
	tls            *tls.Config
	version        byte
	keepAlive      uint16 // seconds; 0 = off
	cleanStart     bool
	sessionExpiry  uint32
	username       string
	password       string
	hasUser        bool
	hasPass        bool
	will           *willMessage
	connectTimeout time.Duration
	readBuffer     int
	reconnect      bool
	backoffMin     time.Duration
	backoffMax     time.Duration
	receiveMax     uint16 // what we announce (MQTT 5)
	dial           func(ctx context.Context, network, addr string) (net.Conn, error)
	poller         *poller // reads plain-TCP connections; nil: a goroutine per connection
}

// wire is where a connection writes: a net.Conn, or a socket the poller owns.
type wire interface {
	Write(b []byte) (int, error)
	Close() error
	SetWriteDeadline(t time.Time) error
}

// connHandler is the owner of a connection: a group or a low-level client.
// Its methods run on the connection's reader goroutine.
type connHandler interface {
	onPublish(c *conn, p *publishPacket)
	onAck(c *conn, typ byte, pid uint16, reason byte) // PUBACK, or PUBCOMP after PUBREC/PUBREL
	onConnect(c *conn, reconnect bool)
	onConnectionLost(c *conn, err error)
}

type ackResult struct {
	typ    byte
	reason byte
	codes  []byte // SUBACK / UNSUBACK reason codes
}

// conn is one MQTT connection: one reader goroutine, a write buffer that
// callers fill and flush (so many packets go out in one syscall), and
// reconnection with backoff when the broker drops it.
type conn struct {
	cfg *connConfig
	id  string
	idx int // index in its group: spreads histogram shards
	h   connHandler
	m   *meter

	mu      sync.Mutex
	nc      wire
	wbuf    []byte
	closed  bool
	waiters map[uint16]chan ackResult
	nextPID uint16
	inQoS2  map[uint16]struct{} // inbound QoS 2 ids awaiting PUBREL
	subs    []subscription      // re-subscribed after a reconnect
	quit    chan struct{}       // closed by close(): stops reconnecting
	bg      sync.WaitGroup      // the reader (and its reconnect loop)

	recvMax   atomic.Uint32 // broker's receive maximum
	keepAlive atomic.Uint32 // effective keep-alive (the broker may override it)
	lastWrite atomic.Int64
	up        atomic.Bool
}

func newConn(cfg *connConfig, id string, idx int, h connHandler, m *meter) *conn {
	return &conn{cfg: cfg, id: id, idx: idx, h: h, m: m, quit: make(chan struct{})}
}

// connect dials and completes the CONNECT/CONNACK handshake, then starts
// the reader. It counts success or failure and times the handshake.
func (c *conn) connect(ctx context.Context) error {
	start := time.Now()
	nc, br, err := c.handshake(ctx)
	if err != nil {
		c.m.add(cConnectFailures, 1)
		return err
	}
	global.record(histConnect, c.idx, time.Since(start).Nanoseconds())
	c.m.add(cConnects, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = nc.Close()
		return errors.New("mqtt: connection closed while connecting")
	}
	c.attach(nc, br)
	c.mu.Unlock()
	c.h.onConnect(c, false)
	return nil
}

// attach installs a fresh network connection and starts its reader (the
// group's poller when it can take the socket); c.mu is held.
func (c *conn) attach(nc net.Conn, br *bufio.Reader) {
	c.up.Store(true)
	c.m.conns.Add(1)
	c.lastWrite.Store(time.Now().UnixNano())
	keepalives.add(c)
	c.bg.Add(1)
	if c.cfg.poller != nil { // it takes plain TCP only: TLS keeps a reader goroutine
		if rc, err := c.cfg.poller.adopt(c, nc, br); err == nil {
			c.nc = rc
			return
		}
	}
	c.nc = nc
	go c.readLoop(nc, br)
}

func (c *conn) handshake(ctx context.Context) (net.Conn, *bufio.Reader, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.connectTimeout)
	defer cancel()
	nc, err := c.cfg.dial(ctx, "tcp", c.cfg.addr)
	if err != nil {
		return nil, nil, fmt.Errorf("mqtt: dial %s: %w", c.cfg.addr, err)
	}
	if c.cfg.tls != nil {
		tc := tls.Client(nc, c.cfg.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			return nil, nil, fmt.Errorf("mqtt: TLS handshake with %s: %w", c.cfg.addr, err)
		}
		nc = tc
	}
	deadline, _ := ctx.Deadline()
	_ = nc.SetDeadline(deadline)
	p := connectPacket{
		version: c.cfg.version, clientID: c.id, keepAlive: c.cfg.keepAlive, cleanStart: c.cfg.cleanStart,
		username: c.cfg.username, password: c.cfg.password, hasUser: c.cfg.hasUser, hasPass: c.cfg.hasPass,
		sessionExpiry: c.cfg.sessionExpiry, receiveMax: c.cfg.receiveMax, will: c.cfg.will,
	}
	if _, err := nc.Write(p.appendTo(nil)); err != nil {
		_ = nc.Close()
		return nil, nil, fmt.Errorf("mqtt: send CONNECT: %w", err)
	}
	br := bufio.NewReaderSize(nc, c.cfg.readBuffer)
	first, body, n, err := readPacket(br, nil)
	if err == nil && first>>4 != pktConnack {
		err = fmt.Errorf("mqtt: expected CONNACK, got packet type %d", first>>4)
	}
	var ack connack
	if err == nil {
		ack, err = parseConnack(c.cfg.version, body)
		_, _ = br.Discard(n)
	}
	if err == nil {
		err = connackError(c.cfg.version, ack)
	}
	if err != nil {
		_ = nc.Close()
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("mqtt: broker %s closed the connection during CONNECT (wrong protocol version or refused client?)", c.cfg.addr)
		}
		return nil, nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	rm := uint32(ack.receiveMax)
	if rm == 0 {
		rm = 65535
	}
	c.recvMax.Store(rm)
	ka := uint32(c.cfg.keepAlive)
	if ack.keepAlive >= 0 {
		ka = uint32(ack.keepAlive)
	}
	c.keepAlive.Store(ka)
	if ack.assignedID != "" {
		c.id = ack.assignedID
	}
	return nc, br, nil
}

// readPacket reads one packet. Its body aliases the reader's buffer when it
// fits (no copy); the caller discards n bytes after using it.
func readPacket(br *bufio.Reader, scratch *[]byte) (first byte, body []byte, n int, err error) {
	first, err = br.ReadByte()
	if err != nil {
		return 0, nil, 0, err
	}
	rem, mul := 0, 1
	for i := 0; ; i++ {
		b, err := br.ReadByte()
		if err != nil {
			return 0, nil, 0, err
		}
		rem += int(b&0x7F) * mul
		if b&0x80 == 0 {
			break
		}
		if i == 3 {
			return 0, nil, 0, errMalformed
		}
		mul *= 128
	}
	if rem <= br.Size() {
		body, err = br.Peek(rem)
		return first, body, rem, err
	}
	var buf []byte
	if scratch != nil {
		if cap(*scratch) < rem {
			*scratch = make([]byte, rem)
		}
		buf = (*scratch)[:rem]
	} else {
		buf = make([]byte, rem)
	}
	_, err = io.ReadFull(br, buf)
	return first, buf, 0, err
}

func (c *conn) readLoop(nc net.Conn, br *bufio.Reader) {
	defer c.bg.Done()
	var scratch []byte
	var pub publishPacket
	for {
		first, body, n, err := readPacket(br, &scratch)
		if err == nil {
			err = c.dispatch(first, body, &pub)
			if n > 0 {
				_, _ = br.Discard(n)
			}
		}
		if err != nil {
			c.lost(nc, err)
			return
		}
		// Acks queued while reading go out in one write once the socket's
		// buffered input is drained.
		if br.Buffered() == 0 {
			c.flush()
		}
	}
}

func (c *conn) dispatch(first byte, body []byte, pub *publishPacket) error {
	switch first >> 4 {
	case pktPublish:
		if err := parsePublish(first&0x0F, c.cfg.version, body, pub); err != nil {
			return err
		}
		switch pub.qos {
		case 0:
			c.h.onPublish(c, pub)
		case 1:
			c.h.onPublish(c, pub)
			c.queue(func(b []byte) []byte { return appendAck(b, pktPuback, pub.pid) })
		case 2:
			c.mu.Lock()
			if c.inQoS2 == nil {
				c.inQoS2 = map[uint16]struct{}{}
			}
			_, seen := c.inQoS2[pub.pid]
			c.inQoS2[pub.pid] = struct{}{}
			c.wbuf = appendAck(c.wbuf, pktPubrec, pub.pid)
			c.mu.Unlock()
			if !seen { // exactly once: a resent PUBLISH before PUBREL is not delivered again
				c.h.onPublish(c, pub)
			}
		}
	case pktPuback, pktPubcomp:
		pid, reason, err := parseAck(body)
		if err != nil {
			return err
		}
		if !c.wake(pid, ackResult{typ: first >> 4, reason: reason}) {
			c.h.onAck(c, first>>4, pid, reason)
		}
	case pktPubrec:
		pid, reason, err := parseAck(body)
		if err != nil {
			return err
		}
		if reason >= 0x80 { // refused: the exchange ends here
			if !c.wake(pid, ackResult{typ: pktPubrec, reason: reason}) {
				c.h.onAck(c, pktPubrec, pid, reason)
			}
			return nil
		}
		c.queue(func(b []byte) []byte { return appendAck(b, pktPubrel, pid) })
	case pktPubrel:
		pid, _, err := parseAck(body)
		if err != nil {
			return err
		}
		c.mu.Lock()
		delete(c.inQoS2, pid)
		c.wbuf = appendAck(c.wbuf, pktPubcomp, pid)
		c.mu.Unlock()
	case pktSuback, pktUnsuback:
		pid, codes, err := parseSuback(c.cfg.version, body)
		if err != nil {
			return err
		}
		c.wake(pid, ackResult{typ: first >> 4, codes: codes})
	case pktPingresp, pktAuth:
	case pktDisconnect:
		reason := byte(0)
		if len(body) > 0 {
			reason = body[0]
		}
		return fmt.Errorf("mqtt: broker sent DISCONNECT (reason 0x%02x)", reason)
	default:
		return fmt.Errorf("mqtt: unexpected packet type %d from broker", first>>4)
	}
	return nil
}

// queue appends a packet to the write buffer (sent by the next flush).
func (c *conn) queue(build func([]byte) []byte) {
	c.mu.Lock()
	c.wbuf = build(c.wbuf)
	c.mu.Unlock()
}

// flush writes the buffered packets in one syscall.
func (c *conn) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flushLocked()
}

func (c *conn) flushLocked() error {
	if len(c.wbuf) == 0 {
		return nil
	}
	if c.nc == nil {
		c.wbuf = c.wbuf[:0]
		return errNotConnected
	}
	_, err := c.nc.Write(c.wbuf)
	c.lastWrite.Store(time.Now().UnixNano())
	if cap(c.wbuf) > 64<<10 { // do not keep a burst's buffer forever
		c.wbuf = nil
	} else {
		c.wbuf = c.wbuf[:0]
	}
	if err != nil {
		_ = c.nc.Close() // the reader sees it and reconnects
	}
	return err
}

var errNotConnected = errors.New("mqtt: not connected")

// send queues one packet and flushes at once.
func (c *conn) send(pkt []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wbuf = append(c.wbuf, pkt...)
	return c.flushLocked()
}

// request sends a packet that the broker acknowledges by packet id and waits
// for the ack (SUBACK, UNSUBACK, or PUBACK/PUBCOMP for a low-level publish).
func (c *conn) request(ctx context.Context, build func(pid uint16) []byte) (ackResult, error) {
	ch := make(chan ackResult, 1)
	c.mu.Lock()
	if c.nc == nil {
		c.mu.Unlock()
		return ackResult{}, errNotConnected
	}
	if c.waiters == nil {
		c.waiters = map[uint16]chan ackResult{}
	}
	pid := c.nextPID
	for {
		pid++
		if _, busy := c.waiters[pid]; pid != 0 && !busy {
			break
		}
	}
	c.nextPID = pid
	c.waiters[pid] = ch
	c.wbuf = append(c.wbuf, build(pid)...)
	err := c.flushLocked()
	c.mu.Unlock()
	if err == nil {
		select {
		case r := <-ch:
			return r, nil
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	c.mu.Lock()
	delete(c.waiters, pid)
	c.mu.Unlock()
	return ackResult{}, err
}

func (c *conn) wake(pid uint16, r ackResult) bool {
	c.mu.Lock()
	ch, ok := c.waiters[pid]
	if ok {
		delete(c.waiters, pid)
	}
	c.mu.Unlock()
	if ok {
		ch <- r
	}
	return ok
}

// subscribe sends one SUBSCRIBE and remembers the filters for reconnects.
func (c *conn) subscribe(ctx context.Context, subs []subscription) ([]byte, error) {
	start := time.Now()
	r, err := c.request(ctx, func(pid uint16) []byte { return appendSubscribe(nil, c.cfg.version, pid, subs) })
	if err != nil {
		c.m.add(cSubscribeFailures, 1)
		return nil, err
	}
	global.record(histSuback, c.idx, time.Since(start).Nanoseconds())
	for i, code := range r.codes {
		if code >= 0x80 {
			c.m.add(cSubscribeFailures, 1)
			return r.codes, fmt.Errorf("mqtt: broker refused subscription %q (SUBACK code 0x%02x)", subs[min(i, len(subs)-1)].filter, code)
		}
	}
	c.mu.Lock()
	c.subs = append(c.subs, subs...)
	c.mu.Unlock()
	return r.codes, nil
}

func (c *conn) unsubscribe(ctx context.Context, filters []string) error {
	_, err := c.request(ctx, func(pid uint16) []byte { return appendUnsubscribe(nil, c.cfg.version, pid, filters) })
	if err != nil {
		return err
	}
	c.mu.Lock()
	kept := c.subs[:0]
	for _, s := range c.subs {
		drop := false
		for _, f := range filters {
			drop = drop || s.filter == f
		}
		if !drop {
			kept = append(kept, s)
		}
	}
	c.subs = kept
	c.mu.Unlock()
	return nil
}

// lost runs when the reader stops: closed by us, or dropped by the broker.
func (c *conn) lost(nc wire, err error) {
	c.mu.Lock()
	if c.nc == nc {
		c.nc = nil
		c.up.Store(false)
		c.m.conns.Add(-1)
		keepalives.remove(c)
	}
	closed := c.closed
	for pid, ch := range c.waiters {
		delete(c.waiters, pid)
		close(ch)
	}
	c.mu.Unlock()
	_ = nc.Close()
	if closed {
		return
	}
	c.m.add(cDisconnects, 1)
	c.h.onConnectionLost(c, err)
	if c.cfg.reconnect {
		c.reconnectLoop()
	}
}

// reconnectLoop redials with exponential backoff and jitter until it works
// or the connection is closed; subscriptions are restored.
func (c *conn) reconnectLoop() {
	backoff := c.cfg.backoffMin
	for {
		select {
		case <-c.quit:
			return
		case <-time.After(backoff/2 + rand.N(backoff/2+1)):
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.connectTimeout)
		nc, br, err := c.handshake(ctx)
		cancel()
		if err != nil {
			c.m.add(cConnectFailures, 1)
			backoff = min(backoff*2, c.cfg.backoffMax)
			continue
		}
		c.m.add(cReconnects, 1)
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			_ = nc.Close()
			return
		}
		c.attach(nc, br)
		subs := append([]subscription(nil), c.subs...)
		c.subs = c.subs[:0]
		c.mu.Unlock()
		if len(subs) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), c.cfg.connectTimeout)
			_, err := c.subscribe(ctx, subs)
			cancel()
			if err != nil {
				c.m.add(cErrors, 1)
			}
		}
		c.h.onConnect(c, true)
		return
	}
}

// close sends DISCONNECT, closes the socket and waits for the reader.
func (c *conn) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	close(c.quit)
	nc := c.nc
	if nc != nil {
		_ = nc.SetWriteDeadline(time.Now().Add(time.Second))
		c.wbuf = append(c.wbuf, disconnectPacket...)
		_ = c.flushLocked()
		_ = nc.Close()
	}
	c.mu.Unlock()
	done := make(chan struct{})
	go func() { c.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

// keepalives sends PINGREQ on idle connections from one goroutine for the
// whole process (a timer per connection would cost memory at 10K+ clients).
var keepalives = &pinger{conns: map[*conn]struct{}{}}

type pinger struct {
	mu      sync.Mutex
	conns   map[*conn]struct{}
	running bool
}

func (p *pinger) add(c *conn) {
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

func (p *pinger) remove(c *conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *pinger) loop() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var due []*conn
	for range t.C {
		now := time.Now().UnixNano()
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
			_ = c.send(pingreqPacket)
		}
	}
}
