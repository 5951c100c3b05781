package merge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// passingInstance is instance i of n of a run that passed on its own.
func passingInstance(runID string, i, n int) obj {
	d := instanceDoc(runID, i, n)
	d["thresholds"] = obj{"mqtt_connects count>=1": true}
	d["metrics"] = obj{"mqtt_connects": obj{"type": "counter", "values": obj{"count": 1}}}
	d["counts"] = obj{"mqtt_connects": 1}
	return d
}

func TestIncompleteRunFailsAndNamesTheMissingInstances(t *testing.T) {
	dir := t.TempDir()
	for _, i := range []int{1, 3, 4} {
		writeInstance(t, dir, passingInstance("p2p.run", i, 4))
	}
	r := mustMerge(t, dir, "p2p.run")
	if r.Passed || !r.Merge.Incomplete || r.Merge.InstancesExpected != 4 || len(r.Merge.Instances) != 3 {
		t.Fatalf("passed %v incomplete %v expected %d instances %d", r.Passed, r.Merge.Incomplete, r.Merge.InstancesExpected, len(r.Merge.Instances))
	}
	if len(r.Merge.MissingInstances) != 1 || r.Merge.MissingInstances[0] != "2/4 (seg-2-of-4: no file)" {
		t.Errorf("missing_instances = %q", r.Merge.MissingInstances)
	}
	if r.Diagnosis.Cause != "incomplete" || !strings.Contains(r.Diagnosis.Text, "2/4") {
		t.Errorf("diagnosis %+v", r.Diagnosis)
	}
	if !r.Thresholds["mqtt_connects count>=1"] {
		t.Errorf("thresholds %v: every present instance passed", r.Thresholds)
	}
	out, code, err := execute(t, nil, "p2p.run", "--dir", dir)
	if code != 99 || err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("exit code %d (%v), want 99 naming the incomplete run", code, err)
	}
	if !strings.Contains(out, "FAILED (run p2p.run, 3 of 4 instances on 1 host)") || !strings.Contains(out, "missing       2/4") {
		t.Errorf("summary:\n%s", out)
	}
}

func TestClaimedInstanceIsNamedAsDiedOrRunning(t *testing.T) {
	dir := t.TempDir()
	writeInstance(t, dir, passingInstance("r", 1, 2))
	writeClaim(t, dir, "r", 2, 2)
	r := mustMerge(t, dir, "r")
	want := "2/2 (seg-2-of-2: claimed by pid 123 on host gen9 at 2025-01-01T10:00:00Z, no result: it died or is still running)"
	if r.Passed || len(r.Merge.MissingInstances) != 1 || r.Merge.MissingInstances[0] != want {
		t.Fatalf("passed %v, missing_instances %q", r.Passed, r.Merge.MissingInstances)
	}
	if _, code, _ := execute(t, nil, "r", "--dir", dir); code != 99 {
		t.Errorf("exit code %d, want 99", code)
	}
}

func TestNoInstanceFileIsBadInputNamingTheRunAndDir(t *testing.T) {
	dir := t.TempDir()
	writeInstance(t, dir, passingInstance("other", 1, 1))
	writeJSON(t, filepath.Join(dir, "r.json"), obj{"schema": ResultSchema}) // not an instance file
	_, code, err := execute(t, nil, "r", "--dir", dir)
	if code != 104 || err == nil || !strings.Contains(err.Error(), "run r") || !strings.Contains(err.Error(), dir) ||
		!strings.Contains(err.Error(), "RUN_ID=r") {
		t.Fatalf("exit code %d, err %v: want 104 naming run r, %s and the fix", code, err, dir)
	}
	// Only claims: nothing finished to merge.
	writeClaim(t, dir, "r", 1, 1)
	if _, code, err := execute(t, nil, "r", "--dir", dir); code != 104 || !strings.Contains(err.Error(), "claimed by pid 123") {
		t.Fatalf("exit code %d, err %v", code, err)
	}
	if _, code, err := execute(t, nil, "r", "--dir", filepath.Join(dir, "nope")); code != 104 || !strings.Contains(err.Error(), "--dir") {
		t.Fatalf("missing dir: exit code %d, err %v", code, err)
	}
	if _, code, _ := execute(t, nil, "--dir", dir); code != 104 {
		t.Fatalf("no RUN_ID: exit code %d, want 104", code)
	}
	if _, code, _ := execute(t, nil, "r", "--no-such-flag"); code != 104 {
		t.Fatalf("unknown flag: exit code %d, want 104", code)
	}
}

func TestInconsistentInstanceFilesAreBadInput(t *testing.T) {
	cases := map[string]struct {
		second func(dir string)
		want   string
	}{
		"other parameters": {func(dir string) {
			d := passingInstance("r", 2, 2)
			d["parameters"].(obj)["qos"] = 0
			writeInstance(t, dir, d)
		}, "parameters (qos: 1 and 0)"},
		"other scenario": {func(dir string) {
			d := passingInstance("r", 2, 2)
			d["scenario"] = "fanout"
			writeInstance(t, dir, d)
		}, "ran p2p on mosquitto"},
		"other split": {func(dir string) {
			writeInstance(t, dir, passingInstance("r", 2, 3))
		}, "two splits"},
		"other sequence": {func(dir string) {
			d := passingInstance("r", 2, 2)
			d["instance"].(obj)["sequence"] = "0,1/3,1"
			writeInstance(t, dir, d)
		}, "execution segment sequences"},
		"renamed file": {func(dir string) {
			writeJSON(t, instancePath(dir, "r", 2, 2), passingInstance("r", 1, 2))
		}, "renamed"},
		"broken JSON": {func(dir string) {
			if err := os.WriteFile(instancePath(dir, "r", 2, 2), []byte(`{"schema": "mqtt-bench/res`), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "r.seg-2-of-2.json is not valid JSON"},
		"unknown schema": {func(dir string) {
			writeJSON(t, instancePath(dir, "r", 2, 2), obj{"schema": "something/else"})
		}, `schema "something/else"`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeInstance(t, dir, passingInstance("r", 1, 2))
			c.second(dir)
			_, code, err := execute(t, nil, "r", "--dir", dir)
			if code != 104 || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("exit code %d, err %v: want 104 with %q", code, err, c.want)
			}
			if _, statErr := os.Stat(ResultPath(dir, "r")); statErr == nil {
				t.Fatal("a merged result was written from bad input")
			}
		})
	}
}

// results_dir is where each host kept its files, local_address each
// instance's source address: they may differ.
func TestPerInstanceParametersMayDifferBetweenInstances(t *testing.T) {
	dir := t.TempDir()
	writeInstance(t, dir, passingInstance("r", 1, 2))
	writeInstance(t, dir, passingInstance("r", 2, 2))
	if r := mustMerge(t, dir, "r"); !r.Passed {
		t.Fatalf("failed: %+v", r.Diagnosis)
	}
}

func TestCommandWritesTheMergedResultAndRefusesToOverwriteAnother(t *testing.T) {
	dir := t.TempDir()
	a, b := passingInstance("r", 1, 2), passingInstance("r", 2, 2)
	b["host"] = obj{"hostname": "gen2", "cpus": 4}
	a["timeline"] = []any{obj{"t": 1000400, "published": 10, "received": 10, "connections": 2, "target_rate": 10,
		"latency_avg_ms": 2.0, "latency_p50_ms": 2, "latency_p99_ms": 3, "latency_max_ms": 4, "send_lag_p99_ms": 1}}
	b["timeline"] = []any{obj{"t": 999700, "published": 5, "received": 30, "connections": 2, "target_rate": 10,
		"latency_avg_ms": 4.0, "latency_p50_ms": 3, "latency_p99_ms": 9, "latency_max_ms": 12, "send_lag_p99_ms": 0.5}}
	a["steps"] = []any{obj{"rate": 20, "duration": "30s", "payload": 16, "start": 1000, "end": 31000, "sent": 300, "target_rate": 10, "achieved_rate": 10}}
	b["steps"] = []any{obj{"rate": 20, "duration": "30s", "payload": 16, "start": 900, "end": 31500, "sent": 290, "target_rate": 10, "achieved_rate": 9.5}}
	b["outages"] = []any{obj{"start_ms": 5000, "end_ms": nil, "duration_s": 3, "max_down": 2}}
	writeInstance(t, dir, a)
	writeInstance(t, dir, b)

	env := map[string]string{"RESULTS_DIR": dir}
	out, code, err := execute(t, env, "r")
	if code != 0 {
		t.Fatalf("exit code %d (%v):\n%s", code, err, out)
	}
	path := filepath.Join(dir, "r.json")
	if !strings.Contains(out, "PASSED (run r, 2 of 2 instances on 2 hosts)") || !strings.Contains(out, path) ||
		!strings.Contains(out, "clock skew") {
		t.Errorf("summary:\n%s", out)
	}
	var got map[string]any
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	// What only a merge knows sits under "merge".
	merged, _ := got["merge"].(map[string]any)
	if got["schema"] != ResultSchema || merged["instances"] == nil || got["passed"] != true || got["instances"] != nil {
		t.Fatalf("written result: schema %v, merge %v, passed %v", got["schema"], merged, got["passed"])
	}
	clock := merged["clock"].(map[string]any)
	if clock["skew_risk"] != true || !strings.Contains(clock["text"].(string), "gen1: synchronized, max error 1.500 ms") ||
		!strings.Contains(clock["text"].(string), "gen2: error not known") {
		t.Errorf("clock %v", clock)
	}
	tl := got["timeline"].([]any)
	if len(tl) != 1 {
		t.Fatalf("timeline %v: rows of one second must merge", tl)
	}
	row := tl[0].(map[string]any)
	if row["t"] != 1000000.0 || row["published"] != 15.0 || row["received"] != 40.0 || row["latency_avg_ms"] != 3.5 ||
		row["latency_p99_ms"] != 9.0 || row["send_lag_p99_ms"] != 1.0 {
		t.Errorf("timeline row %v", row)
	}
	step := got["steps"].([]any)[0].(map[string]any)
	if step["start"] != 900.0 || step["end"] != 31500.0 || step["sent"] != 590.0 || step["achieved_rate"] != 19.5 || step["rate"] != 20.0 {
		t.Errorf("step %v", step)
	}
	if o := got["outages"].([]any); len(o) != 1 || o[0].(map[string]any)["instance"] != 1.0 {
		t.Errorf("outages %v", o)
	}
	if g := got["generator"].(map[string]any); g["cpu_user_s"] != 3.0 || g["max_rss_kb"] != 2000.0 {
		t.Errorf("generator %v", g)
	}
	if merged["started_at_spread_s"] != 1.0 || got["started_at"] != "2025-01-01T10:00:01.000Z" || got["ended_at"] != "2025-01-01T10:01:02.000Z" {
		t.Errorf("started_at %v ended_at %v spread %v", got["started_at"], got["ended_at"], merged["started_at_spread_s"])
	}

	// An earlier merge is replaced.
	if _, code, err := execute(t, env, "r"); code != 0 {
		t.Fatalf("merging again: exit code %d (%v)", code, err)
	}
	// Any other result at that path is not.
	single := []byte(`{"schema": "mqtt-bench/result/v2", "run_id": "r", "passed": true}`)
	if err := os.WriteFile(path, single, 0o644); err != nil {
		t.Fatal(err)
	}
	_, code, err = execute(t, env, "r")
	if code != 104 || !strings.Contains(err.Error(), "not a merged result") || !strings.Contains(err.Error(), path) {
		t.Fatalf("exit code %d, err %v: want 104 refusing to overwrite %s", code, err, path)
	}
	if now, _ := os.ReadFile(path); string(now) != string(single) {
		t.Fatal("the single-process result was overwritten")
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".r.merge-*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestHelpNamesTheDefaultDirectory(t *testing.T) {
	out, code, err := execute(t, map[string]string{"RESULTS_DIR": "/data/raw"}, "--help")
	if code != 0 || !strings.Contains(out, "$RESULTS_DIR if set, else ./reports/raw") || !strings.Contains(out, `(default "/data/raw")`) {
		t.Fatalf("exit code %d (%v), help:\n%s", code, err, out)
	}
}

// An instance stopped before its planned end (a signal, an abort) wrote a
// result for part of its share: the run is incomplete and fails.
func TestStoppedInstanceLeavesTheRunIncomplete(t *testing.T) {
	dir := t.TempDir()
	for i := 1; i <= 2; i++ {
		d := passingInstance("r", i, 2)
		d["completed"] = i == 1
		writeInstance(t, dir, d)
	}
	r := mustMerge(t, dir, "r")
	if r.Passed || !r.Merge.Incomplete || len(r.Merge.MissingInstances) != 1 || !strings.Contains(r.Merge.MissingInstances[0], "2/2") ||
		!strings.Contains(r.Merge.MissingInstances[0], "stopped before its planned end") {
		t.Fatalf("passed %v incomplete %v missing %q", r.Passed, r.Merge.Incomplete, r.Merge.MissingInstances)
	}
}

// Containers of one host have hostnames of their own and one clock (the
// kernel's, named by its boot id): no skew risk; two kernels are.
func TestClockSkewRiskFollowsKernelsNotHostnames(t *testing.T) {
	for _, c := range []struct {
		boots [2]string
		risk  bool
	}{{[2]string{"b1", "b1"}, false}, {[2]string{"b1", "b2"}, true}} {
		dir := t.TempDir()
		for i := 1; i <= 2; i++ {
			d := passingInstance("r", i, 2)
			d["host"] = obj{"hostname": "container-" + itoa(i), "boot_id": c.boots[i-1]}
			writeInstance(t, dir, d)
		}
		r := mustMerge(t, dir, "r")
		if r.Merge.Clock.SkewRisk != c.risk || len(r.Merge.Hosts) != 2 {
			t.Errorf("boot ids %v: skew risk %v (hosts %v), want %v", c.boots, r.Merge.Clock.SkewRisk, r.Merge.Hosts, c.risk)
		}
	}
}
