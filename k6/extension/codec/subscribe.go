package codec

import (
	"encoding/binary"
	"fmt"
)

// Subscription is one topic filter of a SUBSCRIBE with its options (§3.8.3).
type Subscription struct {
	Filter            string
	QoS               byte
	NoLocal           bool // MQTT 5 only, like the two below
	RetainAsPublished bool
	RetainHandling    byte
}

// AppendSubscribe appends a SUBSCRIBE.
func AppendSubscribe(b []byte, version byte, pid uint16, subs []Subscription) []byte {
	body := binary.BigEndian.AppendUint16(make([]byte, 0, 16), pid)
	if version == V5 {
		body = append(body, 0)
	}
	for _, s := range subs {
		body = appendString(body, s.Filter)
		opt := s.QoS
		if version == V5 {
			if s.NoLocal {
				opt |= 0x04
			}
			if s.RetainAsPublished {
				opt |= 0x08
			}
			opt |= s.RetainHandling << 4
		}
		body = append(body, opt)
	}
	b = append(b, SUBSCRIBE<<4|requiredFlags(SUBSCRIBE))
	b = AppendVarint(b, len(body))
	return append(b, body...)
}

// DecodeSubscribe reads a SUBSCRIBE body (a broker's side; tests and tools).
func DecodeSubscribe(version byte, body []byte) (uint16, []Subscription, error) {
	pid, rest, err := readPacketID(body)
	if err != nil {
		return 0, nil, err
	}
	if version == V5 {
		if rest, err = walkProperties(SUBSCRIBE, rest, nil); err != nil {
			return 0, nil, err
		}
	}
	var subs []Subscription
	for len(rest) > 0 {
		var f []byte
		if f, rest, err = readString(rest); err != nil {
			return 0, nil, err
		}
		if len(rest) == 0 {
			return 0, nil, ErrTruncated
		}
		opt := rest[0]
		rest = rest[1:]
		if opt&3 == 3 || (version != V5 && opt&0xFC != 0) || opt&0xC0 != 0 || (opt>>4)&3 == 3 {
			return 0, nil, fmt.Errorf("%w: subscription options 0x%02x", ErrFlags, opt)
		}
		subs = append(subs, Subscription{Filter: string(f), QoS: opt & 3, NoLocal: opt&0x04 != 0,
			RetainAsPublished: opt&0x08 != 0, RetainHandling: (opt >> 4) & 3})
	}
	if len(subs) == 0 {
		return 0, nil, ErrTruncated // at least one filter (§3.8.3)
	}
	return pid, subs, nil
}

// AppendUnsubscribe appends an UNSUBSCRIBE.
func AppendUnsubscribe(b []byte, version byte, pid uint16, filters []string) []byte {
	body := binary.BigEndian.AppendUint16(nil, pid)
	if version == V5 {
		body = append(body, 0)
	}
	for _, f := range filters {
		body = appendString(body, f)
	}
	b = append(b, UNSUBSCRIBE<<4|requiredFlags(UNSUBSCRIBE))
	b = AppendVarint(b, len(body))
	return append(b, body...)
}

// DecodeUnsubscribe reads an UNSUBSCRIBE body (a broker's side; tests and tools).
func DecodeUnsubscribe(version byte, body []byte) (uint16, []string, error) {
	pid, rest, err := readPacketID(body)
	if err != nil {
		return 0, nil, err
	}
	if version == V5 {
		if rest, err = walkProperties(UNSUBSCRIBE, rest, nil); err != nil {
			return 0, nil, err
		}
	}
	var filters []string
	for len(rest) > 0 {
		var f []byte
		if f, rest, err = readString(rest); err != nil {
			return 0, nil, err
		}
		filters = append(filters, string(f))
	}
	if len(filters) == 0 {
		return 0, nil, ErrTruncated
	}
	return pid, filters, nil
}

// AppendSuback appends a SUBACK or UNSUBACK (typ) with its reason codes; a
// 3.1.1 UNSUBACK has none (a broker's side; tests and tools).
func AppendSuback(b []byte, typ, version byte, pid uint16, codes []byte) []byte {
	body := binary.BigEndian.AppendUint16(nil, pid)
	if version == V5 {
		body = append(body, 0)
	}
	if typ == SUBACK || version == V5 {
		body = append(body, codes...)
	}
	b = append(b, typ<<4)
	b = AppendVarint(b, len(body))
	return append(b, body...)
}

// DecodeSuback reads a SUBACK or UNSUBACK (typ) body: the packet id and the
// reason codes (granted QoS for SUBACK; none for a 3.1.1 UNSUBACK). The codes
// are copied: they outlive the read buffer.
func DecodeSuback(typ, version byte, body []byte) (uint16, []byte, error) {
	pid, rest, err := readPacketID(body)
	if err != nil {
		return 0, nil, err
	}
	if version == V5 {
		if rest, err = walkProperties(typ, rest, nil); err != nil {
			return 0, nil, err
		}
	}
	if typ == UNSUBACK && version != V5 {
		if len(rest) > 0 {
			return 0, nil, ErrTrailing
		}
		return pid, nil, nil
	}
	if len(rest) == 0 {
		return 0, nil, ErrTruncated // one code per filter (§3.9.3)
	}
	return pid, append([]byte(nil), rest...), nil
}
