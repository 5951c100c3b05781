package mqtt

import "go.k6.io/k6/js/modules"

// InternalModule is k6/x/mqtt/internal: the calls k6/lib makes to run a
// scenario and write its result (notes, samples checks, the execution
// segment and shares, the result file), apart from the public API. It
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
		"note":              mi.root.notes.set,
		"notes":             mi.root.notes.all,
		"parseUrl":          parseURL,
		"parseLocalAddress": parseLocalAddress,
		"payloadTemplate":   payloadTemplate,
		"checkTLSFiles":     checkTLSFiles,
		"fileExists":        fileExists,
		"claimResult":       claimResult,
		"randomId":          randomID,
		"checkSamples":      mi.checkSamples,
		"withoutSamples":    mi.root.run.WithoutSamples,
		"setPlan":           mi.setPlan,
		"segment":           mi.segment,
		"share":             mi.share,
		"histograms":        mi.histograms,
		"streams":           mi.root.run.Streams,
		"resultFile":        mi.resultFile,
		"rateShortfalls":    mi.rateShortfalls,
		"flowVerdicts":      mi.flowVerdicts,
		"interrupted":       ii.interrupted,
	}}
}

// interrupted tells whether k6 cut the VU's iteration short (a signal, an
// abort, the end of the graceful stop): it cancels the iteration's context,
// and the load's phases end early on it rather than fail, so a run that got
// to the end of its code that way did not complete its plan.
func (ii *internalInstance) interrupted() bool { return ii.mi.vu.Context().Err() != nil }
