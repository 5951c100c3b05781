package codec

import (
	"encoding/binary"
	"unicode/utf8"
)

// AppendVarint appends n as a variable byte integer (§1.5.5).
func AppendVarint(b []byte, n int) []byte {
	for {
		c := byte(n & 0x7F)
		n >>= 7
		if n > 0 {
			c |= 0x80
		}
		b = append(b, c)
		if n == 0 {
			return b
		}
	}
}

// VarintLen is the number of bytes AppendVarint writes for n.
func VarintLen(n int) int {
	switch {
	case n < 128:
		return 1
	case n < 16384:
		return 2
	case n < 2097152:
		return 3
	default:
		return 4
	}
}

// ReadVarint decodes a variable byte integer: the value and the bytes used.
// A value cut short is ErrTruncated; a fifth length byte is ErrVarint.
func ReadVarint(b []byte) (int, int, error) {
	n, mul := 0, 1
	for i := 0; i < 4; i++ {
		if i >= len(b) {
			return 0, 0, ErrTruncated
		}
		n += int(b[i]&0x7F) * mul
		if b[i]&0x80 == 0 {
			return n, i + 1, nil
		}
		mul *= 128
	}
	return 0, 0, ErrVarint
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func appendBinary(b, s []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// readBinary reads a two-byte-length-prefixed field and returns it and the rest.
func readBinary(b []byte) (field, rest []byte, err error) {
	if len(b) < 2 {
		return nil, nil, ErrTruncated
	}
	n := int(binary.BigEndian.Uint16(b))
	if 2+n > len(b) {
		return nil, nil, ErrTruncated
	}
	return b[2 : 2+n], b[2+n:], nil
}

// readString is readBinary for a UTF-8 string (§1.5.4).
func readString(b []byte) (field, rest []byte, err error) {
	field, rest, err = readBinary(b)
	if err == nil && !validUTF8(field) {
		err = ErrUTF8
	}
	return field, rest, err
}

func validUTF8(s []byte) bool {
	for _, c := range s {
		if c == 0 {
			return false
		}
	}
	return utf8.Valid(s)
}

func readUint16(b []byte) (uint16, []byte, error) {
	if len(b) < 2 {
		return 0, nil, ErrTruncated
	}
	return binary.BigEndian.Uint16(b), b[2:], nil
}

// readPacketID reads a packet identifier, which must not be 0 (§2.2.1).
func readPacketID(b []byte) (uint16, []byte, error) {
	pid, rest, err := readUint16(b)
	if err == nil && pid == 0 {
		err = ErrPacketID
	}
	return pid, rest, err
}
