package codec

import "fmt"

// AppendPingreq appends a PINGREQ (§3.12).
func AppendPingreq(b []byte) []byte { return append(b, PINGREQ<<4, 0) }

// AppendPingresp appends a PINGRESP (§3.13).
func AppendPingresp(b []byte) []byte { return append(b, PINGRESP<<4, 0) }

// AppendDisconnect appends a DISCONNECT (§3.14). Reason 0 is the short
// form, valid in both versions; other reasons are MQTT 5 only.
func AppendDisconnect(b []byte, reason byte) []byte {
	if reason == 0 {
		return append(b, DISCONNECT<<4, 0)
	}
	return append(b, DISCONNECT<<4, 2, reason, 0)
}

// AppendDisconnectEndingSession appends an MQTT 5 DISCONNECT (normal, 0x00)
// whose Session Expiry Interval 0 ends the session with the connection
// (§3.14.2.2.2): what a client that asked for an expiry sends to leave
// nothing behind.
func AppendDisconnectEndingSession(b []byte) []byte {
	return append(b, DISCONNECT<<4, 7, 0, 5, PropSessionExpiry, 0, 0, 0, 0)
}

// DecodeDisconnect reads a DISCONNECT body: its reason code (0 if absent).
func DecodeDisconnect(version byte, body []byte) (byte, error) {
	if len(body) > 0 && version != V5 {
		return 0, ErrTrailing
	}
	return reasonAndProperties(DISCONNECT, body)
}

// AppendAuth appends an AUTH with a reason code and no properties (§3.15, MQTT 5).
func AppendAuth(b []byte, reason byte) []byte {
	if reason == 0 {
		return append(b, AUTH<<4, 0)
	}
	return append(b, AUTH<<4, 2, reason, 0)
}

// DecodeAuth reads an AUTH body: its reason code.
func DecodeAuth(version byte, body []byte) (byte, error) {
	if version != V5 {
		return 0, fmt.Errorf("%w: AUTH in MQTT 3.1.1", ErrType)
	}
	return reasonAndProperties(AUTH, body)
}

// reasonAndProperties reads the body DISCONNECT and AUTH share: a reason
// code, then properties, either of which may be absent.
func reasonAndProperties(typ byte, body []byte) (byte, error) {
	if len(body) == 0 {
		return 0, nil
	}
	reason, rest := body[0], body[1:]
	if len(rest) > 0 {
		var err error
		if rest, err = walkProperties(typ, rest, nil); err != nil {
			return reason, err
		}
		if len(rest) > 0 {
			return reason, ErrTrailing
		}
	}
	return reason, nil
}
