package verdict

// Second is one row of the run's per-second timeline, as a step's
// latency reads it.
type Second struct {
	T            float64  `json:"t"`
	Received     float64  `json:"received"`
	LatencyP99Ms *float64 `json:"latency_p99_ms"`
}

// StepVerdict is one publish step's verdict, as the result records it in
// the step: reached (Reached), and passed: a publish step that reached its
// rate with its latency p99 under the run's bound (P99Ms).
type StepVerdict struct {
	Reached      bool
	Passed       bool
	LatencyP99Ms *float64
}

// Steps judges each step of d. A step's latency p99 is the run's (exact,
// from the histograms) when it is the only step; else its seconds' p99
// weighted by the messages received in each (a second's row covers the
// second before its time; one second after the step counts, for messages
// still in flight).
func Steps(d *Doc) []StepVerdict {
	out := make([]StepVerdict, len(d.Steps))
	for i, s := range d.Steps {
		var p99 *float64
		if len(d.Steps) == 1 {
			if l, ok := d.LatencyMs["pub_to_sub"]; ok && l.Count > 0 {
				p99 = &l.P99
			}
		} else {
			p99 = weightedP99(d.Timeline, s.Start, s.End)
		}
		v := StepVerdict{Reached: Reached(s), LatencyP99Ms: p99}
		bound := d.Parameters.P99Ms
		v.Passed = s.TargetRate > 0 && v.Reached && p99 != nil && (bound == nil || *p99 < *bound)
		out[i] = v
	}
	return out
}

func weightedP99(rows []Second, start, end float64) *float64 {
	var sum, total float64
	for _, r := range rows {
		if r.T > start && r.T <= end+1000 && r.LatencyP99Ms != nil {
			sum += *r.LatencyP99Ms * r.Received
			total += r.Received
		}
	}
	if total == 0 {
		return nil
	}
	p := sum / total
	return &p
}
