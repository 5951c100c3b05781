package result

import (
	"strings"
	"testing"
)

func TestAFieldTheTypeDoesNotHaveIsRefused(t *testing.T) {
	_, err := Decode([]byte(`{"schema": "mqtt-bench/result/v1", "run_id": "r", "rate_verdictt": null}`))
	if err == nil || !strings.Contains(err.Error(), "rate_verdictt") {
		t.Fatalf("got %v", err)
	}
}

func TestAResultIsJudgedByTheVerdictPackage(t *testing.T) {
	r, err := Decode([]byte(`{"schema": "mqtt-bench/result/v1", "passed": true, "parameters": {"qos": 1},
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

func TestTheMergeOnlyFactsAreOptionalInTheSchema(t *testing.T) {
	req := Schema()["required"].([]string)
	for _, name := range req {
		if name == "instances" || name == "merged_at" || name == "connect" {
			t.Fatalf("%s required", name)
		}
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
