package load

// Reading a payload template (PAYLOAD_TEMPLATE): its placeholders, checked
// before any connection, so that a bad one names itself and the fix.

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

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
