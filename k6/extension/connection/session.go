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

// cleanStart is the Clean Start (3.1.1: Clean Session) flag of the next
// CONNECT. A connection resumes its own session when it reconnects: under
// MQTT 5 a Session Expiry Interval > 0 keeps the session whatever the first
// CONNECT's flag, so a reconnect asks for it back. With FreshSession, the
// first connect starts a new session, so a session left by an earlier run
// (its subscriptions, its queued messages) is never resumed.
func (c *Conn) cleanStart() bool {
	if !c.sessionStarted.Load() {
		// 3.1.1 cannot start a new session that persists in one CONNECT:
		// discardOldSession has ended the old one.
		return c.cfg.CleanStart || (c.cfg.FreshSession && c.cfg.Version == codec.V5)
	}
	if c.cfg.Version == codec.V5 && c.cfg.SessionExpiry > 0 {
		return false
	}
	return c.cfg.CleanStart
}

// discardOldSession ends, under MQTT 3.1.1, a session an earlier
// connection with this client id left on the broker: a CONNECT with Clean
// Session 1 discards it (MQTT-3.1.2-6), and DISCONNECT ends the new one. MQTT
// 5 needs no extra connection (Clean Start 1 with the Session Expiry
// Interval starts a new session that persists). Not counted in any metric:
// it is not one of the run's connections.
func (c *Conn) discardOldSession(ctx context.Context) error {
	if c.cfg.Version == codec.V5 || c.cfg.CleanStart || !c.cfg.FreshSession || c.sessionStarted.Load() {
		return nil
	}
	c.forceClean.Store(true)
	nc, _, err := c.handshake(ctx)
	c.forceClean.Store(false)
	if err != nil {
		return fmt.Errorf("%w (while discarding an earlier session of client id %q)", err, c.ID())
	}
	_, _ = nc.Write(codec.AppendDisconnect(nil, 0))
	return nc.Close()
}

// QueuePubrel appends a PUBREL (sent by the next flush): a QoS 2 message's
// second half, re-sent after a reconnect that resumed the session.
func (c *Conn) QueuePubrel(pid uint16) { c.queueAck(codec.PUBREL, pid) }
