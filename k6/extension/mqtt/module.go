// Package mqtt is the k6/x/mqtt JavaScript module: it reads the script's
// options, registers the metrics and turns the load package's groups and
// the connection package's connections into JS objects and promises. Its
// API is described in index.d.ts.
package mqtt

import (
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"
	"go.k6.io/k6/js/modules"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
)

// Version of this extension, shown in results.
const Version = "v0.2.0"

type (
	// RootModule is the module of one k6 test: it owns everything the
	// test's VUs share (the load run, what its groups found for the result).
	RootModule struct {
		run    *load.Run
		record *runRecord
		tuneGC sync.Once
		// The cgroup's CPU quota periods when the test began (its counters
		// cover the cgroup's life): the run's are what it adds.
		quotaAtStart quotaPeriods
		quotaKnown   bool
	}
	// ModuleInstance is the per-VU module instance.
	ModuleInstance struct {
		vu   modules.VU
		root *RootModule
	}
)

var (
	_ modules.Module   = &RootModule{}
	_ modules.Instance = &ModuleInstance{}
)

// New returns the root module of a test.
func New() *RootModule {
	r := &RootModule{run: load.NewRun(), record: newRunRecord()}
	r.quotaAtStart, r.quotaKnown = cpuQuotaPeriods()
	return r
}

// NewModuleInstance registers the metrics (init context) and returns the VU's instance.
func (r *RootModule) NewModuleInstance(vu modules.VU) modules.Instance {
	r.tuneGC.Do(setGCTarget)
	if env := vu.InitEnv(); env != nil {
		m, err := registerMetrics(env.Registry)
		if err != nil {
			common.Throw(vu.Runtime(), err)
		}
		r.run.SetMetrics(m)
	}
	return &ModuleInstance{vu: vu, root: r}
}

// Exports the public JS API, what a scenario author uses (index.d.ts
// describes exactly these; tests/extension/test_public_api.py checks it).
func (mi *ModuleInstance) Exports() modules.Exports {
	return modules.Exports{Named: map[string]any{
		"Client":          mi.newClient,
		"PublisherGroup":  mi.newPublisherGroup,
		"SubscriberGroup": mi.newSubscriberGroup,
		"stats":           mi.stats,
		"timeline":        mi.root.run.Timeline,
		"host":            host,
		"limits":          limits(),
		"version":         Version,
		"outages":         mi.root.run.Outages,
		"policy":          policy(),
	}}
}

// stats returns the test's totals: latency summaries (ms) from the HDR
// histograms and every counter. Meant for handleSummary.
func (mi *ModuleInstance) stats() map[string]any {
	run := mi.root.run
	out := map[string]any{"version": Version, "k6_version": k6Version(), "counters": run.Counters(),
		"process": mi.processUsage()}
	for name, s := range run.Totals() {
		out[name] = s
	}
	return out
}

// processUsage is the k6 process's own CPU seconds and peak RSS, with the
// CPU quota periods of its cgroup since the test began.
func (mi *ModuleInstance) processUsage() map[string]any {
	process := processUsage()
	if now, ok := cpuQuotaPeriods(); ok && mi.root.quotaKnown && process != nil {
		process["cpu_quota_periods"] = now.periods - mi.root.quotaAtStart.periods
		process["cpu_quota_throttled"] = now.throttled - mi.root.quotaAtStart.throttled
	}
	return process
}

// parseURL validates a broker URL for the scenarios' environment checks
// (MQTT_URL), with the same rules as the url option: it returns the
// address to dial, or {error} naming what is wrong (the caller collects
// every problem before it throws).
func parseURL(raw string) map[string]any {
	b, err := connection.ParseURL(raw)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	return map[string]any{"addr": b.Addr, "host": b.Host, "secure": b.Secure}
}

// payloadTemplate validates a payload_template option for the scenarios'
// environment checks (PAYLOAD_TEMPLATE): its steady size with client ids
// of clientID (a client_id template) and where it puts the header, or
// {error} naming the placeholder.
func payloadTemplate(raw, clientID string) map[string]any {
	t, err := load.ParsePayloadTemplate(raw)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	ct, err := load.ParseTemplate(clientID)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	header := "binary, before the template"
	if t.HeaderAt() >= 0 {
		header = fmt.Sprintf("text at byte %d", t.HeaderAt())
	}
	return map[string]any{"size": t.Size(ct.MaxLen()), "header": header}
}

// parseLocalAddress validates a local_address option for the scenarios'
// environment checks (LOCAL_ADDRESS): {addresses} or {error}.
func parseLocalAddress(raw string) map[string]any {
	ips, err := connection.ParseLocalAddresses(raw)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return map[string]any{"addresses": out}
}

func exportValue(v sobek.Value) any {
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return nil
	}
	return v.Export()
}

func exportArg(args []sobek.Value, i int) any {
	if i >= len(args) {
		return nil
	}
	return exportValue(args[i])
}

// k6Version reads the k6 module version linked into this binary.
func k6Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "go.k6.io/k6" {
				return d.Version
			}
		}
	}
	return "unknown"
}
