package load

import (
	"time"

	"go.k6.io/k6/metrics"
)

// TimelineRow is one second of the run, process-wide: what reports chart
// when InfluxDB is not at hand.
type TimelineRow struct {
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

func (r *Run) register(m *Meter) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.meters[m] = struct{}{}
	r.status.start(time.Now())
	if r.stop == nil {
		r.stop, r.done = make(chan struct{}), make(chan struct{})
		go r.loop(r.stop, r.done)
	}
}

// unregister pushes the meter's last counts and the current totals, then
// forgets it; the reporter stops with the last meter.
func (r *Run) unregister(m *Meter) {
	r.flush(m)
	r.mu.Lock()
	if _, ok := r.meters[m]; ok {
		for c := range m.counts {
			r.retired[c] += m.counts[c].Load()
		}
		r.worstAchieved = lowestRatio(r.worstAchieved, m.achievedRatio())
	}
	delete(r.meters, m)
	var stop, done chan struct{}
	if len(r.meters) == 0 && r.stop != nil {
		stop, done = r.stop, r.done
		r.stop, r.done = nil, nil
	}
	r.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

func (r *Run) loop(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(r.period)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			r.flush(nil)
			r.progress(time.Now())
		}
	}
}

// flush collects the histograms and pushes the counters of every meter (or
// of only one, when that meter is closing) and the run's gauges.
func (r *Run) flush(only *Meter) {
	flows := r.collect()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.metrics == nil {
		return
	}
	now := time.Now()
	// Samples go out through a live meter's context and channel.
	var via *Meter
	conns := map[string]float64{}
	target := 0.0
	for m := range r.meters {
		if m.live() && via == nil {
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
	for m := range r.meters {
		if only != nil && m != only {
			continue
		}
		for c := range m.counts {
			v := m.counts[c].Load()
			// A closing meter pushes even zeros, so that thresholds such as
			// mqtt_lost count==0 always have a sample to judge.
			if d := v - m.pushed[c]; d != 0 || only != nil {
				sample(r.metrics.Counters[c], m.tags, float64(d))
				m.pushed[c] = v
			}
		}
	}
	// The run's worst phase, over every publisher group: a gauge threshold
	// (value>=verdict.RateReached) then judges each phase, not only the last.
	worst := r.worstAchieved
	for m := range r.meters {
		worst = lowestRatio(worst, m.achievedRatio())
	}
	if worst > 0 {
		sample(r.metrics.Achieved, via.test, worst)
	}
	if only == nil {
		r.appendHistory(now, conns, target)
	}
	for role, n := range conns {
		sample(r.metrics.Connections, via.test.With("role", role), n)
	}
	sample(r.metrics.TargetRate, via.test, target)
	sample(r.metrics.Down, via.test, float64(r.outages.Down()))
	for k, hist := range r.hists {
		window, total := hist.snapshot()
		if total.Count == 0 {
			continue
		}
		for i, s := range TotalStats() {
			sample(r.metrics.Totals[k][i], via.test, total.get(s))
		}
		if window.Count > 0 {
			for _, s := range windowStats() {
				sample(r.metrics.Windows[k], via.test.With("stat", s), window.get(s))
			}
		}
	}
	// Each flow's second, as the run's above. A group of no flow (the
	// extension used without one) has no tag to carry: the run's is its.
	for flow, hist := range flows {
		window, _ := hist.snapshot()
		if flow == "" || window.Count == 0 {
			continue
		}
		tags := via.test.With("flow", flow)
		for _, s := range windowStats() {
			sample(r.metrics.FlowWindows, tags.With("stat", s), window.get(s))
		}
	}
	if metrics.PushIfNotDone(via.ctx, via.samples, out) {
		r.markEmitted(out)
	}
}

// appendHistory adds one timeline row; r.mu is held.
func (r *Run) appendHistory(now time.Time, conns map[string]float64, target float64) {
	cur := r.countersLocked()
	row := TimelineRow{Time: now.UnixMilli(), TargetRate: target,
		Published: cur[MetricPublishes] - r.prev[MetricPublishes], Received: cur[MetricReceives] - r.prev[MetricReceives]}
	for _, n := range conns {
		row.Connections += int64(n)
	}
	lat, _ := r.hists[Latency].snapshot()
	lag, _ := r.hists[SendLag].snapshot()
	row.LatencyAvg, row.LatencyP50, row.LatencyP99, row.LatencyMax = lat.Avg, lat.P50, lat.P99, lat.Max
	row.SendLagP99 = lag.P99
	r.prev = cur
	r.history = append(r.history, row)
	if len(r.history) > maxHistory {
		r.history = r.history[1:]
	}
}

// Timeline returns the per-second rows so far.
func (r *Run) Timeline() []TimelineRow {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]TimelineRow(nil), r.history...)
}
