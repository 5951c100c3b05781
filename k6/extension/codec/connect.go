package codec

import (
	"encoding/binary"
	"fmt"
)

// Connect is what a CONNECT carries (§3.1).
type Connect struct {
	Version       byte
	ClientID      string
	KeepAlive     uint16 // seconds; 0 = off
	CleanStart    bool
	Username      string
	Password      string
	HasUser       bool
	HasPass       bool
	SessionExpiry uint32 // MQTT 5 only
	ReceiveMax    uint16 // MQTT 5 only; 0 = not sent
	Will          *Will
}

// Will is the CONNECT's will message.
type Will struct {
	Topic   string
	Payload []byte
	QoS     byte
	Retain  bool
}

// AppendConnect appends a CONNECT packet.
func AppendConnect(b []byte, p *Connect) []byte {
	var flags byte
	if p.CleanStart {
		flags |= 0x02
	}
	if p.Will != nil {
		flags |= 0x04 | p.Will.QoS<<3
		if p.Will.Retain {
			flags |= 0x20
		}
	}
	if p.HasPass {
		flags |= 0x40
	}
	if p.HasUser {
		flags |= 0x80
	}
	body := make([]byte, 0, 64+len(p.ClientID))
	body = appendString(body, "MQTT")
	body = append(body, p.Version, flags)
	body = binary.BigEndian.AppendUint16(body, p.KeepAlive)
	if p.Version == V5 {
		var pr props
		if p.SessionExpiry > 0 {
			pr = pr.uint32(PropSessionExpiry, p.SessionExpiry)
		}
		if p.ReceiveMax > 0 {
			pr = pr.uint16(PropReceiveMaximum, p.ReceiveMax)
		}
		body = pr.appendTo(body)
	}
	body = appendString(body, p.ClientID)
	if p.Will != nil {
		if p.Version == V5 {
			body = props(nil).appendTo(body) // no will properties
		}
		body = appendString(body, p.Will.Topic)
		body = appendBinary(body, p.Will.Payload)
	}
	if p.HasUser {
		body = appendString(body, p.Username)
	}
	if p.HasPass {
		body = appendBinary(body, []byte(p.Password))
	}
	b = append(b, CONNECT<<4)
	b = AppendVarint(b, len(body))
	return append(b, body...)
}

// DecodeConnect reads a CONNECT body (a broker's side; tests and tools).
func DecodeConnect(body []byte) (Connect, error) {
	var p Connect
	name, rest, err := readString(body)
	if err != nil {
		return p, err
	}
	if len(rest) < 4 {
		return p, ErrTruncated
	}
	p.Version, rest = rest[0], rest[1:]
	if string(name) != "MQTT" || (p.Version != V311 && p.Version != V5) {
		return p, fmt.Errorf("%w: %q level %d", ErrProtocol, name, p.Version)
	}
	flags := rest[0]
	if flags&0x01 != 0 || (flags&0x04 == 0 && flags&0x38 != 0) || (flags>>3)&3 == 3 {
		return p, ErrFlags // reserved bit, or will QoS/retain without a will (§3.1.2.3)
	}
	p.CleanStart, p.HasUser, p.HasPass = flags&0x02 != 0, flags&0x80 != 0, flags&0x40 != 0
	p.KeepAlive = binary.BigEndian.Uint16(rest[1:])
	rest = rest[3:]
	if p.Version == V5 {
		rest, err = walkProperties(CONNECT, rest, func(id byte, v []byte) {
			switch id {
			case PropSessionExpiry:
				p.SessionExpiry = binary.BigEndian.Uint32(v)
			case PropReceiveMaximum:
				p.ReceiveMax = binary.BigEndian.Uint16(v)
			}
		})
		if err != nil {
			return p, err
		}
	}
	var f []byte
	if f, rest, err = readString(rest); err != nil {
		return p, err
	}
	p.ClientID = string(f)
	if flags&0x04 != 0 {
		w := &Will{QoS: (flags >> 3) & 3, Retain: flags&0x20 != 0}
		if p.Version == V5 {
			if rest, err = walkProperties(willProps, rest, nil); err != nil {
				return p, err
			}
		}
		if f, rest, err = readString(rest); err != nil {
			return p, err
		}
		w.Topic = string(f)
		if f, rest, err = readBinary(rest); err != nil {
			return p, err
		}
		w.Payload = append([]byte(nil), f...)
		p.Will = w
	}
	if p.HasUser {
		if f, rest, err = readString(rest); err != nil {
			return p, err
		}
		p.Username = string(f)
	}
	if p.HasPass {
		if f, rest, err = readBinary(rest); err != nil {
			return p, err
		}
		p.Password = string(f)
	}
	if len(rest) > 0 {
		return p, ErrTrailing
	}
	return p, nil
}
