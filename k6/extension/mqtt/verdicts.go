package mqtt

import (
	"encoding/json"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

// verdicts judges a run's result document (k6/lib/summary.js assembles it)
// by the verdict package's rules, the same the merge applies: its rate
// verdict, its ordering, its diagnosis and the policy they follow.
func (mi *ModuleInstance) verdicts(v sobek.Value) map[string]any {
	var d verdict.Doc
	if err := decode(v, &d); err != nil {
		common.Throw(mi.vu.Runtime(), err)
	}
	v2 := map[string]any{
		"rate_verdict": verdict.RateVerdict(&d),
		"ordering":     verdict.Order(&d),
		"diagnosis":    verdict.Diagnose(&d),
		"policy":       verdict.Current(),
	}
	// Through JSON, so that the file holds what the merge's holds, field
	// for field (names, omitted empties).
	raw, err := json.Marshal(v2)
	if err != nil {
		common.Throw(mi.vu.Runtime(), err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		common.Throw(mi.vu.Runtime(), err)
	}
	return out
}

// rateShortfalls counts the steps that did not reach their rate
// (mqtt_rate_shortfalls), by verdict.Reached.
func (mi *ModuleInstance) rateShortfalls(v sobek.Value) int {
	var steps []verdict.Step
	if err := decode(v, &steps); err != nil {
		common.Throw(mi.vu.Runtime(), err)
	}
	return verdict.Shortfalls(steps)
}

// decode reads a JS value into a Go type through its JSON form, as a
// reader of the result file would.
func decode(v sobek.Value, out any) error {
	raw, err := json.Marshal(exportValue(v))
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}
