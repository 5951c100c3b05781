package load

import "testing"

// Each stream tells gaps, late arrivals and duplicates apart exactly.
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

// Messages a publisher sent after the last one received count as lost.
func TestTailLossUsesPublisherCount(t *testing.T) {
	var reg publisherRegistry
	pc := &pubClient{}
	pc.seq.Store(10)
	if err := reg.add(900001, pc); err != nil {
		t.Fatal(err)
	}
	var s stream
	for q := uint32(0); q < 7; q++ {
		s.observe(q)
	}
	var tot streamTotals
	tot.add(900001, &s, &reg, false)
	if tot.Lost != 3 || tot.Unique != 7 {
		t.Fatalf("lost=%d unique=%d, want 3 and 7", tot.Lost, tot.Unique)
	}
}

// A receiver of several publishers keeps one stream each, whether their
// messages come in runs (the set's last stream is found without a lookup)
// or interleaved.
func TestReceiversStreamsStayApartInRunsAndInterleaved(t *testing.T) {
	ss := newStreamSet()
	arrivals := [][2]uint32{{7, 0}, {7, 1}, {7, 2}, {9, 0}, {7, 3}, {9, 2}, {9, 1}, {7, 3}, {9, 3}, {8, 1}}
	for _, a := range arrivals {
		ss.observe(a[0], a[1])
	}
	want := map[uint32]stream{7: {unique: 4, dups: 1}, 9: {unique: 4, ooo: 1}, 8: {unique: 1, missing: 1}}
	for pub, w := range want {
		s := ss.m[pub]
		if s == nil || s.unique != w.unique || s.dups != w.dups || s.ooo != w.ooo || s.missing != w.missing {
			t.Errorf("publisher %d: %+v, want unique %d dups %d ooo %d missing %d", pub, s, w.unique, w.dups, w.ooo, w.missing)
		}
	}
	if len(ss.m) != 3 {
		t.Errorf("%d streams, want 3", len(ss.m))
	}
}
