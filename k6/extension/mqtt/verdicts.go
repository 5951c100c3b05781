package mqtt

import (
	"encoding/json"
	"errors"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"

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

// addStep records one of the scenario's publish steps for the result.
func (mi *ModuleInstance) addStep(v sobek.Value) {
	step, ok := exportValue(v).(map[string]any)
	if !ok {
		common.Throw(mi.vu.Runtime(), errors.New("addStep: a step is an object"))
	}
	mi.root.record.addStep(step)
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
