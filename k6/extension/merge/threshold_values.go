package merge

// The value a threshold's aggregation reads of the merged metrics: a
// counter's, a gauge's, a rate's and a trend's, summed or merged across the
// instances as k6 would have computed them in one process.

import (
	"math"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

// value is the merged run's value of a threshold's metric and stat, and
// how it was found (JudgedInstances: it cannot be merged from the files).
func (j *judge) value(t threshold) (float64, string) {
	if !t.parsed || t.tags != "" {
		return 0, JudgedInstances
	}
	if t.metric == metricNoSamples && t.stat == "count" {
		return float64(len(j.noSamples)), JudgedMerged
	}
	if t.metric == metricPartsFailed && t.stat == "count" && j.parts != nil {
		// The flows the merged run's own verdicts fail (verdict.Flows):
		// an instance's share cannot judge a part.
		n := 0
		for _, v := range j.parts {
			if !v.Passed {
				n++
			}
		}
		return float64(n), JudgedMerged
	}
	if t.metric == metricNothingReceived && t.stat == "count" && j.delivery != nil {
		// Flows that published to subscribers that received nothing, over
		// every instance: one member of a shared subscription, or an
		// instance's subscribers, may rightly receive nothing on their own.
		var flows []verdict.Owed
		for _, d := range j.delivery {
			flows = append(flows, verdict.Owed{Owed: d.Expected != nil && *d.Expected > 0, Received: float64(d.Unique)})
		}
		return float64(verdict.NothingReceived(flows)), JudgedMerged
	}
	switch j.metricType(t.metric) {
	case "counter":
		return j.counter(t)
	case "gauge":
		return j.gauge(t)
	case "rate":
		return j.rate(t)
	case "trend":
		return j.trend(t)
	case "":
		return 0, JudgedNoSamples
	}
	return 0, JudgedInstances
}

func (j *judge) counter(t threshold) (float64, string) {
	switch t.stat {
	case "count":
		if v, ok := j.counts[t.metric]; ok {
			return v, JudgedMerged
		}
		return j.sumValues(t.metric, "count")
	case "rate":
		return j.sumValues(t.metric, "rate")
	}
	return 0, JudgedInstances
}

func (j *judge) sumValues(metric, stat string) (float64, string) {
	sum, found := 0.0, false
	for _, in := range j.ins {
		if v, ok := in.Metrics[metric].Values[stat]; ok {
			sum, found = sum+v, true
		}
	}
	if !found {
		return 0, JudgedNoSamples
	}
	return sum, JudgedMerged
}

// gauge: the extension's whole-run latency gauges (<stem>_<stat>) come
// from the merged histogram; the achieved-rate ratio is the lowest of the
// instances' (each is the lowest ratio of any of its publish phases). A
// gauge's value is its last sample, which for any other gauge no merge of
// the instances' last samples gives.
func (j *judge) gauge(t threshold) (float64, string) {
	if t.stat != "value" {
		return 0, JudgedInstances
	}
	for _, stem := range load.HistNames() {
		for _, stat := range load.TotalStats() {
			if t.metric != stem+"_"+stat {
				continue
			}
			h := j.hists[stem]
			if h == nil || h.TotalCount() == 0 {
				return 0, JudgedNoSamples
			}
			v, _ := statOf(load.Summarize(h), stat)
			return v, JudgedMerged
		}
	}
	if t.metric == load.MetricAchievedRatio {
		lowest, found := math.Inf(1), false
		for _, in := range j.ins {
			v, ok := in.Metrics[t.metric].Values["value"]
			if ok && !contains(in.WithoutSamples, t.metric) {
				lowest, found = math.Min(lowest, v), true
			}
		}
		if !found {
			return 0, JudgedNoSamples
		}
		return lowest, JudgedMerged
	}
	return 0, JudgedInstances
}

// rate: k6's Rate is passes over all samples, which add up exactly.
func (j *judge) rate(t threshold) (float64, string) {
	if t.stat != "rate" {
		return 0, JudgedInstances
	}
	passes, fails := 0.0, 0.0
	for _, in := range j.ins {
		passes += in.Metrics[t.metric].Values["passes"]
		fails += in.Metrics[t.metric].Values["fails"]
	}
	if passes+fails == 0 {
		return 0, JudgedNoSamples
	}
	return passes / (passes + fails), JudgedMerged
}

// trend: of k6's Trend summary only the extremes merge; its quantiles and
// mean need the samples (or counts) the files do not carry.
func (j *judge) trend(t threshold) (float64, string) {
	pick := map[string]func(a, b float64) float64{"min": math.Min, "max": math.Max}[t.stat]
	if pick == nil {
		return 0, JudgedInstances
	}
	v, found := 0.0, false
	for _, in := range j.ins {
		x, ok := in.Metrics[t.metric].Values[t.stat]
		if !ok || contains(in.WithoutSamples, t.metric) {
			continue
		}
		if !found {
			v, found = x, true
		} else {
			v = pick(v, x)
		}
	}
	if !found {
		return 0, JudgedNoSamples
	}
	return v, JudgedMerged
}

// withoutSamples are the threshold metrics the merged run has no sample
// of: those every instance that judged them had none of. An instance alone
// may have none (one that ran only publishers measures no latency) while
// the run has many. The latency gauges go by the merged histograms.
