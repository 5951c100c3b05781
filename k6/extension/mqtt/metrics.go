package mqtt

import (
	"errors"

	"go.k6.io/k6/metrics"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
)

// registerMetrics registers every metric the extension emits (names in
// load/metrics.go) with the test's registry.
func registerMetrics(r *metrics.Registry) (*load.Metrics, error) {
	m := &load.Metrics{}
	var errs []error
	must := func(name string, t metrics.MetricType, vt ...metrics.ValueType) *metrics.Metric {
		x, err := r.NewMetric(name, t, vt...)
		errs = append(errs, err)
		return x
	}
	for i, n := range load.CounterNames() {
		vt := metrics.Default
		if c := load.Counter(i); c == load.BytesSent || c == load.BytesReceived {
			vt = metrics.Data
		}
		m.Counters[i] = must(n, metrics.Counter, vt)
	}
	for k, n := range load.HistNames() {
		for _, s := range load.TotalStats() {
			m.Totals[k] = append(m.Totals[k], must(n+"_"+s, metrics.Gauge, metrics.Time))
		}
		m.Windows[k] = must(n+"_1s", metrics.Gauge, metrics.Time)
	}
	m.FlowWindows = must(load.MetricFlowLatency, metrics.Gauge, metrics.Time)
	m.Connections = must(load.MetricConnections, metrics.Gauge)
	m.TargetRate = must(load.MetricTargetRate, metrics.Gauge)
	m.Achieved = must(load.MetricAchievedRatio, metrics.Gauge)
	m.Down = must(load.MetricConnectionsDown, metrics.Gauge)
	m.NoSamples = must(load.MetricThresholdsWithoutSamples, metrics.Counter)
	return m, errors.Join(errs...)
}
