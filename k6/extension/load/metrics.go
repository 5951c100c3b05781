package load

import "go.k6.io/k6/metrics"

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
	// Acks that do not belong to the publish's QoS flow: a PUBACK to a QoS 2
	// publish (which ends only with PUBREC, PUBREL, PUBCOMP), or a PUBREC or
	// PUBCOMP to a QoS 1 one. Such a publish is not counted as delivered to
	// the broker: it is a publish failure too.
	MetricProtocolErrors = "mqtt_protocol_errors"
	// Redials after a drop, whether they worked or not (mqtt_reconnects
	// counts those that did); mqtt_connect_failures counts first
	// connections only.
	MetricReconnectAttempts = "mqtt_reconnect_attempts"
	// QoS 1/2 PUBLISHes re-sent with DUP after a reconnect that resumed the
	// session (the broker had not acknowledged them). Not in mqtt_publishes:
	// each is a message already counted there once.
	MetricResends = "mqtt_resends"
	// QoS 1/2 publishes the broker refused: a PUBACK or PUBREC with a reason
	// code >= 0x80 (MQTT 5), such as 0x87 not authorised. Never counted in
	// mqtt_publishes, never expected at the subscribers.
	MetricPublishRejected = "mqtt_publish_rejected"
	// Messages the publishers could not send on schedule: due longer ago
	// than the phase's max_lag (the generator fell behind, or the QoS 1/2
	// window stayed full), so never sent, never expected at the subscribers.
	MetricMissedSends = "mqtt_missed_sends"
	// Connections the generator closed (and redialled) because the broker
	// read nothing of a write for 2 s: it takes less than it is offered.
	// Each is in mqtt_disconnects too.
	MetricWriteStalls = "mqtt_write_stalls"

	MetricConnections   = "mqtt_connections"         // gauge: open connections (tag role)
	MetricTargetRate    = "mqtt_target_rate"         // gauge: msg/s the publishers aim at
	MetricAchievedRatio = "mqtt_rate_achieved_ratio" // gauge: lowest achieved/target of any publish phase so far

	// Gauge: each flow's pub-to-sub latency per second (tags flow and stat,
	// as <name>_1s): a composite's parts apart in a time series, as the
	// result's delivery.<part>.latency keeps them for the whole run.
	MetricFlowLatency = "mqtt_flow_latency_1s"

	// Gauge: connections lost whose reconnect is pending, run-wide.
	MetricConnectionsDown = "mqtt_connections_down"
	// Counter, pushed once at the end by CheckSamples: one per threshold
	// metric of the extension that never had a sample (tag metric), else a
	// 0. Its count==0 threshold fails a run whose verdict would rest on no data.
	MetricThresholdsWithoutSamples = "mqtt_thresholds_without_samples"
)

// Counter indexes the per-group counters.
type Counter int

// The counters, in the order of CounterNames.
const (
	Connects Counter = iota
	ConnectFailures
	Reconnects
	Disconnects
	SubscribeFailures
	Publishes
	PublishFailures
	Receives
	Lost
	Duplicates
	OutOfOrder
	Errors
	BytesSent
	BytesReceived
	ReceivesSharedRead
	ProtocolErrors
	ReconnectAttempts
	Resends
	PublishRejected
	MissedSends
	WriteStalls
	CounterKinds
)

// CounterNames are the counters' metric names.
func CounterNames() [CounterKinds]string {
	return [CounterKinds]string{
		MetricConnects, MetricConnectFailures, MetricReconnects, MetricDisconnects, MetricSubscribeFailures,
		MetricPublishes, MetricPublishFailures, MetricReceives, MetricLost, MetricDuplicates, MetricOutOfOrder,
		MetricErrors, MetricBytesSent, MetricBytesReceived, MetricReceivesSharedRead, MetricProtocolErrors,
		MetricReconnectAttempts,
		MetricResends,
		MetricPublishRejected, MetricMissedSends, MetricWriteStalls,
	}
}

// Hist is a kind of latency histogram. Each gives gauges
// <name>_{avg,p50,p90,p95,p99,max} (run totals, ms) and <name>_1s
// (per-second window, tag stat).
type Hist int

// The histograms, in the order of HistNames.
const (
	Latency              Hist = iota // pub-to-sub, from the actual send: the flows' sum, never recorded itself (Run.collect)
	LatencyIntended                  // pub-to-sub, from the intended send (no coordinated omission)
	SendLag                          // intended → actual send: the generator's own lateness
	ConnectDuration                  // TCP+TLS+CONNECT → CONNACK
	SubackDuration                   // SUBSCRIBE → SUBACK
	PubackDuration                   // PUBLISH → PUBACK (QoS 1) or PUBCOMP (QoS 2)
	TLSHandshakeDuration             // the TLS handshake alone
	ConnackDuration                  // CONNECT → CONNACK alone
	ReconnectDuration                // a connection's drop → its reconnect's CONNACK
	HistKinds
)

// HistNames are the histograms' metric name stems.
func HistNames() [HistKinds]string {
	return [HistKinds]string{
		"mqtt_latency", "mqtt_latency_intended", "mqtt_send_lag",
		"mqtt_connect_duration", "mqtt_suback_duration", "mqtt_puback_duration",
		"mqtt_tls_handshake_duration", "mqtt_connack_duration", "mqtt_reconnect_duration",
	}
}

// LatencyKeys are the histograms' keys in a result's latency_ms, in the
// order of HistNames: the one list of latency kinds, which the result a run
// writes, the merge and the summary all derive from.
func LatencyKeys() [HistKinds]string {
	return [HistKinds]string{
		"pub_to_sub", "pub_to_sub_from_intended", "send_lag",
		"connect", "suback", "puback",
		"tls_handshake", "connack", "reconnect",
	}
}

// TotalStats are the whole-run gauges of each histogram (<name>_<stat>).
func TotalStats() []string { return []string{"avg", "p50", "p90", "p95", "p99", "max"} }

// windowStats are the per-second stats (<name>_1s, tag stat).
func windowStats() []string { return []string{"avg", "p50", "p99", "max"} }

func (s Stats) get(stat string) float64 {
	switch stat {
	case "avg":
		return s.Avg
	case "p50":
		return s.P50
	case "p90":
		return s.P90
	case "p95":
		return s.P95
	case "p99":
		return s.P99
	}
	return s.Max
}

// Metrics are the registered k6 metric handles the reporter pushes to.
type Metrics struct {
	Counters    [CounterKinds]*metrics.Metric
	Totals      [HistKinds][]*metrics.Metric // indexed like TotalStats
	Windows     [HistKinds]*metrics.Metric
	FlowWindows *metrics.Metric // mqtt_flow_latency_1s
	Connections *metrics.Metric
	TargetRate  *metrics.Metric
	Achieved    *metrics.Metric
	Down        *metrics.Metric // mqtt_connections_down
	NoSamples   *metrics.Metric // mqtt_thresholds_without_samples
}
