package verdict

import "fmt"

// StrictOrderThreshold is the threshold a scenario that asks for strict
// order (STRICT_ORDER=true) puts on mqtt_out_of_order.
const StrictOrderThreshold = "mqtt_out_of_order count==0"

// Ordering is the verdict on out-of-order deliveries.
type Ordering struct {
	// Judged: MQTT requires order here (QoS >= 1, no shared subscription).
	Judged     bool    `json:"judged"`
	Why        string  `json:"why,omitempty"` // why not judged
	OutOfOrder float64 `json:"out_of_order"`
	Share      float64 `json:"share"` // of the deliveries
	// Strict: the run asked for strict order, so a violation fails it.
	Strict bool   `json:"strict"`
	Text   string `json:"text,omitempty"` // the violation, named; empty when there is none
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
	// MQTT orders only what it acknowledges per topic: at QoS 0 a broker
	// may drop and the spec asks no order of it here; a shared
	// subscription spreads one topic over several subscribers, and the
	// spec says ordering is then not guaranteed (MQTT 5.0 section 4.8.2).
	switch {
	case d.Parameters.QoS < 1:
		o.Why = "QoS 0: MQTT requires ordered delivery only at QoS >= 1"
		return o
	case sharedFlows(d):
		o.Why = "shared subscriptions: MQTT 5.0 section 4.8.2 does not require order across a share group"
		return o
	}
	o.Judged = true
	if o.OutOfOrder > 0 {
		o.Text = fmt.Sprintf("The broker violated message ordering: %.0f of %.0f deliveries (%.3f%%) arrived out of "+
			"order on non-shared QoS %.0f subscriptions, which %s requires in order (mqtt_out_of_order)",
			o.OutOfOrder, d.count("mqtt_receives"), 100*o.Share, d.Parameters.QoS, OrderingSpec)
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
