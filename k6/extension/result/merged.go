package result

import (
	"encoding/json"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

// Merge is what only a merged result has, under its own key: its
// instances, the ones missing, its hosts' clocks and the thresholds judged
// on merged values.
type Merge struct {
	Incomplete        bool                       `json:"incomplete"`
	MissingInstances  []string                   `json:"missing_instances"`
	InstancesExpected int                        `json:"instances_expected"`
	Instances         []Instance                 `json:"instances"`
	Hosts             []string                   `json:"hosts"`
	Clock             Clock                      `json:"clock"`
	StartedAtSpreadS  float64                    `json:"started_at_spread_s"`
	MergedAt          string                     `json:"merged_at"`
	ThresholdValues   map[string]ThresholdResult `json:"threshold_values"`
	ThresholdsNote    string                     `json:"thresholds_note,omitempty"`
	Notes             []string                   `json:"notes,omitempty"`
	TimelineNote      string                     `json:"timeline_note"`
}

// Instance is what a merged result keeps of each instance's own file.
type Instance struct {
	File           string             `json:"file"`
	Segment        string             `json:"segment"`
	Index          int                `json:"index"`
	Hostname       string             `json:"hostname"`
	Clock          *ClockInfo         `json:"clock,omitempty"`
	ClientIDPrefix string             `json:"client_id_prefix,omitempty"`
	StartedAt      string             `json:"started_at"`
	EndedAt        string             `json:"ended_at"`
	DurationS      *float64           `json:"duration_s"`
	Passed         bool               `json:"passed"`
	Generator      map[string]any     `json:"generator"`
	Diagnosis      *verdict.Diagnosis `json:"diagnosis"`
}

// Clock says how far pub-to-sub latency can be trusted across hosts.
type Clock struct {
	Hosts    int                   `json:"hosts"`
	SkewRisk bool                  `json:"skew_risk"`
	Text     string                `json:"text"`
	ByHost   map[string]*ClockInfo `json:"by_host,omitempty"`
}

// ClockInfo is how well a generator host's clock was synchronized when its
// instance ended (absent when the host could not tell).
type ClockInfo struct {
	Synchronized bool     `json:"synchronized"`
	MaxErrorUs   *float64 `json:"max_error_us,omitempty"`
	EstErrorUs   *float64 `json:"est_error_us,omitempty"`
}

// HostInfo is what the merge reads of a result's host: which host, which
// kernel (so which clock), and how well its clock was synchronized.
type HostInfo struct {
	Hostname string     `json:"hostname"`
	Clock    *ClockInfo `json:"clock"`
	// BootID names the running kernel, so its clock: containers on one
	// host have hostnames of their own and one clock.
	BootID string `json:"boot_id"`
}

// HostInfo reads the result's host.
func (r *Result) HostInfo() (HostInfo, error) {
	var h HostInfo
	if len(r.Host) == 0 {
		return h, nil
	}
	return h, json.Unmarshal(r.Host, &h)
}

// How a merged threshold was judged.
const (
	JudgedMerged    = "merged value"
	JudgedInstances = "instances' verdicts"
	JudgedNoSamples = "no samples"
)

// ThresholdResult is one threshold judged on the merged run.
type ThresholdResult struct {
	OK bool `json:"ok"`
	// Value is the merged value the expression was evaluated on; nil when
	// there was none (no samples, or judged by the instances' verdicts).
	Value *float64 `json:"value"`
	How   string   `json:"how"`
}
