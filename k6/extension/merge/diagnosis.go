package merge

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

// judge gives the merged run the verdicts of the verdict package (the
// same rules as a single run's summary): passed, each step's reached, its
// ordering, its diagnosis and the policy they follow.
func judgeMerged(r *result.Result, ins []*instance) error {
	r.Passed = verdict.Passed(r.Thresholds, !r.Merge.Incomplete)
	// The verdicts read the merged document as a reader of the file would.
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	var doc verdict.Doc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return err
	}
	mr := r.Merge
	m := verdict.Merged{Doc: &doc, Incomplete: mr.Incomplete, InstancesExpected: mr.InstancesExpected,
		Missing: mr.MissingInstances, Hosts: len(mr.Hosts), Failed: failedThresholds(mr.ThresholdValues)}
	for _, in := range ins {
		m.Instances = append(m.Instances, verdict.Instance{Segment: in.Instance.Segment, Passed: in.Passed,
			Diagnosis: &in.Diagnosis})
	}
	result.MarkSteps(r.Steps, &doc)
	r.Ordering = verdict.Order(&doc)
	r.Diagnosis = verdict.DiagnoseMerged(m)
	r.Policy = verdict.Current()
	return nil
}

// thresholds is each merged threshold's verdict by the verdict package's
// rule (a threshold whose metric had no sample in any instance fails, as
// in a single run), and values says so of those the rule failed.
func thresholds(values map[string]result.ThresholdResult, withoutSamples []string) map[string]bool {
	ok := map[string]bool{}
	for k, t := range values {
		ok[k] = t.OK
	}
	ok = verdict.Thresholds(ok, withoutSamples)
	for k, t := range values {
		if t.OK && !ok[k] {
			values[k] = result.ThresholdResult{OK: false, How: JudgedNoSamples}
		}
	}
	return ok
}

func failedThresholds(values map[string]result.ThresholdResult) []string {
	var out []string
	for _, k := range result.SortedKeys(values) {
		t := values[k]
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

// num3 shows a merged value in the diagnosis: whole numbers as such, else
// 3 decimals below 10.
func num3(x float64) string {
	if x == float64(int64(x)) {
		return strconv.FormatInt(int64(x), 10)
	}
	if x < 10 {
		return strconv.FormatFloat(x, 'f', 3, 64)
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}
