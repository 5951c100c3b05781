package mqtt

import (
	"go.k6.io/k6/js/modules"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

// InternalModule is k6/x/mqtt/internal: the calls k6/lib makes to run a
// scenario and write its result (what only the scenario knows of the run,
// samples checks, the execution segment and shares, the result and its
// summary), apart from the public API. It
// shares its test's state with k6/x/mqtt.
type InternalModule struct{ root *RootModule }

// Internal is the internal module of the root module's test.
func (r *RootModule) Internal() *InternalModule { return &InternalModule{root: r} }

// NewModuleInstance returns the VU's instance (registering the metrics in
// the init context, as k6/x/mqtt does, whichever a script imports first).
func (m *InternalModule) NewModuleInstance(vu modules.VU) modules.Instance {
	return &internalInstance{m.root.NewModuleInstance(vu).(*ModuleInstance)}
}

type internalInstance struct{ mi *ModuleInstance }

// Exports the internal calls.
func (ii *internalInstance) Exports() modules.Exports {
	mi := ii.mi
	return modules.Exports{Named: map[string]any{
		"addStep":           mi.addStep,
		"markCompleted":     ii.markCompleted,
		"parseUrl":          parseURL,
		"parseLocalAddress": parseLocalAddress,
		"payloadTemplate":   payloadTemplate,
		"checkTLSFiles":     checkTLSFiles,
		"fileExists":        fileExists,
		"claimResult":       mi.claimResult,
		"randomId":          randomID,
		"checkSamples":      mi.checkSamples,
		"setPlan":           mi.setPlan,
		"checkOpenFiles":    checkOpenFiles,
		"segment":           mi.segment,
		"share":             mi.share,
		"summary":           mi.summary,
		"rateShortfalls":    mi.rateShortfalls,
		"nothingReceived":   mi.nothingReceived,
		"partsFailed":       mi.partsFailed,
		"unjudgedOrder":     unjudgedOrder,
		"brokerVersion":     brokerVersion,
		"refuse":            refuse,
		// The verdict's cause of an open-files refusal, for its refusal file:
		// named by the verdict package only.
		"causeGeneratorOpenFiles": verdict.CauseGeneratorOpenFiles,
	}}
}

// markCompleted records that the run completed its plan, unless k6 cut the
// VU's iteration short (a signal, an abort, the end of the graceful stop):
// that cancels the iteration's context, and the load's phases end early on
// it rather than fail, so a run that got to the end of its code that way
// did not complete. It says whether it recorded.
func (ii *internalInstance) markCompleted() bool {
	if ii.mi.vu.Context().Err() != nil {
		return false
	}
	ii.mi.root.record.complete()
	return true
}
