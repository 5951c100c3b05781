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
