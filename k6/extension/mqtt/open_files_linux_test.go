package mqtt

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

// lowerOpenFiles sets this test process's soft open-files limit to what
// it holds now plus room, restoring it after the test.
func lowerOpenFiles(t *testing.T, room uint64) {
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	open, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	low := was
	low.Cur = uint64(len(open)) + room
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &was) })
}

// A generator that reaches its open-files limit mid-run (EMFILE, forced
// here by lowering this process's limit under a real Mosquitto's load) is
// diagnosed as the generator's limit, never as the broker refusing.
func TestOpenFilesExhaustedMidRunIsTheGeneratorsCause(t *testing.T) {
	addr := startMosquitto(t)
	vu := newTestVU(t)
	lowerOpenFiles(t, 20)
	r := vu.run(t, fmt.Sprintf(`
const subs = new SubscriberGroup({ url: 'mqtt://%[1]s', count: 40, topic: 'fd/{i}' });
const pubs = new PublisherGroup({ url: 'mqtt://%[1]s', count: 40, topic: 'fd/{i}' });
try {
  result.subs = await subs.connect();
  try { await pubs.connect(); } catch (e) { result.pubs = String(e); }
  const out = summary({ setup_data: { run_id: 'fd', started_at: '', client_prefix: 'fd' }, metrics: {} },
    { parameters: { scenario: 'p2p', results_dir: '.', qos: 0 },
      flows: [{ name: 'p2p', publishers: 40, subscribers: 40, fanout: 1, subTopics: 'fd/{i}' }] });
  result.doc = out['./fd.json'];
} finally { subs.close(); pubs.close(); }`, addr))
	subs, _ := r["subs"].(map[string]any)
	if subs["connected"].(float64) == 0 || subs["failed"].(float64) == 0 {
		t.Fatalf("subscribers %v: want some opened and some failed at the limit", subs)
	}
	if p, _ := r["pubs"].(string); !strings.Contains(p, "too many open files") {
		t.Fatalf("publishers: %q, want every one failed on EMFILE", p)
	}
	var doc struct {
		Diagnosis struct{ Cause, Text string } `json:"diagnosis"`
	}
	if err := json.Unmarshal([]byte(r["doc"].(string)), &doc); err != nil {
		t.Fatal(err)
	}
	if d := doc.Diagnosis; d.Cause != "generator_open_files" || !strings.Contains(d.Text, "ulimit -n") {
		t.Fatalf("diagnosis %s: %s", d.Cause, d.Text)
	}
}
