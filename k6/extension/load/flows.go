package load

import (
	"fmt"
	"sync"
)

// Per-flow pub-to-sub latency. A scenario of several flows (a composite's
// parts: background, p2p, fan-out, fan-in) judges each flow's latency on
// its own, which the run-wide histogram mixes: a fan-out's few slow
// messages vanish among a point-to-point's many. Only pub-to-sub: the
// connection timings belong to the run, not to a flow. Exported whole
// (Histograms) under FlowHistName, so that instances' files merge exactly.
type flowHists struct {
	mu sync.Mutex
	m  map[string]*shardedHist
}

// FlowHistName is a flow's pub-to-sub histogram in a result's histograms.
func FlowHistName(flow string) string { return fmt.Sprintf("%s{flow=%s}", HistNames()[Latency], flow) }

func (f *flowHists) get(flow string) *shardedHist {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]*shardedHist{}
	}
	h := f.m[flow]
	if h == nil {
		h = newShardedHist()
		f.m[flow] = h
	}
	return h
}

// all is every flow's histogram, by FlowHistName.
func (f *flowHists) all() map[string]*shardedHist {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]*shardedHist, len(f.m))
	for flow, h := range f.m {
		out[FlowHistName(flow)] = h
	}
	return out
}

// collected moves each flow's records since the last call into its window
// (collect) and returns the flows' histograms by flow name: what the
// reporter pushes each second as mqtt_flow_latency_1s.
func (f *flowHists) collected() map[string]*shardedHist {
	f.mu.Lock()
	out := make(map[string]*shardedHist, len(f.m))
	for flow, h := range f.m {
		out[flow] = h
	}
	f.mu.Unlock()
	for _, h := range out {
		h.collect()
	}
	return out
}
