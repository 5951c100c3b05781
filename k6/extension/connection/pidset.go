package connection

// pidSet is the set of inbound QoS 2 packet ids awaiting their PUBREL: the
// exactly-once check. A map costs a hash and a probe per operation and
// three per QoS 2 message; this is an open-addressing table of packet ids
// (linear probing, backward-shift deletion), so a lookup is mostly one
// index. It grows by doubling (the broker's in-flight window bounds it) and
// never allocates once it has the room: nothing per message.
type pidSet struct {
	slots []uint16 // 0 = empty (0 is no packet id)
	n     int
}

const pidSetMin = 16

func (s *pidSet) slot(pid uint16) int { return int(pid) & (len(s.slots) - 1) }

// add inserts pid and tells whether it was there already.
func (s *pidSet) add(pid uint16) (seen bool) {
	if pid == 0 {
		return false // a malformed id: never held, so never swallowed
	}
	if 4*(s.n+1) > 3*len(s.slots) {
		s.grow()
	}
	for i := s.slot(pid); ; i = (i + 1) & (len(s.slots) - 1) {
		switch s.slots[i] {
		case pid:
			return true
		case 0:
			s.slots[i] = pid
			s.n++
			return false
		}
	}
}

// remove deletes pid, if held.
func (s *pidSet) remove(pid uint16) {
	if s.n == 0 || pid == 0 {
		return
	}
	mask := len(s.slots) - 1
	i := s.slot(pid)
	for s.slots[i] != pid {
		if s.slots[i] == 0 {
			return
		}
		i = (i + 1) & mask
	}
	// Backward shift: move up each later entry of the run that may sit in
	// the freed slot, so that no lookup stops early at a hole.
	for j := (i + 1) & mask; s.slots[j] != 0; j = (j + 1) & mask {
		if home := s.slot(s.slots[j]); (j-home)&mask >= (j-i)&mask {
			s.slots[i] = s.slots[j]
			i = j
		}
	}
	s.slots[i] = 0
	s.n--
}

// reset forgets every id (a new session), keeping the room.
func (s *pidSet) reset() {
	clear(s.slots)
	s.n = 0
}

func (s *pidSet) grow() {
	old := s.slots
	s.slots = make([]uint16, max(pidSetMin, 2*len(old)))
	s.n = 0
	for _, pid := range old {
		if pid != 0 {
			s.add(pid)
		}
	}
}
