package mqtt

import (
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
)

// scenarioFacts is what only the scenario knows of the run: its
// parameters and flows, the impaired network path (scripts/bench.sh
// --impair) and the broker's version.
type scenarioFacts struct {
	parameters    map[string]any
	flows         []any
	network       any
	brokerVersion any
	brokerSource  any
	// The broker's known deviations (BROKER_DEVIATIONS: its broker.toml's
	// [[deviations]] verdicts, as the stack that runs k6 passes them).
	brokerDeviations any
}

// summary is handleSummary's work, `summary(data, { parameters, flows,
// network, broker_version, broker_source, broker_deviations })`: the run's result, built from the run's own
// state, what its groups found and k6's end-of-test data, judged by the
// verdict package (result.Judge), as the file to write and the text to
// print (result.Text, which a merge prints too).
func (mi *ModuleInstance) summary(data, facts sobek.Value) map[string]any {
	d, _ := exportValue(data).(map[string]any)
	f, _ := exportValue(facts).(map[string]any)
	sf := scenarioFacts{network: f["network"], brokerVersion: f["broker_version"], brokerSource: f["broker_source"],
		brokerDeviations: f["broker_deviations"]}
	sf.parameters, _ = f["parameters"].(map[string]any)
	sf.flows, _ = f["flows"].([]any)
	setup, _ := d["setup_data"].(map[string]any)
	if runID, _ := setup["run_id"].(string); runID == "" {
		// Without setup's data the run never started (setup failed, e.g. on
		// a RUN_ID whose result exists): there is no result, and no file of
		// another run may be touched.
		return map[string]any{"stdout": fmt.Sprintf("\nmqtt-bench %v: the run did not start (setup failed); "+
			"no result file written\n", sf.parameters["scenario"])}
	}
	r, err := result.Decode(mi.resultDocument(d, setup, sf))
	if err == nil {
		// One instance of several writes a part of the run, which only a
		// merge (k6 x mqtt-merge) turns into a result.
		r.Schema = result.ResultSchema
		if r.Instance != nil && r.Instance.Count > 1 {
			r.Schema = result.InstanceSchema
		}
		err = r.Judge()
	}
	var b []byte
	if err == nil {
		b, err = r.Encode()
	}
	if err != nil {
		common.Throw(mi.vu.Runtime(), err)
	}
	path := fmt.Sprintf("%v/%s%s.json", sf.parameters["results_dir"], r.RunID, instanceSuffix(r.Instance))
	return map[string]any{path: string(b), "stdout": result.Text(r, path)}
}

// instanceSuffix names one instance's result file of a segmented test:
// <run id>.seg-2-of-4.json; a test in one instance keeps <run id>.json.
func instanceSuffix(seg *result.Segment) string {
	if seg == nil || seg.Count <= 1 {
		return ""
	}
	return fmt.Sprintf(".seg-%d-of-%d", seg.Index+1, seg.Count)
}

// resultDocument is the result before its verdicts, in the shape
// result.Decode reads.
func (mi *ModuleInstance) resultDocument(data, setup map[string]any, sf scenarioFacts) map[string]any {
	run, rec := mi.root.run, mi.root.record
	rec.mu.Lock()
	defer rec.mu.Unlock()
	params := maps.Clone(sf.parameters)
	if rec.templatePayload > 0 {
		params["payload"] = rec.templatePayload // a payload template's steady size is the payload
	}
	thresholds, judged, values := thresholdsOf(data)
	if rec.judged != nil {
		// Of them, those this instance has data for (one instance of several
		// may have no subscribers, or no publishers): checkSamples said.
		judged = rec.judged
	}
	totals, latency := run.Totals(), map[string]load.Stats{}
	names := load.HistNames()
	for i, key := range load.LatencyKeys() {
		latency[key] = totals[names[i]]
	}
	steps := make([]map[string]any, len(rec.steps))
	for i, s := range rec.steps {
		steps[i] = maps.Clone(s) // the verdicts mark them
	}
	hists, err := run.Histograms()
	if err != nil {
		common.Throw(mi.vu.Runtime(), err)
	}
	var duration any
	if st, ok := data["state"].(map[string]any); ok {
		duration = result.Number(st["testRunDurationMs"]) / 1000
	}
	doc := map[string]any{
		"schema": nil, "run_id": setup["run_id"], "started_at": setup["started_at"], "client_id_prefix": setup["client_prefix"],
		"scenario": params["scenario"], "broker": params["broker"], "broker_deviations": sf.brokerDeviations,
		"ended_at":   time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		"duration_s": duration, "completed": rec.completed, "instance": mi.segment(),
		"parameters": params, "flows": sf.flows,
		"versions": map[string]any{"k6": k6Version(), "extension": Version, "broker": sf.brokerVersion,
			"broker_source": sf.brokerSource},
		"host":      host(),
		"generator": mi.processUsage(),
		// k6's own verdict of each threshold, and its values of their
		// metrics, for a merge to judge them again over all instances; the
		// pass rule is the verdict package's (result.Judge).
		"thresholds": thresholds, "metrics": values,
		"counts": run.Counters(), "latency_ms": latency,
		"connect": maps.Clone(rec.connect), "delivery": maps.Clone(rec.delivery), "steps": steps,
		// Windows in which connections were down (first lost → all back).
		"outages":         run.Outages(),
		"without_samples": run.WithoutSamples(judged),
		"timeline":        run.Timeline(),
		// Whole, so that instances' files merge exactly: every latency
		// histogram (HdrHistogram's own encoding) and the per-stream counts.
		"histograms": hists, "streams": run.Streams(),
	}
	if sf.network != nil {
		doc["network"] = sf.network
	}
	return doc
}

// thresholdsOf reads k6's end-of-test data: each threshold's verdict by
// "<metric> <expression>", the metrics that have thresholds, and k6's
// values of those.
func thresholdsOf(data map[string]any) (map[string]bool, []string, map[string]any) {
	ok, values := map[string]bool{}, map[string]any{}
	var judged []string
	ms, _ := data["metrics"].(map[string]any)
	for name, v := range ms {
		m, _ := v.(map[string]any)
		ts, has := m["thresholds"].(map[string]any)
		if !has {
			continue
		}
		judged = append(judged, name)
		values[name] = map[string]any{"type": m["type"], "values": m["values"]}
		for expr, t := range ts {
			tm, _ := t.(map[string]any)
			passed, _ := tm["ok"].(bool)
			ok[name+" "+expr] = passed
		}
	}
	sort.Strings(judged)
	return ok, judged, values
}
