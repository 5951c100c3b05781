package verdict

import (
	"fmt"
	"strings"
)

// Diagnosis is a run's most likely cause, its text and its evidence.
type Diagnosis struct {
	Cause    string    `json:"cause"`
	Text     string    `json:"text"`
	Evidence *Evidence `json:"evidence,omitempty"`
}

// Diagnose weighs the causes in the order of Causes; the first whose
// evidence holds wins. An ordering violation is named whatever the cause.
func Diagnose(d *Doc) Diagnosis {
	e := Gather(d)
	cause, text := judge(d, &e)
	if o := Order(d); o.Text != "" && cause != CauseBrokerOrdering {
		text += " " + o.Text + "."
	}
	return Diagnosis{Cause: cause, Text: text, Evidence: &e}
}

func sends(e *Evidence) string {
	return fmt.Sprintf("send lag p99 %s ms; it used %s CPU-s in %s s (%s of %s cores)",
		num(e.SendLagP99Ms), num(e.GeneratorCPUS), num(e.WallS), pct(e.GeneratorCPUShare), orQ(e.Cores))
}

func orQ(x *float64) string {
	if x == nil {
		return "?"
	}
	return num(x)
}

// generatorShort: the generator is the limit (its scheduler missed sends,
// or it fell short with nothing else to blame); also names the broker's
// write stalls when there were some.
func generatorShort(e *Evidence, stalls string) (string, string) {
	also := ""
	if stalls != "" {
		also = "; also " + stalls
	}
	return CauseGenerator, fmt.Sprintf("The generator cannot reach the target rate: %s of it went out on schedule "+
		"(%.0f messages were due more than max_lag ago and never sent), with no broker disconnect, refusal or "+
		"full inflight window%s; %s.", pct(e.AchievedRatio), e.Missed-e.MissedWindow, also, sends(e))
}

func throttled(e *Evidence) bool {
	return e.GeneratorThrottledShare != nil && *e.GeneratorThrottledShare >= GeneratorThrottled
}

func latencyFailed(d *Doc) bool {
	for k, ok := range d.Thresholds {
		if !ok && strings.HasPrefix(k, "mqtt_latency_p99") {
			return true
		}
	}
	return false
}

func failed(d *Doc) []string {
	var out []string
	for _, k := range sortedKeys(d.Thresholds) {
		if !d.Thresholds[k] {
			out = append(out, k)
		}
	}
	return out
}

func judge(d *Doc, e *Evidence) (string, string) {
	if e.Disconnects > e.WriteStalls {
		open := ""
		if e.OutageUnrecovered > 0 {
			open = ", and not every connection was back when the run ended"
		}
		return CauseBrokerOutage, fmt.Sprintf("The broker dropped connections: %.0f disconnects, %d outage(s) lasting "+
			"%g s in all with up to %.0f connections down at once%s; %.0f reconnect attempts, %.0f reconnects; "+
			"%.0f publishes failed and %.0f messages were lost.", e.Disconnects, e.Outages, e.OutageS, e.OutageMaxDown,
			open, e.ReconnectAttempts, e.Reconnects, e.PublishFailures, e.Lost)
	}
	// Connections that failed on this process's own open-files limit say
	// nothing of the broker, though a group whose every connection failed
	// so would otherwise read as a refusal.
	if e.OpenFilesError != nil {
		return CauseGeneratorOpenFiles, fmt.Sprintf("The generator ran out of open files, not the broker: %.0f "+
			"connections opened and %.0f failed, on the k6 process's own open-files limit (first such error: %s). "+
			"Raise it (`ulimit -n` where k6 starts) or split the load over more k6 processes (scripts/bench.sh "+
			"--instances, or k6's execution segments: docs/distributed.md).", e.Connects, e.ConnectFailures,
			*e.OpenFilesError)
	}
	firstErr := "no error recorded"
	if e.FirstConnectError != nil {
		firstErr = *e.FirstConnectError
	}
	// Every connection refused (a CONNACK code, a TLS handshake refused):
	// the broker was reached, and said no, e.g. MQTT 5 on a 3.1.1 broker,
	// or mutual TLS without a client certificate.
	if e.ConnectFailures > 0 && e.Connects == 0 && strings.Contains(firstErr, Refused) {
		return CauseBrokerRefused, fmt.Sprintf("The broker refused every connection: all %.0f were answered "+
			"with a refusal (%s).", e.ConnectFailures, firstErr)
	}
	if e.ConnectFailures > 0 && e.Connects == 0 {
		return CauseBrokerUnreachable, fmt.Sprintf("No connection to the broker opened: all %.0f failed (%s).",
			e.ConnectFailures, firstErr)
	}
	if e.Refusal != nil {
		return CauseBrokerRefused, "The broker refused what the run needs, before load: " + *e.Refusal
	}
	// Publishes fail without a drop when the broker refuses them (reason
	// code >= 0x80), or when it never frees the inflight window (slow acks).
	if e.ConnectFailures > 0 || e.SubscribeFailures > 0 || e.ProtocolErrors > 0 || e.Rejected > 0 ||
		(e.PublishFailures > 0 && e.WindowFull == 0 && e.WriteStalls == 0) {
		first := ""
		if e.FirstConnectError != nil {
			first = " (" + *e.FirstConnectError + ")"
		}
		return CauseBrokerRefused, fmt.Sprintf("The broker refused: %.0f of %.0f connections%s, %.0f subscriptions, "+
			"%.0f acks outside the QoS flow, %.0f publishes (mqtt_publish_rejected); %.0f publishes failed.",
			e.ConnectFailures, e.Connects+e.ConnectFailures, first, e.SubscribeFailures, e.ProtocolErrors,
			e.Rejected, e.PublishFailures)
	}
	if e.ExpectsDelivery && e.Publishes > 0 && e.Receives == 0 {
		return CauseDeliveredNothing, fmt.Sprintf("The broker took %.0f publishes and delivered none (an ACL, a "+
			"topic mismatch or a broker that drops messages), with every connection up.", e.Publishes)
	}
	// Connections closed here because the broker read none of a write for
	// 2 s: what was lost with them is explained, and the scheduler's own
	// misses, if any, say whether the generator was the first limit.
	if e.WriteStalls > 0 {
		stalls := fmt.Sprintf("%.0f times the broker read nothing of a connection's writes for 2 s "+
			"(mqtt_write_stalls: closed and redialled here)", e.WriteStalls)
		if e.Missed > e.MissedWindow {
			return generatorShort(e, stalls)
		}
		return CauseBrokerSlowReads, fmt.Sprintf("The broker did not read what it was sent: %s; %s of the target "+
			"rate went out, %.0f messages were lost with those connections.", stalls, pct(e.AchievedRatio), e.Lost)
	}
	if e.Lost > 0 {
		return CauseBrokerLost, fmt.Sprintf("The broker lost %.0f of %.0f messages with no disconnect or refusal "+
			"(inflight window full %.0f times, PUBACK p99 %s ms).", e.Lost, e.Receives+e.Lost, e.WindowFull,
			num(e.PubackP99Ms))
	}
	if o := Order(d); o.Strict && o.Text != "" {
		return CauseBrokerOrdering, o.Text + "; the run asked for strict order (STRICT_ORDER=true)."
	}
	short := e.AchievedRatio != nil && *e.AchievedRatio < RateReached
	if throttled(e) && (short || e.Missed > 0 || e.WindowFull > 0 || latencyFailed(d)) {
		return CauseGenerator, fmt.Sprintf("The generator was held back by its CPU quota: its cgroup throttled it "+
			"in %s of the quota's periods it ran in (cpu.stat), so it read acknowledgements and sent late whatever "+
			"the broker did: %s of the target rate went out, inflight window full %.0f times, PUBACK p99 %s ms; %s. "+
			"Give it more CPU (its container's or pod's limit) or more generator processes.",
			pct(e.GeneratorThrottledShare), pct(e.AchievedRatio), e.WindowFull, num(e.PubackP99Ms), sends(e))
	}
	if e.MissedWindow > 0 || (e.WindowFull > 0 && (short || e.PublishFailures > 0)) {
		return CauseBrokerSlowAcks, fmt.Sprintf("The broker held back acknowledgements: the inflight window was full "+
			"%.0f times (%.0f messages waited longer than max_lag and were never sent) and PUBACK p99 was %s ms: "+
			"%s of the target rate went out, %.0f publishes failed.", e.WindowFull, e.MissedWindow,
			num(e.PubackP99Ms), pct(e.AchievedRatio), e.PublishFailures)
	}
	// The achieved rate is what the generator sent on schedule, whenever
	// the broker acknowledged: a shortfall here is its own.
	if short || e.Missed > 0 {
		return generatorShort(e, "")
	}
	if latencyFailed(d) && e.LatencyP99Ms != nil {
		if e.SendLagP99Ms != nil && *e.SendLagP99Ms >= *e.LatencyP99Ms/2 {
			return CauseGenerator, fmt.Sprintf("Latency p99 %s ms is above the bound of %s ms, and most of it is "+
				"the generator's own lateness: %s.", num(e.LatencyP99Ms), num(e.P99BoundMs), sends(e))
		}
		return CauseBrokerLatency, fmt.Sprintf("The broker was slow to deliver: latency p99 %s ms is above the bound "+
			"of %s ms with no disconnect or refusal, PUBACK p99 %s ms; the sends left on time (%s).",
			num(e.LatencyP99Ms), num(e.P99BoundMs), num(e.PubackP99Ms), sends(e))
	}
	if d.Completed != nil && !*d.Completed {
		return CauseInterrupted, fmt.Sprintf("The run was stopped before its planned end (a signal, k6's REST API or "+
			"an abort): its counts cover only what ran (%.0f messages published, %.0f received), and it does not pass.",
			e.Publishes, e.Receives)
	}
	if len(e.WithoutSamples) > 0 {
		return CauseNoData, fmt.Sprintf("Thresholds on %s had no samples to judge (%.0f messages received): the run "+
			"measured nothing they bound.", join(e.WithoutSamples, ", "), e.Receives)
	}
	if d.Passed {
		return CauseNone, fmt.Sprintf("Every threshold passed: %.0f connections, %.0f messages published, %.0f "+
			"received, no disconnect; the broker's latency: delivery p99 %s ms, PUBACK p99 %s ms; sends: %s.",
			e.Connects, e.Publishes, e.Receives, num(e.LatencyP99Ms), num(e.PubackP99Ms), sends(e))
	}
	return CauseUnexplained, fmt.Sprintf("Thresholds failed (%s) with no disconnect, refusal, loss or generator "+
		"shortfall in the counts.", join(failed(d), "; "))
}
