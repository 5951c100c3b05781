package merge

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
)

// heavyTail is a latency sample in µs: mostly a few ms, with a long tail
// up to seconds, and the extension's clamping at both ends.
func heavyTail(rng *rand.Rand) int64 {
	var us float64
	switch r := rng.Float64(); {
	case r < 0.98:
		us = math.Exp(rng.NormFloat64()*0.8 + 8) // ~3 ms
	case r < 0.999:
		us = 1e4 / math.Pow(rng.Float64(), 1.2) // Pareto from 10 ms
	default:
		us = 5e5 + rng.Float64()*5e6 // stalls of 0.5 to 5.5 s
	}
	return max(1, min(int64(us), 3600*1000*1000))
}

// splitSamples records the same samples into one histogram and, each to
// a random one of parts, into parts histograms: one process and a split run.
func splitSamples(t *testing.T, n, parts int, seed uint64) (*hdrhistogram.Histogram, []*hdrhistogram.Histogram) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	whole := load.NewHistogram()
	split := make([]*hdrhistogram.Histogram, parts)
	for i := range split {
		split[i] = load.NewHistogram()
	}
	for range n {
		v := heavyTail(rng)
		if err := whole.RecordValue(v); err != nil {
			t.Fatal(err)
		}
		if err := split[rng.IntN(parts)].RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return whole, split
}

func TestMergedHistogramsEqualOneProcessBucketForBucket(t *testing.T) {
	whole, split := splitSamples(t, 200_000, 4, 42)
	var enc []string
	for _, h := range split {
		if h.TotalCount() == 0 || h.TotalCount() == whole.TotalCount() {
			t.Fatalf("a part holds %d of %d samples: the split is not a split", h.TotalCount(), whole.TotalCount())
		}
		enc = append(enc, encode(t, h))
	}
	merged, err := MergeHistograms(enc...)
	if err != nil {
		t.Fatal(err)
	}
	want, got := whole.Export().Counts, merged.Export().Counts
	if len(want) != len(got) {
		t.Fatalf("merged histogram has %d buckets, one process %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("bucket %d: merged %d samples, one process %d", i, got[i], want[i])
		}
	}
	if w, g := load.Summarize(whole), load.Summarize(merged); w != g {
		t.Fatalf("summaries differ:\n merged      %+v\n one process %+v", g, w)
	}
	if s := load.Summarize(merged); s.Count != 200_000 || s.P9999 <= s.P99 || s.Max < 500 {
		t.Fatalf("the sample set lacks its tail: %+v", s)
	}
}

// The same samples through instance files and Merge: latency_ms and the
// p99 threshold come from the merged histogram, equal to one process's.
func TestMergeOfInstanceFilesGivesOneProcessLatency(t *testing.T) {
	dir := t.TempDir()
	whole, split := splitSamples(t, 200_000, 4, 7)
	intended, _ := splitSamples(t, 1000, 4, 8)
	for i, h := range split {
		doc := instanceDoc("run.1", i+1, 4)
		hists := obj{"mqtt_latency": encode(t, h)}
		if i == 0 {
			hists["mqtt_latency_intended"] = encode(t, intended)
		}
		doc["histograms"] = hists
		doc["thresholds"] = obj{"mqtt_latency_p99 value<100": true}
		doc["metrics"] = obj{"mqtt_latency_p99": obj{"type": "gauge", "values": obj{"value": 1.0}}}
		writeInstance(t, dir, doc)
	}
	r := mustMerge(t, dir, "run.1")
	want := load.Summarize(whole)
	if r.LatencyMs["pub_to_sub"] != want {
		t.Fatalf("latency_ms.pub_to_sub = %+v, one process %+v", r.LatencyMs["pub_to_sub"], want)
	}
	if r.LatencyMs["pub_to_sub_from_intended"] != load.Summarize(intended) {
		t.Fatalf("latency_ms.pub_to_sub_from_intended = %+v", r.LatencyMs["pub_to_sub_from_intended"])
	}
	if r.LatencyMs["puback"] != (load.Stats{}) || r.Histograms["mqtt_puback_duration"] != "" {
		t.Fatal("a kind no instance recorded must stay empty and absent")
	}
	tr := r.Merge.ThresholdValues["mqtt_latency_p99 value<100"]
	if tr.Value == nil || *tr.Value != want.P99 || tr.How != JudgedMerged {
		t.Fatalf("mqtt_latency_p99 judged %+v, want the merged p99 %v", tr, want.P99)
	}
	back, err := MergeHistograms(r.Histograms["mqtt_latency"])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Export().Counts, whole.Export().Counts) {
		t.Fatal("the merged result's encoded histogram is not one process's")
	}
}

func TestHistogramOfOtherBoundsIsRefused(t *testing.T) {
	other := hdrhistogram.New(1, 1000, 2)
	_ = other.RecordValue(5)
	_, err := MergeHistograms(encode(t, other))
	if err == nil || !strings.Contains(err.Error(), "significant digits") {
		t.Fatalf("err = %v, want a refusal naming the bounds", err)
	}
	if _, err := MergeHistograms("not base64"); err == nil {
		t.Fatal("an undecodable histogram was accepted")
	}
}

// Reconnect delays merge like every other latency: the instances' drop →
// CONNACK histograms add up to one process's, in latency_ms.reconnect.
func TestMergedReconnectDelayIsOneProcessHistogram(t *testing.T) {
	dir := t.TempDir()
	whole, split := splitSamples(t, 5000, 3, 11)
	for i, h := range split {
		doc := instanceDoc("run.1", i+1, 3)
		doc["histograms"] = obj{"mqtt_reconnect_duration": encode(t, h)}
		writeInstance(t, dir, doc)
	}
	r := mustMerge(t, dir, "run.1")
	if got, want := r.LatencyMs["reconnect"], load.Summarize(whole); got != want || got.Count != 5000 {
		t.Fatalf("latency_ms.reconnect = %+v, one process %+v", got, want)
	}
	if !strings.Contains(result.Text(r, "x.json"), "reconnect ms  p50 ") {
		t.Fatalf("the merged summary has no reconnect line:\n%s", result.Text(r, "x.json"))
	}
}

// A merged result has a latency_ms kind for every histogram, named by the
// one list (load.LatencyKeys), as a single run's result has.
func TestLatencyKindsCoverEveryHistogram(t *testing.T) {
	got := latencySummaries(nil)
	for _, kind := range load.LatencyKeys() {
		if _, ok := got[kind]; !ok || kind == "" {
			t.Errorf("latency_ms has no kind %q", kind)
		}
	}
	if len(got) != int(load.HistKinds) {
		t.Errorf("%d latency_ms kinds for %d histograms: two histograms share a key", len(got), load.HistKinds)
	}
}
