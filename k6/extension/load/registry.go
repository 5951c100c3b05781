package load

import (
	"fmt"
	"sync"
)

// publisherRegistry knows every benchmark publisher of the run by id, so
// that receivers can count messages sent after their last receipt as lost.
type publisherRegistry struct {
	mu sync.Mutex
	m  map[uint32]*pubClient
}

func (r *publisherRegistry) add(id uint32, c *pubClient) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[uint32]*pubClient{}
	}
	// A closed group's ids may be reused (its subscribers are done with it).
	if old, ok := r.m[id]; ok && old != c && old.g != nil && old.g.ctx.Err() == nil {
		return fmt.Errorf("publisher id %d is already used by another live PublisherGroup: give each group its own id_base range", id)
	}
	r.m[id] = c
	return nil
}

// sent is how many messages publisher id has sent so far, and how many of
// them the broker refused (those never reach a subscriber).
func (r *publisherRegistry) sent(id uint32) (sent uint32, rejected int64, ok bool) {
	r.mu.Lock()
	c, ok := r.m[id]
	r.mu.Unlock()
	if !ok {
		return 0, 0, false
	}
	return c.seq.Load(), c.rejected.Load(), true
}

// all is every publisher the run has had (the latest one of a reused id).
func (r *publisherRegistry) all() []*pubClient {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*pubClient, 0, len(r.m))
	for _, c := range r.m {
		out = append(out, c)
	}
	return out
}

// sharedSets gives the members of one shared subscription, across groups
// and VUs, one stream set: together they receive each message once.
type sharedSets struct {
	mu sync.Mutex
	m  map[string]*sharedSet
}

type sharedSet struct {
	set  *streamSet
	refs int
}

func (s *sharedSets) acquire(filter string) *sharedSet {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*sharedSet{}
	}
	set := s.m[filter]
	if set == nil {
		set = &sharedSet{set: newStreamSet()}
		s.m[filter] = set
	}
	set.refs++
	return set
}

// release returns true for the last group of a shared subscription: that
// one reports the set's totals, so nothing is counted twice.
func (s *sharedSets) release(filter string, set *sharedSet) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	set.refs--
	if set.refs == 0 {
		delete(s.m, filter)
		return true
	}
	return false
}
