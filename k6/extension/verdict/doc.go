package verdict

import "strings"

// Doc is what the verdicts read of a result document: the single-run
// result the extension's summary assembles, or a merged one.
type Doc struct {
	Broker string `json:"broker"`
	// The verdicts the broker's own facts list as its known deviations
	// from the spec (brokers/<name>/broker.toml [[deviations]] verdict), as
	// the run was told them (BROKER_DEVIATIONS).
	BrokerDeviations []string            `json:"broker_deviations"`
	Counts           map[string]float64  `json:"counts"`
	LatencyMs        map[string]Latency  `json:"latency_ms"`
	Steps            []Step              `json:"steps"`
	Timeline         []Second            `json:"timeline"`
	Outages          []Outage            `json:"outages"`
	Generator        *Generator          `json:"generator"`
	Host             *Host               `json:"host"`
	DurationS        *float64            `json:"duration_s"`
	Connect          map[string]*Connect `json:"connect"`
	Flows            []Flow              `json:"flows"`
	Parameters       Parameters          `json:"parameters"`
	Thresholds       map[string]bool     `json:"thresholds"`
	Completed        *bool               `json:"completed"`
	WithoutSamples   []string            `json:"without_samples"`
	Passed           bool                `json:"passed"`
}

// Latency is one latency summary (ms).
type Latency struct {
	Count float64 `json:"count"`
	P99   float64 `json:"p99"`
}

// Step is one publish step as the run recorded it.
type Step struct {
	Start        float64 `json:"start"`
	End          float64 `json:"end"`
	TargetRate   float64 `json:"target_rate"`
	AchievedRate float64 `json:"achieved_rate"`
	MissedWindow float64 `json:"missed_window"`
	WindowFull   float64 `json:"window_full"`
}

// Outage is a window in which connections were down.
type Outage struct {
	EndMs     *float64 `json:"end_ms"`
	DurationS float64  `json:"duration_s"`
	MaxDown   float64  `json:"max_down"`
}

// Generator is the k6 process's own CPU.
type Generator struct {
	CPUUserS   *float64 `json:"cpu_user_s"`
	CPUSystemS float64  `json:"cpu_system_s"`
	// Its cgroup's CPU quota periods in which it ran, and those in which
	// the quota throttled it (absent: no quota to read).
	CPUQuotaPeriods   float64 `json:"cpu_quota_periods"`
	CPUQuotaThrottled float64 `json:"cpu_quota_throttled"`
}

// Host is the generator's host.
type Host struct {
	CPUs float64 `json:"cpus"`
}

// Connect is a group's connect() note: its error if it rejected.
type Connect struct {
	Error      string `json:"error"`
	FirstError string `json:"first_error"`
}

// Flow is one flow of the scenario.
type Flow struct {
	Publishers  float64 `json:"publishers"`
	Subscribers float64 `json:"subscribers"`
	Fanout      float64 `json:"fanout"`
	SubTopics   any     `json:"subTopics"`
}

// Parameters are the run's parameters the verdicts read.
type Parameters struct {
	QoS   float64  `json:"qos"`
	P99Ms *float64 `json:"p99_ms"`
}

// shared says whether the flow's subscribers share a subscription.
func (f Flow) shared() bool {
	switch t := f.SubTopics.(type) {
	case string:
		return strings.HasPrefix(t, "$share/")
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && strings.HasPrefix(s, "$share/") {
				return true
			}
		}
	}
	return false
}

func (d *Doc) count(name string) float64 { return d.Counts[name] }
