package load

import (
	"encoding/json"
	"strings"
	"testing"
)

const deviceTemplate = `{"h":"{header}","device":"{client}","seq":{seq},"ts":{ts_ms},"temp":{rand:18.0-30.0},"state":"{choice:ok|warn|fail}","pad":"{fill:8}"}`

// A templated message is valid JSON at its steady size, whatever the
// sequence number, and carries the header its subscribers time it by.
func TestPayloadTemplateRendersJSONAtSteadySizeWithHeader(t *testing.T) {
	tpl, err := ParsePayloadTemplate(deviceTemplate)
	if err != nil {
		t.Fatal(err)
	}
	size := tpl.Size(len("dev-4242"))
	b := make([]byte, size)
	sent := int64(1_790_000_000_123_456_789)
	for _, seq := range []uint32{0, 7, 4_000_000_000} {
		for i := range b {
			b[i] = 0xff // nothing of an earlier message may show through
		}
		tpl.render(b, "dev-42", 0x1234, seq, sent, sent-1000)
		var v struct {
			H, Device, State, Pad string
			Seq                   uint32
			Ts                    int64
			Temp                  float64
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("seq %d: %q is not JSON: %v", seq, b, err)
		}
		if v.Device != "dev-42" || v.Seq != seq || v.Ts != sent/1e6 || v.Temp < 18 || v.Temp > 30 || v.Pad != "xxxxxxxx" ||
			(v.State != "ok" && v.State != "warn" && v.State != "fail") {
			t.Fatalf("seq %d: %+v from %q", seq, v, b)
		}
		h, ok := readPayloadHeader(b, tpl.HeaderAt(), sent+5)
		if !ok || h.pub != 0x1234 || h.seq != seq || h.sentNs != sent || h.intendedNs != sent-1000 {
			t.Fatalf("seq %d: header %+v %v from %q", seq, h, ok, b)
		}
	}
}

// Without {header} the header goes first, binary, and the template after it.
func TestPayloadTemplateWithoutHeaderPlaceholderPrependsBinaryHeader(t *testing.T) {
	tpl, err := ParsePayloadTemplate(`{"seq":{seq}}`)
	if err != nil {
		t.Fatal(err)
	}
	if tpl.HeaderAt() != -1 || tpl.Size(0) != HeaderSize+len(`{"seq":}`)+10 {
		t.Fatalf("header at %d, size %d", tpl.HeaderAt(), tpl.Size(0))
	}
	b := make([]byte, tpl.Size(0))
	tpl.render(b, "c", 9, 12, 5e18, 5e18)
	if got := strings.TrimRight(string(b[HeaderSize:]), " "); got != `{"seq":12}` {
		t.Fatalf("got %q", got)
	}
	if h, ok := readPayloadHeader(b, -1, 5e18); !ok || h.pub != 9 || h.seq != 12 {
		t.Fatalf("header %+v", h)
	}
}

// Random values stay within their range, take its decimals, cover it,
// and are the same for a re-sent message.
func TestPayloadTemplateRandomValuesStayInRange(t *testing.T) {
	tpl, err := ParsePayloadTemplate(`{header}{rand:-5-5}`)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	b := make([]byte, tpl.Size(0))
	for seq := range uint32(2000) {
		tpl.render(b, "", 1, seq, 1, 1)
		v := strings.TrimSpace(string(b[textHeaderSize:]))
		seen[v] = true
	}
	if len(seen) != 11 || !seen["-5"] || !seen["5"] {
		t.Fatalf("values %v", seen)
	}
	a, c := make([]byte, len(b)), make([]byte, len(b))
	tpl.render(a, "", 3, 99, 1, 1)
	tpl.render(c, "", 3, 99, 1, 1)
	if string(a) != string(c) {
		t.Fatalf("a re-send differs: %q %q", a, c)
	}
}

// A bad template is refused naming the placeholder and the fix.
func TestPayloadTemplateRefusesBadPlaceholdersNamingThem(t *testing.T) {
	for tpl, want := range map[string]string{
		`{"d":"{clinet}"}`:           "{clinet}: is not a placeholder (known: {client}",
		`{rand:30-18}`:               "{rand:30-18}: has its bounds the wrong way round: {rand:18-30}",
		`{rand:abc}`:                 "{rand:abc}: needs a range A-B",
		`{fill:0}`:                   "{fill:0}: needs a size in bytes",
		`{choice:}`:                  "{choice:}: needs words",
		`{seq:3}`:                    "{seq:3}: takes no argument",
		`{"s":{seq},"h":"{header}"}`: "{header} comes after {seq}, whose width varies",
		`{header}{header}`:           "{header}: the header goes in once",
		``:                           "is empty",
	} {
		_, err := ParsePayloadTemplate(tpl)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", tpl, err, want)
		}
	}
}

// A client-id template's widest rendering bounds every client's id.
func TestClientIDTemplateMaxLenBoundsEveryID(t *testing.T) {
	ct, _ := ParseTemplate("abcdef-p2p-pub-{i}")
	if got := ct.MaxLen(); got != len("abcdef-p2p-pub-16777215") {
		t.Fatalf("MaxLen %d", got)
	}
}

// Rendering and reading a templated message allocate nothing: they run
// once per message on the publish and delivery paths.
func TestPayloadTemplateRenderAllocatesNothing(t *testing.T) {
	tpl, _ := ParsePayloadTemplate(deviceTemplate)
	b := make([]byte, tpl.Size(16))
	seq := uint32(0)
	if n := testing.AllocsPerRun(1000, func() {
		seq++
		tpl.render(b, "dev-1", 1, seq, 1_790_000_000_000_000_000, 1_790_000_000_000_000_000)
		_, _ = readPayloadHeader(b, tpl.HeaderAt(), 1_790_000_000_000_000_000)
	}); n != 0 {
		t.Fatalf("%v allocations per message", n)
	}
}

func BenchmarkPayloadTemplateRender(b *testing.B) {
	tpl, _ := ParsePayloadTemplate(deviceTemplate)
	buf := make([]byte, tpl.Size(24))
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tpl.render(buf, "abcdef-p2p-pub-1234", 1, uint32(i), 1_790_000_000_000_000_000, 1_790_000_000_000_000_000)
	}
}

func BenchmarkHeaderOnly(b *testing.B) {
	buf := make([]byte, 128)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		putHeader(buf, 1, uint32(i), 1_790_000_000_000_000_000, 1_790_000_000_000_000_000)
	}
}
