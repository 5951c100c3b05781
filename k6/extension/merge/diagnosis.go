package merge

import (
	"fmt"
	"strings"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
)

// fine are the causes of an instance whose diagnosis explains no failure
// of the run: it passed, or it judged too little on its own share (a
// merged run may have the samples one instance lacked).
func fine(cause string) bool { return cause == "none" || cause == "ok" || cause == "no_data" }

// diagnose is the merged run's cause: an incomplete run first (its counts
// are partial), then the first failing instance's own diagnosis (which saw
// its broker connections, refusals and pace), then what only the merged
// values show.
func diagnose(r *Result, ins []*instance) Diagnosis {
	if r.Incomplete {
		return Diagnosis{Cause: "incomplete", Text: fmt.Sprintf("%d of %d instances left a result; missing: %s. "+
			"The merged counts and verdict cover only part of the run: merge again once running instances end, "+
			"or rerun the run", len(ins), r.InstancesExpected, strings.Join(r.MissingInstances, "; "))}
	}
	failed := failedThresholds(r)
	if r.Passed {
		text := fmt.Sprintf("Every threshold passed on the merged run: %.0f connections, %.0f messages published, "+
			"%.0f received, latency p99 %s ms, over %s on %s.",
			r.Counts[load.MetricConnects], r.Counts[load.MetricPublishes], r.Counts[load.MetricReceives],
			ms(r.LatencyMs["pub_to_sub"]), plural(len(ins), "instance"), plural(len(r.Hosts), "host"))
		var own []string
		for _, in := range ins {
			if !in.Passed {
				own = append(own, in.Instance.Segment)
			}
		}
		if len(own) > 0 {
			text += fmt.Sprintf(" Instances %s failed their own verdict on their share alone; the merged data overrule it.",
				strings.Join(own, ", "))
		}
		return Diagnosis{Cause: "none", Text: text}
	}
	for _, in := range ins {
		if !in.Passed && in.Diagnosis != nil && !fine(in.Diagnosis.Cause) {
			return Diagnosis{Cause: in.Diagnosis.Cause, Text: fmt.Sprintf("instance %s: %s", in.Instance.Segment, in.Diagnosis.Text),
				Evidence: in.Diagnosis.Evidence}
		}
	}
	lost := int64(r.Counts[load.MetricLost])
	for _, k := range failed {
		if strings.HasPrefix(k, load.MetricLost+" ") && lost > 0 {
			return Diagnosis{Cause: "broker_lost_messages", Text: fmt.Sprintf("The broker lost %d of %d messages "+
				"(merged over the instances: a stream's publisher and subscriber may run in different instances, "+
				"so no instance alone saw the loss), with no instance reporting a disconnect or refusal.",
				lost, int64(r.Counts[load.MetricReceives])+lost)}
		}
	}
	if len(r.WithoutSamples) > 0 {
		return Diagnosis{Cause: "no_data", Text: fmt.Sprintf("Thresholds on %s had no samples in any instance: "+
			"the run measured nothing they bound.", strings.Join(r.WithoutSamples, ", "))}
	}
	return Diagnosis{Cause: "unexplained", Text: fmt.Sprintf("Thresholds failed on the merged run (%s) with no "+
		"instance's own diagnosis explaining it.", strings.Join(failed, "; "))}
}

func failedThresholds(r *Result) []string {
	var out []string
	for _, k := range sortedKeys(r.ThresholdValues) {
		t := r.ThresholdValues[k]
		if !t.OK {
			s := k
			if t.Value != nil {
				s += fmt.Sprintf(" (merged: %s)", num3(*t.Value))
			} else if t.How == JudgedNoSamples {
				s += " (no samples)"
			}
			out = append(out, s)
		}
	}
	return out
}

func ms(s load.Stats) string {
	if s.Count == 0 {
		return "n/a"
	}
	return num3(s.P99)
}
