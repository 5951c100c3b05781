package result

import (
	"strings"
	"testing"
)

func TestAFieldTheTypeDoesNotHaveIsRefused(t *testing.T) {
	_, err := Decode([]byte(`{"schema": "mqtt-bench/result/v2", "run_id": "r", "rate_verdictt": null}`))
	if err == nil || !strings.Contains(err.Error(), "rate_verdictt") {
		t.Fatalf("got %v", err)
	}
}

func TestAResultIsJudgedByTheVerdictPackage(t *testing.T) {
	r, err := Decode([]byte(`{"schema": "mqtt-bench/result/v2", "passed": true, "parameters": {"qos": 1},
	 "counts": {"mqtt_receives": 100, "mqtt_out_of_order": 2}, "steps": [{"target_rate": 100, "achieved_rate": 90}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Judge(); err != nil {
		t.Fatal(err)
	}
	if r.RateVerdict == nil || r.Ordering.OutOfOrder != 2 || r.Policy.RateReached == 0 || r.Diagnosis.Cause == "" {
		t.Fatalf("%+v", r)
	}
}

func TestTheMergeOnlyFactsAreOptionalInTheSchemaUnderTheirOwnKey(t *testing.T) {
	s := Schema()
	for _, name := range s["required"].([]string) {
		if name == "merge" || name == "connect" {
			t.Fatalf("%s required", name)
		}
	}
	props := s["properties"].(map[string]any)
	if props["instances"] != nil || props["merged_at"] != nil {
		t.Fatal("merge-only facts at the top level")
	}
	merge := props["merge"].(map[string]any)["properties"].(map[string]any)
	if merge["instances"] == nil || merge["merged_at"] == nil {
		t.Fatalf("merge: %v", merge)
	}
}

// A single run's delivery is accounted from its streams by the merge's
// rule, beside what its subscriber group saw: one shape for both.
func TestASingleRunsDeliveryIsAccountedFromItsStreams(t *testing.T) {
	r, err := Decode([]byte(`{"schema": "", "flows": [{"name": "p2p", "fanout": 1}],
	 "streams": {"p2p": {"publishers": [[0, 10, 1], [1, 10, 0]], "receivers": [[0, 0, 8, 1, 0], [1, 1, 10, 0, 0]]}},
	 "delivery": {"p2p": {"clients": 2, "connected": 2, "received": 19, "min_per_client": 9, "max_per_client": 10,
	   "polled_sockets": 2, "granted_qos": 1, "probes_received": 0, "unique": 18, "lost": 1, "duplicates": 1,
	   "out_of_order": 0, "streams": 2, "expected": 19}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Judge(); err != nil {
		t.Fatal(err)
	}
	d := r.Delivery["p2p"]
	if d.Sent != 20 || d.Rejected != 1 || d.Expected == nil || *d.Expected != 19 || d.Unique != 18 || d.Lost != 1 ||
		d.Publishers != 2 || d.Received != 19 || d.Clients != 2 || d.GrantedQoS != 1 || d.MinPerClient != 9 {
		t.Fatalf("%+v", d)
	}
}

// One instance of a segmented run sees part of the streams (here the
// publisher and half the subscribers of a fanout flow): its delivery stays
// its group's own view, not the flow's fanout held to its part.
func TestAnInstanceFileKeepsItsGroupsOwnDelivery(t *testing.T) {
	r, err := Decode([]byte(`{"schema": "", "flows": [{"name": "fanout", "fanout": 4}],
	 "instance": {"segment": "0:1/2", "sequence": "0,1/2,1", "index": 0, "count": 2},
	 "streams": {"fanout": {"publishers": [[0, 10, 0]], "receivers": [[0, 0, 10, 0, 0], [1, 0, 10, 0, 0]]}},
	 "delivery": {"fanout": {"clients": 2, "connected": 2, "received": 20, "min_per_client": 10, "max_per_client": 10,
	   "polled_sockets": 2, "granted_qos": 1, "probes_received": 0, "unique": 20, "lost": 0, "duplicates": 0,
	   "out_of_order": 0, "streams": 2, "expected": 0}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Judge(); err != nil {
		t.Fatal(err)
	}
	if d := r.Delivery["fanout"]; d.Lost != 0 || d.Unique != 20 || d.Clients != 2 {
		t.Fatalf("%+v", d)
	}
}

// A run stopped before its subscribers drained has streams but no group:
// no SUBACK is known, so no granted QoS.
func TestAFlowWithoutAGroupHasNoGrantedQoS(t *testing.T) {
	d := Account(map[string]int64{"p2p": 1}, nil, map[string]FlowStreams{"p2p": {
		Publishers: []PublisherRow{{ID: 0, Sent: 5}}}})["p2p"]
	if d.GrantedQoS != -1 || d.Clients != 0 {
		t.Fatalf("%+v", d)
	}
}

// A connection scenario has no streams, and says so in its file: a merge
// of its instances finds them all accounted, with nothing unknown.
func TestAResultWithNoStreamsKeepsTheKey(t *testing.T) {
	r, err := Decode([]byte(`{"schema": "", "streams": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Encode()
	if err != nil || !strings.Contains(string(b), `"streams": {}`) {
		t.Fatalf("%s (%v)", b, err)
	}
}

func TestTheImpairedNetworkPathIsKeptInTheFile(t *testing.T) {
	r, err := Decode([]byte(`{"schema": "mqtt-bench/result/v1", "network": {"profile": "wan",
	 "toxics": [{"name": "latency_up", "type": "latency", "stream": "upstream", "attributes": {"latency": 40}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Encode()
	if err != nil || !strings.Contains(string(b), `"profile": "wan"`) || !strings.Contains(string(b), `"latency": 40`) {
		t.Fatalf("%v %s", err, b)
	}
}
