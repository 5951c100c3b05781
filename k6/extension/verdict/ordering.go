package verdict

import (
	"fmt"
	"slices"
)

// DeviationOrdering is how a broker's facts name an ordering violation
// among its known deviations ([[deviations]] verdict): the result's
// section of this verdict.
const DeviationOrdering = "ordering"

// StrictOrderThreshold is the threshold a scenario that asks for strict
// order (STRICT_ORDER=true) puts on mqtt_out_of_order.
const StrictOrderThreshold = "mqtt_out_of_order count==0"

// Ordering is the verdict on out-of-order deliveries.
type Ordering struct {
	// Judged: MQTT requires order here (no shared subscription; any QoS).
	Judged     bool    `json:"judged"`
	Why        string  `json:"why,omitempty"` // why not judged
	OutOfOrder float64 `json:"out_of_order"`
	Share      float64 `json:"share"` // of the deliveries
	// Strict: the run asked for strict order, so a violation fails it.
	Strict bool   `json:"strict"`
	Text   string `json:"text,omitempty"` // the violation, named; empty when there is none
	// Known: the broker lists this violation among its known deviations
	// (Doc.BrokerDeviations). The verdict stays the run's; this names it
	// as the broker's own behaviour, seen before.
	Known bool `json:"known,omitempty"`
}

// Order judges the out-of-order deliveries (mqtt_out_of_order, counted per
// stream: a message older than the last one its subscriber had of that
// publisher).
func Order(d *Doc) Ordering {
	o := Ordering{OutOfOrder: d.count("mqtt_out_of_order")}
	if r := d.count("mqtt_receives"); r > 0 {
		o.Share = *round(o.OutOfOrder/r, 6)
	}
	_, o.Strict = d.Thresholds[StrictOrderThreshold]
	// MQTT-4.6.0-6 orders what a server sends of one client's topic at
	// every QoS: at QoS 0 a message may be lost, never overtaken. A shared
	// subscription spreads one topic over several subscribers, and the
	// spec says ordering is then not guaranteed (MQTT 5.0 section 4.8.2).
	if sharedFlows(d) {
		o.Why = "shared subscriptions: MQTT 5.0 section 4.8.2 does not require order across a share group"
		return o
	}
	o.Judged = true
	if o.OutOfOrder > 0 {
		o.Text = fmt.Sprintf("The broker violated message ordering: %.0f of %.0f deliveries (%.3f%%) arrived out of "+
			"order on non-shared QoS %.0f subscriptions (mqtt_out_of_order), where a server must send each client's "+
			"messages of a topic in the order it received them (%s)",
			o.OutOfOrder, d.count("mqtt_receives"), 100*o.Share, d.Parameters.QoS, OrderingSpec)
		o.Known = slices.Contains(d.BrokerDeviations, DeviationOrdering)
	}
	return o
}

func sharedFlows(d *Doc) bool {
	for _, f := range d.Flows {
		if f.shared() {
			return true
		}
	}
	return false
}
