package load

import (
	"encoding/base64"
	"strconv"
)

// PayloadTemplate fills each message from a template (PAYLOAD_TEMPLATE):
//
//	{client}        the publisher's client id
//	{seq}           the message's sequence number (per publisher, from 0)
//	{ts_ms}         its send time, Unix milliseconds
//	{rand:A-B}      a number from A to B, with as many decimals as A or B has
//	{choice:a|b|c}  one of the words
//	{fill:N}        N filler bytes ('x')
//	{header}        the benchmark header (latency and sequence accounting)
//
// Every message of a template has the same size, its steady size: each
// placeholder renders at most its widest value, and the message is padded
// at its end with spaces (valid trailing whitespace in JSON) up to that.
// The 16-byte header the subscribers time and count messages by goes where
// {header} is, as 22 characters of base64url (safe inside a JSON string);
// without {header} it goes before the template, as 16 binary bytes. So that
// subscribers find it at one offset, only literals, {ts_ms} and {fill:N}
// (fixed widths) may come before {header}.
//
// The random values are a hash of the publisher, the sequence number and
// the placeholder: no state, no allocation, and a re-sent message (DUP) is
// the same message.
type PayloadTemplate struct {
	src   string
	parts []payloadPart
	fixed int // bytes of everything but {client}
	hdrAt int // offset of the text header; -1: binary, before the template
}

type payloadPart struct {
	kind    byte // one of the part* constants
	lit     []byte
	width   int      // widest rendering
	lo, hi  int64    // {rand}: bounds in units of 10^-dec
	dec     int      // {rand}: decimals
	choices [][]byte // {choice}
}

const (
	partLit byte = iota
	partClient
	partSeq
	partTs
	partRand
	partChoice
	partFill
	partHeader
)

// textHeaderSize is the header in base64url without padding.
const textHeaderSize = 22

// String is the template as given.
func (t *PayloadTemplate) String() string { return t.src }

// Size is the steady size of its messages for client ids at most
// clientWidth bytes long.
func (t *PayloadTemplate) Size(clientWidth int) int {
	n := t.fixed
	for _, p := range t.parts {
		if p.kind == partClient {
			n += clientWidth
		}
	}
	return n
}

// HeaderAt is the offset of the text header, or -1 when the header is
// binary at the payload's start.
func (t *PayloadTemplate) HeaderAt() int { return t.hdrAt }

// render fills b (the steady size) with message seq of publisher pub.
func (t *PayloadTemplate) render(b []byte, client string, pub, seq uint32, sentNs, intendedNs int64) {
	var hdr [HeaderSize]byte
	putHeader(hdr[:], pub, seq, sentNs, intendedNs)
	out := b[:0]
	if t.hdrAt < 0 {
		out = append(out, hdr[:]...)
	}
	for i := range t.parts {
		p := &t.parts[i]
		switch p.kind {
		case partLit:
			out = append(out, p.lit...)
		case partClient:
			out = append(out, client...)
		case partSeq:
			out = strconv.AppendUint(out, uint64(seq), 10)
		case partTs:
			out = strconv.AppendInt(out, sentNs/1e6, 10)
		case partRand:
			r := mix(pub, seq, i)
			out = appendFixed(out, p.lo+int64(r%uint64(p.hi-p.lo+1)), p.dec)
		case partChoice:
			out = append(out, p.choices[mix(pub, seq, i)%uint64(len(p.choices))]...)
		case partFill:
			out = append(out, p.lit...)
		case partHeader:
			n := len(out)
			out = out[:n+textHeaderSize]
			base64.RawURLEncoding.Encode(out[n:], hdr[:])
		}
	}
	for i := len(out); i < len(b); i++ {
		b[i] = ' '
	}
}

// appendFixed appends v·10^-dec with dec decimals.
func appendFixed(b []byte, v int64, dec int) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	if dec == 0 {
		return strconv.AppendInt(b, v, 10)
	}
	div := int64(1)
	for range dec {
		div *= 10
	}
	b = strconv.AppendInt(b, v/div, 10)
	b = append(b, '.')
	frac := v % div
	for d := div / 10; d > 0; d /= 10 {
		b = append(b, byte('0'+frac/d%10))
	}
	return b
}

// mix is splitmix64 of the message and the placeholder's index.
func mix(pub, seq uint32, part int) uint64 {
	z := uint64(pub)<<40 ^ uint64(seq)<<8 ^ uint64(part) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// readPayloadHeader finds the header where the template put it: as text
// at hdrAt, else binary at the start (also where a shared-subscription
// probe, 16 bytes, carries it).
func readPayloadHeader(b []byte, hdrAt int, now int64) (header, bool) {
	if hdrAt >= 0 && len(b) >= hdrAt+textHeaderSize {
		var h [HeaderSize]byte
		if n, err := base64.RawURLEncoding.Decode(h[:], b[hdrAt:hdrAt+textHeaderSize]); err != nil || n != HeaderSize {
			return header{}, false
		}
		return readHeader(h[:], now)
	}
	return readHeader(b, now)
}
