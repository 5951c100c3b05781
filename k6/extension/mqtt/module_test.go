package mqtt

import (
	"context"
	"encoding/json"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/js/modulestest"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/metrics"
)

// testVU is a k6 VU with the module's exports, public and internal, as globals.
type testVU struct {
	rt      *modulestest.Runtime
	samples chan metrics.SampleContainer

	mu   sync.Mutex
	tags map[string]map[string]string   // metric name → tags of a sample seen
	all  map[string][]map[string]string // metric name → the tags of every sample
}

func newTestVU(t *testing.T) *testVU {
	t.Helper()
	rt := modulestest.NewRuntime(t)
	inst := New().NewModuleInstance(rt.VU)
	internal := &internalInstance{inst.(*ModuleInstance)}
	samples := make(chan metrics.SampleContainer, 10000)
	v := &testVU{rt: rt, samples: samples, tags: map[string]map[string]string{}, all: map[string][]map[string]string{}}
	go func() {
		for c := range samples { // as a k6 output would
			for _, s := range c.GetSamples() {
				v.mu.Lock()
				v.tags[s.Metric.Name] = s.Tags.Map()
				v.all[s.Metric.Name] = append(v.all[s.Metric.Name], s.Tags.Map())
				v.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { close(samples) })
	dialer := &net.Dialer{}
	rt.MoveToVUContext(&lib.State{
		Dialer:  dialerFunc(dialer.DialContext),
		Samples: samples,
		Tags:    lib.NewVUStateTags(metrics.NewRegistry().RootTagSet().With("run_id", "test")),
		Logger:  rt.VU.InitEnvField.Logger,
		VUID:    1,
	})
	for _, exports := range []modules.Exports{inst.Exports(), internal.Exports()} {
		for name, v := range exports.Named {
			if err := rt.VU.RuntimeField.Set(name, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	return v
}

// sampleTags are the tags of the last sample of metric pushed, waiting a
// little for the sample channel to be read.
func (v *testVU) sampleTags(metric string) map[string]string {
	for range 100 {
		v.mu.Lock()
		tags, ok := v.tags[metric]
		v.mu.Unlock()
		if ok {
			return tags
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// allTags are the tags of every sample of metric pushed so far.
func (v *testVU) allTags(metric string) []map[string]string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]map[string]string(nil), v.all[metric]...)
}

type dialerFunc func(ctx context.Context, network, addr string) (net.Conn, error)

func (f dialerFunc) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return f(ctx, network, addr)
}

// run executes an async JS body; whatever it assigns to `result` is
// returned as JSON-decoded data.
func (v *testVU) run(t *testing.T, body string) map[string]any {
	t.Helper()
	code := `var result = {}; var failure = null;
(async () => { ` + body + ` })().catch((e) => { failure = String(e) });`
	if _, err := v.rt.RunOnEventLoop(code); err != nil {
		t.Fatalf("script error: %v", err)
	}
	if f := v.rt.VU.RuntimeField.Get("failure"); f != nil && !f.Equals(nullValue(v)) {
		t.Fatalf("script failed: %v", f)
	}
	raw, err := json.Marshal(v.rt.VU.RuntimeField.Get("result").Export())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	_ = json.Unmarshal(raw, &out)
	return out
}

func (v *testVU) runExpectingFailure(t *testing.T, body string) string {
	t.Helper()
	code := `var failure = null;
(async () => { ` + body + ` })().catch((e) => { failure = String(e) });`
	if _, err := v.rt.RunOnEventLoop(code); err != nil {
		return err.Error()
	}
	f := v.rt.VU.RuntimeField.Get("failure")
	if f == nil || f.Equals(nullValue(v)) {
		t.Fatal("the script did not fail")
	}
	return f.String()
}

func nullValue(*testVU) sobek.Value { return sobek.Null() }
