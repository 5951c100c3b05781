package merge

// What only a merge knows of its instances: their hosts and clocks.

import (
	"fmt"
	"strings"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
)

// describeInstances records what the merge keeps of each instance, and
// their hosts.
func describeInstances(m *result.Merge, ins []*instance) {
	seen := map[string]bool{}
	m.Hosts = []string{}
	for _, in := range ins {
		m.Instances = append(m.Instances, result.Instance{
			File: in.file, Segment: in.Instance.Segment, Index: in.Instance.Index,
			Hostname: in.host.Hostname, Clock: in.host.Clock, ClientIDPrefix: in.ClientIDPrefix,
			StartedAt: in.StartedAt, EndedAt: in.EndedAt, DurationS: in.DurationS, Passed: in.Passed,
			Generator: in.Generator, Diagnosis: &in.Diagnosis,
		})
		if !seen[in.host.Hostname] {
			seen[in.host.Hostname] = true
			m.Hosts = append(m.Hosts, in.host.Hostname)
		}
	}
}

// clock: pub-to-sub latency is the receiver's wall clock less the
// publisher's, both read on their own host.
func clock(hosts []string, ins []*instance) result.Clock {
	// One clock per kernel (its boot id), or per hostname where a file
	// does not say.
	clocks := map[string]bool{}
	for _, in := range ins {
		if in.host.BootID != "" {
			clocks[in.host.BootID] = true
		} else {
			clocks["host "+in.host.Hostname] = true
		}
	}
	c := result.Clock{Hosts: len(hosts), SkewRisk: len(clocks) > 1, ByHost: map[string]*result.ClockInfo{}}
	var errs []string
	for _, in := range ins {
		h := in.host.Hostname
		if _, done := c.ByHost[h]; done {
			continue
		}
		c.ByHost[h] = in.host.Clock
		errs = append(errs, h+": "+clockText(in.host.Clock))
	}
	if !c.SkewRisk {
		c.Text = fmt.Sprintf("every instance ran on one kernel's clock (%s): pub-to-sub latency is read on one clock",
			strings.Join(hosts, ", "))
	} else {
		c.Text = fmt.Sprintf("instances ran on %d hosts (%s): the pub-to-sub latency of a message published on one host "+
			"and received on another is the difference of two wall clocks, so skew between the hosts' clocks adds to "+
			"or hides latency (a skew of 1 ms moves every such sample by 1 ms). Clocks: %s",
			len(hosts), strings.Join(hosts, ", "), strings.Join(errs, "; "))
	}
	return c
}

func clockText(c *result.ClockInfo) string {
	if c == nil {
		return "error not known"
	}
	s := "not synchronized"
	if c.Synchronized {
		s = "synchronized"
	}
	if c.MaxErrorUs != nil {
		s += fmt.Sprintf(", max error %.3f ms", *c.MaxErrorUs/1000)
	}
	if c.EstErrorUs != nil {
		s += fmt.Sprintf(", estimated error %.3f ms", *c.EstErrorUs/1000)
	}
	return s
}

// counts adds up the instances' counters; the loss is the merged
// accounting's (an instance alone cannot see a stream whose publisher ran
// elsewhere).
