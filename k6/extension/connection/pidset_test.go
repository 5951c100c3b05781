package connection

import (
	"math/rand/v2"
	"testing"
)

// The exactly-once set answers as a map would, through growth, deletions
// that shift entries back, wrap-around at the table's end and resets.
func TestPidSetAnswersAsAMapWould(t *testing.T) {
	var s pidSet
	ref := map[uint16]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		// Ids from a small range collide and wrap; a few from anywhere.
		pid := uint16(1 + rng.IntN(300))
		if rng.IntN(10) == 0 {
			pid = uint16(1 + rng.IntN(65535))
		}
		switch op := rng.IntN(100); {
		case op < 50:
			if got, want := s.add(pid), ref[pid]; got != want {
				t.Fatalf("step %d: add(%d) seen=%v, want %v", i, pid, got, want)
			}
			ref[pid] = true
		case op < 99:
			s.remove(pid)
			delete(ref, pid)
		default:
			s.reset()
			clear(ref)
		}
		if s.n != len(ref) {
			t.Fatalf("step %d: %d ids held, want %d", i, s.n, len(ref))
		}
	}
	for pid := range ref {
		if !s.add(pid) {
			t.Fatalf("id %d lost", pid)
		}
	}
}

// Once it has the room, the set allocates nothing per message.
func TestPidSetAllocatesNothingPerMessage(t *testing.T) {
	var s pidSet
	for pid := uint16(1); pid <= 1000; pid++ {
		s.add(pid)
	}
	s.reset()
	pid := uint16(0)
	if n := testing.AllocsPerRun(10000, func() {
		pid = pid%1000 + 1
		s.add(pid)
		s.remove(pid)
	}); n != 0 {
		t.Fatalf("%v allocations per add and remove", n)
	}
}
