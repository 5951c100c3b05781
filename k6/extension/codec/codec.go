// Package codec encodes and decodes MQTT 3.1.1 and 5.0 packets: pure
// functions over bytes, no I/O. Encoders append to a caller's buffer so the
// load generator's hot path allocates nothing; decoders of packets a broker
// sends never panic on hostile input (FuzzDecode) and return one error value
// per kind of malformation, so a test or a log can tell them apart.
package codec

import (
	"errors"
	"fmt"
)

// Packet types: the high nibble of the fixed header (MQTT 5.0 §2.1.2).
const (
	CONNECT     byte = 1
	CONNACK     byte = 2
	PUBLISH     byte = 3
	PUBACK      byte = 4
	PUBREC      byte = 5
	PUBREL      byte = 6
	PUBCOMP     byte = 7
	SUBSCRIBE   byte = 8
	SUBACK      byte = 9
	UNSUBSCRIBE byte = 10
	UNSUBACK    byte = 11
	PINGREQ     byte = 12
	PINGRESP    byte = 13
	DISCONNECT  byte = 14
	AUTH        byte = 15
)

// Protocol levels on the wire (the CONNECT's protocol level byte).
const (
	V311 byte = 4
	V5   byte = 5
)

// MaxRemainingLength is the largest remaining length a fixed header can
// carry (four variable-byte-integer bytes, §1.5.5).
const MaxRemainingLength = 268435455

// The kinds of malformed input. Each decoder returns one of these (possibly
// wrapped with detail), so callers can test with errors.Is.
var (
	// ErrTruncated: the packet is shorter than its own fields say.
	ErrTruncated = errors.New("mqtt: malformed packet: truncated")
	// ErrVarint: a variable byte integer runs past four bytes (§1.5.5).
	ErrVarint = errors.New("mqtt: malformed packet: variable byte integer longer than 4 bytes")
	// ErrProperty: a property identifier that is unknown, or not allowed
	// in this packet type (§2.2.2.2).
	ErrProperty = errors.New("mqtt: malformed packet: property not allowed in this packet")
	// ErrUTF8: a string that is not well-formed UTF-8 or holds U+0000 (§1.5.4).
	ErrUTF8 = errors.New("mqtt: malformed packet: string is not valid UTF-8")
	// ErrTopic: a wildcard (+ or #) in a PUBLISH topic name (§3.3.2.1).
	ErrTopic = errors.New("mqtt: malformed packet: wildcard in a topic name")
	// ErrPacketID: packet identifier 0 where one is required (§2.2.1).
	ErrPacketID = errors.New("mqtt: malformed packet: packet identifier 0")
	// ErrFlags: reserved fixed-header flags set wrong, or QoS 3 (§2.1.3, §3.3.1.2).
	ErrFlags = errors.New("mqtt: malformed packet: invalid fixed header flags")
	// ErrTrailing: bytes left over after every field was read.
	ErrTrailing = errors.New("mqtt: malformed packet: unexpected trailing bytes")
	// ErrType: packet type 0, or AUTH in MQTT 3.1.1.
	ErrType = errors.New("mqtt: malformed packet: unknown packet type")
	// ErrProtocol: a CONNECT whose protocol name or level is not MQTT 3.1.1 or 5.
	ErrProtocol = errors.New("mqtt: malformed packet: unsupported protocol name or level")
)

// TypeName is a packet type's name in the spec, for messages.
func TypeName(typ byte) string {
	names := [...]string{"reserved", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP",
		"SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "PINGREQ", "PINGRESP", "DISCONNECT", "AUTH"}
	if int(typ) < len(names) {
		return names[typ]
	}
	return fmt.Sprintf("type %d", typ)
}

// requiredFlags are the fixed-header flags each type must carry (§2.1.3);
// PUBLISH is absent: its flags carry DUP, QoS and RETAIN.
func requiredFlags(typ byte) byte {
	switch typ {
	case PUBREL, SUBSCRIBE, UNSUBSCRIBE:
		return 0x02
	}
	return 0
}
