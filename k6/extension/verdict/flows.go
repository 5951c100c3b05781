package verdict

import (
	"encoding/json"
	"fmt"
	"strings"
)

// FlowVerdict is one flow's own verdict: a composite judges each part on
// its own (its connections, its delivery, its latency), which the run's
// thresholds add up over all flows.
type FlowVerdict struct {
	Passed   bool     `json:"passed"`
	Text     string   `json:"text"`
	Failures []string `json:"failures,omitempty"`
}

// flowDoc is what Flows reads of a result document.
type flowDoc struct {
	Flows []struct {
		Name        string  `json:"name"`
		Publishers  float64 `json:"publishers"`
		Subscribers float64 `json:"subscribers"`
		Fanout      float64 `json:"fanout"`
	} `json:"flows"`
	Connect    map[string]*struct{ Connected float64 } `json:"connect"`
	Delivery   map[string]*flowDelivery                `json:"delivery"`
	Parameters Parameters                              `json:"parameters"`
}

type flowDelivery struct {
	Clients     float64  `json:"clients"`
	Connected   float64  `json:"connected"`
	Disconnects float64  `json:"disconnects"`
	Sent        float64  `json:"sent"`
	Expected    *float64 `json:"expected"`
	Unique      float64  `json:"unique"`
	Lost        float64  `json:"lost"`
	Latency     *Latency `json:"latency"`
}

// Flows judges every flow of a result document (a single run's, or a
// merged one's; an instance of several sees only its share, and has none).
// A flow that publishes nothing (a composite's background, a connection
// scenario) passes when every planned connection opened, is still open at
// the end and none dropped; one that publishes when its clients opened,
// it sent, and, where its deliveries are counted, at QoS >= 1 nothing was
// lost and its own p99 is within P99_MS.
func Flows(raw []byte) (map[string]FlowVerdict, error) {
	var d flowDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	out := map[string]FlowVerdict{}
	for _, f := range d.Flows {
		var fails, says []string
		opened := func(role string, planned float64) {
			c := d.Connect[role+"_"+f.Name]
			if planned > 0 && (c == nil || c.Connected < planned) {
				got := 0.0
				if c != nil {
					got = c.Connected
				}
				fails = append(fails, fmt.Sprintf("%g of %g %s opened", got, planned, map[string]string{"sub": "subscribers", "pub": "publishers"}[role]))
			}
		}
		opened("sub", f.Subscribers)
		opened("pub", f.Publishers)
		dl := d.Delivery[f.Name]
		if f.Publishers == 0 {
			says = append(says, fmt.Sprintf("%g connections", f.Subscribers))
			if dl != nil {
				says = append(says, fmt.Sprintf("%g open at the end, %g dropped", dl.Connected, dl.Disconnects))
				if dl.Connected < f.Subscribers {
					fails = append(fails, fmt.Sprintf("%g of %g open at the end", dl.Connected, f.Subscribers))
				}
				if dl.Disconnects > 0 {
					fails = append(fails, fmt.Sprintf("%g dropped", dl.Disconnects))
				}
			}
		} else {
			says = append(says, plural(int(f.Publishers), "publisher")+", "+plural(int(f.Subscribers), "subscriber"))
			says, fails = judgeTraffic(f.Fanout, dl, d.Parameters, says, fails)
		}
		v := FlowVerdict{Passed: len(fails) == 0, Text: strings.Join(says, ", "), Failures: fails}
		out[f.Name] = v
	}
	return out, nil
}

// judgeTraffic is a publishing flow's delivery and latency verdict.
func judgeTraffic(fanout float64, dl *flowDelivery, p Parameters, says, fails []string) ([]string, []string) {
	if dl == nil || dl.Sent == 0 {
		return says, append(fails, "nothing sent")
	}
	says = append(says, fmt.Sprintf("%g sent", dl.Sent))
	if fanout == 0 || dl.Expected == nil {
		return says, fails
	}
	says = append(says, fmt.Sprintf("%g of %g expected arrived, %g lost", dl.Unique, *dl.Expected, dl.Lost))
	if dl.Unique == 0 {
		fails = append(fails, "nothing arrived")
	}
	if p.QoS >= 1 && dl.Lost > 0 {
		fails = append(fails, fmt.Sprintf("%g lost at QoS %g", dl.Lost, p.QoS))
	}
	if dl.Latency == nil || dl.Latency.Count == 0 {
		return says, append(fails, "no latency sample")
	}
	says = append(says, fmt.Sprintf("p99 %g ms", dl.Latency.P99))
	if p.P99Ms != nil && dl.Latency.P99 >= *p.P99Ms {
		fails = append(fails, fmt.Sprintf("p99 %g ms over the %g ms bound", dl.Latency.P99, *p.P99Ms))
	}
	return says, fails
}
