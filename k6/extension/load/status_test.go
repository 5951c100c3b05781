package load

import (
	"testing"
	"time"
)

// The status line shows the plan where the script gave one, and leaves out
// what was not planned (the low-level API's scripts give none).
func TestStatusLineLeavesOutWhatWasNotPlanned(t *testing.T) {
	cases := []struct {
		name string
		s    status
		want string
	}{
		{"planned", status{plan: Plan{Duration: 130 * time.Second, Connections: 2000}, elapsed: 40 * time.Second,
			open: 2000, sent: 1000, delivered: 999.6, latency: Stats{Count: 1, P99: 3.1}, missing: 1, received: 39999},
			"mqtt: 0:40/2:10 connections 2000/2000 sent 1000 msg/s delivered 1000 msg/s p99 3.10 ms missing 1 (0.00%)"},
		{"unplanned, no message yet", status{elapsed: 3725 * time.Second, open: 3},
			"mqtt: 1:02:05 connections 3 sent 0 msg/s delivered 0 msg/s p99 - missing 0 (0.00%)"},
		{"a tenth missing", status{elapsed: 10 * time.Second, latency: Stats{Count: 9, P99: 123.4}, missing: 1, received: 9},
			"mqtt: 0:10 connections 0 sent 0 msg/s delivered 0 msg/s p99 123 ms missing 1 (10.00%)"},
	}
	for _, c := range cases {
		if got := c.s.String(); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
