// Package connection owns one MQTT connection's life: dial, TLS, the
// CONNECT handshake, reading (a goroutine per connection, or a subscriber
// group's epoll poller), batched writes, keep-alive and reconnection with
// backoff. It knows packets only through codec and reports what happens
// through two interfaces its owner implements: Handler (packets and
// connection events) and Recorder (counts and timings).
package connection

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
)

// Config is what every connection of a group (or a client) shares.
type Config struct {
	Addr string // host:port
	TLS  *tls.Config
	// WSPath: MQTT over WebSocket at this path (ws://, wss://); "" = none.
	WSPath         string
	WSHost         string // the Host of the upgrade request (the URL's host:port)
	Version        byte   // codec.V311 or codec.V5
	KeepAlive      uint16
	CleanStart     bool
	SessionExpiry  uint32
	Username       string
	Password       string
	HasUser        bool
	HasPass        bool
	Will           *codec.Will
	ConnectTimeout time.Duration
	ReadBuffer     int
	Reconnect      bool
	BackoffMin     time.Duration
	BackoffMax     time.Duration
	ReceiveMax     uint16 // what we announce (MQTT 5); 0 = not sent
	Dial           func(ctx context.Context, network, addr string) (net.Conn, error)
	// LocalAddrs: source addresses to dial from (ParseLocalAddresses); the
	// owner then dials with LocalDialer instead of the VU's dialer.
	LocalAddrs []net.IP
	// Poller reads the plain-TCP connections; nil: a goroutine per connection.
	Poller *Poller
	// Pinger sends keep-alive pings for every connection of this config.
	Pinger *Pinger
	// FreshSession: the first connect starts a new session even when
	// CleanStart is false (session.go); reconnects resume it. Groups set it:
	// an earlier run's session would deliver that run's messages.
	FreshSession bool
}

// Handler is the owner of a connection: a group or a low-level client.
// OnPublish and OnAck run on the connection's reader (goroutine or poller)
// and must not block; OnConnect runs on the goroutine that connected (or
// reconnected), OnConnectionLost on the one that saw the loss.
type Handler interface {
	// OnPublish gets each message; p is valid only during the call.
	// recvNs is the kernel's receive time (Unix ns), or 0 if not known.
	OnPublish(c *Conn, p *codec.Publish, recvNs int64)
	// OnAck gets every PUBACK, PUBREC and PUBCOMP that no Request waits for
	// (after a PUBREC that accepted the message, PUBREL is already queued):
	// the owner knows which QoS each packet id was sent at. recvNs is as
	// for OnPublish.
	OnAck(c *Conn, a codec.Ack, recvNs int64)
	OnConnect(c *Conn, reconnect bool)
	OnConnectionLost(c *Conn, err error)
}

// A Resumer re-sends what the broker has not acknowledged when a reconnect
// resumed the session (MQTT-4.4.0-1). Resume runs once the new connection
// takes writes and before anything the broker sends on it is read: a broker
// may re-send its own side of a flow at once (Mochi re-sends the PUBCOMP of
// a PUBREL it took as the connection broke), and a reader already running,
// as a group's poller is, would then complete the flow before the client
// re-sent its part.
type Resumer interface {
	Resume(c *Conn)
}

// Event is something a Recorder counts.
type Event int

// Events a connection reports.
const (
	Connected Event = iota
	ConnectFailed
	Reconnected
	Disconnected
	SubscribeFailed
	ErrorSeen
	// SharedRead: a message the poller read together with a later message
	// of the same connection, so timed at that one's receive time.
	SharedRead
	// ReconnectAttempt: a redial after a drop began; Reconnected follows
	// only when it worked. ConnectFailed is for first connections only.
	ReconnectAttempt
	// Down: n = +1 when a connection was lost and its reconnect is pending,
	// -1 when it is up again: the owner sees how many are down at once.
	Down
	// DownAtClose: a connection still down was closed by its owner, so its
	// downtime ended without a recovery (the run ended during it).
	DownAtClose
	// WriteStalled: the broker read nothing of a write for the flush's
	// deadline, and the connection was closed here (then redialled): a
	// disconnect of ours, not the broker's, and counted as one too.
	WriteStalled
)

// Timing is a duration a Recorder keeps.
type Timing int

// Timings a connection reports.
const (
	ConnectTime      Timing = iota // dial + TLS + CONNECT → CONNACK
	SubackTime                     // SUBSCRIBE → SUBACK
	TLSHandshakeTime               // the TLS handshake alone (TLS connections)
	ConnackTime                    // CONNECT → CONNACK alone
	// ReconnectTime: from a connection's drop to the CONNACK of the redial
	// that brought it back, backoff and failed attempts included: how long
	// an outage kept this client away. Taken once per reconnect, never on
	// the message path.
	ReconnectTime
)

// Recorder counts and times what connections do. shard is any small number
// that differs between concurrent callers (the connection's index).
type Recorder interface {
	Count(e Event, n int64)
	Time(t Timing, shard int, ns int64)
	// Open adds delta to the number of open connections.
	Open(delta int64)
}

// NewConfig is a Config with the defaults the options document, its own
// Pinger and no poller.
func NewConfig() *Config {
	return &Config{
		Addr: "127.0.0.1:1883", Version: codec.V311, KeepAlive: 60, CleanStart: true,
		ConnectTimeout: 10 * time.Second, ReadBuffer: 4096, Reconnect: true,
		BackoffMin: 100 * time.Millisecond, BackoffMax: 10 * time.Second,
		Dial: (&net.Dialer{}).DialContext, Pinger: NewPinger(),
	}
}

func nowNano() int64 { return time.Now().UnixNano() }
