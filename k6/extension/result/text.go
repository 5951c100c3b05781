package result

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

// Text is the result's summary, which k6 prints at the end of a run and
// k6 x mqtt-merge after a merge: one renderer for a single run, an
// instance of a segmented run and a merged run, so that the same counts
// read the same whichever wrote them. What only a merge knows (its
// instances, hosts, clocks, how it judged each threshold) is added where a
// merge has more than one instance; path is where the result was written.
func Text(r *Result, path string) string {
	s := &summary{r: r}
	s.head()
	s.transport()
	s.verdicts()
	s.latency()
	s.thresholds()
	s.merged()
	s.add("diagnosis", fmt.Sprintf("%s: %s", r.Diagnosis.Cause, r.Diagnosis.Text))
	if in := r.Instance; r.Merge == nil && in != nil && in.Count > 1 {
		s.add("instance", fmt.Sprintf("%d of %d (execution segment %s): the run's verdict is the merge's, once every "+
			"instance is done: k6 x mqtt-merge %s", in.Index+1, in.Count, in.Segment, r.RunID))
	}
	s.add("result", path)
	return strings.Join(append(s.lines, ""), "\n")
}

type summary struct {
	r     *Result
	lines []string
}

// add is one line: its label in a column of 14, then what it says.
func (s *summary) add(label, text string) {
	s.lines = append(s.lines, fmt.Sprintf("  %-13s %s", label, text))
}

// count shows a counter, a whole number however it was read.
func (s *summary) count(name string) string {
	return strconv.FormatFloat(s.r.Counts[name], 'f', -1, 64)
}

// figure shows a measured figure: 3 decimals below 10, else 1.
func figure(x float64) string {
	if x < 10 {
		return strconv.FormatFloat(x, 'f', 3, 64)
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

// value is a threshold's merged value: a count as a whole number, else a figure.
func value(x float64) string {
	if x == float64(int64(x)) {
		return strconv.FormatInt(int64(x), 10)
	}
	return figure(x)
}

// measured is a latency figure, n/a where nothing was measured.
func measured(l load.Stats, x float64) string {
	if l.Count == 0 {
		return "n/a"
	}
	return figure(x)
}

// merging says whether the result is a merge of several instances: a merge
// of one instance reads as that instance's run would.
func (s *summary) merging() bool { return s.r.Merge != nil && s.r.Merge.InstancesExpected > 1 }

func (s *summary) head() {
	r := s.r
	v, of := "PASSED", ""
	if !r.Passed {
		v = "FAILED"
	}
	if s.merging() {
		hosts := fmt.Sprintf("%d hosts", len(r.Merge.Hosts))
		if len(r.Merge.Hosts) == 1 {
			hosts = "1 host"
		}
		of = fmt.Sprintf(", %d of %d instances on %s", len(r.Merge.Instances), r.Merge.InstancesExpected, hosts)
	}
	s.lines = append(s.lines, "", fmt.Sprintf("mqtt-bench %s on %s: %s (run %s%s)", r.Scenario, r.Broker, v, r.RunID, of))
	stalls := ""
	if r.Counts[load.MetricWriteStalls] > 0 {
		stalls = fmt.Sprintf(" (%s closed here: the broker read nothing for 2 s)", s.count(load.MetricWriteStalls))
	}
	s.add("connections", fmt.Sprintf("%s ok, %s failed; %s disconnects, %s reconnect attempts, %s reconnects%s",
		s.count(load.MetricConnects), s.count(load.MetricConnectFailures), s.count(load.MetricDisconnects),
		s.count(load.MetricReconnectAttempts), s.count(load.MetricReconnects), stalls))
	s.add("messages", fmt.Sprintf("%s published, %s received, %s lost, %s duplicates, %s out of order, %s failed",
		s.count(load.MetricPublishes), s.count(load.MetricReceives), s.count(load.MetricLost),
		s.count(load.MetricDuplicates), s.count(load.MetricOutOfOrder), s.count(load.MetricPublishFailures)))
}

// transport: the TLS the groups negotiated, and the handshake rate over
// the groups' ramps (connections opened per second of ramp).
func (s *summary) transport() {
	r := s.r
	tls := ""
	var connected, seconds float64
	for _, key := range SortedKeys(r.Connect) {
		g := r.Connect[key]
		if v, _ := g["tls_version"].(string); v != "" && tls == "" {
			cipher, _ := g["cipher_suite"].(string)
			tls = v + ", " + cipher
		}
		if sec := Number(g["seconds"]); sec > 0 {
			connected, seconds = connected+Number(g["connected"]), seconds+sec
		}
	}
	if tls == "" {
		return
	}
	h, k := r.LatencyMs["tls_handshake"], r.LatencyMs["connack"]
	rate := 0.0
	if seconds > 0 {
		rate = connected / seconds
	}
	s.add("transport", fmt.Sprintf("%s; %d TLS handshakes at %s/s, avg %s ms, p99 %s ms; CONNECT → CONNACK avg %s ms, "+
		"p99 %s ms", tls, h.Count, figure(rate), figure(h.Avg), figure(h.P99), figure(k.Avg), figure(k.P99)))
}

// verdicts: what the broker refused or answered wrongly, the rate and
// ordering verdicts, each step and each flow's delivery.
func (s *summary) verdicts() {
	r := s.r
	if r.Counts[load.MetricProtocolErrors] > 0 {
		s.add("protocol", fmt.Sprintf("%s publishes answered outside the QoS %v flow (mqtt_protocol_errors): the broker "+
			"does not implement this QoS as asked", s.count(load.MetricProtocolErrors), r.Parameters["qos"]))
	}
	if r.Counts[load.MetricPublishRejected] > 0 {
		s.add("rejected", fmt.Sprintf("%s publishes refused by the broker (reason code >= 0x80, mqtt_publish_rejected): "+
			"not published, not expected at the subscribers", s.count(load.MetricPublishRejected)))
	}
	if r.RateVerdict != nil && *r.RateVerdict != "" {
		s.add("rate", *r.RateVerdict)
	}
	if r.Ordering.Text != "" {
		s.add("ordering", r.Ordering.Text)
	}
	if r.Ordering.Known {
		s.add("known", fmt.Sprintf("%s lists this among its known deviations from the spec (brokers/%s/broker.toml "+
			"[[deviations]] %q): the broker's own behaviour, seen before", r.Broker, r.Broker, verdict.DeviationOrdering))
	}
	for _, st := range r.Steps {
		s.add("step", fmt.Sprintf("target %s msg/s, achieved %s msg/s (%v B, %v)", figure(Number(st["target_rate"])),
			figure(Number(st["achieved_rate"])), st["payload"], st["duration"]))
	}
	for _, name := range SortedKeys(r.Delivery) {
		d := r.Delivery[name]
		exp := "not checked"
		if d.Expected != nil {
			exp = strconv.FormatInt(*d.Expected, 10)
		}
		s.add("flow "+FlowLabel(name), fmt.Sprintf("%d streams: expected %s, received %d, lost %d",
			d.Streams, exp, d.Unique, d.Lost))
	}
	s.parts()
}

// parts: each part of a scenario of several flows (a composite's), in the
// scenario's order, with the run's own verdict of it (verdict.Flows): a
// single run's, or a merge's on the merged run.
func (s *summary) parts() {
	r := s.r
	if len(r.Flows) <= 1 {
		return
	}
	for _, f := range r.Flows {
		name, _ := f["name"].(string)
		v, ok := r.FlowVerdicts[name]
		if !ok {
			continue
		}
		state := "ok"
		if !v.Passed {
			state = "FAIL"
		}
		why := ""
		if len(v.Failures) > 0 {
			why = "; " + strings.Join(v.Failures, "; ")
		}
		s.lines = append(s.lines, fmt.Sprintf("  part %-10s %s: %s%s", name, state, v.Text, why))
	}
}

// latency: pub-to-sub from the actual and the intended send, what each
// reconnect cost, and the outages.
func (s *summary) latency() {
	r := s.r
	l, li := r.LatencyMs["pub_to_sub"], r.LatencyMs["pub_to_sub_from_intended"]
	if l.Count > 0 {
		s.add("latency ms", fmt.Sprintf("avg %s  p50 %s  p90 %s  p95 %s  p99 %s  p99.99 %s  max %s  (%d samples)",
			figure(l.Avg), figure(l.P50), figure(l.P90), figure(l.P95), figure(l.P99), figure(l.P9999), figure(l.Max), l.Count))
		s.add("from intended", fmt.Sprintf("avg %s  p50 %s  p90 %s  p95 %s  p99 %s  p99.99 %s  max %s",
			figure(li.Avg), figure(li.P50), figure(li.P90), figure(li.P95), figure(li.P99), figure(li.P9999), figure(li.Max)))
	}
	rc := r.LatencyMs["reconnect"]
	if rc.Count > 0 || len(r.Outages) > 0 {
		s.add("reconnect ms", fmt.Sprintf("p50 %s  p99 %s  max %s  (%d reconnects, each from its connection's drop to "+
			"its CONNACK)", measured(rc, rc.P50), measured(rc, rc.P99), measured(rc, rc.Max), rc.Count))
	}
	for _, o := range r.Outages {
		start := time.UnixMilli(int64(Number(o["start_ms"]))).UTC().Format("2006-01-02T15:04:05.000Z")
		open := ""
		if o["end_ms"] == nil {
			open = ", closed while still down"
		}
		s.add("outage", fmt.Sprintf("%s: %s s, up to %v connections down%s", start, figure(Number(o["duration_s"])),
			o["max_down"], open))
	}
}

// thresholds: each with its verdict; one that failed for want of samples
// says so, and a merge of several instances says how it judged each.
func (s *summary) thresholds() {
	r := s.r
	noSamples := map[string]bool{}
	for _, m := range r.WithoutSamples {
		noSamples[m] = true
	}
	for _, k := range SortedKeys(r.Thresholds) {
		ok := r.Thresholds[k]
		mark, how := "ok  ", ""
		if !ok {
			mark = "FAIL"
		}
		t, judged := ThresholdResult{}, false
		if r.Merge != nil {
			t, judged = r.Merge.ThresholdValues[k]
		}
		switch {
		case !ok && noSamples[metricOf(k)]:
			how = " (no samples)"
		case !s.merging() || !judged:
		case t.Value != nil:
			how = " (merged: " + value(*t.Value) + ")"
		case t.How != JudgedMerged:
			how = " (" + t.How + ")"
		}
		s.lines = append(s.lines, fmt.Sprintf("  %s          %s%s", mark, k, how))
	}
}

// metricOf is the metric a threshold key ("name{tag:v} expr") judges.
func metricOf(key string) string {
	if i := strings.IndexAny(key, "{ "); i >= 0 {
		return key[:i]
	}
	return key
}

// Number reads a figure of a document read from JSON (a float64), built in
// Go (an integer) or handed over from JS.
func Number(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	}
	return 0
}
