package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.k6.io/k6/cmd/state"
	"go.k6.io/k6/errext"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
)

// obj is a JSON object of a fixture.
type obj = map[string]any

func segmentOf(i, n int) string {
	frac := func(k int) string {
		switch k {
		case 0:
			return "0"
		case n:
			return "1"
		}
		return fmt.Sprintf("%d/%d", k, n)
	}
	return frac(i-1) + ":" + frac(i)
}

func sequenceOf(n int) string {
	parts := []string{"0"}
	for k := 1; k < n; k++ {
		parts = append(parts, fmt.Sprintf("%d/%d", k, n))
	}
	return strings.Join(append(parts, "1"), ",")
}

// instanceDoc is a finished instance file (segment i of n, 1-based) of a
// passing p2p run with nothing measured; tests set what they need.
func instanceDoc(runID string, i, n int) obj {
	return obj{
		"schema": InstanceSchema, "run_id": runID, "scenario": "p2p", "broker": "mosquitto",
		"started_at": fmt.Sprintf("2025-01-01T10:00:0%d.000Z", i), "ended_at": fmt.Sprintf("2025-01-01T10:01:0%d.000Z", i),
		"duration_s": 60.0 + float64(i), "passed": true, "client_id_prefix": fmt.Sprintf("abc%d", i),
		"instance": obj{"segment": segmentOf(i, n), "sequence": sequenceOf(n), "index": i - 1, "count": n},
		"parameters": obj{"scenario": "p2p", "qos": 1, "rate": 1000, "results_dir": fmt.Sprintf("/host%d/raw", i),
			"local_address": fmt.Sprintf("127.0.0.%d", i+1)},
		"flows":      []any{obj{"name": "p2p", "publishers": 4, "subscribers": 4, "fanout": 1}},
		"versions":   obj{"k6": "v1.8.1", "extension": "dev"},
		"host":       obj{"hostname": "gen1", "cpus": 2, "clock": obj{"synchronized": true, "max_error_us": 1500, "est_error_us": 200}},
		"generator":  obj{"cpu_user_s": 1.5, "cpu_system_s": 0.5, "max_rss_kb": 1000 * i},
		"thresholds": obj{}, "metrics": obj{}, "counts": obj{}, "latency_ms": obj{}, "histograms": obj{},
		"streams": obj{}, "steps": []any{}, "timeline": []any{}, "outages": []any{},
		"connect": obj{}, "delivery": obj{},
		"diagnosis":    obj{"cause": "none", "text": "Every threshold passed"},
		"rate_verdict": nil, "without_samples": []any{},
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func instancePath(dir, runID string, i, n int) string {
	return filepath.Join(dir, fmt.Sprintf("%s.seg-%d-of-%d.json", runID, i, n))
}

func writeInstance(t *testing.T, dir string, doc obj) {
	t.Helper()
	in := doc["instance"].(obj)
	writeJSON(t, instancePath(dir, doc["run_id"].(string), in["index"].(int)+1, in["count"].(int)), doc)
}

func writeClaim(t *testing.T, dir, runID string, i, n int) {
	t.Helper()
	writeJSON(t, instancePath(dir, runID, i, n), obj{"schema": ClaimSchema, "run_id": runID, "pid": 123,
		"host": "gen9", "claimed_at": "2025-01-01T10:00:00Z"})
}

// histogramOf records latencies (ms) as the extension does (µs).
func histogramOf(t *testing.T, ms ...float64) *hdrhistogram.Histogram {
	t.Helper()
	h := load.NewHistogram()
	for _, v := range ms {
		if err := h.RecordValue(int64(v * 1000)); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func encode(t *testing.T, h *hdrhistogram.Histogram) string {
	t.Helper()
	s, err := load.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// execute runs the subcommand as k6's main does and returns its output
// and the exit code k6 would exit with (root.execute: 0 without error,
// the error's errext.HasExitCode code, else -1).
func execute(t *testing.T, env map[string]string, args ...string) (string, int, error) {
	t.Helper()
	cmd := NewCommand(&state.GlobalState{Env: env})
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	if err == nil {
		return out.String(), 0, nil
	}
	var ec errext.HasExitCode
	if errors.As(err, &ec) {
		return out.String(), int(ec.ExitCode()), err
	}
	return out.String(), -1, err
}

func mustMerge(t *testing.T, dir, runID string) *result.Result {
	t.Helper()
	r, err := Merge(dir, runID)
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	return r
}
