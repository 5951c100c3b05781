package mqtt

import (
	"sync"

	"github.com/grafana/sobek"
)

// noteStore is the test's key/value store: what a VU learns during the run
// (step boundaries, connect results) reaches handleSummary, which runs in
// another JS runtime.
type noteStore struct {
	mu sync.Mutex
	m  map[string]any
}

func (n *noteStore) set(key string, v sobek.Value) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.m[key] = exportValue(v)
}

func (n *noteStore) all() map[string]any {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make(map[string]any, len(n.m))
	for k, v := range n.m {
		out[k] = v
	}
	return out
}
