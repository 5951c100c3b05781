package codec

import (
	"errors"
	"fmt"
)

// Split finds the first whole packet in b: its first byte, its body and its
// size. Size 0 means the packet is not complete yet (even inside its length
// bytes); a fifth length byte is ErrVarint.
func Split(b []byte) (first byte, body []byte, size int, err error) {
	if len(b) < 2 {
		return 0, nil, 0, nil
	}
	rem, n, err := ReadVarint(b[1:])
	if errors.Is(err, ErrTruncated) {
		return 0, nil, 0, nil // more length bytes may come
	}
	if err != nil {
		return 0, nil, 0, err
	}
	if size = 1 + n + rem; size > len(b) {
		return 0, nil, 0, nil
	}
	return b[0], b[1+n : size], size, nil
}

// PacketSize is the full size of the packet b starts with, or len(b) while
// its length is not readable yet.
func PacketSize(b []byte) int {
	if len(b) < 2 {
		return len(b)
	}
	rem, n, err := ReadVarint(b[1:])
	if err != nil {
		return len(b)
	}
	return 1 + n + rem
}

// Pingresp, Pingreq and Disconnect are the decoded forms of packets that
// carry at most a reason code.
type (
	Pingreq    struct{}
	Pingresp   struct{}
	Disconnect struct{ Reason byte }
	Auth       struct{ Reason byte }
	// Unsuback is an UNSUBACK: a SUBACK's shape with another type.
	Unsuback struct {
		PacketID uint16
		Codes    []byte
	}
	// Suback is a decoded SUBACK.
	Suback struct {
		PacketID uint16
		Codes    []byte
	}
	// Subscribe is a decoded SUBSCRIBE.
	Subscribe struct {
		PacketID uint16
		Subs     []Subscription
	}
	// Unsubscribe is a decoded UNSUBSCRIBE.
	Unsubscribe struct {
		PacketID uint16
		Filters  []string
	}
)

// Decode reads the first whole packet of b for protocol version: one of
// *Connect, *Connack, *Publish, *Ack, *Subscribe, *Suback, *Unsubscribe,
// *Unsuback, *Pingreq, *Pingresp, *Disconnect, *Auth; and its size. A
// packet not complete yet gives (nil, 0, nil). Decode is the codec's one
// entry point for tests and fuzzing; the connection's hot path calls the
// per-type decoders directly.
func Decode(version byte, b []byte) (any, int, error) {
	first, body, size, err := Split(b)
	if err != nil || size == 0 {
		return nil, 0, err
	}
	typ, flags := first>>4, first&0x0F
	if typ != PUBLISH && flags != requiredFlags(typ) {
		return nil, size, ErrFlags
	}
	var p any
	switch typ {
	case CONNECT:
		c, e := DecodeConnect(body)
		p, err = &c, e
	case CONNACK:
		a, e := DecodeConnack(version, body)
		p, err = &a, e
	case PUBLISH:
		var pub Publish
		err = DecodePublish(flags, version, body, &pub)
		p = &pub
	case PUBACK, PUBREC, PUBREL, PUBCOMP:
		a, e := DecodeAck(typ, flags, version, body)
		p, err = &a, e
	case SUBSCRIBE:
		pid, subs, e := DecodeSubscribe(version, body)
		p, err = &Subscribe{PacketID: pid, Subs: subs}, e
	case SUBACK:
		pid, codes, e := DecodeSuback(SUBACK, version, body)
		p, err = &Suback{PacketID: pid, Codes: codes}, e
	case UNSUBSCRIBE:
		pid, filters, e := DecodeUnsubscribe(version, body)
		p, err = &Unsubscribe{PacketID: pid, Filters: filters}, e
	case UNSUBACK:
		pid, codes, e := DecodeSuback(UNSUBACK, version, body)
		p, err = &Unsuback{PacketID: pid, Codes: codes}, e
	case PINGREQ, PINGRESP:
		if len(body) > 0 {
			return nil, size, ErrTrailing
		}
		p = &Pingresp{}
		if typ == PINGREQ {
			p = &Pingreq{}
		}
	case DISCONNECT:
		r, e := DecodeDisconnect(version, body)
		p, err = &Disconnect{Reason: r}, e
	case AUTH:
		r, e := DecodeAuth(version, body)
		p, err = &Auth{Reason: r}, e
	default:
		return nil, size, fmt.Errorf("%w: %d", ErrType, typ)
	}
	if err != nil {
		return nil, size, err
	}
	return p, size, nil
}
