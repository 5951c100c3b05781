package load

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Template renders topic and client-id templates per client:
//
//	{i}        the client's index in the test (id_base + index in the group)
//	{i%N}      that index modulo N      (e.g. 5 topics shared by many subscribers)
//	{i/N}      that index divided by N  (e.g. groups of N publishers)
//	{clientid} the client id            (topics only)
//	{vu}       the k6 VU id
//	{role}     pub, sub or client
type Template struct {
	parts []tplPart
}

type tplPart struct {
	lit string
	key string // "" for a literal
	op  byte   // '%' or '/' for {i%N}, {i/N}
	n   int
}

var tplField = regexp.MustCompile(`\{([a-z]+)(?:([%/])([0-9]+))?\}`)

// ParseTemplate reads a template; an unknown placeholder is an error naming it.
func ParseTemplate(s string) (Template, error) {
	var t Template
	last := 0
	for _, m := range tplField.FindAllStringSubmatchIndex(s, -1) {
		if m[0] > last {
			t.parts = append(t.parts, tplPart{lit: s[last:m[0]]})
		}
		p := tplPart{key: s[m[2]:m[3]]}
		switch p.key {
		case "i", "clientid", "vu", "role":
		default:
			return t, fmt.Errorf("unknown placeholder {%s} in %q (known: {i}, {i%%N}, {i/N}, {clientid}, {vu}, {role})", p.key, s)
		}
		if m[4] >= 0 {
			if p.key != "i" {
				return t, fmt.Errorf("only {i} takes %% or / in %q", s)
			}
			p.op = s[m[4]]
			p.n, _ = strconv.Atoi(s[m[6]:m[7]])
			if p.n == 0 {
				return t, fmt.Errorf("division by zero in %q", s)
			}
		}
		t.parts = append(t.parts, p)
		last = m[1]
	}
	if last < len(s) {
		t.parts = append(t.parts, tplPart{lit: s[last:]})
	}
	return t, nil
}

type tplVars struct {
	i        int
	clientID string
	vu       uint64
	role     string
}

func (t Template) render(v tplVars) string {
	var b strings.Builder
	for _, p := range t.parts {
		switch p.key {
		case "":
			b.WriteString(p.lit)
		case "i":
			i := v.i
			switch p.op {
			case '%':
				i %= p.n
			case '/':
				i /= p.n
			}
			b.WriteString(strconv.Itoa(i))
		case "clientid":
			b.WriteString(v.clientID)
		case "vu":
			b.WriteString(strconv.FormatUint(v.vu, 10))
		case "role":
			b.WriteString(v.role)
		}
	}
	return b.String()
}

// MaxLen is the longest rendering of a client-id template: {i} at the
// largest publisher id, so that it holds for every client of the test,
// in every generator process.
func (t Template) MaxLen() int {
	digits := func(n int) int { return len(strconv.Itoa(n)) }
	w := 0
	for _, p := range t.parts {
		switch p.key {
		case "":
			w += len(p.lit)
		case "i":
			switch p.op {
			case '%':
				w += digits(p.n - 1)
			case '/':
				w += digits(MaxPublisher / p.n)
			default:
				w += digits(MaxPublisher)
			}
		case "vu":
			w += 20
		case "role":
			w += len("client")
		case "clientid":
			w += 256 // not in client ids; bounded anyway
		}
	}
	return w
}
