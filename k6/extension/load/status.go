package load

import (
	"fmt"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
)

// The status line: k6's own progress line says nothing of the broker, and
// the metrics reach a person only through an output or the end summary. So
// once an interval the reporter logs one line for the process (not one per
// VU or group) that tells, while the run lasts, whether it goes well.

// DefaultStatusInterval is how often the status line is logged.
const DefaultStatusInterval = 10 * time.Second

// statusPrefix starts every status line, so it stands out in k6's log.
const statusPrefix = "mqtt: "

// Plan is what the script planned; the status line shows progress against
// it. Zero values are unknown, and the line leaves them out.
type Plan struct {
	Duration    time.Duration // the run's planned length
	Connections int64         // connections open at once when all are up
	Interval    time.Duration // between status lines (0: DefaultStatusInterval)
	// Instances of a segmented test: more than one, and a stream's
	// publisher, or a shared subscription's other members, may be in
	// another instance, so this one judges only the streams it sees whole.
	Instances int
}

// statusState is what the status line keeps between lines (Run.mu).
type statusState struct {
	plan            Plan
	started         time.Time // the first meter's: when the load began
	due             time.Time // the next line
	at              time.Time // the previous line (or started)
	sent, delivered int64     // the counters then
}

func (s *statusState) interval() time.Duration {
	if s.plan.Interval > 0 {
		return s.plan.Interval
	}
	return DefaultStatusInterval
}

// start sets the clock at the first meter; a reporter that stops with its
// last meter and starts again keeps it.
func (s *statusState) start(now time.Time) {
	if s.started.IsZero() {
		s.started, s.at, s.due = now, now, now.Add(s.interval())
	}
}

// SetPlan gives the status line the planned length and connections, and
// its interval.
func (r *Run) SetPlan(p Plan) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status.plan = p
	if !r.status.started.IsZero() {
		r.status.due = r.status.at.Add(r.status.interval())
	}
}

// instances is the number of instances the test is split into (Plan).
func (r *Run) instances() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status.plan.Instances
}

// watchStreams makes the status line count the gaps of a subscriber
// group's streams while the group is open; nil stops that when it closes
// (its loss is then in mqtt_lost).
func (r *Run) watchStreams(m *Meter, sets []*streamSet) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m.streams = sets
}

// status is one status line's figures.
type status struct {
	plan            Plan
	elapsed         time.Duration
	open            int64
	sent, delivered float64 // msg/s over the last interval
	latency         Stats   // pub-to-sub, the whole run so far
	missing         int64
	received        int64
}

// progress logs the status line when it is due; the reporter calls it
// after each flush, which has collected the histograms.
func (r *Run) progress(now time.Time) {
	r.mu.Lock()
	st := &r.status
	if st.started.IsZero() || now.Before(st.due) {
		r.mu.Unlock()
		return
	}
	var logger logrus.FieldLogger
	sets := map[*streamSet]struct{}{} // shared subscriptions: one set, many groups
	s := status{plan: st.plan, elapsed: now.Sub(st.started)}
	for m := range r.meters {
		if logger == nil && m.live() {
			logger = m.logger
		}
		s.open += m.conns.Load()
		for _, set := range m.streams {
			sets[set] = struct{}{}
		}
	}
	cur := r.countersLocked()
	if secs := now.Sub(st.at).Seconds(); secs > 0 {
		s.sent = float64(cur[MetricPublishes]-st.sent) / secs
		s.delivered = float64(cur[MetricReceives]-st.delivered) / secs
	}
	// Closed subscriber groups have counted their loss into mqtt_lost.
	s.missing, s.received = cur[MetricLost], cur[MetricReceives]
	st.at, st.sent, st.delivered = now, cur[MetricPublishes], cur[MetricReceives]
	for !now.Before(st.due) {
		st.due = st.due.Add(st.interval())
	}
	r.mu.Unlock()

	for set := range sets {
		s.missing += set.missing()
	}
	_, s.latency = r.hists[Latency].snapshot()
	if logger != nil {
		logger.Info(s.String())
	}
}

// String is the line, e.g.
//
//	mqtt: 0:40/2:10 connections 2000/2000 sent 1000 msg/s delivered 1000 msg/s p99 3.10 ms missing 0 (0.00%)
//
// "missing" is what the stream accounting knows mid-run: messages a stream
// skipped (a later one arrived) that have not arrived since, as a share of
// those and the messages received. Messages sent after a stream's last
// receipt are in flight until its group closes; then they and the gaps
// left are mqtt_lost.
func (s status) String() string {
	var b strings.Builder
	b.WriteString(statusPrefix + clock(s.elapsed))
	if s.plan.Duration > 0 {
		b.WriteString("/" + clock(s.plan.Duration))
	}
	fmt.Fprintf(&b, " connections %d", s.open)
	if s.plan.Connections > 0 {
		fmt.Fprintf(&b, "/%d", s.plan.Connections)
	}
	fmt.Fprintf(&b, " sent %.0f msg/s delivered %.0f msg/s", s.sent, s.delivered)
	if s.latency.Count > 0 {
		fmt.Fprintf(&b, " p99 %s ms", millis(s.latency.P99))
	} else {
		b.WriteString(" p99 -")
	}
	pct := 0.0
	if n := s.missing + s.received; n > 0 {
		pct = 100 * float64(s.missing) / float64(n)
	}
	fmt.Fprintf(&b, " missing %d (%.2f%%)", s.missing, pct)
	return b.String()
}

// clock is m:ss, or h:mm:ss from an hour.
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// millis keeps about three significant digits: loopback latencies are
// fractions of a millisecond, a loaded broker's hundreds.
func millis(v float64) string {
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}
