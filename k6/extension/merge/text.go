package merge

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
)

// num3 shows a figure as k6/lib/summary.js does: 3 decimals below 10.
func num3(x float64) string {
	if x == float64(int64(x)) {
		return strconv.FormatInt(int64(x), 10)
	}
	if x < 10 {
		return strconv.FormatFloat(x, 'f', 3, 64)
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Text is the merged result's summary, in the spirit of k6's end-of-test
// summary and k6/lib/summary.js; path is where the result was written.
func Text(r *result.Result, path string) string {
	m := r.Merge
	c := func(k string) string { return num3(r.Counts[k]) }
	verdict := "PASSED"
	if !r.Passed {
		verdict = "FAILED"
	}
	lines := []string{
		"",
		fmt.Sprintf("mqtt-bench %s on %s: %s (run %s, %d of %d instances on %s)",
			r.Scenario, r.Broker, verdict, r.RunID, len(m.Instances), m.InstancesExpected, plural(len(m.Hosts), "host")),
		fmt.Sprintf("  connections   %s ok, %s failed; %s disconnects, %s reconnects",
			c(load.MetricConnects), c(load.MetricConnectFailures), c(load.MetricDisconnects), c(load.MetricReconnects)),
		fmt.Sprintf("  messages      %s published, %s received, %s lost, %s duplicates, %s out of order, %s failed",
			c(load.MetricPublishes), c(load.MetricReceives), c(load.MetricLost), c(load.MetricDuplicates),
			c(load.MetricOutOfOrder), c(load.MetricPublishFailures)),
	}
	if r.Counts[load.MetricPublishRejected] > 0 {
		lines = append(lines, fmt.Sprintf("  rejected      %s publishes refused by the broker (not expected at the subscribers)",
			c(load.MetricPublishRejected)))
	}
	if r.RateVerdict != nil {
		lines = append(lines, "  rate          "+*r.RateVerdict)
	}
	for _, name := range result.SortedKeys(r.Delivery) {
		d := r.Delivery[name]
		exp := "not checked"
		if d.Expected != nil {
			exp = strconv.FormatInt(*d.Expected, 10)
		}
		lines = append(lines, fmt.Sprintf("  flow %-8s %d streams: expected %s, received %d, lost %d",
			result.FlowLabel(name), d.Streams, exp, d.Unique, d.Lost))
	}
	// A composite's parts, each with the merged run's own verdict of it.
	for _, name := range result.SortedKeys(r.FlowVerdicts) {
		if v := r.FlowVerdicts[name]; len(r.Flows) > 1 {
			state := "ok"
			if !v.Passed {
				state = "FAIL"
			}
			lines = append(lines, fmt.Sprintf("  part %-8s %s: %s%s", name, state, v.Text, failures(v.Failures)))
		}
	}
	if l := r.LatencyMs["pub_to_sub"]; l.Count > 0 {
		lines = append(lines, fmt.Sprintf("  latency ms    avg %s  p50 %s  p90 %s  p99 %s  p99.99 %s  max %s  (%d samples)",
			num3(l.Avg), num3(l.P50), num3(l.P90), num3(l.P99), num3(l.P9999), num3(l.Max), l.Count))
	}
	if l := r.LatencyMs["pub_to_sub_from_intended"]; l.Count > 0 {
		lines = append(lines, fmt.Sprintf("  from intended avg %s  p50 %s  p90 %s  p99 %s  p99.99 %s  max %s",
			num3(l.Avg), num3(l.P50), num3(l.P90), num3(l.P99), num3(l.P9999), num3(l.Max)))
	}
	if l := r.LatencyMs["reconnect"]; l.Count > 0 {
		lines = append(lines, fmt.Sprintf("  reconnect ms  p50 %s  p99 %s  max %s  (%d reconnects, each from its connection's drop to its CONNACK)",
			num3(l.P50), num3(l.P99), num3(l.Max), l.Count))
	}
	for _, k := range result.SortedKeys(m.ThresholdValues) {
		t := m.ThresholdValues[k]
		mark := "ok  "
		if !t.OK {
			mark = "FAIL"
		}
		how := ""
		switch {
		case t.Value != nil:
			how = " (merged: " + num3(*t.Value) + ")"
		case t.How != JudgedMerged:
			how = " (" + t.How + ")"
		}
		lines = append(lines, fmt.Sprintf("  %s          %s%s", mark, k, how))
	}
	for _, m := range m.MissingInstances {
		lines = append(lines, "  missing       "+m)
	}
	for _, in := range m.Instances {
		v := "passed"
		if !in.Passed {
			v = "failed"
		}
		lines = append(lines, fmt.Sprintf("  instance      %s on %s: %s on its own", in.Segment, in.Hostname, v))
	}
	if m.Clock.SkewRisk {
		lines = append(lines, "  clock skew    "+m.Clock.Text)
	}
	if m.StartedAtSpreadS >= 1 {
		lines = append(lines, fmt.Sprintf("  start spread  the instances started up to %.1f s apart", m.StartedAtSpreadS))
	}
	for _, n := range m.Notes {
		lines = append(lines, "  note          "+n)
	}
	if m.ThresholdsNote != "" {
		lines = append(lines, "  note          thresholds "+m.ThresholdsNote)
	}
	lines = append(lines, fmt.Sprintf("  diagnosis     %s: %s", r.Diagnosis.Cause, r.Diagnosis.Text))
	lines = append(lines, "  result        "+path, "")
	return strings.Join(lines, "\n")
}

// failures follows a part's text with why it failed, if it did.
func failures(why []string) string {
	if len(why) == 0 {
		return ""
	}
	return "; " + strings.Join(why, "; ")
}
