package merge

import (
	"encoding/json"
	"fmt"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

// judge gives the merged run the verdicts of the verdict package (the
// same rules as a single run's summary): its ordering, its diagnosis and
// the policy they follow.
func (r *Result) judge(ins []*instance) error {
	// The verdicts read the merged document as a reader of the file would.
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	var doc verdict.Doc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return err
	}
	m := verdict.Merged{Doc: &doc, Incomplete: r.Incomplete, InstancesExpected: r.InstancesExpected,
		Missing: r.MissingInstances, Hosts: len(r.Hosts), Failed: failedThresholds(r)}
	for _, in := range ins {
		m.Instances = append(m.Instances, verdict.Instance{Segment: in.Instance.Segment, Passed: in.Passed,
			Diagnosis: in.Diagnosis})
	}
	r.Ordering = verdict.Order(&doc)
	r.Diagnosis = verdict.DiagnoseMerged(m)
	r.Policy = verdict.Current()
	return nil
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
