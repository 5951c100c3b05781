package merge

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.k6.io/k6/errext"
	"go.k6.io/k6/errext/exitcodes"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
)

// The schemas of the files a run's instances leave in the results
// directory: a claim while an instance runs (or after it died), its result
// once k6's handleSummary has written it.
const (
	InstanceSchema = result.InstanceSchema
	ClaimSchema    = result.ClaimSchema
	ResultSchema   = result.ResultSchema
)

// segFile is an instance file's name: <run id>.seg-<i>-of-<n>.json, i being
// 1-based. A run id may contain dots, so the name is read from its end.
var segFile = regexp.MustCompile(`\.seg-(\d+)-of-(\d+)\.json$`)

// badInput marks what the user must fix (a file, an option): k6 exits with
// InvalidConfig (104) on it.
func badInput(err error) error { return errext.WithExitCodeIfNone(err, exitcodes.InvalidConfig) }

// instance is one finished instance file: a result document of one
// execution segment.
type instance struct {
	path string
	file string
	seg  int // 1-based, from the file name
	of   int

	*result.Result
	host result.HostInfo
}

// claim is the file of an instance that has not written its result: it is
// running, or it died.
type claim struct {
	file      string
	seg, of   int
	RunID     string `json:"run_id"`
	PID       int    `json:"pid"`
	Host      string `json:"host"`
	ClaimedAt string `json:"claimed_at"`
}

func (c *claim) describe() string {
	return fmt.Sprintf("%d/%d (%s: claimed by pid %d on host %s at %s, no result: it died or is still running)",
		c.seg, c.of, segName(c.seg, c.of), c.PID, c.Host, c.ClaimedAt)
}

func segName(i, n int) string { return fmt.Sprintf("seg-%d-of-%d", i, n) }

// runFiles is what the results directory holds of one run.
type runFiles struct {
	n         int
	instances []*instance // finished, by segment
	claims    []*claim
}

// readRun finds and reads every file of runID's instances in dir, and
// checks that they are the instances of one split of one run.
func readRun(dir, runID string) (*runFiles, error) {
	if runID == "" || strings.ContainsAny(runID, `/\`) {
		return nil, badInput(fmt.Errorf("RUN_ID %q is not a run id: give the RUN_ID the instances ran with "+
			"(letters, digits, '.', '_' or '-'), e.g. k6 x mqtt-merge p2p-mosquitto-run1", runID))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, badInput(fmt.Errorf("--dir %s cannot be read (%v): give the RESULTS_DIR the instances wrote to", dir, err))
	}
	rf := &runFiles{}
	var first string // the file that fixed n
	for _, e := range entries {
		name := e.Name()
		m := segFile.FindStringSubmatchIndex(name)
		if e.IsDir() || m == nil || name[:m[0]] != runID {
			continue
		}
		seg, _ := strconv.Atoi(name[m[2]:m[3]])
		of, _ := strconv.Atoi(name[m[4]:m[5]])
		if of < 1 || seg < 1 || seg > of {
			return nil, badInput(fmt.Errorf("%s: segment %d of %d does not exist: the file was not written by "+
				"an instance; move it out of %s", filepath.Join(dir, name), seg, of, dir))
		}
		if rf.n == 0 {
			rf.n, first = of, name
		} else if of != rf.n {
			return nil, badInput(fmt.Errorf("%s and %s are from two splits of run %s (%d and %d instances): "+
				"a run id is for one split; move the files of the other attempt out of %s", first, name, runID, rf.n, of, dir))
		}
		in, cl, err := readFile(filepath.Join(dir, name), seg, of)
		if err != nil {
			return nil, err
		}
		if in != nil {
			rf.instances = append(rf.instances, in)
		} else {
			rf.claims = append(rf.claims, cl)
		}
	}
	if len(rf.instances) == 0 {
		what := "no file of its instances"
		fix := fmt.Sprintf("run its instances with RUN_ID=%s and RESULTS_DIR=%s, or pass --dir with the RESULTS_DIR they wrote to", runID, dir)
		if len(rf.claims) > 0 {
			var cs []string
			for _, c := range rf.claims {
				cs = append(cs, c.describe())
			}
			what = "no finished instance, only claims: " + strings.Join(cs, "; ")
			fix = "wait for the instances to end, or rerun the run if they died"
		}
		return nil, badInput(fmt.Errorf("run %s: %s in %s (expected %s.seg-<i>-of-<n>.json): %s", runID, what, dir, runID, fix))
	}
	sort.Slice(rf.instances, func(i, j int) bool { return rf.instances[i].seg < rf.instances[j].seg })
	sort.Slice(rf.claims, func(i, j int) bool { return rf.claims[i].seg < rf.claims[j].seg })
	if err := rf.check(runID); err != nil {
		return nil, badInput(err)
	}
	return rf, nil
}

// readFile reads one file of the run: an instance result or a claim.
func readFile(path string, seg, of int) (*instance, *claim, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, badInput(fmt.Errorf("%s cannot be read (%v): fix its permissions, or move it out of the directory", path, err))
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, nil, badInput(fmt.Errorf("%s is not valid JSON (%v): an instance still writing it, or a damaged "+
			"file; merge again once the instance has ended, or rerun that instance", path, err))
	}
	switch head.Schema {
	case ClaimSchema:
		c := &claim{file: filepath.Base(path), seg: seg, of: of}
		if err := json.Unmarshal(b, c); err != nil {
			return nil, nil, badInput(fmt.Errorf("%s: a claim that cannot be read (%v): move it out of the directory", path, err))
		}
		return nil, c, nil
	case InstanceSchema:
		r, err := result.Decode(b)
		if err == nil && r.Instance == nil {
			err = errors.New("it has no instance")
		}
		if err != nil {
			return nil, nil, badInput(fmt.Errorf("%s: an instance result that cannot be read (%v): it was written by "+
				"another version of k6/lib; rerun the instances with one checkout", path, err))
		}
		in := &instance{path: path, file: filepath.Base(path), seg: seg, of: of, Result: r}
		if in.host, err = r.HostInfo(); err != nil {
			return nil, nil, badInput(fmt.Errorf("%s: host cannot be read (%v)", path, err))
		}
		if in.host.Hostname == "" {
			in.host.Hostname = "unknown"
		}
		return in, nil, nil
	}
	return nil, nil, badInput(fmt.Errorf("%s has schema %q, neither an instance result (%s) nor a claim (%s): "+
		"it is no instance's file; move it out of the directory", path, head.Schema, InstanceSchema, ClaimSchema))
}

// ignoredParameters may differ between the instances of one run: where
// each host keeps its results, each instance's own source address, and
// the legacy per-process SEGMENT. A parameter added per instance belongs
// here too, or every merge of a run that sets it is refused.
func ignoredParameters() map[string]bool {
	return map[string]bool{"results_dir": true, "local_address": true, "segment": true}
}

// check holds the files to one run and one split: a merge of instances that
// ran other parameters would describe no run.
func (rf *runFiles) check(runID string) error {
	a := rf.instances[0]
	for _, in := range rf.instances {
		if in.RunID != runID {
			return fmt.Errorf("%s: its run_id is %q, not %s: the file was renamed or copied; move it out of the directory", in.path, in.RunID, runID)
		}
		if in.Instance.Count != in.of || in.Instance.Index != in.seg-1 {
			return fmt.Errorf("%s: its name says segment %d of %d, its instance says index %d (0-based) of %d: "+
				"the file was renamed; give it its instance's name (%s.%s.json)",
				in.path, in.seg, in.of, in.Instance.Index, in.Instance.Count, runID, segName(in.Instance.Index+1, in.Instance.Count))
		}
		if in.Instance.Sequence != a.Instance.Sequence {
			return fmt.Errorf("%s and %s ran different execution segment sequences (%q and %q): run every instance "+
				"with the same --execution-segment-sequence", a.file, in.file, a.Instance.Sequence, in.Instance.Sequence)
		}
		if in.Scenario != a.Scenario || in.Broker != a.Broker {
			return fmt.Errorf("%s ran %s on %s, %s ran %s on %s: the instances of a run run one scenario on one broker; "+
				"move the other run's file out, or give each run its own RUN_ID", a.file, a.Scenario, a.Broker, in.file, in.Scenario, in.Broker)
		}
		if k, ok := differingKey(a.Parameters, in.Parameters, ignoredParameters()); ok {
			return fmt.Errorf("%s and %s ran with different parameters (%s: %s and %s): every instance of a run takes "+
				"the same environment; rerun with one set", a.file, in.file, k, show(a.Parameters[k]), show(in.Parameters[k]))
		}
		if err := sameFlows(a, in); err != nil {
			return err
		}
	}
	for _, c := range rf.claims {
		if c.RunID != "" && c.RunID != runID {
			return fmt.Errorf("%s: a claim of run %q, not %s: move it out of the directory", c.file, c.RunID, runID)
		}
	}
	return nil
}

// sameFlows: the delivery accounting merges flows by name and checks
// each one's fanout, so those must agree.
func sameFlows(a, b *instance) error {
	fa, fb := result.FanoutsOf(a.Flows), result.FanoutsOf(b.Flows)
	if !reflect.DeepEqual(fa, fb) {
		return fmt.Errorf("%s and %s describe different flows (name: fanout %v and %v): every instance of a run runs "+
			"the same scenario; rerun them from one checkout", a.file, b.file, fa, fb)
	}
	return nil
}

// differingKey is the first key (sorted) whose values differ.
func differingKey(a, b map[string]any, ignore map[string]bool) (string, bool) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		if !ignore[k] {
			sorted = append(sorted, k)
		}
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if !reflect.DeepEqual(a[k], b[k]) {
			return k, true
		}
	}
	return "", false
}

func show(v any) string {
	if v == nil {
		return "absent"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// checkTarget refuses to overwrite a result that a merge did not write:
// the result of a single-process run with this id, or a claim of one.
func checkTarget(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return badInput(fmt.Errorf("%s exists and cannot be read (%v): move it away to merge into it", path, err))
	}
	var prev map[string]json.RawMessage
	// A merge's file: merge (this version), or instances at the top level
	// (a merge of the previous version, whose run is merged again).
	if json.Unmarshal(b, &prev) == nil && (prev["merge"] != nil || prev["instances"] != nil) {
		return nil
	}
	return badInput(fmt.Errorf("%s exists and is not a merged result (no \"merge\"): it is another run's "+
		"result or claim, which a merge never overwrites; move it away, or merge with another --dir", path))
}
