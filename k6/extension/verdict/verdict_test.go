package verdict

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
)

// doc reads a result document as the file holds it.
func doc(t *testing.T, js string) *Doc {
	t.Helper()
	var d Doc
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

// A p2p run at QoS 1: 4,000 sent on schedule, every one delivered.
const base = `"parameters": {"qos": 1, "p99_ms": 1000},
 "flows": [{"publishers": 20, "subscribers": 20, "fanout": 1, "subTopics": "test/{i}"}],
 "host": {"cpus": 2}, "duration_s": 16.1, "generator": {"cpu_user_s": 0.5, "cpu_system_s": 0.2},
 "steps": [{"target_rate": 400, "achieved_rate": 400, "missed_window": 0, "window_full": 0}]`

func counts(extra string) string {
	return `"counts": {"mqtt_connects": 40, "mqtt_publishes": 4000, "mqtt_receives": 4000` + extra + `}`
}

func TestSlowAcksWithSendsOnTimeAreTheBrokersLatencyNeverTheGenerator(t *testing.T) {
	d := doc(t, `{`+base+`, `+counts("")+`, "passed": false,
	 "thresholds": {"mqtt_latency_p99 value<1000": false, "mqtt_rate_shortfalls count==0": true},
	 "latency_ms": {"pub_to_sub": {"count": 4000, "p99": 1503.2}, "puback": {"count": 4000, "p99": 1502.9},
	  "send_lag": {"count": 4000, "p99": 1.1}}}`)
	g := Diagnose(d)
	if g.Cause != CauseBrokerLatency || !strings.Contains(g.Text, "PUBACK p99 1502.9 ms") ||
		!strings.Contains(g.Text, "latency p99 1503.2 ms") {
		t.Fatalf("got %s: %s", g.Cause, g.Text)
	}
	if RateVerdict(d) != nil {
		t.Fatalf("rate verdict %q on a rate sent on schedule", *RateVerdict(d))
	}
}

func TestLateSendsOfTheSchedulerAreTheGenerators(t *testing.T) {
	d := doc(t, `{`+base+`, `+counts(`, "mqtt_missed_sends": 600`)+`, "passed": false,
	 "steps": [{"target_rate": 400, "achieved_rate": 340, "missed_window": 0, "window_full": 0}],
	 "thresholds": {"mqtt_missed_sends count==0": false}}`)
	if g := Diagnose(d); g.Cause != CauseGenerator {
		t.Fatalf("got %s: %s", g.Cause, g.Text)
	}
	if v := RateVerdict(d); v == nil || !strings.Contains(*v, "600 messages") {
		t.Fatalf("rate verdict %v", v)
	}
}

func TestAStepIsReachedAtTheRateReachedShare(t *testing.T) {
	at := Step{TargetRate: 1000, AchievedRate: 1000 * RateReached}
	below := Step{TargetRate: 1000, AchievedRate: 1000*RateReached - 1}
	if !Reached(at) || Reached(below) || Shortfalls([]Step{at, below, below}) != 2 {
		t.Fatal("the 95% rule")
	}
}

func TestOutOfOrderDeliveriesAreNamedWithCountShareAndSection(t *testing.T) {
	d := doc(t, `{`+base+`, `+counts(`, "mqtt_out_of_order": 40`)+`, "passed": true, "thresholds": {}}`)
	o := Order(d)
	if !o.Judged || o.Share != 0.01 || !strings.Contains(o.Text, "40 of 4000 deliveries (1.000%)") ||
		!strings.Contains(o.Text, "section 4.6") {
		t.Fatalf("%+v", o)
	}
	if g := Diagnose(d); g.Cause != CauseNone || !strings.Contains(g.Text, "violated message ordering") {
		t.Fatalf("got %s: %s", g.Cause, g.Text)
	}
}

func TestStrictOrderMakesAnOrderingViolationTheCause(t *testing.T) {
	d := doc(t, `{`+base+`, `+counts(`, "mqtt_out_of_order": 3`)+`, "passed": false,
	 "thresholds": {"mqtt_out_of_order count==0": false}}`)
	if g := Diagnose(d); g.Cause != CauseBrokerOrdering || !strings.Contains(g.Text, "STRICT_ORDER") {
		t.Fatalf("got %s: %s", g.Cause, g.Text)
	}
}

// MQTT-4.6.0-6 orders a topic's PUBLISH packets per client at every QoS:
// at QoS 0 one may be lost, but those delivered keep their order.
func TestOrderIsJudgedAtQoS0CitingTheNormativeStatement(t *testing.T) {
	d := doc(t, `{`+strings.Replace(base, `"qos": 1`, `"qos": 0`, 1)+`, `+counts(`, "mqtt_out_of_order": 5`)+`,
	 "passed": false, "thresholds": {"mqtt_out_of_order count==0": false}}`)
	o := Order(d)
	if !o.Judged || o.Why != "" || !strings.Contains(o.Text, "5 of 4000 deliveries") ||
		!strings.Contains(o.Text, "non-shared QoS 0 subscriptions") || !strings.Contains(o.Text, "[MQTT-4.6.0-6]") {
		t.Fatalf("%+v", o)
	}
	if g := Diagnose(d); g.Cause != CauseBrokerOrdering || !strings.Contains(g.Text, "[MQTT-4.6.0-6]") {
		t.Fatalf("got %s: %s", g.Cause, g.Text)
	}
}

// A share group spreads a topic over its subscribers: MQTT 5.0 section
// 4.8.2 asks no order across them, at any QoS.
func TestOrderIsNotJudgedOnSharedSubscriptions(t *testing.T) {
	for _, qos := range []string{"0", "1", "2"} {
		b := strings.Replace(base, `"qos": 1`, `"qos": `+qos, 1)
		d := doc(t, `{`+strings.Replace(b, `"test/{i}"`, `["$share/g/test/#"]`, 1)+`, `+
			counts(`, "mqtt_out_of_order": 5`)+`}`)
		if o := Order(d); o.Judged || o.Text != "" || !strings.Contains(o.Why, "4.8.2") {
			t.Fatalf("QoS %s: %+v", qos, o)
		}
		if g := Diagnose(d); strings.Contains(g.Text, "ordering") {
			t.Fatalf("QoS %s named: %s", qos, g.Text)
		}
	}
}

func TestAnInOrderRunSaysNothingOfOrdering(t *testing.T) {
	d := doc(t, `{`+base+`, `+counts(`, "mqtt_out_of_order": 0`)+`, "passed": true, "thresholds": {}}`)
	if o := Order(d); !o.Judged || o.Text != "" {
		t.Fatalf("%+v", o)
	}
	if g := Diagnose(d); strings.Contains(g.Text, "order") {
		t.Fatalf("named: %s", g.Text)
	}
}

func TestThePolicyNamesEveryCauseOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Current().Causes {
		if seen[c] {
			t.Fatalf("%s twice", c)
		}
		seen[c] = true
	}
	if Current().RateReached != RateReached {
		t.Fatal("policy")
	}
}

// allFailed is a run none of whose 10 connections opened, with firstErr.
func allFailed(t *testing.T, firstErr string) Diagnosis {
	raw, _ := json.Marshal(map[string]any{"counts": map[string]any{"mqtt_connect_failures": 10},
		"connect": map[string]any{"sub_p2p": map[string]any{"error": firstErr}}, "parameters": map[string]any{"qos": 1}})
	return Diagnose(doc(t, string(raw)))
}

func TestABrokerThatRefusesEveryConnectIsARefusalNotUnreachable(t *testing.T) {
	// What a 3.1.1-only broker (NATS 2.9) answers an MQTT 5 CONNECT with.
	if g := allFailed(t, codec.Connack{Code: 0x01}.Err().Error()); g.Cause != CauseBrokerRefused ||
		!strings.Contains(g.Text, "0x01") {
		t.Fatalf("got %s: %s", g.Cause, g.Text)
	}
	// A mutual-TLS broker that refused the handshake (VerneMQ, TLS 1.2), as
	// connection words it (its tests check the wording has Refused).
	tlsRefusal := "mqtt: TLS handshake with 127.0.0.1:8884: remote error: tls: handshake failure (" + Refused +
		": it asked for a client certificate (mutual TLS) and none was given: give tls.cert and tls.key, TLS_CERT and TLS_KEY in the scenarios)"
	if g := allFailed(t, tlsRefusal); g.Cause != CauseBrokerRefused || !strings.Contains(g.Text, "TLS_CERT and TLS_KEY") {
		t.Fatalf("got %s: %s", g.Cause, g.Text)
	}
	// Nothing listening, or a close before any TLS, is unreachable.
	for _, e := range []string{"mqtt: dial 127.0.0.1:1: connect: connection refused", "mqtt: TLS handshake with 127.0.0.1:1: EOF"} {
		if g := allFailed(t, e); g.Cause != CauseBrokerUnreachable {
			t.Fatalf("got %s: %s", g.Cause, g.Text)
		}
	}
}

// A full inflight window with PUBACKs 3 s late: the broker's slow acks,
// unless the generator's CPU quota held it back for much of the run, so
// that it read the acks late itself.
func TestAGeneratorHeldBackByItsCPUQuotaIsNamedForSlowAcks(t *testing.T) {
	run := func(throttled string) Diagnosis {
		return Diagnose(doc(t, `{"parameters": {"qos": 1, "p99_ms": 50},
		 "flows": [{"publishers": 20, "subscribers": 20, "fanout": 1, "subTopics": "test/{i}"}],
		 "host": {"cpus": 2}, "duration_s": 10,
		 "generator": {"cpu_user_s": 0.1, "cpu_system_s": 0.1`+throttled+`},
		 "steps": [{"target_rate": 5000, "achieved_rate": 1000, "missed_window": 40000, "window_full": 47}],
		 "counts": {"mqtt_connects": 40, "mqtt_publishes": 10000, "mqtt_receives": 10000, "mqtt_missed_sends": 40000},
		 "latency_ms": {"puback": {"count": 10000, "p99": 3098.6}}, "passed": false,
		 "thresholds": {"mqtt_missed_sends count==0": false}}`))
	}
	if g := run(""); g.Cause != CauseBrokerSlowAcks {
		t.Fatalf("no quota: got %s: %s", g.Cause, g.Text)
	}
	if g := run(`, "cpu_quota_periods": 100, "cpu_quota_throttled": 2`); g.Cause != CauseBrokerSlowAcks {
		t.Fatalf("throttled in 2%% of its periods: got %s: %s", g.Cause, g.Text)
	}
	g := run(`, "cpu_quota_periods": 100, "cpu_quota_throttled": 95`)
	if g.Cause != CauseGenerator || !strings.Contains(g.Text, "throttled it in 95.0% of the quota's periods") {
		t.Fatalf("throttled in 95%% of its periods: got %s: %s", g.Cause, g.Text)
	}
}

// A broker whose facts list the ordering deviation (broker.toml
// [[deviations]], passed as BROKER_DEVIATIONS): the violation is still
// the run's, marked known; a broker that lists none, or lists it but
// delivered in order, is not marked.
func TestAnOrderingViolationTheBrokerListsIsMarkedKnown(t *testing.T) {
	listed := `"broker": "nanomq", "broker_deviations": ["ordering"], `
	d := doc(t, `{`+listed+base+`, `+counts(`, "mqtt_out_of_order": 5`)+`, "passed": true, "thresholds": {}}`)
	if o := Order(d); !o.Known || !strings.Contains(o.Text, "5 of 4000 deliveries") {
		t.Fatalf("listed: %+v", o)
	}
	d = doc(t, `{"broker": "mosquitto", `+base+`, `+counts(`, "mqtt_out_of_order": 5`)+`, "passed": true,
	 "thresholds": {}}`)
	if o := Order(d); o.Known || o.Text == "" {
		t.Fatalf("unlisted: %+v", o)
	}
	d = doc(t, `{`+listed+base+`, `+counts(`, "mqtt_out_of_order": 0`)+`, "passed": true, "thresholds": {}}`)
	if o := Order(d); o.Known {
		t.Fatalf("in order: %+v", o)
	}
}
