package load

import "sync"

// Exact delivery accounting per stream: one stream is what one publisher
// sends to one receiver (a subscriber, or a shared-subscription group, whose
// members together must see each message once).
//
// A stream keeps the next expected sequence number and a bitmap of the last
// windowBits sequence numbers, so that duplicates and late (out-of-order)
// arrivals are told apart exactly within the window. Memory per stream is
// fixed: it does not grow with the number of messages.
const windowBits = 1024

type stream struct {
	next    uint32 // highest sequence seen + 1
	started bool
	missing int64 // gaps not (yet) filled by a late arrival
	unique  int64
	dups    int64
	ooo     int64
	seen    [windowBits / 64]uint64
}

func (s *stream) bit(seq uint32) (word int, mask uint64) {
	i := seq % windowBits
	return int(i / 64), 1 << (i % 64)
}

// observe accounts for one received sequence number.
func (s *stream) observe(seq uint32) {
	switch {
	case !s.started || seq >= s.next:
		from := s.next
		if !s.started {
			from, s.started = 0, true
		}
		// Sequence numbers from..seq-1 were skipped: provisionally lost.
		gap := int64(seq) - int64(from)
		s.missing += gap
		if gap >= windowBits {
			s.seen = [windowBits / 64]uint64{}
		} else {
			for q := from; q < seq; q++ {
				w, m := s.bit(q)
				s.seen[w] &^= m
			}
		}
		w, m := s.bit(seq)
		s.seen[w] |= m
		s.next = seq + 1
		s.unique++
	case s.next-seq > windowBits:
		// Older than the window, so not known to be new: a late arrival
		// while a gap is open, else a duplicate. unique then never
		// exceeds next, and sent - unique never hides a tail loss.
		if s.missing > 0 {
			s.ooo++
			s.unique++
			s.missing--
		} else {
			s.dups++
		}
	default:
		w, m := s.bit(seq)
		if s.seen[w]&m != 0 {
			s.dups++
			return
		}
		s.seen[w] |= m
		s.ooo++
		s.unique++
		if s.missing > 0 {
			s.missing--
		}
	}
}

// streamTotals sums streams; lost is what publishers sent that a stream
// never received, less what the broker refused.
type streamTotals struct {
	Unique     int64 `json:"unique"`
	Duplicates int64 `json:"duplicates"`
	OutOfOrder int64 `json:"out_of_order"`
	Lost       int64 `json:"lost"`
	Streams    int   `json:"streams"`
}

func (t *streamTotals) add(pub uint32, s *stream, reg *publisherRegistry, partial bool) {
	t.Unique += s.unique
	t.Duplicates += s.dups
	t.OutOfOrder += s.ooo
	// What the publisher sent, less what the broker refused (never
	// delivered), less what arrived: the formula a merge of instance files
	// applies (FlowStreams), so one process and a merge agree exactly.
	// Without the publisher here, only the gaps are known, and only when
	// this is the whole test: in one instance of several, the gaps of a
	// stream are another instance's to judge (the merge does).
	lost := s.missing
	if partial {
		lost = 0
	}
	if sent, rejected, ok := reg.sent(pub); ok {
		lost = max(0, int64(sent)-rejected-s.unique)
	}
	t.Lost += lost
	t.Streams++
}

// streamSet is the set of streams of one receiver. Locked, because the
// members of a shared subscription read on different goroutines.
type streamSet struct {
	mu sync.Mutex
	m  map[uint32]*stream
	// The last stream observed: a subscriber of one publisher (fan-out,
	// p2p) or of a publisher sending bursts finds it without a map lookup.
	last    *stream
	lastPub uint32
}

func newStreamSet() *streamSet { return &streamSet{m: make(map[uint32]*stream)} }

func (ss *streamSet) observe(pub, seq uint32) {
	ss.mu.Lock()
	s := ss.last
	if s == nil || ss.lastPub != pub {
		s = ss.m[pub]
		if s == nil {
			s = &stream{}
			ss.m[pub] = s
		}
		ss.last, ss.lastPub = s, pub
	}
	s.observe(seq)
	ss.mu.Unlock()
}

// missing is what the set's streams skipped and have not received since:
// provisionally lost (a late arrival may still fill a gap).
func (ss *streamSet) missing() int64 {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	n := int64(0)
	for _, s := range ss.m {
		n += s.missing
	}
	return n
}

func (ss *streamSet) totals(t *streamTotals, reg *publisherRegistry, partial bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for pub, s := range ss.m {
		t.add(pub, s, reg, partial)
	}
}
