package mqtt

import (
	"encoding/json"
	"errors"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

// policy is the verdict package's policy as JS reads it (a result's
// `policy`): its JSON names.
func policy() map[string]any {
	var out map[string]any
	raw, err := json.Marshal(verdict.Current())
	if err == nil {
		err = json.Unmarshal(raw, &out)
	}
	if err != nil {
		panic(err)
	}
	return out
}

// nothingReceived counts the flows whose subscribers were owed messages
// and received none (mqtt_nothing_received), by verdict.NothingReceived:
// flows are [{ flow, owed }], what each received is its drain()'s.
func (mi *ModuleInstance) nothingReceived(v sobek.Value) int {
	var flows []struct {
		Flow string `json:"flow"`
		Owed bool   `json:"owed"`
	}
	raw, err := json.Marshal(exportValue(v))
	if err == nil {
		err = json.Unmarshal(raw, &flows)
	}
	if err != nil {
		common.Throw(mi.vu.Runtime(), err)
	}
	owed := make([]verdict.Owed, len(flows))
	for i, f := range flows {
		owed[i] = verdict.Owed{Owed: f.Owed, Received: mi.root.record.received(f.Flow)}
	}
	return verdict.NothingReceived(owed)
}

// unjudgedOrder is why the verdict would not judge a scenario's order
// (verdict.Order's why, on its { parameters, flows }), "" when it would:
// STRICT_ORDER is refused where it could never fail, by the verdict's own
// rule rather than the scenario's restatement of it.
func unjudgedOrder(facts map[string]any) (string, error) {
	var d verdict.Doc
	raw, err := json.Marshal(facts)
	if err == nil {
		err = json.Unmarshal(raw, &d)
	}
	if err != nil {
		return "", err
	}
	return verdict.Order(&d).Why, nil
}

// addStep records one of the scenario's publish steps for the result.
func (mi *ModuleInstance) addStep(v sobek.Value) {
	step, ok := exportValue(v).(map[string]any)
	if !ok {
		common.Throw(mi.vu.Runtime(), errors.New("addStep: a step is an object"))
	}
	mi.root.record.addStep(step)
}

// partsFailed counts the flows whose own verdict fails (verdict.Flows) in
// a run of several flows in one process, at its end: judged as its result
// file will be (result.Result.JudgeFlows), on the document the extension
// builds from the run's state and the scenario's facts, { parameters,
// flows }. It is a k6 threshold (mqtt_parts_failed), so that k6's exit code
// says what the result's flow_verdicts say.
func (mi *ModuleInstance) partsFailed(facts sobek.Value) int {
	f, _ := exportValue(facts).(map[string]any)
	sf := scenarioFacts{}
	sf.parameters, _ = f["parameters"].(map[string]any)
	sf.flows, _ = f["flows"].([]any)
	r, err := result.Decode(mi.resultDocument(nil, nil, sf))
	if err == nil {
		r.Delivery = result.Account(result.FanoutsOf(r.Flows), []map[string]result.FlowDelivery{r.Delivery}, r.Streams)
		err = r.JudgeFlows()
	}
	if err != nil {
		common.Throw(mi.vu.Runtime(), err)
	}
	n := 0
	for _, v := range r.FlowVerdicts {
		if !v.Passed {
			n++
		}
	}
	return n
}

// rateShortfalls counts the steps so far that did not reach their rate
// (mqtt_rate_shortfalls), by verdict.Reached.
func (mi *ModuleInstance) rateShortfalls() int {
	var steps []verdict.Step
	raw, err := json.Marshal(mi.root.record.stepsSoFar())
	if err == nil {
		err = json.Unmarshal(raw, &steps)
	}
	if err != nil {
		common.Throw(mi.vu.Runtime(), err)
	}
	return verdict.Shortfalls(steps)
}
