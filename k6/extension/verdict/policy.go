// Package verdict owns every verdict on a run: whether its rate was
// reached, what its out-of-order deliveries mean, and the diagnosis with
// its causes, for a single run (the extension's summary, through
// mqtt.verdicts) and a merged one (k6 x mqtt-merge) alike. Its rules and
// constants are defined here once and written into each result as
// `policy`, so that readers (mqttbench/report, mqttbench/capacity) never
// restate them.
package verdict

// RateReached is the share of its target rate a publish step must send on
// schedule to count as reached (mqtt_rate_shortfalls counts the others).
const RateReached = 0.95

// GeneratorThrottled is the share of its cgroup's CPU quota periods in which
// the quota may hold the generator back before the generator, not the
// broker, is named for slow acks, late sends or latency: a generator
// starved of CPU reads acks late and sends late, whatever the broker does.
const GeneratorThrottled = 0.05

// BrokerCPUSaturated is the % of one core (procstat's cpu_usage, docker's
// usage_percent) at or above which a broker process had no CPU to spare:
// the report, which alone reads the broker's CPU (InfluxDB), then names
// CauseBrokerCPU in place of a cause of BrokerCPUExplains.
const BrokerCPUSaturated = 90.0

// The causes a diagnosis names, in the order they are weighed: a run whose
// broker went away is never put down to the generator, and the generator
// is named only for its own late sends, saturated CPU or open-files limit.
const (
	CauseIncomplete        = "incomplete" // a merge with instances missing
	CauseBrokerOutage      = "broker_outage"
	CauseBrokerUnreachable = "broker_unreachable"
	CauseBrokerRefused     = "broker_refused"
	CauseDeliveredNothing  = "broker_delivered_nothing"
	CauseBrokerSlowReads   = "broker_slow_reads"
	CauseBrokerLost        = "broker_lost_messages"
	CauseBrokerOrdering    = "broker_ordering"
	CauseBrokerSlowAcks    = "broker_slow_acks"
	CauseGenerator         = "generator"
	CauseBrokerLatency     = "broker_latency"
	CauseInterrupted       = "interrupted"
	CauseNoData            = "no_data"
	CauseNone              = "none"
	CauseUnexplained       = "unexplained"
	// Named by the report only (the run cannot see the broker's CPU), in
	// place of a cause of BrokerCPUExplains when the broker was saturated.
	CauseBrokerCPU = "broker_cpu"
	// The generator's own open-files limit failed connections (EMFILE):
	// weighed right after an outage, before the broker's refusals that
	// those failures would otherwise read as (Causes gives the order).
	CauseGeneratorOpenFiles = "generator_open_files"
)

// Refused is how a connection error says the broker was reached and turned
// the client down: a CONNACK refusal (codec's Connack.Err) or a refused TLS
// handshake (connection's refusedTLS). A run whose connections all failed
// so is broker_refused; one whose failed otherwise, broker_unreachable.
const Refused = "refused by broker"

// OpenFiles is how a connection error says the generator ran out of file
// descriptors (EMFILE, worded by connection.Explain): its own limit, which
// no broker set, so a run with such an error is generator_open_files.
const OpenFiles = "the generator's open-files limit (RLIMIT_NOFILE)"

// Causes is every cause in the order of blame.
var Causes = []string{CauseIncomplete, CauseBrokerOutage, CauseGeneratorOpenFiles, CauseBrokerUnreachable,
	CauseBrokerRefused, CauseDeliveredNothing, CauseBrokerSlowReads, CauseBrokerLost, CauseBrokerOrdering,
	CauseBrokerSlowAcks, CauseGenerator, CauseBrokerLatency, CauseInterrupted, CauseNoData, CauseNone,
	CauseUnexplained, CauseBrokerCPU}

// BrokerCPUExplains are the causes that say the broker was slow without
// saying why: a saturated broker CPU can.
var BrokerCPUExplains = []string{CauseBrokerLatency, CauseBrokerSlowAcks, CauseUnexplained}

// OrderingSpec is where MQTT requires ordered delivery, the one place of
// the citation: a server sends one client's PUBLISH packets of a topic and
// QoS to a non-shared subscription in the order it received them, at
// every QoS (at QoS 0 some may be lost, the rest keep their order).
const OrderingSpec = "MQTT 3.1.1 and 5.0 section 4.6 [MQTT-4.6.0-6]"

// Policy is what a result records of the rules it was judged by.
type Policy struct {
	RateReached float64 `json:"rate_reached"`
	// GeneratorThrottled: the share of its quota periods its CPU quota may hold the generator back in.
	GeneratorThrottled float64 `json:"generator_throttled"`
	// BrokerCPUSaturated and BrokerCPUExplains: the report's rule for CauseBrokerCPU.
	BrokerCPUSaturated float64  `json:"broker_cpu_saturated_pct"`
	BrokerCPUExplains  []string `json:"broker_cpu_explains"`
	Causes             []string `json:"causes"`
	OrderingSpec       string   `json:"ordering_spec"`
}

// Current is the policy of this build.
func Current() Policy {
	return Policy{RateReached: RateReached, GeneratorThrottled: GeneratorThrottled,
		BrokerCPUSaturated: BrokerCPUSaturated, BrokerCPUExplains: BrokerCPUExplains, Causes: Causes,
		OrderingSpec: OrderingSpec}
}
