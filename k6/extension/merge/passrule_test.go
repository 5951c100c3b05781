package merge

import (
	"testing"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
)

// The merge applies a single run's pass rule: a threshold whose metric
// had no sample in any instance fails, tagged or not, and says why.
func TestMergedThresholdsFollowTheRunsRule(t *testing.T) {
	values := map[string]result.ThresholdResult{
		"mqtt_latency{flow:a} p(99)<50": {OK: true, How: JudgedInstances},
		"mqtt_lost count==0":            {OK: true, How: JudgedMerged},
	}
	ok := thresholds(values, []string{"mqtt_latency"})
	if ok["mqtt_latency{flow:a} p(99)<50"] || !ok["mqtt_lost count==0"] {
		t.Fatalf("thresholds: %v", ok)
	}
	if v := values["mqtt_latency{flow:a} p(99)<50"]; v.OK || v.How != JudgedNoSamples {
		t.Fatalf("the merged value must say the threshold had no samples: %+v", v)
	}
}
