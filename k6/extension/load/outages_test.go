package load

import (
	"testing"
	"time"
)

// An outage window opens when the first connection goes down, keeps the
// most that were down at once, and ends when the last is back; one whose
// connections were closed while still down never ends (end_ms null), and
// its duration runs to when they were given up.
func TestOutageWindowsFollowTheConnectionsDown(t *testing.T) {
	var o outages
	t0 := time.UnixMilli(1_000_000)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	o.change(1, at(0), false)
	o.change(1, at(100), false)
	o.change(-1, at(200), false)
	o.change(1, at(300), false)
	o.change(-1, at(400), false)
	o.change(-1, at(3000), false) // every connection back
	o.change(1, at(5000), false)
	o.change(-1, at(6500), true) // closed while down: the run ended during it
	w := o.list()
	if len(w) != 2 {
		t.Fatalf("windows %+v, want 2", w)
	}
	first, second := w[0].Map(at(9000)), w[1].Map(at(9000))
	if first["start_ms"] != t0.UnixMilli() || first["end_ms"] != at(3000).UnixMilli() ||
		first["duration_s"] != 3.0 || first["max_down"] != int64(2) {
		t.Errorf("first window %v, want 0 → 3000 ms, 3 s, 2 down at most", first)
	}
	if second["end_ms"] != nil || second["duration_s"] != 1.5 || second["max_down"] != int64(1) {
		t.Errorf("second window %v, want no end, 1.5 s, 1 down", second)
	}
	if o.Down() != 0 {
		t.Errorf("down %d after every connection came back or closed", o.Down())
	}
}
