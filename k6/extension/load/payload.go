package load

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"regexp"
	"strconv"
	"strings"
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

// MaxFill bounds {fill:N}: a payload stays below the largest MQTT packet.
const MaxFill = 1 << 24

// A placeholder is { then a lowercase name, maybe :argument, then }: JSON's
// own braces are followed by a quote, a space or }, never a letter.
var payloadField = regexp.MustCompile(`\{([a-z_]+)(?::([^{}]*))?\}`)

var randArg = regexp.MustCompile(`^(-?[0-9]+(?:\.[0-9]+)?)-(-?[0-9]+(?:\.[0-9]+)?)$`)

const payloadKnown = "{client}, {seq}, {ts_ms}, {rand:A-B}, {choice:a|b|c}, {fill:N}, {header}"

// ParsePayloadTemplate reads a template; a bad placeholder is an error
// naming it and the fix.
func ParsePayloadTemplate(s string) (*PayloadTemplate, error) {
	if s == "" {
		return nil, fmt.Errorf("is empty: give a template such as {\"device\":\"{client}\",\"seq\":{seq}}")
	}
	t := &PayloadTemplate{src: s, hdrAt: -1}
	last, variable := 0, ""
	for _, m := range payloadField.FindAllStringSubmatchIndex(s, -1) {
		if m[0] > last {
			t.parts = append(t.parts, payloadPart{kind: partLit, lit: []byte(s[last:m[0]]), width: m[0] - last})
		}
		last = m[1]
		name, ph := s[m[2]:m[3]], s[m[0]:m[1]]
		arg, hasArg := "", m[4] >= 0
		if hasArg {
			arg = s[m[4]:m[5]]
		}
		p, err := parsePart(name, arg, hasArg)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", ph, err)
		}
		if p.kind == partHeader {
			if t.hdrAt >= 0 {
				return nil, fmt.Errorf("%s: the header goes in once; remove the second", ph)
			}
			if variable != "" {
				return nil, fmt.Errorf("%s comes after %s, whose width varies, so subscribers could not find it: "+
					"put {header} before it (only text, {ts_ms} and {fill:N} may come first)", ph, variable)
			}
			t.hdrAt = t.fixedWidth()
		}
		if p.kind == partClient || p.kind == partSeq || p.kind == partRand || p.kind == partChoice {
			if variable == "" {
				variable = ph
			}
		}
		t.parts = append(t.parts, p)
	}
	if last < len(s) {
		t.parts = append(t.parts, payloadPart{kind: partLit, lit: []byte(s[last:]), width: len(s) - last})
	}
	t.fixed = t.fixedWidth()
	if t.hdrAt < 0 {
		t.fixed += HeaderSize
	}
	return t, nil
}

func (t *PayloadTemplate) fixedWidth() int {
	n := 0
	for _, p := range t.parts {
		n += p.width
	}
	return n
}

func parsePart(name, arg string, hasArg bool) (payloadPart, error) {
	p := payloadPart{}
	noArg := func(k byte, w int) (payloadPart, error) {
		if hasArg {
			return p, fmt.Errorf("takes no argument")
		}
		p.kind, p.width = k, w
		return p, nil
	}
	switch name {
	case "client":
		return noArg(partClient, 0) // its width is the client id's, known per group
	case "seq":
		return noArg(partSeq, 10) // 32 bits
	case "ts_ms":
		return noArg(partTs, 13) // Unix ms until the year 2286
	case "header":
		return noArg(partHeader, textHeaderSize)
	case "rand":
		return parseRand(arg)
	case "choice":
		if arg == "" {
			return p, fmt.Errorf("needs words: {choice:ok|warn|fail}")
		}
		p.kind = partChoice
		for _, w := range strings.Split(arg, "|") {
			p.choices = append(p.choices, []byte(w))
			p.width = max(p.width, len(w))
		}
		return p, nil
	case "fill":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 || n > MaxFill {
			return p, fmt.Errorf("needs a size in bytes from 1 to %d: {fill:100}", MaxFill)
		}
		p.kind, p.width, p.lit = partFill, n, bytes.Repeat([]byte{'x'}, n)
		return p, nil
	}
	return p, fmt.Errorf("is not a placeholder (known: %s)", payloadKnown)
}

func parseRand(arg string) (payloadPart, error) {
	p := payloadPart{kind: partRand}
	m := randArg.FindStringSubmatch(arg)
	if m == nil {
		return p, fmt.Errorf("needs a range A-B: {rand:18.0-30.0} or {rand:0-100}")
	}
	decimals := func(s string) int {
		if i := strings.IndexByte(s, '.'); i >= 0 {
			return len(s) - i - 1
		}
		return 0
	}
	p.dec = max(decimals(m[1]), decimals(m[2]))
	if p.dec > 9 {
		return p, fmt.Errorf("has more than 9 decimals")
	}
	scaled := func(s string) (int64, bool) {
		f, err := strconv.ParseFloat(s, 64)
		v := f * pow10(p.dec)
		if err != nil || v > 1e15 || v < -1e15 {
			return 0, false
		}
		if v < 0 {
			return int64(v - 0.5), true
		}
		return int64(v + 0.5), true
	}
	var ok1, ok2 bool
	p.lo, ok1 = scaled(m[1])
	p.hi, ok2 = scaled(m[2])
	if !ok1 || !ok2 {
		return p, fmt.Errorf("has a bound beyond ±1e15")
	}
	if p.lo > p.hi {
		return p, fmt.Errorf("has its bounds the wrong way round: {rand:%s-%s}", m[2], m[1])
	}
	p.width = max(len(appendFixed(nil, p.lo, p.dec)), len(appendFixed(nil, p.hi, p.dec)))
	return p, nil
}

func pow10(n int) float64 {
	f := 1.0
	for range n {
		f *= 10
	}
	return f
}

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
