package codec

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// Every packet type, in both protocol versions where they differ: the
// encoder writes exactly the bytes the spec lays out (written here by hand,
// section cited), and Decode reads them back to the same value. Sections
// are MQTT 5.0's unless marked 3.1.1.
var wireCases = []struct {
	name    string
	version byte
	wire    []byte
	encode  func() []byte
	decoded any
}{
	{"CONNECT 3.1.1 (3.1.1 §3.1)", V311,
		[]byte{0x10, 0x0E, 0, 4, 'M', 'Q', 'T', 'T', 4, 0x02, 0, 60, 0, 2, 'k', '6'},
		func() []byte {
			return AppendConnect(nil, &Connect{Version: V311, ClientID: "k6", KeepAlive: 60, CleanStart: true})
		},
		&Connect{Version: V311, ClientID: "k6", KeepAlive: 60, CleanStart: true}},
	{"CONNECT 3.1.1 with will, user and password (3.1.1 §3.1.2.3)", V311,
		[]byte{0x10, 0x1A, 0, 4, 'M', 'Q', 'T', 'T', 4, 0xEE, 0, 10, 0, 1, 'c', 0, 1, 'w', 0, 2, 'h', 'i', 0, 1, 'u', 0, 1, 'p'},
		func() []byte {
			return AppendConnect(nil, &Connect{Version: V311, ClientID: "c", KeepAlive: 10, CleanStart: true,
				Username: "u", Password: "p", HasUser: true, HasPass: true,
				Will: &Will{Topic: "w", Payload: []byte("hi"), QoS: 1, Retain: true}})
		},
		&Connect{Version: V311, ClientID: "c", KeepAlive: 10, CleanStart: true, Username: "u", Password: "p",
			HasUser: true, HasPass: true, Will: &Will{Topic: "w", Payload: []byte("hi"), QoS: 1, Retain: true}}},
	{"CONNECT 5 with session expiry and receive maximum (§3.1.2.11)", V5,
		[]byte{0x10, 0x17, 0, 4, 'M', 'Q', 'T', 'T', 5, 0x02, 0, 60, 8, 0x11, 0, 0, 0, 120, 0x21, 0, 100, 0, 2, 'k', '6'},
		func() []byte {
			return AppendConnect(nil, &Connect{Version: V5, ClientID: "k6", KeepAlive: 60, CleanStart: true, SessionExpiry: 120, ReceiveMax: 100})
		},
		&Connect{Version: V5, ClientID: "k6", KeepAlive: 60, CleanStart: true, SessionExpiry: 120, ReceiveMax: 100}},
	{"CONNACK 3.1.1 session present (3.1.1 §3.2)", V311, []byte{0x20, 2, 1, 0},
		func() []byte {
			return AppendConnack(nil, V311, Connack{SessionPresent: true, KeepAlive: -1, MaxQoS: -1, SharedSubs: -1})
		},
		&Connack{SessionPresent: true, KeepAlive: -1, MaxQoS: -1, SharedSubs: -1}},
	{"CONNACK 3.1.1 refused: not authorized (3.1.1 §3.2.2.3)", V311, []byte{0x20, 2, 0, 5},
		func() []byte {
			return AppendConnack(nil, V311, Connack{Code: 5, KeepAlive: -1, MaxQoS: -1, SharedSubs: -1})
		},
		&Connack{Code: 5, KeepAlive: -1, MaxQoS: -1, SharedSubs: -1}},
	{"CONNACK 3.1.1 refusing a v5 CONNECT: unacceptable protocol version (3.1.1 §3.1.2.2)", V5, []byte{0x20, 2, 0, 1},
		func() []byte {
			return AppendConnack(nil, V311, Connack{Code: 1, KeepAlive: -1, MaxQoS: -1, SharedSubs: -1})
		},
		&Connack{Code: 1, KeepAlive: -1, MaxQoS: -1, SharedSubs: -1}},
	{"CONNACK 5 without properties (§3.2.2.3)", V5, []byte{0x20, 3, 0, 0, 0},
		func() []byte { return AppendConnack(nil, V5, Connack{KeepAlive: -1, MaxQoS: -1, SharedSubs: -1}) },
		&Connack{KeepAlive: -1, MaxQoS: -1, SharedSubs: -1}},
	{"CONNACK 5 receive maximum, no shared subscriptions (§3.2.2.3.3, §3.2.2.3.13)", V5,
		[]byte{0x20, 8, 0, 0, 5, 0x21, 0, 10, 0x2A, 0},
		func() []byte {
			return AppendConnack(nil, V5, Connack{ReceiveMax: 10, KeepAlive: -1, MaxQoS: -1, SharedSubs: 0})
		},
		&Connack{ReceiveMax: 10, KeepAlive: -1, MaxQoS: -1, SharedSubs: 0}},
	{"PUBLISH QoS 0 (3.1.1 §3.3)", V311, []byte{0x30, 7, 0, 3, 'a', '/', 'b', 'h', 'i'},
		func() []byte {
			return AppendPublishPacket(nil, V311, &Publish{Topic: []byte("a/b"), Payload: []byte("hi")})
		},
		&Publish{Topic: []byte("a/b"), Payload: []byte("hi")}},
	{"PUBLISH QoS 1 retained (3.1.1 §3.3.1)", V311, []byte{0x33, 9, 0, 3, 'a', '/', 'b', 0, 10, 'h', 'i'},
		func() []byte {
			return AppendPublishPacket(nil, V311, &Publish{Topic: []byte("a/b"), Payload: []byte("hi"), QoS: 1, PacketID: 10, Retain: true})
		},
		&Publish{Topic: []byte("a/b"), Payload: []byte("hi"), QoS: 1, PacketID: 10, Retain: true}},
	{"PUBLISH 5 QoS 2 DUP, empty properties (§3.3.2.3)", V5, []byte{0x3C, 10, 0, 3, 'a', '/', 'b', 0, 1, 0, 'h', 'i'},
		func() []byte {
			return AppendPublishPacket(nil, V5, &Publish{Topic: []byte("a/b"), Payload: []byte("hi"), QoS: 2, PacketID: 1, Dup: true})
		},
		&Publish{Topic: []byte("a/b"), Payload: []byte("hi"), QoS: 2, PacketID: 1, Dup: true}},
	{"PUBACK (3.1.1 §3.4)", V311, []byte{0x40, 2, 0, 10},
		func() []byte { return AppendAck(nil, Ack{Type: PUBACK, PacketID: 10}) }, &Ack{Type: PUBACK, PacketID: 10}},
	{"PUBREC (3.1.1 §3.5)", V311, []byte{0x50, 2, 0, 10},
		func() []byte { return AppendAck(nil, Ack{Type: PUBREC, PacketID: 10}) }, &Ack{Type: PUBREC, PacketID: 10}},
	{"PUBREL flags 0010 (3.1.1 §3.6.1)", V311, []byte{0x62, 2, 0, 10},
		func() []byte { return AppendAck(nil, Ack{Type: PUBREL, PacketID: 10}) }, &Ack{Type: PUBREL, PacketID: 10}},
	{"PUBCOMP (3.1.1 §3.7)", V311, []byte{0x70, 2, 0, 10},
		func() []byte { return AppendAck(nil, Ack{Type: PUBCOMP, PacketID: 10}) }, &Ack{Type: PUBCOMP, PacketID: 10}},
	{"PUBACK 5 success, short form (§3.4.2.1)", V5, []byte{0x40, 2, 0, 10},
		func() []byte { return AppendAck(nil, Ack{Type: PUBACK, PacketID: 10}) }, &Ack{Type: PUBACK, PacketID: 10}},
	{"PUBACK 5 no matching subscribers, 0x10 (§3.4.2.1)", V5, []byte{0x40, 4, 0, 10, 0x10, 0},
		func() []byte { return AppendAck(nil, Ack{Type: PUBACK, PacketID: 10, Reason: 0x10}) },
		&Ack{Type: PUBACK, PacketID: 10, Reason: 0x10}},
	{"PUBREC 5 quota exceeded, 0x97 (§3.5.2.1)", V5, []byte{0x50, 4, 0, 10, 0x97, 0},
		func() []byte { return AppendAck(nil, Ack{Type: PUBREC, PacketID: 10, Reason: 0x97}) },
		&Ack{Type: PUBREC, PacketID: 10, Reason: 0x97}},
	{"SUBSCRIBE (3.1.1 §3.8)", V311, []byte{0x82, 8, 0, 1, 0, 3, 'a', '/', '#', 1},
		func() []byte { return AppendSubscribe(nil, V311, 1, []Subscription{{Filter: "a/#", QoS: 1}}) },
		&Subscribe{PacketID: 1, Subs: []Subscription{{Filter: "a/#", QoS: 1}}}},
	{"SUBSCRIBE 5 no local (§3.8.3.1)", V5, []byte{0x82, 9, 0, 1, 0, 0, 3, 'a', '/', '#', 0x06},
		func() []byte {
			return AppendSubscribe(nil, V5, 1, []Subscription{{Filter: "a/#", QoS: 2, NoLocal: true}})
		},
		&Subscribe{PacketID: 1, Subs: []Subscription{{Filter: "a/#", QoS: 2, NoLocal: true}}}},
	{"SUBACK granted 1 and failure (3.1.1 §3.9.3)", V311, []byte{0x90, 4, 0, 1, 1, 0x80},
		func() []byte { return AppendSuback(nil, SUBACK, V311, 1, []byte{1, 0x80}) },
		&Suback{PacketID: 1, Codes: []byte{1, 0x80}}},
	{"SUBACK 5 (§3.9)", V5, []byte{0x90, 5, 0, 1, 0, 1, 0x80},
		func() []byte { return AppendSuback(nil, SUBACK, V5, 1, []byte{1, 0x80}) },
		&Suback{PacketID: 1, Codes: []byte{1, 0x80}}},
	{"UNSUBSCRIBE (3.1.1 §3.10)", V311, []byte{0xA2, 7, 0, 2, 0, 3, 'a', '/', '#'},
		func() []byte { return AppendUnsubscribe(nil, V311, 2, []string{"a/#"}) },
		&Unsubscribe{PacketID: 2, Filters: []string{"a/#"}}},
	{"UNSUBSCRIBE 5 (§3.10)", V5, []byte{0xA2, 8, 0, 2, 0, 0, 3, 'a', '/', '#'},
		func() []byte { return AppendUnsubscribe(nil, V5, 2, []string{"a/#"}) },
		&Unsubscribe{PacketID: 2, Filters: []string{"a/#"}}},
	{"UNSUBACK, no codes (3.1.1 §3.11)", V311, []byte{0xB0, 2, 0, 2},
		func() []byte { return AppendSuback(nil, UNSUBACK, V311, 2, nil) }, &Unsuback{PacketID: 2}},
	{"UNSUBACK 5 success (§3.11.3)", V5, []byte{0xB0, 4, 0, 2, 0, 0},
		func() []byte { return AppendSuback(nil, UNSUBACK, V5, 2, []byte{0}) },
		&Unsuback{PacketID: 2, Codes: []byte{0}}},
	{"PINGREQ (§3.12)", V311, []byte{0xC0, 0}, func() []byte { return AppendPingreq(nil) }, &Pingreq{}},
	{"PINGRESP (§3.13)", V5, []byte{0xD0, 0}, func() []byte { return AppendPingresp(nil) }, &Pingresp{}},
	{"DISCONNECT (3.1.1 §3.14)", V311, []byte{0xE0, 0}, func() []byte { return AppendDisconnect(nil, 0) }, &Disconnect{}},
	{"DISCONNECT 5 server shutting down, 0x8B (§3.14.2.1)", V5, []byte{0xE0, 2, 0x8B, 0},
		func() []byte { return AppendDisconnect(nil, 0x8B) }, &Disconnect{Reason: 0x8B}},
	{"DISCONNECT 5 ending the session: Session Expiry Interval 0 (§3.14.2.2.2)", V5, []byte{0xE0, 7, 0, 5, 0x11, 0, 0, 0, 0},
		func() []byte { return AppendDisconnectEndingSession(nil) }, &Disconnect{}},
	{"AUTH 5 continue authentication, 0x18 (§3.15.2.1)", V5, []byte{0xF0, 2, 0x18, 0},
		func() []byte { return AppendAuth(nil, 0x18) }, &Auth{Reason: 0x18}},
}

func TestPacketsMatchTheSpecBytes(t *testing.T) {
	for _, c := range wireCases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.encode(); !bytes.Equal(got, c.wire) {
				t.Errorf("encoded % x\n           want % x", got, c.wire)
			}
			got, size, err := Decode(c.version, c.wire)
			if err != nil || size != len(c.wire) {
				t.Fatalf("decode: size %d err %v", size, err)
			}
			if !reflect.DeepEqual(got, c.decoded) {
				t.Errorf("decoded %+v\n   want %+v", got, c.decoded)
			}
		})
	}
}

// Malformed input gives the error of its own kind, never a panic.
func TestMalformedPacketsNameTheirFault(t *testing.T) {
	for _, c := range []struct {
		name    string
		version byte
		wire    []byte
		want    error
	}{
		{"five length bytes (§1.5.5)", V311, []byte{0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}, ErrVarint},
		{"topic length past the body", V311, []byte{0x30, 4, 0, 10, 'a', 'b'}, ErrTruncated},
		{"QoS 1 without its packet id", V311, []byte{0x32, 4, 0, 2, 'a', 'b'}, ErrTruncated},
		{"packet id 0 at QoS 1 (§2.2.1)", V311, []byte{0x32, 7, 0, 3, 'a', '/', 'b', 0, 0}, ErrPacketID},
		{"packet id 0 in a PUBACK", V311, []byte{0x40, 2, 0, 0}, ErrPacketID},
		{"topic with invalid UTF-8 (§1.5.4)", V311, []byte{0x30, 4, 0, 2, 0xC3, 0x28}, ErrUTF8},
		{"topic with U+0000 (§1.5.4)", V311, []byte{0x30, 4, 0, 2, 'a', 0}, ErrUTF8},
		{"wildcard in a PUBLISH topic (§3.3.2.1)", V311, []byte{0x30, 4, 0, 2, 'a', '#'}, ErrTopic},
		{"QoS 3 (§3.3.1.2)", V311, []byte{0x36, 7, 0, 3, 'a', '/', 'b', 0, 1}, ErrFlags},
		{"PUBREL without its 0010 flags (§3.6.1)", V311, []byte{0x60, 2, 0, 1}, ErrFlags},
		{"topic alias in a CONNACK: a PUBLISH-only property (§2.2.2.2)", V5, []byte{0x20, 6, 0, 0, 3, 0x23, 0, 1}, ErrProperty},
		{"unknown property identifier", V5, []byte{0x20, 5, 0, 0, 2, 0x05, 0}, ErrProperty},
		{"property block longer than the packet", V5, []byte{0x20, 3, 0, 0, 9}, ErrTruncated},
		{"two-byte property cut short", V5, []byte{0x20, 5, 0, 0, 2, 0x21, 0}, ErrTruncated},
		{"PINGRESP with a body", V311, []byte{0xD0, 1, 0}, ErrTrailing},
		{"reason code in a 3.1.1 PUBACK", V311, []byte{0x40, 3, 0, 1, 0x80}, ErrTrailing},
		{"SUBACK without codes (§3.9.3)", V311, []byte{0x90, 2, 0, 1}, ErrTruncated},
		{"packet type 0", V311, []byte{0x00, 0}, ErrType},
		{"AUTH in 3.1.1", V311, []byte{0xF0, 0}, ErrType},
		{"CONNECT with another protocol name", V311, []byte{0x10, 10, 0, 4, 'M', 'Q', 'T', 'X', 4, 2, 0, 0}, ErrProtocol},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Decode(c.version, c.wire)
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
		})
	}
}

// A length cut anywhere, even inside its own length bytes, is "not yet",
// not an error: more bytes may come from the socket.
func TestSplitWaitsForWholePackets(t *testing.T) {
	big := append([]byte{0x30, 0x80, 0x01}, make([]byte, 128)...) // remaining length 128: two length bytes
	for _, c := range []struct {
		name          string
		b             []byte
		size, bodyLen int
	}{
		{"empty", nil, 0, 0},
		{"type byte only", []byte{0x30}, 0, 0},
		{"length cut", big[:2], 0, 0},
		{"body cut", big[:100], 0, 0},
		{"whole", big, 131, 128},
		{"whole and more", append(append([]byte(nil), big...), 0xD0, 0x00), 131, 128},
		{"pingresp", []byte{0xD0, 0x00}, 2, 0},
	} {
		_, body, size, err := Split(c.b)
		if err != nil || size != c.size || len(body) != c.bodyLen {
			t.Errorf("%s: size %d body %d err %v; want size %d body %d", c.name, size, len(body), err, c.size, c.bodyLen)
		}
		if c.size == 0 && len(c.b) >= 3 && PacketSize(c.b) != 131 {
			t.Errorf("%s: PacketSize %d, want 131", c.name, PacketSize(c.b))
		}
	}
	if _, _, err := ReadVarint([]byte{0x80}); !errors.Is(err, ErrTruncated) {
		t.Errorf("a length cut after a continuation byte: %v, want ErrTruncated", err)
	}
}

// The CONNACK's refusal reads as the spec's reason, with the broker's reason string.
func TestConnackErrorNamesTheReason(t *testing.T) {
	if err := (Connack{Code: 0x87, Reason: "acl"}).Err(); err == nil || err.Error() != "connection refused by broker (CONNACK code 0x87: not authorized: acl)" {
		t.Fatalf("got %v", err)
	}
	if (Connack{}).Err() != nil {
		t.Fatal("an accepted CONNACK is an error")
	}
}
