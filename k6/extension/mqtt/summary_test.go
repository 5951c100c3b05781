package mqtt

import (
	"errors"
	"reflect"
	"testing"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
)

// k6's end-of-test data gives each threshold's verdict by metric and
// expression; the result keys them "<metric> <expression>" and keeps k6's
// values of the metrics that have thresholds, and only of those.
func TestThresholdsAreReadFromK6sSummaryData(t *testing.T) {
	data := map[string]any{"metrics": map[string]any{
		"mqtt_lost": map[string]any{"type": "counter", "values": map[string]any{"count": 0.0},
			"thresholds": map[string]any{"count==0": map[string]any{"ok": true}}},
		"mqtt_latency{flow:a}": map[string]any{"type": "gauge", "values": map[string]any{"value": 80.0},
			"thresholds": map[string]any{"value<50": map[string]any{"ok": false}}},
		"mqtt_receives": map[string]any{"type": "counter", "values": map[string]any{"count": 9.0}},
	}}
	ok, judged, values := thresholdsOf(data)
	if want := map[string]bool{"mqtt_lost count==0": true, "mqtt_latency{flow:a} value<50": false}; !reflect.DeepEqual(ok, want) {
		t.Errorf("thresholds %v, want %v", ok, want)
	}
	if want := []string{"mqtt_latency{flow:a}", "mqtt_lost"}; !reflect.DeepEqual(judged, want) {
		t.Errorf("judged %v, want %v", judged, want)
	}
	if _, has := values["mqtt_receives"]; has || len(values) != 2 {
		t.Errorf("values %v: only the metrics with thresholds", values)
	}
}

// An instance of several writes <run id>.seg-<i>-of-<n>.json, a test in
// one instance <run id>.json: the merge finds the instances by that name.
func TestInstanceSuffix(t *testing.T) {
	for seg, want := range map[*result.Segment]string{
		nil: "", {Index: 0, Count: 1}: "", {Index: 1, Count: 4}: ".seg-2-of-4",
	} {
		if got := instanceSuffix(seg); got != want {
			t.Errorf("instanceSuffix(%+v) = %q, want %q", seg, got, want)
		}
	}
}

// A group's connect() that rejected leaves its error for the diagnosis;
// a drain's received count is what nothingReceived reads.
func TestTheRecordKeepsWhatGroupsFound(t *testing.T) {
	rr := newRunRecord()
	rr.connected("sub", "p2p", nil, errors.New("refused"))
	rr.connected("pub", "p2p", map[string]any{"connected": 4}, nil)
	rr.drained("p2p", map[string]any{"received": int64(7)})
	if rr.connect["sub_p2p"]["error"] != "refused" || rr.connect["pub_p2p"]["connected"] != 4 {
		t.Errorf("connect %v", rr.connect)
	}
	if rr.received("p2p") != 7 || rr.received("other") != 0 {
		t.Errorf("received %v and %v", rr.received("p2p"), rr.received("other"))
	}
}
