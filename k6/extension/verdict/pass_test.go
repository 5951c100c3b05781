package verdict

import "testing"

func TestPassRule(t *testing.T) {
	th := Thresholds(map[string]bool{"mqtt_lost count==0": true, "mqtt_latency{flow:a} p(99)<50": true},
		[]string{"mqtt_latency"})
	if th["mqtt_lost count==0"] != true || th["mqtt_latency{flow:a} p(99)<50"] != false {
		t.Fatalf("a threshold on a metric without samples must fail, the others keep k6's: %v", th)
	}
	all := map[string]bool{"a count==0": true}
	if !Passed(all, true) || Passed(all, false) || Passed(th, true) {
		t.Fatal("passed: every threshold held and the run complete, nothing less")
	}
}

// An instance's cause must be one of Causes: "ok" is none.
func TestMergedCausesAreListed(t *testing.T) {
	if fine("ok") {
		t.Fatal(`"ok" is not a cause`)
	}
	for _, c := range []string{CauseNone, CauseNoData} {
		if !fine(c) {
			t.Fatalf("%s explains no failure", c)
		}
	}
}
