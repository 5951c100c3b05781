package mqtt

import (
	"maps"
	"sync"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
)

// runRecord is what the test's groups found and what its scenario told
// the extension, kept for the result that handleSummary writes: the VUs
// run the load in their own JS runtimes, and handleSummary runs in another.
// Everything else of the result is the run's own state (load.Run).
type runRecord struct {
	mu sync.Mutex
	// Each group's connect(), by role and flow ("sub_p2p"): what it
	// resolved, or {error} when it rejected.
	connect map[string]map[string]any
	// Each subscriber group's drain(), by flow.
	delivery map[string]map[string]any
	// The scenario's publish steps: a step is the scenario's unit (every
	// flow's publish() of one planned rate, run together), which the
	// extension sees only as separate phases of separate groups.
	steps []map[string]any
	// The steady size of a payload template, the widest of the publisher
	// groups' (0: no template): the result's payload parameter.
	templatePayload int
	// The run got to the end of its plan without k6 cutting it short.
	completed bool
	// The threshold metrics this instance judges (checkSamples), nil until
	// the script said: then every metric with a threshold.
	judged []string
}

func newRunRecord() *runRecord {
	return &runRecord{connect: map[string]map[string]any{}, delivery: map[string]map[string]any{}}
}

// connected records a group's connect(): v, or the error it rejected with.
func (rr *runRecord) connected(role, flow string, v any, err error) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if err != nil {
		rr.connect[role+"_"+flow] = map[string]any{"error": err.Error()}
		return
	}
	if m, ok := v.(map[string]any); ok {
		rr.connect[role+"_"+flow] = maps.Clone(m)
	}
}

func (rr *runRecord) drained(flow string, stats map[string]any) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.delivery[flow] = maps.Clone(stats)
}

// received is what flow's subscribers received, as their drain() found.
func (rr *runRecord) received(flow string) float64 {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return result.Number(rr.delivery[flow]["received"])
}

func (rr *runRecord) templateSize(size int) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.templatePayload = max(rr.templatePayload, size)
}

func (rr *runRecord) addStep(step map[string]any) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.steps = append(rr.steps, step)
}

func (rr *runRecord) stepsSoFar() []map[string]any {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return append([]map[string]any(nil), rr.steps...)
}

func (rr *runRecord) judge(names []string) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.judged = append([]string(nil), names...)
}

func (rr *runRecord) complete() {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.completed = true
}
