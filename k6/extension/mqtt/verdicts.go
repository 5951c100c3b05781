package mqtt

import (
	"encoding/json"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

// resultFile turns what k6/lib/summary.js gathered at the end of a run into
// the result file's text: read into the one result type (refusing a field
// it does not have), judged by the verdict package's rules (the merge's),
// and encoded as the merge encodes its own.
func (mi *ModuleInstance) resultFile(v sobek.Value) string {
	r, err := result.Decode(exportValue(v))
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
	return string(b)
}

// flowVerdicts judges each flow of a run in one process at its end, as its
// result file will (result.Result.JudgeFlows), from the same parts: the
// flows, parameters, connect and delivery notes, streams and histograms.
// Its failures are a k6 threshold (mqtt_parts_failed), so that k6's exit
// code says what the result's flow_verdicts say.
func (mi *ModuleInstance) flowVerdicts(v sobek.Value) map[string]verdict.FlowVerdict {
	r, err := result.Decode(exportValue(v))
	if err == nil {
		r.Delivery = result.Account(result.FanoutsOf(r.Flows), []map[string]result.FlowDelivery{r.Delivery}, r.Streams)
		err = r.JudgeFlows()
	}
	if err != nil {
		common.Throw(mi.vu.Runtime(), err)
	}
	return r.FlowVerdicts
}

// rateShortfalls counts the steps that did not reach their rate
// (mqtt_rate_shortfalls), by verdict.Reached.
func (mi *ModuleInstance) rateShortfalls(v sobek.Value) int {
	var steps []verdict.Step
	raw, err := json.Marshal(exportValue(v))
	if err == nil {
		err = json.Unmarshal(raw, &steps)
	}
	if err != nil {
		common.Throw(mi.vu.Runtime(), err)
	}
	return verdict.Shortfalls(steps)
}
