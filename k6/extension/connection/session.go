package connection

import (
	"context"
	"fmt"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
)

// Persistent sessions. A session the broker keeps across connections
// (3.1.1: clean session 0; 5: a Session Expiry Interval > 0) lets a
// reconnect resume it: the broker keeps the subscriptions and the messages
// queued meanwhile, and the client re-sends what the broker had not
// acknowledged (MQTT-4.4.0-1), which is the owner's part (Handler.OnConnect
// with SessionPresent).

// SessionPresent is the last CONNACK's Session Present flag: the broker
// resumed a session of this client id.
func (c *Conn) SessionPresent() bool { return c.sessionPresent.Load() }

// AttachedAt is when the current network connection was installed (Unix
// ns): what was written before it went over an earlier one.
func (c *Conn) AttachedAt() int64 { return c.attachedAt.Load() }

// Persistent tells whether the session outlives the network connection:
// 3.1.1 without clean session; 5 with a Session Expiry Interval > 0.
func (c *Conn) Persistent() bool {
	if c.cfg.Version == codec.V5 {
		return c.cfg.SessionExpiry > 0
	}
	return !c.cfg.CleanStart
}

// cleanStart is the Clean Start (3.1.1: Clean Session) flag of the next
// CONNECT. A reconnect of a persistent session asks for it back (under MQTT
// 5 whatever the first CONNECT's flag). With FreshSession the first connect
// starts a new session, so that one an earlier run left (its subscriptions,
// its queued messages) is never resumed: a persistent one after
// discardOldSession, with Clean Start 0, because Mosquitto saves to its
// database only sessions that began so; any other with Clean Start 1.
func (c *Conn) cleanStart() bool {
	switch {
	case c.Persistent() && (c.sessionStarted.Load() || c.cfg.FreshSession):
		return false
	case c.cfg.FreshSession && !c.sessionStarted.Load():
		return true
	}
	return c.cfg.CleanStart
}

// discardOldSession ends a persistent session an earlier connection with
// this client id left on the broker, before a group's first connect. Not
// counted in any metric but a failure: it is not one of the run's
// connections.
func (c *Conn) discardOldSession(ctx context.Context) error {
	if !c.cfg.FreshSession || !c.Persistent() || c.sessionStarted.Load() {
		return nil
	}
	if err := c.endSession(ctx); err != nil {
		return fmt.Errorf("%w (while discarding an earlier session of client id %q)", err, c.ID())
	}
	return nil
}

// endSession ends this client id's session on the broker from a connection
// of its own: a CONNECT with Clean Start 1 (and no session expiry) replaces
// it (MQTT-3.1.2-6, MQTT 5 §3.1.2.4), and DISCONNECT ends the new one.
func (c *Conn) endSession(ctx context.Context) error {
	c.forceClean.Store(true)
	nc, _, err := c.handshake(ctx)
	c.forceClean.Store(false)
	if err != nil {
		return err
	}
	_, _ = nc.Write(codec.AppendDisconnect(nil, 0))
	return nc.Close()
}

// endsSessionOnClose: a group's persistent session is the run's, and must
// not outlive it: the broker would keep its subscriptions and queue every
// later run's messages for it.
func (c *Conn) endsSessionOnClose() bool { return c.cfg.FreshSession && c.Persistent() }

// QueuePubrel appends a PUBREL (sent by the next flush): a QoS 2 message's
// second half, re-sent after a reconnect that resumed the session.
func (c *Conn) QueuePubrel(pid uint16) { c.queueAck(codec.PUBREL, pid) }
