package merge

import (
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
