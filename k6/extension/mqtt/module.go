// Package mqtt is the k6/x/mqtt module: an MQTT 3.1.1/5.0 load generator
// built for benchmarking brokers.
package mqtt

import (
	"runtime/debug"
	"sync"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"
	"go.k6.io/k6/js/modules"
)

// Version of this extension, shown by `k6 version` and in results.
const Version = "v0.1.0"

type (
	// RootModule is the global module instance.
	RootModule struct{}
	// ModuleInstance is the per-VU module instance.
	ModuleInstance struct {
		vu modules.VU
	}
)

var (
	_ modules.Module   = &RootModule{}
	_ modules.Instance = &ModuleInstance{}
)

// New returns the root module.
func New() *RootModule { return &RootModule{} }

// NewModuleInstance registers the metrics (init context) and returns the VU's instance.
func (*RootModule) NewModuleInstance(vu modules.VU) modules.Instance {
	tuneGCOnce()
	if env := vu.InitEnv(); env != nil {
		m, err := registerMetrics(env.Registry)
		if err != nil {
			common.Throw(vu.Runtime(), err)
		}
		global.setMetrics(m)
	}
	return &ModuleInstance{vu: vu}
}

// Exports the JS API (see index.d.ts).
func (mi *ModuleInstance) Exports() modules.Exports {
	return modules.Exports{Named: map[string]any{
		"Client":          mi.newClient,
		"PublisherGroup":  constructor(mi, newPublisherGroup),
		"SubscriberGroup": constructor(mi, newSubscriberGroup),
		"stats":           stats,
		"timeline":        global.timeline,
		"host":            host,
		"note":            notes.set,
		"notes":           notes.all,
		"version":         Version,
	}}
}

// stats returns the process-wide totals: latency summaries (ms) from the HDR
// histograms and every counter. Meant for handleSummary.
func stats() map[string]any {
	out := map[string]any{"version": Version, "k6_version": k6Version(), "counters": global.counters(),
		"process": processUsage()}
	for name, s := range global.totals() {
		out[name] = s
	}
	return out
}

// constructor makes a JS class from a Go factory: `new X(options)`, where
// invalid options throw before anything connects.
func constructor[T any](mi *ModuleInstance, make func(modules.VU, any) (T, error)) func(sobek.ConstructorCall) *sobek.Object {
	return func(call sobek.ConstructorCall) *sobek.Object {
		rt := mi.vu.Runtime()
		v, err := make(mi.vu, exportArg(call.Arguments, 0))
		if err != nil {
			common.Throw(rt, err)
		}
		return rt.ToValue(v).ToObject(rt)
	}
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

// notes is a process-wide key/value store: what a VU learns during the run
// (step boundaries, connect results) reaches handleSummary, which runs in
// another JS runtime.
var notes = &noteStore{m: map[string]any{}}

type noteStore struct {
	mu sync.Mutex
	m  map[string]any
}

func (n *noteStore) set(key string, v sobek.Value) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.m[key] = exportValue(v)
}

func (n *noteStore) all() map[string]any {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make(map[string]any, len(n.m))
	for k, v := range n.m {
		out[k] = v
	}
	return out
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
