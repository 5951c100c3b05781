package codec

import (
	"encoding/binary"
	"fmt"
)

// MQTT 5 property identifiers this codec reads or writes (§2.2.2.2).
const (
	PropSessionExpiry     byte = 0x11
	PropAssignedClientID  byte = 0x12
	PropServerKeepAlive   byte = 0x13
	PropReasonString      byte = 0x1F
	PropReceiveMaximum    byte = 0x21
	PropTopicAliasMaximum byte = 0x22
	PropMaximumQoS        byte = 0x24
	PropUserProperty      byte = 0x26
	PropSharedSubAvail    byte = 0x2A
)

// willProps stands for the Will Properties in the table below: they are
// not a packet type of their own.
const willProps byte = 0

// propertyPackets lists, per property identifier, the packets it may appear
// in (§2.2.2.2, Table 2-4), as a bit set over packet types.
func propertyPackets(id byte) uint32 {
	bits := func(types ...byte) uint32 {
		var m uint32
		for _, t := range types {
			m |= 1 << t
		}
		return m
	}
	switch id {
	case 0x01, 0x02, 0x03, 0x08, 0x09: // payload format, expiry, content type, response topic, correlation data
		return bits(PUBLISH, willProps)
	case 0x0B: // subscription identifier
		return bits(PUBLISH, SUBSCRIBE)
	case 0x11: // session expiry interval
		return bits(CONNECT, CONNACK, DISCONNECT)
	case 0x12, 0x13, 0x1A, 0x24, 0x25, 0x28, 0x29, 0x2A: // CONNACK-only capabilities
		return bits(CONNACK)
	case 0x15, 0x16: // authentication method, data
		return bits(CONNECT, CONNACK, AUTH)
	case 0x17, 0x19: // request problem / response information
		return bits(CONNECT)
	case 0x18: // will delay interval
		return bits(willProps)
	case 0x1C: // server reference
		return bits(CONNACK, DISCONNECT)
	case 0x1F: // reason string
		return bits(CONNACK, PUBACK, PUBREC, PUBREL, PUBCOMP, SUBACK, UNSUBACK, DISCONNECT, AUTH)
	case 0x21, 0x22, 0x27: // receive maximum, topic alias maximum, maximum packet size
		return bits(CONNECT, CONNACK)
	case 0x23: // topic alias
		return bits(PUBLISH)
	case 0x26: // user property
		return 0xFFFF
	}
	return 0
}

// propertySize is the byte size of a property value, by identifier.
func propertySize(id byte, b []byte) (int, error) {
	switch id {
	case 0x01, 0x17, 0x19, 0x24, 0x25, 0x28, 0x29, 0x2A: // byte
		return 1, nil
	case 0x13, 0x21, 0x22, 0x23: // two-byte integer
		return 2, nil
	case 0x02, 0x11, 0x18, 0x27: // four-byte integer
		return 4, nil
	case 0x0B: // variable byte integer
		_, n, err := ReadVarint(b)
		return n, err
	case 0x03, 0x08, 0x09, 0x12, 0x15, 0x16, 0x1A, 0x1C, 0x1F: // string or binary
		f, _, err := readBinary(b)
		return 2 + len(f), err
	case 0x26: // user property: a string pair
		k, rest, err := readBinary(b)
		if err != nil {
			return 0, err
		}
		v, _, err := readBinary(rest)
		return 4 + len(k) + len(v), err
	}
	return 0, fmt.Errorf("%w: unknown identifier 0x%02x", ErrProperty, id)
}

// walkProperties reads the property block at the start of b (its length,
// then the properties) of a packet of type typ, calls fn for each property
// and returns what follows the block.
func walkProperties(typ byte, b []byte, fn func(id byte, v []byte)) ([]byte, error) {
	plen, n, err := ReadVarint(b)
	if err != nil {
		return nil, err
	}
	if n+plen > len(b) {
		return nil, ErrTruncated
	}
	p := b[n : n+plen]
	for len(p) > 0 {
		id := p[0]
		size, err := propertySize(id, p[1:])
		if err != nil {
			return nil, err
		}
		if propertyPackets(id)&(1<<typ) == 0 {
			return nil, fmt.Errorf("%w: 0x%02x in packet type %d", ErrProperty, id, typ)
		}
		if 1+size > len(p) {
			return nil, ErrTruncated
		}
		if fn != nil {
			fn(id, p[1:1+size])
		}
		p = p[1+size:]
	}
	return b[n+plen:], nil
}

// props builds a property block.
type props []byte

func (p props) byte1(id, v byte) props { return append(p, id, v) }
func (p props) uint16(id byte, v uint16) props {
	return binary.BigEndian.AppendUint16(append(p, id), v)
}
func (p props) uint32(id byte, v uint32) props {
	return binary.BigEndian.AppendUint32(append(p, id), v)
}
func (p props) str(id byte, s string) props { return appendString(append(p, id), s) }

// appendTo appends the block with its length.
func (p props) appendTo(b []byte) []byte { return append(AppendVarint(b, len(p)), p...) }
