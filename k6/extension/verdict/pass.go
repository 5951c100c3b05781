package verdict

import "strings"

// The pass rule of a run, single or merged: every threshold holds, a
// threshold whose metric had no sample judged nothing and fails, and a
// run that did not run to its end (stopped, or a merge with instances
// missing) does not pass whatever its thresholds say.

// ThresholdMetric is the metric a threshold's key ("name{tags} expr") bounds.
func ThresholdMetric(key string) string {
	if i := strings.IndexAny(key, "{ "); i >= 0 {
		return key[:i]
	}
	return key
}

// Thresholds is each threshold's verdict: k6's (or the merge's) ok, false
// where its metric is in withoutSamples.
func Thresholds(ok map[string]bool, withoutSamples []string) map[string]bool {
	none := map[string]bool{}
	for _, m := range withoutSamples {
		none[m] = true
	}
	out := make(map[string]bool, len(ok))
	for k, v := range ok {
		out[k] = v && !none[ThresholdMetric(k)]
	}
	return out
}

// Passed is the run's verdict: complete, and every threshold held.
func Passed(thresholds map[string]bool, complete bool) bool {
	for _, ok := range thresholds {
		if !ok {
			return false
		}
	}
	return complete
}
