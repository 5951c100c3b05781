package merge

import (
	"strings"
	"testing"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
)

func TestThresholdExpressionsParseAndCompare(t *testing.T) {
	cases := []struct {
		key          string
		metric, stat string
		tags         string
		value        float64
		want         bool
	}{
		{"mqtt_lost count==0", "mqtt_lost", "count", "", 0, true},
		{"mqtt_lost count==0", "mqtt_lost", "count", "", 1, false},
		{"mqtt_receives count>0", "mqtt_receives", "count", "", 0, false},
		{"mqtt_connects count>=12", "mqtt_connects", "count", "", 12, true},
		{"mqtt_connects count>=12", "mqtt_connects", "count", "", 11, false},
		{"mqtt_latency_p99 value<100", "mqtt_latency_p99", "value", "", 99.999, true},
		{"mqtt_latency_p99 value<100", "mqtt_latency_p99", "value", "", 100, false},
		{"mqtt_rate_achieved_ratio value>=0.95", "mqtt_rate_achieved_ratio", "value", "", 0.95, true},
		{"errors rate<0.01", "errors", "rate", "", 0.01, false},
		{"lat p(99)<50", "lat", "p(99)", "", 49.5, true},
		{"lat p(99.9)<=50", "lat", "p(99.9)", "", 50, true},
		{"lat avg<10", "lat", "avg", "", 10.5, false},
		{"x value!=3", "x", "value", "", 3, false},
		{"x value===3", "x", "value", "", 3, true},
		{"mqtt_connections{role:pub} value>0", "mqtt_connections", "value", "{role:pub}", 1, true},
	}
	for _, c := range cases {
		th := parseThreshold(c.key)
		if !th.parsed || th.metric != c.metric || th.stat != c.stat || th.tags != c.tags {
			t.Errorf("%q parsed as %+v", c.key, th)
			continue
		}
		if got := compare(c.value, th.op, th.bound); got != c.want {
			t.Errorf("%q on %v = %v, want %v", c.key, c.value, got, c.want)
		}
	}
	if th := parseThreshold("mqtt_lost count=0"); th.parsed || th.metric != "mqtt_lost" {
		t.Errorf("a malformed expression parsed: %+v", th)
	}
}

// An instance that ran no subscriber fails its own verdict (nothing
// received, no latency sample); the run it is part of received and
// measured plenty: the merge judges the merged values.
func TestMergeJudgesMergedValuesNotTheInstancesVerdicts(t *testing.T) {
	dir := t.TempDir()
	pubOnly := instanceDoc("r", 1, 2)
	pubOnly["passed"] = false
	pubOnly["thresholds"] = obj{"mqtt_receives count>0": false, "mqtt_latency_p99 value<100": false,
		"mqtt_thresholds_without_samples count==0": false}
	pubOnly["metrics"] = obj{"mqtt_receives": obj{"type": "counter", "values": obj{"count": 0, "rate": 0}},
		"mqtt_thresholds_without_samples": obj{"type": "counter", "values": obj{"count": 1}}}
	pubOnly["counts"] = obj{"mqtt_receives": 0, "mqtt_publishes": 1000}
	pubOnly["without_samples"] = []any{"mqtt_latency_p99", "mqtt_receives"}
	pubOnly["diagnosis"] = obj{"cause": "no_data", "text": "Thresholds on mqtt_latency_p99 had no samples"}
	writeInstance(t, dir, pubOnly)

	subOnly := instanceDoc("r", 2, 2)
	subOnly["thresholds"] = obj{"mqtt_receives count>0": true, "mqtt_latency_p99 value<100": true,
		"mqtt_thresholds_without_samples count==0": true}
	subOnly["metrics"] = obj{"mqtt_receives": obj{"type": "counter", "values": obj{"count": 1000}},
		"mqtt_latency_p99":                obj{"type": "gauge", "values": obj{"value": 9}},
		"mqtt_thresholds_without_samples": obj{"type": "counter", "values": obj{"count": 0}}}
	subOnly["counts"] = obj{"mqtt_receives": 1000}
	subOnly["histograms"] = obj{"mqtt_latency": encode(t, histogramOf(t, 5, 7, 9))}
	writeInstance(t, dir, subOnly)

	r := mustMerge(t, dir, "r")
	if !r.Passed {
		t.Fatalf("merged verdict failed: %v (%s)", r.Merge.ThresholdValues, r.Diagnosis.Text)
	}
	p99 := load.Summarize(histogramOf(t, 5, 7, 9)).P99
	for key, want := range map[string]float64{"mqtt_receives count>0": 1000, "mqtt_latency_p99 value<100": p99,
		"mqtt_thresholds_without_samples count==0": 0} {
		if tr := r.Merge.ThresholdValues[key]; !tr.OK || tr.Value == nil || *tr.Value != want {
			t.Errorf("%s: %+v, want ok on the merged value %v", key, tr, want)
		}
	}
	if len(r.WithoutSamples) != 0 {
		t.Errorf("without_samples = %v: the run had latency samples", r.WithoutSamples)
	}
	if r.Diagnosis.Cause != "none" || !strings.Contains(r.Diagnosis.Text, "0:1/2") {
		t.Errorf("diagnosis %+v should pass and name the instance that failed alone", r.Diagnosis)
	}
}

// Each instance saw no loss of its own (a stream's publisher ran in the
// other): the merged accounting finds it and fails the run.
func TestMergedLossFailsTheRunAlthoughEveryInstancePassed(t *testing.T) {
	dir := t.TempDir()
	one := instanceDoc("r", 1, 2)
	one["thresholds"] = obj{"mqtt_lost count==0": true}
	one["metrics"] = obj{"mqtt_lost": obj{"type": "counter", "values": obj{"count": 0}}}
	one["counts"] = obj{"mqtt_lost": 0, "mqtt_publishes": 100}
	one["streams"] = obj{"p2p": obj{"publishers": []any{[]any{0, 100, 0}}, "receivers": []any{}}}
	writeInstance(t, dir, one)
	two := instanceDoc("r", 2, 2)
	two["thresholds"] = obj{"mqtt_lost count==0": true}
	two["metrics"] = obj{"mqtt_lost": obj{"type": "counter", "values": obj{"count": 0}}}
	two["counts"] = obj{"mqtt_lost": 0, "mqtt_receives": 99}
	two["streams"] = obj{"p2p": obj{"publishers": []any{}, "receivers": []any{[]any{"0", 0, 99, 0, 0}}}}
	writeInstance(t, dir, two)

	r := mustMerge(t, dir, "r")
	tr := r.Merge.ThresholdValues["mqtt_lost count==0"]
	if r.Passed || tr.OK || tr.Value == nil || *tr.Value != 1 || r.Counts["mqtt_lost"] != 1 {
		t.Fatalf("passed %v, mqtt_lost count==0 %+v, counts.mqtt_lost %v: want a failure on 1 lost",
			r.Passed, tr, r.Counts["mqtt_lost"])
	}
	if r.Diagnosis.Cause != "broker_lost_messages" {
		t.Errorf("diagnosis %+v", r.Diagnosis)
	}
	_, code, err := execute(t, nil, "r", "--dir", dir)
	if code != 99 {
		t.Errorf("exit code %d (%v), want 99", code, err)
	}
}

// Every instance has the same thresholds (k6 fixes them before a script
// knows its segment): the merge judges each as written on the merged
// value, so instances that each stay under a bound can fail it together.
func TestCounterThresholdsAreJudgedAsWrittenOnTheMergedCount(t *testing.T) {
	dir := t.TempDir()
	for i := range 2 {
		d := instanceDoc("r", i+1, 2)
		d["thresholds"] = obj{"mqtt_reconnects count<5": true}
		d["metrics"] = obj{"mqtt_reconnects": obj{"type": "counter", "values": obj{"count": 4}}}
		d["counts"] = obj{"mqtt_reconnects": 4}
		writeInstance(t, dir, d)
	}
	r := mustMerge(t, dir, "r")
	tr, ok := r.Merge.ThresholdValues["mqtt_reconnects count<5"]
	if !ok || len(r.Thresholds) != 1 {
		t.Fatalf("thresholds %v, want mqtt_reconnects count<5 alone", r.Thresholds)
	}
	if tr.OK || r.Passed || *tr.Value != 8 {
		t.Errorf("two instances of 4 reconnects: %+v, passed %v; want 8, failed", tr, r.Passed)
	}
}

// One instance's p99 is over the bound, but it measured few messages: the
// run's p99 is under it.
func TestMergedP99ComesFromTheMergedHistogram(t *testing.T) {
	dir := t.TempDir()
	slow := make([]float64, 100)
	for i := range slow {
		slow[i] = 150
	}
	fast := make([]float64, 100_000)
	for i := range fast {
		fast[i] = 20
	}
	for i, ms := range [][]float64{slow, fast} {
		d := instanceDoc("r", i+1, 2)
		d["thresholds"] = obj{"mqtt_latency_p99 value<100": i == 1}
		d["passed"] = i == 1
		d["metrics"] = obj{"mqtt_latency_p99": obj{"type": "gauge", "values": obj{"value": ms[0]}}}
		d["histograms"] = obj{"mqtt_latency": encode(t, histogramOf(t, ms...))}
		writeInstance(t, dir, d)
	}
	r := mustMerge(t, dir, "r")
	tr := r.Merge.ThresholdValues["mqtt_latency_p99 value<100"]
	if !r.Passed || !tr.OK || *tr.Value >= 100 || r.LatencyMs["pub_to_sub"].Count != 100_100 {
		t.Fatalf("passed %v, %+v, latency %+v", r.Passed, tr, r.LatencyMs["pub_to_sub"])
	}
}

// What the files cannot merge falls back to the instances' verdicts, and
// the result says which; rates and ratios merge exactly.
func TestThresholdsWithoutAMergedValueUseTheInstancesVerdicts(t *testing.T) {
	dir := t.TempDir()
	for i := 1; i <= 2; i++ {
		d := instanceDoc("r", i, 2)
		d["thresholds"] = obj{
			"mqtt_connections{role:pub} value>0":   true,
			"mqtt_connections_down value==0":       i == 1,
			"http_req_duration p(95)<500":          true,
			"http_req_duration max<2000":           true,
			"checks rate>0.99":                     true,
			"mqtt_rate_achieved_ratio value>=0.95": true,
			"mqtt_latency_p99 value<100":           false,
		}
		d["metrics"] = obj{
			"mqtt_connections":         obj{"type": "gauge", "values": obj{"value": 4}},
			"mqtt_connections_down":    obj{"type": "gauge", "values": obj{"value": i - 1}},
			"http_req_duration":        obj{"type": "trend", "values": obj{"p(95)": 100, "max": 1000.0 * float64(i)}},
			"checks":                   obj{"type": "rate", "values": obj{"passes": 992 + 4*i, "fails": 8 - 4*i, "rate": 0}},
			"mqtt_rate_achieved_ratio": obj{"type": "gauge", "values": obj{"value": []float64{0.94, 0.97}[i-1]}},
			"mqtt_latency_p99":         obj{"type": "gauge", "values": obj{"value": 0}},
		}
		d["without_samples"] = []any{"mqtt_latency_p99"}
		writeInstance(t, dir, d)
	}
	r := mustMerge(t, dir, "r")
	want := map[string]struct {
		ok  bool
		how string
		v   float64
	}{
		"mqtt_connections{role:pub} value>0":   {true, JudgedInstances, 0},
		"mqtt_connections_down value==0":       {false, JudgedInstances, 0},
		"http_req_duration p(95)<500":          {true, JudgedInstances, 0},
		"http_req_duration max<2000":           {false, JudgedMerged, 2000},
		"checks rate>0.99":                     {true, JudgedMerged, 1996.0 / 2000},
		"mqtt_rate_achieved_ratio value>=0.95": {false, JudgedMerged, 0.94},
		"mqtt_latency_p99 value<100":           {false, JudgedNoSamples, 0},
	}
	for key, w := range want {
		tr := r.Merge.ThresholdValues[key]
		if tr.OK != w.ok || tr.How != w.how || (w.how == JudgedMerged && (tr.Value == nil || *tr.Value != w.v)) {
			t.Errorf("%s: %+v (value %v), want ok=%v by %s on %v", key, tr, show(tr.Value), w.ok, w.how, w.v)
		}
	}
	for _, key := range []string{"mqtt_connections{role:pub} value>0", "mqtt_connections_down value==0", "http_req_duration p(95)<500"} {
		if !strings.Contains(r.Merge.ThresholdsNote, key) {
			t.Errorf("thresholds_note %q does not name %s", r.Merge.ThresholdsNote, key)
		}
	}
	if strings.Contains(r.Merge.ThresholdsNote, "checks") {
		t.Errorf("thresholds_note names a threshold judged on its merged value: %q", r.Merge.ThresholdsNote)
	}
	if len(r.WithoutSamples) != 1 || r.WithoutSamples[0] != "mqtt_latency_p99" || r.Passed {
		t.Errorf("without_samples %v, passed %v", r.WithoutSamples, r.Passed)
	}
}

func itoa(n int) string { return show(n) }
