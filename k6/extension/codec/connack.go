package codec

import (
	"encoding/binary"
	"fmt"
)

// Connack is a decoded CONNACK (§3.2). The MQTT 5 capabilities are -1 when
// the broker did not send them (the spec's defaults then apply).
type Connack struct {
	SessionPresent bool
	Code           byte
	ReceiveMax     uint16 // 0 = not sent (65535 by default)
	KeepAlive      int    // server keep alive; -1 = not sent
	MaxQoS         int    // -1 = not sent (2 by default)
	SharedSubs     int    // shared subscription available; -1 = not sent (1 by default)
	AssignedID     string
	Reason         string
}

// AppendConnack appends a CONNACK (a broker's side; tests and tools).
func AppendConnack(b []byte, version byte, a Connack) []byte {
	body := []byte{0, a.Code}
	if a.SessionPresent {
		body[0] = 1
	}
	if version == V5 {
		var pr props
		if a.ReceiveMax > 0 {
			pr = pr.uint16(PropReceiveMaximum, a.ReceiveMax)
		}
		if a.KeepAlive >= 0 {
			pr = pr.uint16(PropServerKeepAlive, uint16(a.KeepAlive))
		}
		if a.MaxQoS >= 0 {
			pr = pr.byte1(PropMaximumQoS, byte(a.MaxQoS))
		}
		if a.SharedSubs >= 0 {
			pr = pr.byte1(PropSharedSubAvail, byte(a.SharedSubs))
		}
		if a.AssignedID != "" {
			pr = pr.str(PropAssignedClientID, a.AssignedID)
		}
		if a.Reason != "" {
			pr = pr.str(PropReasonString, a.Reason)
		}
		body = pr.appendTo(body)
	}
	b = append(b, CONNACK<<4)
	b = AppendVarint(b, len(body))
	return append(b, body...)
}

// DecodeConnack reads a CONNACK body.
func DecodeConnack(version byte, body []byte) (Connack, error) {
	a := Connack{KeepAlive: -1, MaxQoS: -1, SharedSubs: -1}
	if len(body) < 2 {
		return a, ErrTruncated
	}
	if body[0]&0xFE != 0 {
		return a, ErrFlags // connect acknowledge flags: bits 7-1 reserved (§3.2.2.1)
	}
	a.SessionPresent = body[0]&1 == 1
	a.Code = body[1]
	rest := body[2:]
	// A 3.1.1-only broker answers a v5 CONNECT with its own 2-byte CONNACK,
	// code 0x01 (3.1.1 §3.1.2.2): keep the code, so the refusal reads true.
	if version == V5 && len(rest) == 0 && a.Code != 0 {
		return a, nil
	}
	if version == V5 {
		var err error
		rest, err = walkProperties(CONNACK, rest, func(id byte, v []byte) {
			switch id {
			case PropReceiveMaximum:
				a.ReceiveMax = binary.BigEndian.Uint16(v)
			case PropServerKeepAlive:
				a.KeepAlive = int(binary.BigEndian.Uint16(v))
			case PropMaximumQoS:
				a.MaxQoS = int(v[0])
			case PropSharedSubAvail:
				a.SharedSubs = int(v[0])
			case PropAssignedClientID:
				a.AssignedID = string(v[2:])
			case PropReasonString:
				a.Reason = string(v[2:])
			}
		})
		if err != nil {
			return a, err
		}
	}
	if len(rest) > 0 {
		return a, ErrTrailing
	}
	return a, nil
}

// connackReasons are the CONNACK return codes of 3.1.1 (§3.2.2.3 of 3.1.1)
// and the reason codes of 5.0 (§3.2.2.2).
func connackReason(code byte) string {
	switch code {
	case 1:
		return "unacceptable protocol version"
	case 2:
		return "client identifier rejected"
	case 3:
		return "server unavailable"
	case 4:
		return "bad user name or password"
	case 5:
		return "not authorized"
	case 0x80:
		return "unspecified error"
	case 0x81:
		return "malformed packet"
	case 0x82:
		return "protocol error"
	case 0x84:
		return "unsupported protocol version"
	case 0x85:
		return "client identifier not valid"
	case 0x86:
		return "bad user name or password"
	case 0x87:
		return "not authorized"
	case 0x88:
		return "server unavailable"
	case 0x89:
		return "server busy"
	case 0x8A:
		return "banned"
	case 0x8C:
		return "bad authentication method"
	case 0x95:
		return "packet too large"
	case 0x97:
		return "quota exceeded"
	case 0x9F:
		return "connection rate exceeded"
	}
	return "refused"
}

// Err turns a refused CONNACK into an error a user can act on (nil when accepted).
func (a Connack) Err() error {
	if a.Code == 0 {
		return nil
	}
	msg := connackReason(a.Code)
	if a.Reason != "" {
		msg += ": " + a.Reason
	}
	return fmt.Errorf("connection refused by broker (CONNACK code 0x%02x: %s)", a.Code, msg)
}
