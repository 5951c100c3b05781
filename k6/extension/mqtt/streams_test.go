package mqtt

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestStreamAccounting(t *testing.T) {
	cases := []struct {
		name                       string
		seqs                       []uint32
		unique, missing, dups, ooo int64
	}{
		{"in order", []uint32{0, 1, 2, 3}, 4, 0, 0, 0},
		{"gap", []uint32{0, 1, 4}, 3, 2, 0, 0},
		{"late arrival fills a gap", []uint32{0, 2, 1}, 3, 0, 0, 1},
		{"duplicate", []uint32{0, 1, 1, 2, 0}, 3, 0, 2, 0},
		{"first message missing", []uint32{1, 2}, 2, 1, 0, 0},
		{"duplicate of a late arrival", []uint32{0, 3, 1, 1, 2}, 4, 0, 1, 2},
		{"far gap clears window", []uint32{0, 5000, 1}, 3, 4998, 0, 1},
	}
	for _, c := range cases {
		var s stream
		for _, q := range c.seqs {
			s.observe(q)
		}
		if s.unique != c.unique || s.missing != c.missing || s.dups != c.dups || s.ooo != c.ooo {
			t.Errorf("%s: unique=%d missing=%d dups=%d ooo=%d, want %d %d %d %d",
				c.name, s.unique, s.missing, s.dups, s.ooo, c.unique, c.missing, c.dups, c.ooo)
		}
	}
}

func TestTailLossUsesPublisherCount(t *testing.T) {
	pc := &pubClient{}
	pc.seq.Store(10)
	if err := publishers.add(900001, pc); err != nil {
		t.Fatal(err)
	}
	var s stream
	for q := uint32(0); q < 7; q++ {
		s.observe(q)
	}
	var tot streamTotals
	tot.add(900001, &s)
	if tot.Lost != 3 || tot.Unique != 7 {
		t.Fatalf("lost=%d unique=%d, want 3 and 7", tot.Lost, tot.Unique)
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	b := make([]byte, headerSize)
	sent := int64(1_790_000_000_123_456_789)
	intended := sent - 2_500_000 // 2.5 ms late
	putHeader(b, 0xABCDEF, 42, sent, intended)
	h, ok := readHeader(b, sent+1_000_000)
	if !ok || h.pub != 0xABCDEF || h.seq != 42 || h.sentNs != sent || h.intendedNs != intended {
		t.Fatalf("got %+v", h)
	}
	// The lag saturates instead of wrapping.
	putHeader(b, 1, 1, sent, sent-int64(60e9))
	h, _ = readHeader(b, sent)
	if sent-h.intendedNs != maxLagMicros*1000 {
		t.Fatalf("lag not saturated: %d", sent-h.intendedNs)
	}
}

func TestTemplates(t *testing.T) {
	tp, err := parseTemplate("$share/g{i/100}/test/{i%5}/{clientid}/{vu}")
	if err != nil {
		t.Fatal(err)
	}
	got := tp.render(tplVars{i: 1234, clientID: "c", vu: 7})
	if got != "$share/g12/test/4/c/7" {
		t.Fatalf("got %q", got)
	}
	if _, err := parseTemplate("test/{x}"); err == nil {
		t.Fatal("unknown placeholder accepted")
	}
}

func TestOptionErrorsNameTheOption(t *testing.T) {
	o := newOpts("PublisherGroup", map[string]any{"qos": int64(3), "rate": int64(-1), "url": "http://x", "colour": "red"})
	o.qos("qos", 0)
	o.num("rate", 0, 0, 1e9)
	readConnConfig(o)
	err := o.done()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`"qos" must be between 0 and 2`, `"rate" must be >= 0`, `unknown scheme "http"`, `unknown option "colour"`} {
		if !contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// The module lowers the GC target for the generator, unless GOGC is set.
func TestGCTargetIsLoweredUnlessGOGCIsSet(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set: the module leaves it")
	}
	newTestVU(t)
	got := debug.SetGCPercent(100)
	debug.SetGCPercent(got)
	if got != generatorGCPercent {
		t.Fatalf("GC percent %d, want %d", got, generatorGCPercent)
	}
}
