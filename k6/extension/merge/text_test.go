package merge

import (
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
)

// A run's summary and the merge's of that run in one instance, on the same
// counts, read the same line for line: one renderer (result.Text) writes
// both. Only the diagnosis may differ, being the verdict package's merged
// one (verdict.DiagnoseMerged), which names the instances it covers.
func TestSingleRunAndMergeOfOneInstanceReadTheSame(t *testing.T) {
	h := load.NewHistogram()
	for i := int64(1); i <= 1000; i++ {
		_ = h.RecordValue(i * 10) // 10 µs .. 10 ms: the extension's histograms count µs
	}
	doc := passingInstance("one", 1, 1)
	doc["completed"] = true
	doc["counts"] = obj{load.MetricConnects: 8, load.MetricPublishes: 1000, load.MetricReceives: 1000,
		load.MetricDisconnects: 1, load.MetricReconnectAttempts: 2, load.MetricReconnects: 1}
	doc["thresholds"] = obj{"mqtt_connects count>=1": true, "mqtt_lost count==0": true}
	doc["metrics"] = obj{"mqtt_connects": obj{"type": "counter", "values": obj{"count": 8}},
		"mqtt_lost": obj{"type": "counter", "values": obj{"count": 0}}}
	doc["histograms"] = obj{"mqtt_latency": encode(t, h)}
	doc["latency_ms"] = latencySummaries(map[string]*hdrhistogram.Histogram{"mqtt_latency": h})
	doc["steps"] = []any{obj{"rate": 1000, "duration": "1s", "payload": 16, "target_rate": 1000, "achieved_rate": 999.5,
		"sent": 1000, "start": 1, "end": 2}}
	dir := t.TempDir()
	writeInstance(t, dir, doc)
	merged := mustMerge(t, dir, "one")

	doc["schema"] = result.ResultSchema
	single, err := result.Decode(doc)
	if err == nil {
		err = single.Judge()
	}
	if err != nil {
		t.Fatal(err)
	}
	a := strings.Split(result.Text(single, "raw/one.json"), "\n")
	b := strings.Split(result.Text(merged, "raw/one.json"), "\n")
	if len(a) != len(b) {
		t.Fatalf("a run's summary has %d lines, the merge's %d:\n%s\n---\n%s", len(a), len(b),
			strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	for i := range a {
		if a[i] != b[i] && !strings.HasPrefix(a[i], "  diagnosis ") {
			t.Errorf("line %d:\n run   %s\n merge %s", i, a[i], b[i])
		}
	}
	if !strings.Contains(a[1], "PASSED (run one)") || !strings.Contains(strings.Join(a, "\n"), "  latency ms    avg ") {
		t.Errorf("summary:\n%s", strings.Join(a, "\n"))
	}
	t.Logf("\n%s", strings.Join(b, "\n"))
}

// A composite's parts each have their line, in the scenario's order and
// with the run's own verdict of them (verdict.Flows), alike in a run's
// summary and in the merge's of that run in one instance.
func TestPartLinesReadTheSameInARunAndItsMerge(t *testing.T) {
	doc := passingInstance("parts", 1, 1)
	doc["completed"] = true
	doc["flows"] = []any{obj{"name": "background", "publishers": 0, "subscribers": 2},
		obj{"name": "p2p", "publishers": 1, "subscribers": 1, "fanout": 1}}
	doc["connect"] = obj{"sub_background": obj{"connected": 2}, "sub_p2p": obj{"connected": 1}, "pub_p2p": obj{"connected": 1}}
	dir := t.TempDir()
	writeInstance(t, dir, doc)
	merged := mustMerge(t, dir, "parts")

	doc["schema"] = result.ResultSchema
	single, err := result.Decode(doc)
	if err == nil {
		err = single.Judge()
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*result.Result{single, merged} {
		var parts []string
		for _, l := range strings.Split(result.Text(r, "raw/parts.json"), "\n") {
			if strings.HasPrefix(l, "  part ") {
				parts = append(parts, l)
			}
		}
		want := []string{"  part background ok: 2 connections", "  part p2p        FAIL: 1 publisher, 1 subscriber; nothing sent"}
		if strings.Join(parts, "\n") != strings.Join(want, "\n") {
			t.Errorf("part lines:\n%s\nwant\n%s", strings.Join(parts, "\n"), strings.Join(want, "\n"))
		}
	}
}

// A broker's known deviation (BROKER_DEVIATIONS) travels with its
// instances: the merge marks the merged ordering violation known, and its
// summary names the broker's listing as a run's does.
func TestAMergeNamesAnOrderingViolationTheBrokerListsAsKnown(t *testing.T) {
	dir := t.TempDir()
	for i := 1; i <= 2; i++ {
		doc := passingInstance("dev", i, 2)
		doc["broker"], doc["broker_deviations"] = "nanomq", []any{"ordering"}
		doc["counts"] = obj{load.MetricConnects: 1, load.MetricReceives: 500, "mqtt_out_of_order": 2}
		writeInstance(t, dir, doc)
	}
	merged := mustMerge(t, dir, "dev")
	text := result.Text(merged, "raw/dev.json")
	if !merged.Ordering.Known || !strings.Contains(merged.Ordering.Text, "4 of 1000 deliveries") ||
		!strings.Contains(text, "  known         nanomq lists this among its known deviations") {
		t.Fatalf("%+v\n%s", merged.Ordering, text)
	}
}
