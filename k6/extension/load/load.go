// Package load generates and accounts for benchmark traffic: publisher and
// subscriber groups, pacing of publish phases, exact per-stream delivery
// accounting, HDR latency histograms and the per-second reporter that
// turns them into k6 samples. Everything one k6 test shares lives on a Run,
// which the k6 module owns: no state is package-level, so two tests in one
// process never see each other's counts.
package load

import (
	"context"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"go.k6.io/k6/metrics"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
)

// Env is what a group needs from the k6 VU that made it.
type Env struct {
	Ctx     context.Context
	Samples chan<- metrics.SampleContainer
	Tags    *metrics.TagSet // the test's tags (scenario, run_id, broker...)
	Meta    map[string]string
	Logger  logrus.FieldLogger
	VUID    uint64
}

// Run is everything one k6 test shares: latency histograms over the whole
// test (so quantiles are over every VU), the meters of live groups and
// clients, one reporter goroutine that pushes every second (and logs the
// status line), the timeline for the result file, the publisher registry
// and shared-subscription sets.
type Run struct {
	mu            sync.Mutex
	meters        map[*Meter]struct{}
	hists         [HistKinds]*shardedHist // Latency: the flows' sum (collect)
	flowHists     flowHists               // pub-to-sub by flow (flows.go)
	collecting    sync.Mutex              // one collect at a time
	metrics       *Metrics
	stop          chan struct{}
	done          chan struct{}
	period        time.Duration
	retired       [CounterKinds]int64 // counts of meters already closed
	worstAchieved float64             // lowest achieved ratio of closed meters
	history       []TimelineRow       // one row a second, for the result file
	prev          map[string]int64    // counters at the previous row
	status        statusState         // the status line's plan and last figures

	publishers publisherRegistry
	shared     sharedSets
	receivers  []receiver // every subscriber's streams, by flow (r.mu)

	outages outages // windows in which connections were down
	// waitSlots: how many of the groups' pollers may wait blocked in
	// epoll_wait at a time (connection.WaitSlots).
	waitSlots *connection.WaitSlots
	emitted   map[string]bool // metrics with a sample pushed (r.mu)
}

// NewRun makes an empty run; the reporter starts with the first meter.
func NewRun() *Run {
	r := &Run{meters: map[*Meter]struct{}{}, period: time.Second, waitSlots: connection.NewWaitSlots()}
	for i := range r.hists {
		r.hists[i] = newShardedHist()
	}
	return r
}

// SetMetrics installs the k6 metric handles (once: the registry is per test).
func (r *Run) SetMetrics(m *Metrics) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.metrics == nil {
		r.metrics = m
	}
}

// Counters sums every meter's counts, closed or live, by metric name.
func (r *Run) Counters() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.countersLocked()
}

func (r *Run) countersLocked() map[string]int64 {
	out := map[string]int64{}
	for c, name := range CounterNames() {
		v := r.retired[c]
		for m := range r.meters {
			v += m.counts[c].Load()
		}
		out[name] = v
	}
	return out
}

// Totals is the whole-run summary of every histogram, by metric name stem.
func (r *Run) Totals() map[string]Stats {
	out := map[string]Stats{}
	names := HistNames()
	r.collect()
	for k, hist := range r.hists {
		_, total := hist.snapshot()
		out[names[k]] = total
	}
	return out
}

// collect moves what every histogram recorded since the last call into its
// window and total, and returns the flows' histograms by flow name.
// Pub-to-sub latency is recorded once per message, in its flow's histogram:
// the run's (Latency) is the flows' sum, folded here. Serialised: a second
// collect between a flow's and the sum's would empty the flow's window.
func (r *Run) collect() map[string]*shardedHist {
	r.collecting.Lock()
	defer r.collecting.Unlock()
	flows := r.flowHists.collected()
	parts := make([]*shardedHist, 0, len(flows))
	for _, h := range flows {
		parts = append(parts, h)
	}
	for k, hist := range r.hists {
		if Hist(k) == Latency {
			hist.collectFrom(parts)
		} else {
			hist.collect()
		}
	}
	return flows
}

func (r *Run) record(k Hist, shard int, ns int64) { r.hists[k].record(shard, ns) }
