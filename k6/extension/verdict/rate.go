package verdict

import "fmt"

// Reached says whether a step sent at least RateReached of its target on
// schedule (its achieved rate leaves the wait for acks out: see
// load.PhaseResult.Seconds).
func Reached(s Step) bool { return s.TargetRate <= 0 || s.AchievedRate >= RateReached*s.TargetRate }

// Shortfalls is the number of steps that did not reach their rate
// (the run's mqtt_rate_shortfalls).
func Shortfalls(steps []Step) int {
	n := 0
	for _, s := range steps {
		if !Reached(s) {
			n++
		}
	}
	return n
}

// RateVerdict says why the target rate was not reached, from the missed
// sends and each step's achieved rate (nil: it was reached).
func RateVerdict(d *Doc) *string {
	missed := d.count("mqtt_missed_sends")
	var window float64
	for _, s := range d.Steps {
		window += s.MissedWindow
	}
	var causes []string
	if late := missed - window; late > 0 {
		causes = append(causes, fmt.Sprintf("generator cannot reach the target rate: %.0f messages were due more "+
			"than max_lag ago and never sent (mqtt_missed_sends)", late))
	}
	if window > 0 {
		causes = append(causes, fmt.Sprintf("the broker held back acknowledgements: %.0f messages waited for a "+
			"full QoS window longer than max_lag and were never sent (mqtt_missed_sends)", window))
	}
	if n := Shortfalls(d.Steps); len(causes) == 0 && n > 0 {
		causes = append(causes, fmt.Sprintf("achieved below %.0f%% of the target in %d step(s) (mqtt_rate_shortfalls)",
			100*RateReached, n))
	}
	if len(causes) == 0 {
		return nil
	}
	s := "target rate not reached: " + join(causes, "; ")
	return &s
}

// Owed is one flow's delivery as "nothing received" reads it: whether its
// subscribers were owed messages (it published to them), and what they
// received.
type Owed struct {
	Owed     bool    `json:"owed"`
	Received float64 `json:"received"`
}

// NothingReceived is the number of flows whose subscribers were owed
// messages and received none (the run's mqtt_nothing_received).
func NothingReceived(flows []Owed) int {
	n := 0
	for _, f := range flows {
		if f.Owed && f.Received <= 0 {
			n++
		}
	}
	return n
}
