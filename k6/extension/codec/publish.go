package codec

import "encoding/binary"

// Publish is a decoded PUBLISH (§3.3). Topic and Payload point into the
// read buffer and are valid only while the caller holds it.
type Publish struct {
	Topic    []byte
	Payload  []byte
	QoS      byte
	PacketID uint16
	Dup      bool
	Retain   bool
}

// PublishPrefix is the part of a PUBLISH before the packet id: built once
// per client and topic, so each message costs a few appends.
func PublishPrefix(qos byte, retain bool, topic string, version byte, payloadLen int) []byte {
	rem := 2 + len(topic) + payloadLen
	if qos > 0 {
		rem += 2
	}
	if version == V5 {
		rem++ // empty property block
	}
	first := PUBLISH<<4 | qos<<1
	if retain {
		first |= 1
	}
	b := make([]byte, 0, 1+VarintLen(rem)+2+len(topic))
	b = append(b, first)
	b = AppendVarint(b, rem)
	return appendString(b, topic)
}

// AppendPublish appends a complete PUBLISH from its prefix.
func AppendPublish(b []byte, prefix []byte, qos byte, pid uint16, version byte, payload []byte) []byte {
	b = append(b, prefix...)
	if qos > 0 {
		b = binary.BigEndian.AppendUint16(b, pid)
	}
	if version == V5 {
		b = append(b, 0)
	}
	return append(b, payload...)
}

// AppendPublishPacket appends p as a whole PUBLISH (DUP set as p says).
func AppendPublishPacket(b []byte, version byte, p *Publish) []byte {
	prefix := PublishPrefix(p.QoS, p.Retain, string(p.Topic), version, len(p.Payload))
	if p.Dup {
		prefix[0] |= 0x08
	}
	return AppendPublish(b, prefix, p.QoS, p.PacketID, version, p.Payload)
}

// DecodePublish reads a PUBLISH body into p; flags is the fixed header's
// low nibble. The topic must be valid UTF-8 without wildcards (§3.3.2.1).
func DecodePublish(flags byte, version byte, body []byte, p *Publish) error {
	p.QoS = (flags >> 1) & 3
	p.Dup = flags&8 != 0
	p.Retain = flags&1 != 0
	if p.QoS == 3 || (p.QoS == 0 && p.Dup) {
		return ErrFlags
	}
	topic, rest, err := readString(body)
	if err != nil {
		return err
	}
	for _, c := range topic {
		if c == '+' || c == '#' {
			return ErrTopic
		}
	}
	p.Topic = topic
	p.PacketID = 0
	if p.QoS > 0 {
		if p.PacketID, rest, err = readPacketID(rest); err != nil {
			return err
		}
	}
	if version == V5 {
		if rest, err = walkProperties(PUBLISH, rest, nil); err != nil {
			return err
		}
	}
	p.Payload = rest
	return nil
}
