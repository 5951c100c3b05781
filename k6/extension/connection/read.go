package connection

import (
	"bufio"
	"fmt"
	"net"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
)

// readLoop is the reader of a connection the poller does not own.
func (c *Conn) readLoop(nc net.Conn, br *bufio.Reader) {
	defer c.bg.Done()
	var scratch []byte
	var pub codec.Publish
	for {
		first, body, n, err := readPacket(br, &scratch)
		if err == nil {
			err = c.dispatch(first, body, &pub, 0)
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
			_ = c.Flush()
		}
	}
}

// dispatch handles one packet from the broker; acks it owes are queued
// (the reader flushes them). pub is the reader's own, reused per message.
func (c *Conn) dispatch(first byte, body []byte, pub *codec.Publish, recvNs int64) error {
	typ, flags, version := first>>4, first&0x0F, c.cfg.Version
	switch typ {
	case codec.PUBLISH:
		if err := codec.DecodePublish(flags, version, body, pub); err != nil {
			return err
		}
		c.onPublish(pub, recvNs)
	case codec.PUBACK, codec.PUBCOMP, codec.PUBREC, codec.PUBREL:
		a, err := codec.DecodeAck(typ, flags, version, body)
		if err != nil {
			return err
		}
		c.onAck(a, recvNs)
	case codec.SUBACK, codec.UNSUBACK:
		pid, codes, err := codec.DecodeSuback(typ, version, body)
		if err != nil {
			return err
		}
		c.wake(pid, AckResult{Type: typ, Codes: codes})
	case codec.PINGRESP, codec.AUTH:
	case codec.DISCONNECT:
		reason, _ := codec.DecodeDisconnect(version, body)
		return fmt.Errorf("mqtt: broker sent DISCONNECT (reason 0x%02x)", reason)
	default:
		return fmt.Errorf("mqtt: unexpected packet type %d from broker", typ)
	}
	return nil
}

func (c *Conn) onPublish(pub *codec.Publish, recvNs int64) {
	switch pub.QoS {
	case 0:
		c.h.OnPublish(c, pub, recvNs)
	case 1:
		c.h.OnPublish(c, pub, recvNs)
		c.queueAck(codec.PUBACK, pub.PacketID)
	case 2:
		c.mu.Lock()
		seen := c.inQoS2.add(pub.PacketID)
		c.wbuf = codec.AppendAck(c.wbuf, codec.Ack{Type: codec.PUBREC, PacketID: pub.PacketID})
		c.mu.Unlock()
		if !seen { // exactly once: a resent PUBLISH before PUBREL is not delivered again
			c.h.OnPublish(c, pub, recvNs)
		}
	}
}

func (c *Conn) onAck(a codec.Ack, recvNs int64) {
	switch a.Type {
	case codec.PUBACK, codec.PUBCOMP:
		if !c.wake(a.PacketID, AckResult{Type: a.Type, Reason: a.Reason}) {
			c.h.OnAck(c, a, recvNs)
		}
	case codec.PUBREC:
		if a.Reason >= 0x80 { // refused: the exchange ends here
			if !c.wake(a.PacketID, AckResult{Type: a.Type, Reason: a.Reason}) {
				c.h.OnAck(c, a, recvNs)
			}
			return
		}
		c.queueAck(codec.PUBREL, a.PacketID)
		c.h.OnAck(c, a, recvNs) // the owner checks the flow: a PUBREC answers QoS 2 only
	case codec.PUBREL:
		c.mu.Lock()
		c.inQoS2.remove(a.PacketID)
		c.wbuf = codec.AppendAck(c.wbuf, codec.Ack{Type: codec.PUBCOMP, PacketID: a.PacketID})
		c.mu.Unlock()
	}
}
