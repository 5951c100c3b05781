package mqtt

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
)

// statusLine is the status line's shape; p99 is "-" before any message.
var statusLine = regexp.MustCompile(`^mqtt: (\d+):(\d\d)/1:30 connections (\d+)/4 sent (\d+) msg/s delivered (\d+) msg/s p99 (?:([\d.]+) ms|-) missing (\d+) \(([\d.]+)%\)$`)

// While a run lasts, the process logs one status line per interval (not one
// per group): elapsed of the planned length, connections open of those
// planned, the last interval's sent and delivered rates, the p99 latency so
// far and the messages missing so far, as the stream accounting counts
// them. The broker drops every tenth message: a tenth is missing.
func TestStatusLineShowsProgressRatesLatencyAndMissingMessages(t *testing.T) {
	addr, _ := startMochiWith(t, listeners.Config{}, nil, new(dropEveryTenth))
	vu := newTestVU(t)
	logs := logtest.NewLocal(vu.rt.VU.StateField.Logger.(*logrus.Logger))
	r := vu.run(t, fmt.Sprintf(`
setPlan({ duration: '90s', connections: 4, status_interval: '1s' });
const o = { url: 'mqtt://%s', count: 2, topic: 'status/{i}', qos: 0 };
const subs = new SubscriberGroup(o);
await subs.connect();
const pubs = new PublisherGroup(o);
await pubs.connect();
const p = await pubs.publish({ rate: 600, duration: '3500ms' });
const s = await subs.drain({ idle: '500ms' });
pubs.close(); subs.close();
result = { p, s, stats: stats() };`, addr))

	type line struct {
		at              time.Time
		elapsed         int
		sent, delivered float64
		p99             float64
		missing         int64
		missingPct      float64
		hasP99          bool
	}
	var lines []line
	for _, e := range logs.AllEntries() {
		m := statusLine.FindStringSubmatch(e.Message)
		if m == nil {
			if len(e.Message) > 5 && e.Message[:5] == "mqtt:" {
				t.Errorf("status line of another shape: %q", e.Message)
			}
			continue
		}
		if e.Level != logrus.InfoLevel {
			t.Errorf("status line at level %v: %q", e.Level, e.Message)
		}
		num := func(i int) float64 { f, _ := strconv.ParseFloat(m[i], 64); return f }
		l := line{at: e.Time, elapsed: int(num(1))*60 + int(num(2)), sent: num(4), delivered: num(5),
			p99: num(6), hasP99: m[6] != "", missing: int64(num(7)), missingPct: num(8)}
		// Until the groups close at the end, every planned connection is open.
		if open := num(3); open > 4 || (len(lines) < 3 && open != 4) {
			t.Errorf("connections %v/4 open in %q", open, e.Message)
		}
		lines = append(lines, l)
		t.Log(e.Message)
	}
	if len(lines) < 3 {
		t.Fatalf("%d status lines in a 4 s run at an interval of 1 s, want at least 3", len(lines))
	}
	for i := 1; i < len(lines); i++ {
		if gap := lines[i].at.Sub(lines[i-1].at); gap < 500*time.Millisecond {
			t.Errorf("status lines %v apart: one per interval for the process, not one per group", gap)
		}
		if lines[i].elapsed < lines[i-1].elapsed {
			t.Errorf("elapsed went back from %d s to %d s", lines[i-1].elapsed, lines[i].elapsed)
		}
	}
	// The second line's interval lies wholly inside the publishing phase.
	mid := lines[1]
	if mid.sent < 550 || mid.sent > 650 || mid.delivered < 495 || mid.delivered > 585 {
		t.Errorf("second line: sent %v msg/s, delivered %v msg/s; want about 600 and 540", mid.sent, mid.delivered)
	}
	final := r["s"].(map[string]any)
	maxLatency := r["stats"].(map[string]any)["mqtt_latency"].(map[string]any)["max"].(float64)
	for _, l := range lines[1:] {
		if !l.hasP99 || l.p99 <= 0 || l.p99 > maxLatency {
			t.Errorf("p99 so far %v ms (shown: %v), want > 0 and at most the run's max %v ms", l.p99, l.hasP99, maxLatency)
		}
		if l.missingPct < 8 || l.missingPct > 12 || l.missing == 0 {
			t.Errorf("missing %d (%v%%), want about a tenth of the messages", l.missing, l.missingPct)
		}
		// The same accounting as the result: what is missing mid-run is
		// lost at the end (where the tail sent after the last receipt joins).
		if float64(l.missing) > final["lost"].(float64) {
			t.Errorf("missing %d mid-run, but only %v lost at the end", l.missing, final["lost"])
		}
	}
}
