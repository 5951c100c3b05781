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

// WithoutSamples are, of names (threshold metrics; `name{tag:value}` counts
// as name), the extension's metrics that never had a sample taken by k6:
// their thresholds judged nothing, whatever k6 says of them.
func (r *Run) WithoutSamples(names []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.withoutSamplesLocked(names)
}

func (r *Run) withoutSamplesLocked(names []string) []string {
	missing := []string{}
	if r.metrics == nil {
		return missing
	}
	ours := r.metrics.names()
	for _, n := range names {
		if i := strings.IndexByte(n, '{'); i >= 0 {
			n = n[:i]
		}
		if ours[n] && !r.emitted[n] && !slices.Contains(missing, n) {
			missing = append(missing, n)
		}
	}
	return missing
}

// CheckSamples runs at the end of a test, after its groups closed: k6
// passes a threshold whose metric never had a sample (a p99 bound when no
// message arrived), so a verdict could rest on no data. It pushes
// mqtt_thresholds_without_samples through the calling VU: 1 per metric
// WithoutSamples finds (tag metric), or a single 0, so that its own
// `count==0` threshold judges data too. It returns those metrics.
func (r *Run) CheckSamples(env Env, names []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	missing := r.withoutSamplesLocked(names)
	if r.metrics == nil {
		return missing
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
