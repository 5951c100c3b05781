package verdict

import "fmt"

// Merged is what a merge of instance results adds to the merged document.
type Merged struct {
	Doc               *Doc
	Incomplete        bool
	InstancesExpected int
	Missing           []string
	Instances         []Instance
	Hosts             int
	Failed            []string // the merged run's failed thresholds, with their merged values
}

// Instance is one instance's own verdict.
type Instance struct {
	Segment   string
	Passed    bool
	Diagnosis *Diagnosis
}

// fine are the causes of an instance whose diagnosis explains no failure
// of the run: it passed, or it judged too little on its own share (a
// merged run may have the samples one instance lacked).
func fine(cause string) bool { return cause == CauseNone || cause == CauseNoData }

// DiagnoseMerged is the merged run's cause: an incomplete run first (its
// counts are partial), then the first failing instance's own diagnosis
// (which saw its broker connections, refusals and pace), then what only
// the merged values show. An ordering violation is named whatever the cause.
func DiagnoseMerged(m Merged) Diagnosis {
	d := diagnoseMerged(m)
	if o := Order(m.Doc); o.Text != "" && d.Cause != CauseBrokerOrdering && d.Cause != CauseIncomplete {
		d.Text += " " + o.Text + "."
	}
	return d
}

func diagnoseMerged(m Merged) Diagnosis {
	r := m.Doc
	if m.Incomplete {
		return Diagnosis{Cause: CauseIncomplete, Text: fmt.Sprintf("%d of %d instances left a result; missing: %s. "+
			"The merged counts and verdict cover only part of the run: merge again once running instances end, "+
			"or rerun the run", len(m.Instances), m.InstancesExpected, join(m.Missing, "; "))}
	}
	if r.Passed {
		text := fmt.Sprintf("Every threshold passed on the merged run: %.0f connections, %.0f messages published, "+
			"%.0f received, latency p99 %s ms, over %s on %s.",
			r.count("mqtt_connects"), r.count("mqtt_publishes"), r.count("mqtt_receives"),
			num(p99(r, "pub_to_sub")), plural(len(m.Instances), "instance"), plural(m.Hosts, "host"))
		var own []string
		for _, in := range m.Instances {
			if !in.Passed {
				own = append(own, in.Segment)
			}
		}
		if len(own) > 0 {
			text += fmt.Sprintf(" Instances %s failed their own verdict on their share alone; the merged data overrule it.",
				join(own, ", "))
		}
		return Diagnosis{Cause: CauseNone, Text: text}
	}
	for _, in := range m.Instances {
		if !in.Passed && in.Diagnosis != nil && !fine(in.Diagnosis.Cause) {
			return Diagnosis{Cause: in.Diagnosis.Cause, Text: fmt.Sprintf("instance %s: %s", in.Segment, in.Diagnosis.Text),
				Evidence: in.Diagnosis.Evidence}
		}
	}
	lost := r.count("mqtt_lost")
	for _, k := range m.Failed {
		if len(k) > len("mqtt_lost ") && k[:len("mqtt_lost ")] == "mqtt_lost " && lost > 0 {
			return Diagnosis{Cause: CauseBrokerLost, Text: fmt.Sprintf("The broker lost %.0f of %.0f messages "+
				"(merged over the instances: a stream's publisher and subscriber may run in different instances, "+
				"so no instance alone saw the loss), with no instance reporting a disconnect or refusal.",
				lost, r.count("mqtt_receives")+lost)}
		}
	}
	if o := Order(r); o.Strict && o.Text != "" {
		return Diagnosis{Cause: CauseBrokerOrdering, Text: o.Text + " (merged over the instances); the run asked " +
			"for strict order (STRICT_ORDER=true)."}
	}
	if len(r.WithoutSamples) > 0 {
		return Diagnosis{Cause: CauseNoData, Text: fmt.Sprintf("Thresholds on %s had no samples in any instance: "+
			"the run measured nothing they bound.", join(r.WithoutSamples, ", "))}
	}
	return Diagnosis{Cause: CauseUnexplained, Text: fmt.Sprintf("Thresholds failed on the merged run (%s) with no "+
		"instance's own diagnosis explaining it.", join(m.Failed, "; "))}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
