// Package merge is the `k6 x mqtt-merge` subcommand: it merges the result
// files of a run's generator instances (k6 execution segments, one file
// each) into the one result the run would have had in a single process:
// histograms bucket for bucket, delivery stream by stream, thresholds
// judged again on the merged values.
package merge

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
)

// ResultPath is where the merged result of runID is written.
func ResultPath(dir, runID string) string { return filepath.Join(dir, runID+".json") }

// Run merges the instance files of runID in dir and writes the merged
// result (ResultPath). Its errors are bad input (k6 exit code 104); a
// failed verdict is no error: see result.Result.Passed.
func Run(dir, runID string) (*result.Result, error) {
	r, err := Merge(dir, runID)
	if err != nil {
		return nil, err
	}
	return r, Write(dir, r)
}

// Merge reads and merges the instance files of runID in dir, writing
// nothing.
func Merge(dir, runID string) (*result.Result, error) {
	rf, err := readRun(dir, runID)
	if err != nil {
		return nil, err
	}
	ins := rf.instances
	first := ins[0]
	hists, err := mergedHistograms(ins)
	if err != nil {
		return nil, err
	}
	encoded, err := encodeHistograms(hists)
	if err != nil {
		return nil, err
	}
	gone := missing(rf)
	completed := len(gone) == 0
	r := &result.Result{
		Schema: ResultSchema, RunID: runID, Scenario: first.Scenario, Broker: first.Broker, Completed: &completed,
		BrokerDeviations: first.BrokerDeviations,
		Parameters:       first.Parameters, Flows: first.Flows, Versions: first.Versions, Host: first.Host,
		Network:    first.Network, // the impaired path all instances ran through (bench.sh --impair)
		Generator:  mergeGenerator(ins),
		LatencyMs:  latencySummaries(hists),
		Histograms: encoded,
		Steps:      mergeSteps(ins),
		Timeline:   mergeTimeline(ins),
		Outages:    mergeOutages(ins),
		Connect:    mergeConnect(ins),
		Merge: &result.Merge{
			InstancesExpected: rf.n, MissingInstances: gone, Incomplete: !completed,
			TimelineNote: TimelineNote, MergedAt: time.Now().UTC().Format(time.RFC3339),
		},
	}
	m := r.Merge
	times(r, ins)
	describeInstances(m, ins)
	m.Clock = clock(m.Hosts, ins)

	var groups []map[string]result.FlowDelivery
	var parts []map[string]result.FlowStreams
	for _, in := range ins {
		groups = append(groups, in.Delivery)
		parts = append(parts, in.Streams)
	}
	r.Delivery = result.Account(result.FanoutsOf(first.Flows), groups, parts...)
	if err := r.JudgeFlows(); err != nil {
		return nil, err
	}
	m.Notes = append(m.Notes, result.DeliveryNotes(r.Delivery)...)
	counts(r, ins)

	r.WithoutSamples = withoutSamples(ins, hists)
	noSamples := map[string]bool{}
	for _, name := range r.WithoutSamples {
		noSamples[name] = true
	}
	j := &judge{ins: ins, counts: r.Counts, hists: hists, noSamples: noSamples, delivery: r.Delivery, parts: r.FlowVerdicts}
	m.ThresholdValues = j.mergedThresholds()
	r.Thresholds = thresholds(m.ThresholdValues, r.WithoutSamples)
	m.ThresholdsNote = thresholdsNote(m.ThresholdValues)
	r.RateVerdict = rateVerdict(ins)
	if err := judgeMerged(r, ins); err != nil {
		return nil, err
	}
	for _, in := range ins[1:] {
		if string(in.Versions) != string(first.Versions) {
			m.Notes = append(m.Notes, fmt.Sprintf("%s ran other versions than %s (%s and %s): versions are %s's",
				in.file, first.file, in.Versions, first.Versions, first.file))
		}
	}
	return r, nil
}

// missing names each instance of the split that has no result, or one
// of a run stopped before its end.
func missing(rf *runFiles) []string {
	have := map[int]bool{}
	stopped := map[int]bool{}
	for _, in := range rf.instances {
		have[in.seg] = true
		stopped[in.seg] = in.Completed != nil && !*in.Completed
	}
	claims := map[int]*claim{}
	for _, c := range rf.claims {
		claims[c.seg] = c
	}
	out := []string{}
	for i := 1; i <= rf.n; i++ {
		switch {
		case stopped[i]:
			out = append(out, fmt.Sprintf("%d/%d (%s: stopped before its planned end: a signal or an abort; its "+
				"share ran in part)", i, rf.n, segName(i, rf.n)))
		case have[i]:
		case claims[i] != nil:
			out = append(out, claims[i].describe())
		default:
			out = append(out, fmt.Sprintf("%d/%d (%s: no file)", i, rf.n, segName(i, rf.n)))
		}
	}
	return out
}

// times: the run spans its instances; instances starting apart (a
// k6-operator starting runners one by one) measure different loads.
func times(r *result.Result, ins []*instance) {
	var start, end time.Time
	for _, in := range ins {
		if t, err := time.Parse(time.RFC3339Nano, in.StartedAt); err == nil && (start.IsZero() || t.Before(start)) {
			start, r.StartedAt = t, in.StartedAt
		}
		if t, err := time.Parse(time.RFC3339Nano, in.EndedAt); err == nil && (end.IsZero() || t.After(end)) {
			end, r.EndedAt = t, in.EndedAt
		}
		if in.DurationS != nil && (r.DurationS == nil || *in.DurationS > *r.DurationS) {
			d := *in.DurationS
			r.DurationS = &d
		}
		if t, err := time.Parse(time.RFC3339Nano, in.StartedAt); err == nil {
			r.Merge.StartedAtSpreadS = max(r.Merge.StartedAtSpreadS, t.Sub(start).Seconds())
		}
	}
}

func counts(r *result.Result, ins []*instance) {
	r.Counts = map[string]float64{}
	streams := false
	for _, in := range ins {
		for k, v := range in.Counts {
			r.Counts[k] += v
		}
		streams = streams || in.Streams != nil
	}
	if !streams {
		r.Merge.Notes = append(r.Merge.Notes, "no instance file has streams: mqtt_lost is the sum of the instances' own "+
			"losses, which miss streams whose publisher and subscriber ran in different instances")
		return
	}
	lost := int64(0)
	for _, d := range r.Delivery {
		lost += d.Lost
	}
	r.Counts[load.MetricLost] = float64(lost)
}

func rateVerdict(ins []*instance) *string {
	var vs []string
	for _, in := range ins {
		if in.RateVerdict != nil && *in.RateVerdict != "" {
			vs = append(vs, fmt.Sprintf("%s: %s", in.Instance.Segment, *in.RateVerdict))
		}
	}
	if len(vs) == 0 {
		return nil
	}
	s := strings.Join(vs, "; ")
	return &s
}

// Write writes the result to dir (ResultPath), unless what is there is
// not a merged result. It writes a temporary file first, so a reader never
// sees half a result.
func Write(dir string, r *result.Result) error {
	path := ResultPath(dir, r.RunID)
	if err := checkTarget(path); err != nil {
		return err
	}
	b, err := r.Encode()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+r.RunID+".merge-*.json")
	if err != nil {
		return badInput(fmt.Errorf("--dir %s: the merged result cannot be written (%v): make it writable", dir, err))
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return badInput(fmt.Errorf("%s cannot be written (%v): make --dir %s writable", path, err, dir))
	}
	return nil
}

// mergeConnect is each group's connect() over the instances, by role and
// flow: the connections opened and failed in all, over the longest ramp
// (the instances ramp side by side), so that the connection rate of the
// merged run is what its instances achieved together; the probes of the
// shared-subscription check are every instance's.
func mergeConnect(ins []*instance) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, in := range ins {
		for key, n := range in.Connect {
			if n == nil {
				continue
			}
			m := out[key]
			if m == nil {
				m = map[string]any{"connected": 0.0, "failed": 0.0, "seconds": 0.0}
				out[key] = m
			}
			for k, v := range n {
				x, isNum := v.(float64)
				switch {
				case k == "connected" || k == "failed" || k == "probes":
					sum, _ := m[k].(float64)
					m[k] = sum + x
				case k == "seconds":
					m[k] = max(m[k].(float64), x)
				case m[k] == nil && (!isNum || x != 0):
					m[k] = v // the first instance's (an error, the shared-subscription check)
				}
			}
		}
	}
	return out
}
