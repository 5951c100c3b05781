package mqtt

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"go.k6.io/k6/metrics"
)

// meter is what one group (or low-level client) counts, with its tags and
// the k6 sample channel it pushes to. Counters are atomics on the hot path.
type meter struct {
	role     string
	tags     *metrics.TagSet // test-wide tags + role + qos
	base     *metrics.TagSet // test-wide tags (scenario, run_id, broker...)
	meta     map[string]string
	ctx      context.Context
	samples  chan<- metrics.SampleContainer
	counts   [counterKinds]atomic.Int64
	pushed   [counterKinds]int64 // guarded by hub.mu
	conns    atomic.Int64        // open connections now
	target   atomic.Uint64       // float64 bits: msg/s aimed at now
	achieved atomic.Uint64       // float64 bits: lowest achieved/target ratio of its phases (0 = none yet)
}

func (m *meter) add(c counter, n int64) { m.counts[c].Add(n) }

func (m *meter) setTarget(rate float64) { m.target.Store(math.Float64bits(rate)) }

// setAchieved keeps the lowest achieved/target ratio of the meter's phases.
func (m *meter) setAchieved(r float64) {
	m.achieved.Store(math.Float64bits(lowestRatio(m.achievedRatio(), max(r, 1e-9))))
}

// lowestRatio is the lower of two achieved ratios, where 0 means none yet.
func lowestRatio(a, b float64) float64 {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}
func (m *meter) targetRate() float64    { return math.Float64frombits(m.target.Load()) }
func (m *meter) achievedRatio() float64 { return math.Float64frombits(m.achieved.Load()) }
func (m *meter) live() bool             { return m.ctx.Err() == nil }

// hub is process-wide: latency histograms are shared by all VUs so that
// quantiles are over the whole test, and one goroutine pushes every second.
type hub struct {
	mu            sync.Mutex
	meters        map[*meter]struct{}
	hists         [histKinds]*shardedHist
	metrics       *k6Metrics
	stop          chan struct{}
	done          chan struct{}
	period        time.Duration
	retired       [counterKinds]int64 // counts of meters already closed
	worstAchieved float64             // lowest achieved ratio of closed meters
	history       []timelineRow       // one row a second, for the result file
	prev          map[string]int64    // counters at the previous row
}

// timelineRow is one second of the run, process-wide: what reports chart
// when InfluxDB is not at hand.
type timelineRow struct {
	Time        int64   `json:"t" js:"t"` // Unix ms
	Published   int64   `json:"published" js:"published"`
	Received    int64   `json:"received" js:"received"`
	Connections int64   `json:"connections" js:"connections"`
	TargetRate  float64 `json:"target_rate" js:"target_rate"`
	LatencyAvg  float64 `json:"latency_avg_ms" js:"latency_avg_ms"`
	LatencyP50  float64 `json:"latency_p50_ms" js:"latency_p50_ms"`
	LatencyP99  float64 `json:"latency_p99_ms" js:"latency_p99_ms"`
	LatencyMax  float64 `json:"latency_max_ms" js:"latency_max_ms"`
	SendLagP99  float64 `json:"send_lag_p99_ms" js:"send_lag_p99_ms"`
}

const maxHistory = 7 * 24 * 3600 // a week of seconds, then the oldest go

var global = newHub()

func newHub() *hub {
	h := &hub{meters: map[*meter]struct{}{}, period: time.Second}
	for i := range h.hists {
		h.hists[i] = newShardedHist()
	}
	return h
}

func (h *hub) record(k histKind, shard int, ns int64) { h.hists[k].record(shard, ns) }

func (h *hub) register(m *meter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.meters[m] = struct{}{}
	if h.stop == nil {
		h.stop, h.done = make(chan struct{}), make(chan struct{})
		go h.loop(h.stop, h.done)
	}
}

// unregister pushes the meter's last counts and the current totals, then
// forgets it; the reporter stops with the last meter.
func (h *hub) unregister(m *meter) {
	h.flush(m)
	h.mu.Lock()
	if _, ok := h.meters[m]; ok {
		for c := range m.counts {
			h.retired[c] += m.counts[c].Load()
		}
		h.worstAchieved = lowestRatio(h.worstAchieved, m.achievedRatio())
	}
	delete(h.meters, m)
	var stop, done chan struct{}
	if len(h.meters) == 0 && h.stop != nil {
		stop, done = h.stop, h.done
		h.stop, h.done = nil, nil
	}
	h.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

func (h *hub) loop(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(h.period)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			h.flush(nil)
		}
	}
}

// flush collects histograms and pushes counters of all meters (or of only
// extra, when the hub is flushing a closing meter) and the process gauges.
func (h *hub) flush(only *meter) {
	for _, hist := range h.hists {
		hist.collect()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.metrics == nil {
		return
	}
	now := time.Now()
	var via *meter
	conns := map[string]float64{}
	target := 0.0
	for m := range h.meters {
		if m.live() && (via == nil || m == only) {
			via = m
		}
		conns[m.role] += float64(m.conns.Load())
		target += m.targetRate()
	}
	if only != nil {
		via = only
	}
	if via == nil {
		return
	}
	var out metrics.Samples
	sample := func(metric *metrics.Metric, tags *metrics.TagSet, v float64) {
		out = append(out, metrics.Sample{
			TimeSeries: metrics.TimeSeries{Metric: metric, Tags: tags}, Time: now, Value: v, Metadata: via.meta,
		})
	}
	for m := range h.meters {
		if only != nil && m != only {
			continue
		}
		for c := range m.counts {
			v := m.counts[c].Load()
			// A closing meter pushes even zeros, so that thresholds such as
			// mqtt_lost count==0 always have a sample to judge.
			if d := v - m.pushed[c]; d != 0 || only != nil {
				sample(h.metrics.counters[c], m.tags, float64(d))
				m.pushed[c] = v
			}
		}
	}
	// The run's worst phase, over every publisher group: a gauge threshold
	// (value>=0.95) then judges each phase, not only the last.
	worst := h.worstAchieved
	for m := range h.meters {
		worst = lowestRatio(worst, m.achievedRatio())
	}
	if worst > 0 {
		sample(h.metrics.achieved, via.base, worst)
	}
	if only == nil {
		h.appendHistory(now, conns, target)
	}
	for role, n := range conns {
		sample(h.metrics.connections, via.base.With("role", role), n)
	}
	sample(h.metrics.targetRate, via.base, target)
	for k, hist := range h.hists {
		window, total := hist.snapshot()
		if total.Count == 0 {
			continue
		}
		for i, s := range totalStats {
			sample(h.metrics.totals[k][i], via.base, s.get(total))
		}
		if window.Count > 0 {
			for _, s := range windowStats {
				sample(h.metrics.windows[k], via.base.With("stat", s.name), s.get(window))
			}
		}
	}
	metrics.PushIfNotDone(via.ctx, via.samples, out)
}

// appendHistory adds one timeline row; h.mu is held.
func (h *hub) appendHistory(now time.Time, conns map[string]float64, target float64) {
	cur := h.countersLocked()
	row := timelineRow{Time: now.UnixMilli(), TargetRate: target,
		Published: cur[MetricPublishes] - h.prev[MetricPublishes], Received: cur[MetricReceives] - h.prev[MetricReceives]}
	for _, n := range conns {
		row.Connections += int64(n)
	}
	lat, _ := h.hists[histLatency].snapshot()
	lag, _ := h.hists[histSendLag].snapshot()
	row.LatencyAvg, row.LatencyP50, row.LatencyP99, row.LatencyMax = lat.Avg, lat.P50, lat.P99, lat.Max
	row.SendLagP99 = lag.P99
	h.prev = cur
	h.history = append(h.history, row)
	if len(h.history) > maxHistory {
		h.history = h.history[1:]
	}
}

// timeline returns the per-second rows so far.
func (h *hub) timeline() []timelineRow {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]timelineRow(nil), h.history...)
}

// counters sums every meter's counts, closed or live, by metric name.
func (h *hub) counters() map[string]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.countersLocked()
}

func (h *hub) countersLocked() map[string]int64 {
	out := map[string]int64{}
	for c, name := range counterNames {
		v := h.retired[c]
		for m := range h.meters {
			v += m.counts[c].Load()
		}
		out[name] = v
	}
	return out
}

// setMetrics installs the k6 metric handles (once: the registry is per test).
func (h *hub) setMetrics(m *k6Metrics) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.metrics == nil {
		h.metrics = m
	}
}

// totals returns the whole-run summary of every histogram kind.
func (h *hub) totals() map[string]Stats {
	out := map[string]Stats{}
	for k, hist := range h.hists {
		hist.collect()
		_, total := hist.snapshot()
		out[histNames[k]] = total
	}
	return out
}
