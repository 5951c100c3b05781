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
// v2: merge-only facts under merge, one delivery shape.
const (
	ResultSchema   = "mqtt-bench/result/v2"
	InstanceSchema = "mqtt-bench/result-instance/v2"
	ClaimSchema    = "mqtt-bench/result-claim/v1"
)

// Result is the result file: what a run's summary writes (a single
// process, or one instance of a segmented run) and what k6 x mqtt-merge
// writes of the instances together: both encode it through Encode, which
// refuses a field this type does not have. Adding a field here, and
// regenerating result.schema.json (mqttbench/generated/result_schema.py), is all a new
// field takes.
type Result struct {
	Schema   string `json:"schema"`
	RunID    string `json:"run_id"`
	Scenario string `json:"scenario"`
	Broker   string `json:"broker"`
	// The verdicts the broker's facts list as its known deviations from
	// the spec (brokers/<name>/broker.toml [[deviations]], passed as
	// BROKER_DEVIATIONS by the stack that runs k6): a verdict among them
	// that this run shows is marked known (Ordering.Known).
	BrokerDeviations []string `json:"broker_deviations,omitempty"`
	StartedAt        string   `json:"started_at"`
	EndedAt          string   `json:"ended_at"`
	DurationS        *float64 `json:"duration_s"`
	Passed           bool     `json:"passed"`
	Completed        *bool    `json:"completed,omitempty"`        // false: stopped before its planned end
	ClientIDPrefix   string   `json:"client_id_prefix,omitempty"` // a process's; a merge's are its instances'
	Instance         *Segment `json:"instance,omitempty"`         // the process's execution segment

	Parameters map[string]any   `json:"parameters"`
	Flows      []map[string]any `json:"flows"`
	Versions   json.RawMessage  `json:"versions"`
	Host       json.RawMessage  `json:"host"`
	// The k6 process's own CPU seconds and peak RSS (a merge: summed).
	Generator map[string]any `json:"generator"`
	// The impaired network path between generator and broker, when there
	// was one (scripts/bench.sh --impair): the profile and every toxic as
	// Toxiproxy held them (mqttbench/stack/impair.py's record).
	Network json.RawMessage `json:"network,omitempty"`

	Thresholds map[string]bool `json:"thresholds"`
	// k6's own values of every metric with thresholds, for a merge to
	// judge them again over all instances.
	Metrics   map[string]Metric     `json:"metrics,omitempty"`
	Counts    map[string]float64    `json:"counts"`
	LatencyMs map[string]load.Stats `json:"latency_ms"`
	// Each group's connect() by role and flow (sub_p2p, pub_p2p).
	Connect map[string]map[string]any `json:"connect,omitempty"`
	// Each flow's delivery: the streams accounted (Account) and what its
	// subscriber groups saw.
	Delivery map[string]FlowDelivery `json:"delivery"`
	Steps    []map[string]any        `json:"steps"`
	// Windows in which connections were down (first lost → all back).
	Outages        []map[string]any `json:"outages"`
	WithoutSamples []string         `json:"without_samples"`

	RateVerdict *string           `json:"rate_verdict"`
	Ordering    verdict.Ordering  `json:"ordering"`
	Diagnosis   verdict.Diagnosis `json:"diagnosis"`
	Policy      verdict.Policy    `json:"policy"`
	// Each flow's own verdict (verdict.Flows): a single run's or a merge's;
	// an instance of several, seeing its share only, has none.
	FlowVerdicts map[string]verdict.FlowVerdict `json:"flow_verdicts,omitempty"`

	Timeline []map[string]any `json:"timeline"`
	// Whole, so that instances' files merge exactly: every latency
	// histogram (HdrHistogram's own encoding) and the per-stream counts.
	Histograms map[string]string      `json:"histograms"`
	Streams    map[string]FlowStreams `json:"streams"`

	// What only a merge (k6 x mqtt-merge) has: its instances, the ones
	// missing, its hosts' clocks and the thresholds judged on merged values.
	Merge *Merge `json:"merge,omitempty"`
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

// Judge completes a single process's result: its delivery accounted from
// its streams (as a merge accounts its instances'; an instance of a
// segmented run keeps its groups' own view), and its verdicts by
// the verdict package's rules: thresholds, passed, each step's reached,
// rate verdict, ordering, diagnosis and policy.
func (r *Result) Judge() error {
	r.Thresholds = verdict.Thresholds(r.Thresholds, r.WithoutSamples)
	r.Passed = verdict.Passed(r.Thresholds, r.Completed != nil && *r.Completed)
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	var d verdict.Doc
	if err := json.Unmarshal(raw, &d); err != nil {
		return err
	}
	// One instance of several sees part of the run's streams: its
	// delivery stays its subscriber groups' own view, and the merge
	// accounts the run.
	if r.Instance == nil || r.Instance.Count <= 1 {
		r.Delivery = Account(FanoutsOf(r.Flows), []map[string]FlowDelivery{r.Delivery}, r.Streams)
		if err := r.JudgeFlows(); err != nil {
			return err
		}
	} else if err := FlowLatencies(r.Delivery, r.Histograms); err != nil {
		return err
	}
	MarkSteps(r.Steps, &d)
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

// MarkSteps writes each step's verdict into it (verdict.Steps: reached,
// passed and the latency p99 it was judged by), so that readers take it
// from the file rather than judge it again. d is the document steps are of.
func MarkSteps(steps []map[string]any, d *verdict.Doc) {
	for i, v := range verdict.Steps(d) {
		steps[i]["reached"], steps[i]["passed"], steps[i]["latency_p99_ms"] = v.Reached, v.Passed, v.LatencyP99Ms
	}
}
