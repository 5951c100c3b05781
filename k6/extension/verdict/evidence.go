package verdict

import (
	"math"
	"strings"
)

// Evidence is the figures a cause is judged on, as the result records them.
type Evidence struct {
	Connects          float64 `json:"connects"`
	ConnectFailures   float64 `json:"connect_failures"`
	FirstConnectError *string `json:"first_connect_error"`
	Disconnects       float64 `json:"disconnects"`
	// Of those, the ones the generator made: the broker read nothing of a
	// write for 2 s, so the connection was closed and redialled here.
	WriteStalls       float64 `json:"write_stalls"`
	ReconnectAttempts float64 `json:"reconnect_attempts"`
	Reconnects        float64 `json:"reconnects"`
	Outages           int     `json:"outages"`
	OutageS           float64 `json:"outage_s"`
	OutageMaxDown     float64 `json:"outage_max_down"`
	OutageUnrecovered int     `json:"outage_unrecovered"`
	Publishes         float64 `json:"publishes"`
	PublishFailures   float64 `json:"publish_failures"`
	Rejected          float64 `json:"rejected"`
	Missed            float64 `json:"missed"`
	MissedWindow      float64 `json:"missed_window"`
	// The first connection error that hit the generator's own open-files
	// limit (OpenFiles), if one did.
	OpenFilesError *string `json:"open_files_error"`
	// A group's connect() that the broker turned down with its connections
	// open (a lower QoS granted, no shared subscriptions).
	Refusal           *string  `json:"refusal"`
	SubscribeFailures float64  `json:"subscribe_failures"`
	ProtocolErrors    float64  `json:"protocol_errors"`
	Receives          float64  `json:"receives"`
	Lost              float64  `json:"lost"`
	OutOfOrder        float64  `json:"out_of_order"`
	ExpectsDelivery   bool     `json:"expects_delivery"`
	WindowFull        float64  `json:"window_full"`
	AchievedRatio     *float64 `json:"achieved_ratio"`
	LatencyP99Ms      *float64 `json:"latency_p99_ms"`
	PubackP99Ms       *float64 `json:"puback_p99_ms"`
	SendLagP99Ms      *float64 `json:"send_lag_p99_ms"`
	P99BoundMs        *float64 `json:"p99_bound_ms"`
	GeneratorCPUS     *float64 `json:"generator_cpu_s"`
	WallS             *float64 `json:"wall_s"`
	Cores             *float64 `json:"cores"`
	// The generator's CPU as a share of all the host's cores over the run.
	GeneratorCPUShare *float64 `json:"generator_cpu_share"`
	// The share of its cgroup's CPU quota periods in which the quota held
	// the generator back (nil: it ran in none).
	GeneratorThrottledShare *float64 `json:"generator_throttled_share"`
	WithoutSamples          []string `json:"without_samples"`
}

func round(x float64, digits int) *float64 {
	p := math.Pow(10, float64(digits))
	v := math.Round(x*p) / p
	return &v
}

func p99(d *Doc, kind string) *float64 {
	if l, ok := d.LatencyMs[kind]; ok && l.Count > 0 {
		return round(l.P99, 3)
	}
	return nil
}

// Gather collects the evidence of a result document.
func Gather(d *Doc) Evidence {
	e := Evidence{
		Connects: d.count("mqtt_connects"), ConnectFailures: d.count("mqtt_connect_failures"),
		Disconnects: d.count("mqtt_disconnects"), WriteStalls: d.count("mqtt_write_stalls"),
		ReconnectAttempts: d.count("mqtt_reconnect_attempts"), Reconnects: d.count("mqtt_reconnects"),
		Outages: len(d.Outages), Publishes: d.count("mqtt_publishes"), PublishFailures: d.count("mqtt_publish_failures"),
		Rejected: d.count("mqtt_publish_rejected"), Missed: d.count("mqtt_missed_sends"),
		SubscribeFailures: d.count("mqtt_subscribe_failures"), ProtocolErrors: d.count("mqtt_protocol_errors"),
		Receives: d.count("mqtt_receives"), Lost: d.count("mqtt_lost"), OutOfOrder: d.count("mqtt_out_of_order"),
		LatencyP99Ms: p99(d, "pub_to_sub"), PubackP99Ms: p99(d, "puback"), SendLagP99Ms: p99(d, "send_lag"),
		P99BoundMs: d.Parameters.P99Ms, WithoutSamples: d.WithoutSamples,
	}
	if e.WithoutSamples == nil {
		e.WithoutSamples = []string{}
	}
	var outageS float64
	for _, o := range d.Outages {
		outageS += o.DurationS
		e.OutageMaxDown = max(e.OutageMaxDown, o.MaxDown)
		if o.EndMs == nil {
			e.OutageUnrecovered++
		}
	}
	e.OutageS = *round(outageS, 1)
	// connect notes in a stable order: the first error of any.
	for _, k := range sortedKeys(d.Connect) {
		n := d.Connect[k]
		if n == nil {
			continue
		}
		if e.FirstConnectError == nil {
			if n.FirstError != "" {
				e.FirstConnectError = &n.FirstError
			} else if n.Error != "" {
				e.FirstConnectError = &n.Error
			}
		}
		for _, msg := range []string{n.FirstError, n.Error} {
			if e.OpenFilesError == nil && strings.Contains(msg, OpenFiles) {
				e.OpenFilesError = &msg
			}
		}
		if e.Refusal == nil && n.Error != "" && e.Connects > 0 {
			e.Refusal = &n.Error
		}
	}
	for _, f := range d.Flows {
		e.ExpectsDelivery = e.ExpectsDelivery || (f.Fanout > 0 && f.Subscribers > 0)
	}
	ratio := math.Inf(1)
	for _, s := range d.Steps {
		e.MissedWindow += s.MissedWindow
		e.WindowFull += s.WindowFull
		if s.TargetRate > 0 {
			ratio = min(ratio, s.AchievedRate/s.TargetRate)
		}
	}
	if !math.IsInf(ratio, 1) {
		e.AchievedRatio = round(ratio, 3)
	}
	if d.Host != nil && d.Host.CPUs > 0 {
		e.Cores = &d.Host.CPUs
	}
	if d.DurationS != nil && *d.DurationS > 0 {
		e.WallS = round(*d.DurationS, 1)
	}
	if g := d.Generator; g != nil && g.CPUUserS != nil {
		cpu := *g.CPUUserS + g.CPUSystemS
		e.GeneratorCPUS = round(cpu, 1)
		if e.WallS != nil && e.Cores != nil {
			e.GeneratorCPUShare = round(cpu / *d.DurationS / *e.Cores, 3)
		}
		if g.CPUQuotaPeriods > 0 {
			e.GeneratorThrottledShare = round(g.CPUQuotaThrottled/g.CPUQuotaPeriods, 3)
		}
	}
	return e
}
