package mqtt

import (
	"errors"

	"go.k6.io/k6/metrics"
)

// Metric names. Counters are pushed once a second as deltas; the *_p99 (and
// other stat) gauges carry the whole-run value from HDR histograms, so the
// last value is exact and a threshold such as `mqtt_latency_p99: ['value<50']`
// judges the whole run. The *_1s gauges carry per-second window statistics
// (tag stat=avg|p50|p99|max) for time-series charts.
const (
	MetricConnects          = "mqtt_connects"
	MetricConnectFailures   = "mqtt_connect_failures"
	MetricReconnects        = "mqtt_reconnects"
	MetricDisconnects       = "mqtt_disconnects"
	MetricSubscribeFailures = "mqtt_subscribe_failures"
	MetricPublishes         = "mqtt_publishes"
	MetricPublishFailures   = "mqtt_publish_failures"
	MetricReceives          = "mqtt_receives"
	MetricLost              = "mqtt_lost"
	MetricDuplicates        = "mqtt_duplicates"
	MetricOutOfOrder        = "mqtt_out_of_order"
	MetricErrors            = "mqtt_errors"
	MetricBytesSent         = "mqtt_payload_bytes_sent"
	MetricBytesReceived     = "mqtt_payload_bytes_received"
	// Messages a subscriber's poller read together with a later message of
	// the same connection, and so timed at that one's kernel receive time:
	// their latency is overstated by at most the time between two looks.
	MetricReceivesSharedRead = "mqtt_receives_shared_read"

	MetricConnections   = "mqtt_connections"         // gauge: open connections (tag role)
	MetricTargetRate    = "mqtt_target_rate"         // gauge: msg/s the publishers aim at
	MetricAchievedRatio = "mqtt_rate_achieved_ratio" // gauge: achieved/target of the last publish phase
)

// Histogram kinds. Each gives gauges <name>_{avg,p50,p90,p95,p99,max} (run
// totals, ms) and <name>_1s (per-second window, tag stat).
type histKind int

const (
	histLatency         histKind = iota // pub-to-sub, from the actual send
	histLatencyIntended                 // pub-to-sub, from the intended send (no coordinated omission)
	histSendLag                         // intended → actual send: the generator's own lateness
	histConnect                         // TCP+TLS+CONNECT → CONNACK
	histSuback                          // SUBSCRIBE → SUBACK
	histPuback                          // PUBLISH → PUBACK (QoS 1) or PUBCOMP (QoS 2)
	histKinds
)

var histNames = [histKinds]string{
	"mqtt_latency", "mqtt_latency_intended", "mqtt_send_lag",
	"mqtt_connect_duration", "mqtt_suback_duration", "mqtt_puback_duration",
}

var totalStats = []struct {
	name string
	get  func(Stats) float64
}{
	{"avg", func(s Stats) float64 { return s.Avg }},
	{"p50", func(s Stats) float64 { return s.P50 }},
	{"p90", func(s Stats) float64 { return s.P90 }},
	{"p95", func(s Stats) float64 { return s.P95 }},
	{"p99", func(s Stats) float64 { return s.P99 }},
	{"max", func(s Stats) float64 { return s.Max }},
}

var windowStats = totalStats[:0:0]

func init() {
	for _, s := range totalStats {
		if s.name == "avg" || s.name == "p50" || s.name == "p99" || s.name == "max" {
			windowStats = append(windowStats, s)
		}
	}
}

// counter indexes the per-group counters.
type counter int

const (
	cConnects counter = iota
	cConnectFailures
	cReconnects
	cDisconnects
	cSubscribeFailures
	cPublishes
	cPublishFailures
	cReceives
	cLost
	cDuplicates
	cOutOfOrder
	cErrors
	cBytesSent
	cBytesReceived
	cReceivesSharedRead
	counterKinds
)

var counterNames = [counterKinds]string{
	MetricConnects, MetricConnectFailures, MetricReconnects, MetricDisconnects, MetricSubscribeFailures,
	MetricPublishes, MetricPublishFailures, MetricReceives, MetricLost, MetricDuplicates, MetricOutOfOrder,
	MetricErrors, MetricBytesSent, MetricBytesReceived, MetricReceivesSharedRead,
}

// k6Metrics are the registered k6 metric handles.
type k6Metrics struct {
	counters    [counterKinds]*metrics.Metric
	totals      [histKinds][]*metrics.Metric // indexed like totalStats
	windows     [histKinds]*metrics.Metric
	connections *metrics.Metric
	targetRate  *metrics.Metric
	achieved    *metrics.Metric
}

func registerMetrics(r *metrics.Registry) (*k6Metrics, error) {
	m := &k6Metrics{}
	var errs []error
	must := func(name string, t metrics.MetricType, vt ...metrics.ValueType) *metrics.Metric {
		x, err := r.NewMetric(name, t, vt...)
		errs = append(errs, err)
		return x
	}
	for i, n := range counterNames {
		vt := metrics.Default
		if i == int(cBytesSent) || i == int(cBytesReceived) {
			vt = metrics.Data
		}
		m.counters[i] = must(n, metrics.Counter, vt)
	}
	for k, n := range histNames {
		for _, s := range totalStats {
			m.totals[k] = append(m.totals[k], must(n+"_"+s.name, metrics.Gauge, metrics.Time))
		}
		m.windows[k] = must(n+"_1s", metrics.Gauge, metrics.Time)
	}
	m.connections = must(MetricConnections, metrics.Gauge)
	m.targetRate = must(MetricTargetRate, metrics.Gauge)
	m.achieved = must(MetricAchievedRatio, metrics.Gauge)
	return m, errors.Join(errs...)
}
