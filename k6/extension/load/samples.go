package load

import (
	"slices"
	"strings"
	"time"

	"go.k6.io/k6/metrics"
)

// markEmitted notes the metrics of samples k6 took; r.mu is held.
func (r *Run) markEmitted(out metrics.Samples) {
	if r.emitted == nil {
		r.emitted = map[string]bool{}
	}
	for _, s := range out {
		r.emitted[s.Metric.Name] = true
	}
}

// names are the metrics the extension emits itself.
func (m *Metrics) names() map[string]bool {
	out := map[string]bool{}
	add := func(ms ...*metrics.Metric) {
		for _, x := range ms {
			if x != nil {
				out[x.Name] = true
			}
		}
	}
	add(m.Counters[:]...)
	for k := range m.Totals {
		add(m.Totals[k]...)
	}
	add(m.Windows[:]...)
	add(m.Connections, m.TargetRate, m.Achieved, m.Down)
	return out
}

// CheckSamples runs at the end of a test, after its groups closed: k6
// passes a threshold whose metric never had a sample (a p99 bound when no
// message arrived), so a verdict could rest on no data. Of names (the
// script's threshold metrics, `name{tag:value}` counting as name), it
// returns those of the extension's metrics that never had a sample, and
// pushes mqtt_thresholds_without_samples through the calling VU: 1 per such
// metric (tag metric), or a single 0, so that its own `count==0` threshold
// judges data too.
func (r *Run) CheckSamples(env Env, names []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.metrics == nil {
		return nil
	}
	ours := r.metrics.names()
	var missing []string
	seen := map[string]bool{}
	for _, n := range names {
		if i := strings.IndexByte(n, '{'); i >= 0 {
			n = n[:i]
		}
		if ours[n] && !r.emitted[n] && !seen[n] {
			seen[n] = true
			missing = append(missing, n)
		}
	}
	for _, n := range missing {
		if !slices.Contains(r.noData, n) {
			r.noData = append(r.noData, n)
		}
	}
	now := time.Now()
	var out metrics.Samples
	add := func(tags *metrics.TagSet, v float64) {
		out = append(out, metrics.Sample{
			TimeSeries: metrics.TimeSeries{Metric: r.metrics.NoSamples, Tags: tags}, Time: now, Value: v, Metadata: env.Meta,
		})
	}
	for _, n := range missing {
		add(env.Tags.With("metric", n), 1)
	}
	if len(missing) == 0 {
		add(env.Tags, 0)
	}
	metrics.PushIfNotDone(env.Ctx, env.Samples, out)
	return missing
}

// WithoutSamples are the threshold metrics CheckSamples found without a sample.
func (r *Run) WithoutSamples() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string{}, r.noData...)
}
