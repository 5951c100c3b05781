package result

// The summary's lines that only a merge of several instances has (Text).

import "fmt"

// merged: what a merge of several instances adds (a merge of one adds only
// what it noted).
func (s *summary) merged() {
	m := s.r.Merge
	if m == nil {
		return
	}
	for _, gone := range m.MissingInstances {
		s.add("missing", gone)
	}
	if s.merging() {
		for _, in := range m.Instances {
			v := "passed"
			if !in.Passed {
				v = "failed"
			}
			s.add("instance", fmt.Sprintf("%s on %s: %s on its own", in.Segment, in.Hostname, v))
		}
		if m.Clock.SkewRisk {
			s.add("clock skew", m.Clock.Text)
		}
		if m.StartedAtSpreadS >= 1 {
			s.add("start spread", fmt.Sprintf("the instances started up to %.1f s apart", m.StartedAtSpreadS))
		}
	}
	for _, n := range m.Notes {
		s.add("note", n)
	}
	if m.ThresholdsNote != "" {
		s.add("note", "thresholds "+m.ThresholdsNote)
	}
}
