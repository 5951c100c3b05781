package merge

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

// How a merged threshold was judged.
const (
	JudgedMerged    = result.JudgedMerged
	JudgedInstances = result.JudgedInstances
	JudgedNoSamples = result.JudgedNoSamples
)

// metricNoSamples is the extension's count of threshold metrics that had
// no sample: the merge recounts it on the merged run.
const (
	metricNoSamples       = "mqtt_thresholds_without_samples"
	metricNothingReceived = "mqtt_nothing_received"
	metricPartsFailed     = "mqtt_parts_failed" // flows whose own verdict failed
)

// ThresholdResult is one threshold judged on the merged run.
type ThresholdResult = result.ThresholdResult

// threshold is a result file's threshold key, "<metric>[{tags}] <expr>".
type threshold struct {
	key    string
	metric string // without the tag filter
	tags   string // "{tag:value}" or ""
	stat   string // count, value, rate, avg, min, max, med, p(N)
	op     string
	bound  float64
	parsed bool
}

var thresholdKey = regexp.MustCompile(
	`^\s*([^\s{]+)(\{[^}]*\})?\s+(count|value|rate|avg|min|max|med|p\(\d+(?:\.\d+)?\))\s*(===|==|!=|<=|>=|<|>)\s*(\S+)\s*$`)

func parseThreshold(key string) threshold {
	t := threshold{key: key, metric: strings.Fields(key + " ")[0]}
	if i := strings.IndexByte(t.metric, '{'); i >= 0 {
		t.metric = t.metric[:i]
	}
	m := thresholdKey.FindStringSubmatch(key)
	if m == nil {
		return t
	}
	b, err := strconv.ParseFloat(m[5], 64)
	if err != nil {
		return t
	}
	t.metric, t.tags, t.stat, t.op, t.bound, t.parsed = m[1], m[2], m[3], m[4], b, true
	return t
}

func compare(v float64, op string, bound float64) bool {
	switch op {
	case "==", "===":
		return v == bound
	case "!=":
		return v != bound
	case "<":
		return v < bound
	case "<=":
		return v <= bound
	case ">":
		return v > bound
	case ">=":
		return v >= bound
	}
	return false
}

// judge is the merged run's data the thresholds are judged on.
type judge struct {
	ins       []*instance
	counts    map[string]float64 // summed; mqtt_lost the merged loss
	hists     map[string]*hdrhistogram.Histogram
	noSamples map[string]bool // threshold metrics without a sample in the merged run
	delivery  map[string]result.FlowDelivery
	parts     map[string]verdict.FlowVerdict // each flow's own verdict
}

// mergedThresholds judges the union of the instances' thresholds on the
// merged run, each as written: k6 fixes a script's thresholds before it
// tells the script its segment, so every instance has the same ones, and
// they bound the whole run (as k6's own distributed execution judges them).
func (j *judge) mergedThresholds() map[string]ThresholdResult {
	out := map[string]ThresholdResult{}
	for _, in := range j.ins {
		for key := range in.Thresholds {
			if _, done := out[key]; !done {
				out[key] = j.evaluate(parseThreshold(key))
			}
		}
	}
	return out
}

func (j *judge) metricType(name string) string {
	for _, in := range j.ins {
		if m, ok := in.Metrics[name]; ok && m.Type != "" {
			return m.Type
		}
	}
	for _, in := range j.ins {
		if _, ok := in.Counts[name]; ok {
			return "counter"
		}
	}
	return ""
}

func (j *judge) evaluate(t threshold) ThresholdResult {
	if t.parsed && t.tags == "" && j.noSamples[t.metric] {
		return ThresholdResult{OK: false, How: JudgedNoSamples}
	}
	v, how := j.value(t)
	switch how {
	case JudgedMerged:
		return ThresholdResult{OK: compare(v, t.op, t.bound), Value: &v, How: how}
	case JudgedNoSamples:
		return ThresholdResult{OK: false, How: how}
	}
	// The instances' own verdicts: passed only if every instance that
	// judged this threshold passed it.
	ok := true
	for _, in := range j.ins {
		if pass, has := in.Thresholds[t.key]; has {
			ok = ok && pass
		}
	}
	return ThresholdResult{OK: ok, How: JudgedInstances}
}

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
func withoutSamples(ins []*instance, hists map[string]*hdrhistogram.Histogram) []string {
	judged := map[string]int{}
	missing := map[string]int{}
	for _, in := range ins {
		seen := map[string]bool{}
		for key := range in.Thresholds {
			m := parseThreshold(key).metric
			if !seen[m] {
				seen[m] = true
				judged[m]++
				if contains(in.WithoutSamples, m) {
					missing[m]++
				}
			}
		}
	}
	histOf := map[string]string{}
	for _, stem := range load.HistNames() {
		for _, stat := range load.TotalStats() {
			histOf[stem+"_"+stat] = stem
		}
	}
	out := []string{}
	for m, n := range judged {
		none := missing[m] == n
		if stem, ok := histOf[m]; ok {
			none = hists[stem] == nil || hists[stem].TotalCount() == 0
		}
		if none && m != metricNoSamples {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// thresholdsNote names the thresholds the merge could not judge on a
// merged value.
func thresholdsNote(res map[string]ThresholdResult) string {
	var keys []string
	for _, k := range result.SortedKeys(res) {
		if res[k].How == JudgedInstances {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	return "judged by the instances' own verdicts (passed only if every instance that has it passed), as their " +
		"merged value cannot be computed from the instance files (a tag filter, a gauge's last value or a trend's " +
		"quantile): " + strings.Join(keys, "; ")
}
