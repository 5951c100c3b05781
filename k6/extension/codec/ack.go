package codec

import "fmt"

// Ack is a PUBACK, PUBREC, PUBREL or PUBCOMP (§3.4-3.7). Reason is the MQTT 5
// reason code (0: success; 3.1.1 has none).
type Ack struct {
	Type     byte
	PacketID uint16
	Reason   byte
}

// AppendAck appends an ack. A success ack is the short form, valid in both
// versions (§3.4.2.1: reason and properties may be omitted when 0x00); any
// other reason is MQTT 5 only and is written with an empty property block.
func AppendAck(b []byte, a Ack) []byte {
	first := a.Type<<4 | requiredFlags(a.Type)
	if a.Reason == 0 {
		return append(b, first, 2, byte(a.PacketID>>8), byte(a.PacketID))
	}
	return append(b, first, 4, byte(a.PacketID>>8), byte(a.PacketID), a.Reason, 0)
}

// DecodeAck reads an ack's body; flags is the fixed header's low nibble.
func DecodeAck(typ, flags, version byte, body []byte) (Ack, error) {
	a := Ack{Type: typ}
	if typ < PUBACK || typ > PUBCOMP {
		return a, fmt.Errorf("%w: %d is not an ack", ErrType, typ)
	}
	if flags != requiredFlags(typ) {
		return a, ErrFlags
	}
	pid, rest, err := readPacketID(body)
	if err != nil {
		return a, err
	}
	a.PacketID = pid
	if len(rest) == 0 {
		return a, nil
	}
	if version != V5 {
		return a, ErrTrailing
	}
	a.Reason, rest = rest[0], rest[1:]
	if len(rest) > 0 {
		if rest, err = walkProperties(typ, rest, nil); err != nil {
			return a, err
		}
	}
	if len(rest) > 0 {
		return a, ErrTrailing
	}
	return a, nil
}

// AckFits tells whether ack a belongs to the flow of a publish at qos
// (QoS 1: PUBACK; QoS 2: PUBREC, then PUBCOMP; §4.3), and whether it ends
// the flow. A refusing PUBREC ends a QoS 2 flow (MQTT 5 §4.3.3).
func AckFits(qos byte, a Ack) (fits, ends bool) {
	switch {
	case qos == 1:
		return a.Type == PUBACK, true
	case a.Type == PUBREC:
		return true, a.Reason >= 0x80
	default:
		return a.Type == PUBCOMP, true
	}
}
