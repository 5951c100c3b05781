package result

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

// The schemas of the files a run leaves in its results directory: a claim
// while it runs (or after it died), an instance's part of a segmented
// run, and a result (a single process's, or the merge of its instances).
const (
	ResultSchema   = "mqtt-bench/result/v1"
	InstanceSchema = "mqtt-bench/result-instance/v1"
	ClaimSchema    = "mqtt-bench/result-claim/v1"
)

// Result is the result file: what a run's summary writes (a single
// process, or one instance of a segmented run) and what k6 x mqtt-merge
// writes of the instances together: both encode it through Encode, which
// refuses a field this type does not have. Adding a field here, and
// regenerating result.schema.json (scripts/result_schema.py), is all a new
// field takes.
type Result struct {
	Schema         string   `json:"schema"`
	RunID          string   `json:"run_id"`
	Scenario       string   `json:"scenario"`
	Broker         string   `json:"broker"`
	StartedAt      string   `json:"started_at"`
	EndedAt        string   `json:"ended_at"`
	DurationS      *float64 `json:"duration_s"`
	Passed         bool     `json:"passed"`
	Completed      *bool    `json:"completed,omitempty"`        // false: stopped before its planned end
	ClientIDPrefix string   `json:"client_id_prefix,omitempty"` // a process's; a merge's are its instances'
	Instance       *Segment `json:"instance,omitempty"`         // the process's execution segment

	Parameters map[string]any   `json:"parameters"`
	Flows      []map[string]any `json:"flows"`
	Versions   json.RawMessage  `json:"versions"`
	Host       json.RawMessage  `json:"host"`
	// The k6 process's own CPU seconds and peak RSS (a merge: summed).
	Generator map[string]any `json:"generator"`
	// The impaired network path between generator and broker, when there
	// was one (scripts/bench.sh --impair): the profile and every toxic as
	// Toxiproxy held them (scripts/impair.py's record).
	Network json.RawMessage `json:"network,omitempty"`

	Thresholds map[string]bool `json:"thresholds"`
	// k6's own values of every metric with thresholds, for a merge to
	// judge them again over all instances.
	Metrics   map[string]Metric     `json:"metrics,omitempty"`
	Counts    map[string]float64    `json:"counts"`
	LatencyMs map[string]load.Stats `json:"latency_ms"`
	// Each group's connect() by role and flow (sub_p2p, pub_p2p).
	Connect  map[string]map[string]any `json:"connect,omitempty"`
	Delivery map[string]map[string]any `json:"delivery"`
	Steps    []map[string]any          `json:"steps"`
	// Windows in which connections were down (first lost → all back).
	Outages        []map[string]any `json:"outages"`
	WithoutSamples []string         `json:"without_samples"`

	RateVerdict *string           `json:"rate_verdict"`
	Ordering    verdict.Ordering  `json:"ordering"`
	Diagnosis   verdict.Diagnosis `json:"diagnosis"`
	Policy      verdict.Policy    `json:"policy"`

	Timeline []map[string]any `json:"timeline"`
	// Whole, so that instances' files merge exactly: every latency
	// histogram (HdrHistogram's own encoding) and the per-stream counts.
	Histograms map[string]string `json:"histograms"`
	Streams    json.RawMessage   `json:"streams,omitempty"`

	// What only a merge has, inline in the file.
	*Merge
}

// Segment is a process's execution segment of the test.
type Segment struct {
	Segment  string `json:"segment"`
	Sequence string `json:"sequence"`
	Index    int    `json:"index"`
	Count    int    `json:"count"`
}

// Metric is k6's end-of-test summary of one metric.
type Metric struct {
	Type   string             `json:"type"`
	Values map[string]float64 `json:"values"`
}

// Merge is what only a merged result has: its instances, the ones
// missing, its hosts' clocks and the thresholds judged on merged values.
type Merge struct {
	Incomplete        bool                      `json:"incomplete"`
	MissingInstances  []string                  `json:"missing_instances"`
	InstancesExpected int                       `json:"instances_expected"`
	Instances         []map[string]any          `json:"instances"`
	Hosts             []string                  `json:"hosts"`
	Clock             map[string]any            `json:"clock"`
	StartedAtSpreadS  float64                   `json:"started_at_spread_s"`
	MergedAt          string                    `json:"merged_at"`
	ThresholdValues   map[string]map[string]any `json:"threshold_values"`
	ThresholdsNote    string                    `json:"thresholds_note,omitempty"`
	Notes             []string                  `json:"notes,omitempty"`
	TimelineNote      string                    `json:"timeline_note"`
}

// Decode reads a result document (any Go or JS value of its shape) into
// the type, refusing any field the type does not have: a writer that
// drifts from the document fails at once, not in a reader.
func Decode(v any) (*Result, error) {
	raw, ok := v.([]byte)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var r Result
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("the result document does not match its type (k6/extension/result): %w", err)
	}
	return &r, nil
}

// Judge sets the result's verdicts by the verdict package's rules: its rate
// verdict, ordering, diagnosis and policy (a merge sets its own diagnosis
// after, from its instances').
func (r *Result) Judge() error {
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	var d verdict.Doc
	if err := json.Unmarshal(raw, &d); err != nil {
		return err
	}
	r.RateVerdict = verdict.RateVerdict(&d)
	r.Ordering = verdict.Order(&d)
	r.Diagnosis = verdict.Diagnose(&d)
	r.Policy = verdict.Current()
	return nil
}

// Encode is the file's text.
func (r *Result) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
