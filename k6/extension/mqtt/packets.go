package mqtt

// A minimal MQTT 3.1.1 / 5.0 codec. Only what a load generator needs is
// encoded; everything a broker may send is decoded or skipped safely.
// Encoders append to a caller's buffer so the hot path allocates nothing.

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Packet types (high nibble of the fixed header).
const (
	pktConnect     = 1
	pktConnack     = 2
	pktPublish     = 3
	pktPuback      = 4
	pktPubrec      = 5
	pktPubrel      = 6
	pktPubcomp     = 7
	pktSubscribe   = 8
	pktSuback      = 9
	pktUnsubscribe = 10
	pktUnsuback    = 11
	pktPingreq     = 12
	pktPingresp    = 13
	pktDisconnect  = 14
	pktAuth        = 15
)

// Protocol levels on the wire.
const (
	v311 byte = 4
	v5   byte = 5
)

// MQTT 5 property identifiers we read or write.
const (
	propSessionExpiry    = 0x11
	propAssignedClientID = 0x12
	propServerKeepAlive  = 0x13
	propReasonString     = 0x1F
	propReceiveMaximum   = 0x21
	propTopicAliasMax    = 0x22
	propMaximumQoS       = 0x24
)

const maxRemainingLength = 268435455

var errMalformed = errors.New("mqtt: malformed packet")

func appendVarint(b []byte, n int) []byte {
	for {
		c := byte(n & 0x7F)
		n >>= 7
		if n > 0 {
			c |= 0x80
		}
		b = append(b, c)
		if n == 0 {
			return b
		}
	}
}

func varintLen(n int) int {
	switch {
	case n < 128:
		return 1
	case n < 16384:
		return 2
	case n < 2097152:
		return 3
	default:
		return 4
	}
}

// readVarint decodes a variable byte integer from b, returning value and bytes used.
func readVarint(b []byte) (int, int, error) {
	n, mul := 0, 1
	for i := 0; i < 4; i++ {
		if i >= len(b) {
			return 0, 0, errMalformed
		}
		n += int(b[i]&0x7F) * mul
		if b[i]&0x80 == 0 {
			return n, i + 1, nil
		}
		mul *= 128
	}
	return 0, 0, errMalformed
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func appendBytes(b, s []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// connectPacket holds what CONNECT carries.
type connectPacket struct {
	version       byte
	clientID      string
	keepAlive     uint16
	cleanStart    bool
	username      string
	password      string
	hasUser       bool
	hasPass       bool
	sessionExpiry uint32 // MQTT 5 only
	receiveMax    uint16 // MQTT 5 only; 0 = not sent
	will          *willMessage
}

type willMessage struct {
	topic   string
	payload []byte
	qos     byte
	retain  bool
}

func (p *connectPacket) appendTo(b []byte) []byte {
	var props []byte
	if p.version == v5 {
		if p.sessionExpiry > 0 {
			props = append(props, propSessionExpiry)
			props = binary.BigEndian.AppendUint32(props, p.sessionExpiry)
		}
		if p.receiveMax > 0 {
			props = append(props, propReceiveMaximum)
			props = binary.BigEndian.AppendUint16(props, p.receiveMax)
		}
	}
	var flags byte
	if p.cleanStart {
		flags |= 0x02
	}
	if p.will != nil {
		flags |= 0x04 | p.will.qos<<3
		if p.will.retain {
			flags |= 0x20
		}
	}
	if p.hasPass {
		flags |= 0x40
	}
	if p.hasUser {
		flags |= 0x80
	}
	body := make([]byte, 0, 64+len(p.clientID)+len(props))
	body = appendString(body, "MQTT")
	body = append(body, p.version, flags)
	body = binary.BigEndian.AppendUint16(body, p.keepAlive)
	if p.version == v5 {
		body = appendVarint(body, len(props))
		body = append(body, props...)
	}
	body = appendString(body, p.clientID)
	if p.will != nil {
		if p.version == v5 {
			body = appendVarint(body, 0) // no will properties
		}
		body = appendString(body, p.will.topic)
		body = appendBytes(body, p.will.payload)
	}
	if p.hasUser {
		body = appendString(body, p.username)
	}
	if p.hasPass {
		body = appendString(body, p.password)
	}
	b = append(b, pktConnect<<4)
	b = appendVarint(b, len(body))
	return append(b, body...)
}

// connack is the decoded CONNACK.
type connack struct {
	sessionPresent bool
	code           byte
	receiveMax     uint16 // 0 = not sent (65535 by default)
	keepAlive      int    // -1 = not sent
	assignedID     string
	reason         string
}

func parseConnack(version byte, body []byte) (connack, error) {
	ack := connack{keepAlive: -1}
	if len(body) < 2 {
		return ack, errMalformed
	}
	ack.sessionPresent = body[0]&1 == 1
	ack.code = body[1]
	if version == v5 && len(body) > 2 {
		err := walkProperties(body[2:], func(id byte, v []byte) {
			switch id {
			case propReceiveMaximum:
				ack.receiveMax = binary.BigEndian.Uint16(v)
			case propServerKeepAlive:
				ack.keepAlive = int(binary.BigEndian.Uint16(v))
			case propAssignedClientID:
				ack.assignedID = string(v[2:])
			case propReasonString:
				ack.reason = string(v[2:])
			}
		})
		if err != nil {
			return ack, err
		}
	}
	return ack, nil
}

// connackError turns a refused CONNACK into an error a user can act on.
func connackError(version byte, ack connack) error {
	if ack.code == 0 {
		return nil
	}
	msg := map[byte]string{
		1: "unacceptable protocol version", 2: "client identifier rejected", 3: "server unavailable",
		4: "bad user name or password", 5: "not authorized",
		0x80: "unspecified error", 0x81: "malformed packet", 0x82: "protocol error", 0x84: "unsupported protocol version",
		0x85: "client identifier not valid", 0x86: "bad user name or password", 0x87: "not authorized",
		0x88: "server unavailable", 0x89: "server busy", 0x8A: "banned", 0x8C: "bad authentication method",
		0x95: "packet too large", 0x97: "quota exceeded", 0x9F: "connection rate exceeded",
	}[ack.code]
	if msg == "" {
		msg = "refused"
	}
	if ack.reason != "" {
		msg += ": " + ack.reason
	}
	return fmt.Errorf("connection refused by broker (CONNACK code 0x%02x: %s)", ack.code, msg)
}

// propertySize gives the byte size of an MQTT 5 property value by identifier.
func propertySize(id byte, b []byte) (int, error) {
	switch id {
	case 0x01, 0x17, 0x19, 0x24, 0x25, 0x28, 0x29, 0x2A: // byte
		return 1, nil
	case 0x13, 0x21, 0x22, 0x23: // two-byte integer
		return 2, nil
	case 0x02, 0x11, 0x18, 0x27: // four-byte integer
		return 4, nil
	case 0x0B: // variable byte integer
		_, n, err := readVarint(b)
		return n, err
	case 0x03, 0x08, 0x09, 0x12, 0x15, 0x16, 0x1A, 0x1C, 0x1F: // string or binary
		if len(b) < 2 {
			return 0, errMalformed
		}
		return 2 + int(binary.BigEndian.Uint16(b)), nil
	case 0x26: // user property: string pair
		if len(b) < 2 {
			return 0, errMalformed
		}
		k := 2 + int(binary.BigEndian.Uint16(b))
		if len(b) < k+2 {
			return 0, errMalformed
		}
		return k + 2 + int(binary.BigEndian.Uint16(b[k:])), nil
	}
	return 0, fmt.Errorf("mqtt: unknown property 0x%02x", id)
}

// walkProperties reads a length-prefixed property block and calls fn for each.
func walkProperties(b []byte, fn func(id byte, v []byte)) error {
	plen, n, err := readVarint(b)
	if err != nil || n+plen > len(b) {
		return errMalformed
	}
	p := b[n : n+plen]
	for len(p) > 0 {
		id := p[0]
		size, err := propertySize(id, p[1:])
		if err != nil {
			return err
		}
		if 1+size > len(p) {
			return errMalformed
		}
		if fn != nil {
			fn(id, p[1:1+size])
		}
		p = p[1+size:]
	}
	return nil
}

// skipProperties returns the bytes after a property block.
func skipProperties(b []byte) ([]byte, error) {
	plen, n, err := readVarint(b)
	if err != nil || n+plen > len(b) {
		return nil, errMalformed
	}
	return b[n+plen:], nil
}

// publishPrefix is the part of a PUBLISH before the packet id: built once per
// client and topic, so each message costs a few appends.
func publishPrefix(qos byte, retain bool, topic string, version byte, payloadLen int) []byte {
	rem := 2 + len(topic) + payloadLen
	if qos > 0 {
		rem += 2
	}
	if version == v5 {
		rem++ // empty property block
	}
	first := byte(pktPublish<<4) | qos<<1
	if retain {
		first |= 1
	}
	b := make([]byte, 0, 1+varintLen(rem)+2+len(topic))
	b = append(b, first)
	b = appendVarint(b, rem)
	return appendString(b, topic)
}

// appendPublish appends a complete PUBLISH packet.
func appendPublish(b []byte, prefix []byte, qos byte, pid uint16, version byte, payload []byte) []byte {
	b = append(b, prefix...)
	if qos > 0 {
		b = binary.BigEndian.AppendUint16(b, pid)
	}
	if version == v5 {
		b = append(b, 0)
	}
	return append(b, payload...)
}

// publishPacket is a decoded PUBLISH; slices point into the read buffer and
// are valid only during the handler call.
type publishPacket struct {
	recvNs  int64 // kernel receive time (Unix ns) when the poller read it; 0: not known
	topic   []byte
	payload []byte
	qos     byte
	pid     uint16
	dup     bool
	retain  bool
}

func parsePublish(flags byte, version byte, body []byte, p *publishPacket) error {
	p.qos = (flags >> 1) & 3
	p.dup = flags&8 != 0
	p.retain = flags&1 != 0
	if p.qos == 3 || len(body) < 2 {
		return errMalformed
	}
	tl := int(binary.BigEndian.Uint16(body))
	if 2+tl > len(body) {
		return errMalformed
	}
	p.topic = body[2 : 2+tl]
	rest := body[2+tl:]
	p.pid = 0
	if p.qos > 0 {
		if len(rest) < 2 {
			return errMalformed
		}
		p.pid = binary.BigEndian.Uint16(rest)
		rest = rest[2:]
	}
	if version == v5 {
		var err error
		if rest, err = skipProperties(rest); err != nil {
			return err
		}
	}
	p.payload = rest
	return nil
}

// appendAck appends PUBACK, PUBREC, PUBREL or PUBCOMP (reason "success" is implied).
func appendAck(b []byte, typ byte, pid uint16) []byte {
	first := typ << 4
	if typ == pktPubrel {
		first |= 0x02
	}
	return append(b, first, 2, byte(pid>>8), byte(pid))
}

// parseAck reads the packet id and (MQTT 5) reason code of an ack.
func parseAck(body []byte) (pid uint16, reason byte, err error) {
	if len(body) < 2 {
		return 0, 0, errMalformed
	}
	pid = binary.BigEndian.Uint16(body)
	if len(body) > 2 {
		reason = body[2]
	}
	return pid, reason, nil
}

// subscription is one topic filter with its options.
type subscription struct {
	filter            string
	qos               byte
	noLocal           bool
	retainAsPublished bool
	retainHandling    byte
}

func appendSubscribe(b []byte, version byte, pid uint16, subs []subscription) []byte {
	body := make([]byte, 0, 16)
	body = binary.BigEndian.AppendUint16(body, pid)
	if version == v5 {
		body = append(body, 0)
	}
	for _, s := range subs {
		body = appendString(body, s.filter)
		opt := s.qos
		if version == v5 {
			if s.noLocal {
				opt |= 0x04
			}
			if s.retainAsPublished {
				opt |= 0x08
			}
			opt |= s.retainHandling << 4
		}
		body = append(body, opt)
	}
	b = append(b, pktSubscribe<<4|0x02)
	b = appendVarint(b, len(body))
	return append(b, body...)
}

func appendUnsubscribe(b []byte, version byte, pid uint16, filters []string) []byte {
	body := binary.BigEndian.AppendUint16(nil, pid)
	if version == v5 {
		body = append(body, 0)
	}
	for _, f := range filters {
		body = appendString(body, f)
	}
	b = append(b, pktUnsubscribe<<4|0x02)
	b = appendVarint(b, len(body))
	return append(b, body...)
}

// parseSuback returns the packet id and the granted QoS / reason codes.
func parseSuback(version byte, body []byte) (uint16, []byte, error) {
	if len(body) < 2 {
		return 0, nil, errMalformed
	}
	pid := binary.BigEndian.Uint16(body)
	rest := body[2:]
	if version == v5 {
		var err error
		if rest, err = skipProperties(rest); err != nil {
			return 0, nil, err
		}
	}
	return pid, append([]byte(nil), rest...), nil
}

var (
	pingreqPacket    = []byte{pktPingreq << 4, 0}
	disconnectPacket = []byte{pktDisconnect << 4, 0}
)
