package load

import (
	"context"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"go.k6.io/k6/metrics"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
)

// Meter is what one group (or low-level client) counts, with its tags and
// the k6 sample channel it pushes to. Counters are atomics on the hot path.
// It is the connection.Recorder of the group's connections.
type Meter struct {
	run      *Run
	role     string
	tags     *metrics.TagSet // base + role + qos: the meter's own counters
	base     *metrics.TagSet // test-wide tags + the group's extra tags
	test     *metrics.TagSet // test-wide tags (scenario, run_id, broker...): run-wide gauges
	meta     map[string]string
	ctx      context.Context
	samples  chan<- metrics.SampleContainer
	counts   [CounterKinds]atomic.Int64
	pushed   [CounterKinds]int64 // guarded by run.mu
	conns    atomic.Int64        // open connections now
	target   atomic.Uint64       // float64 bits: msg/s aimed at now
	achieved atomic.Uint64       // float64 bits: lowest achieved/target ratio of its phases (0 = none yet)
	logger   logrus.FieldLogger  // the VU's: the status line goes out through a live meter's
	streams  []*streamSet        // a subscriber group's, while open (run.mu): the status line's gaps
}

// NewMeter registers a meter for role ("pub", "sub", "client") with the
// group's extra tags; qos < 0 leaves the qos tag out (a client's varies).
func (r *Run) NewMeter(env Env, role string, qos int, extra map[string]string) *Meter {
	base := env.Tags.WithTagsFromMap(extra)
	tags := base.With("role", role)
	if qos >= 0 {
		tags = tags.With("qos", strconv.Itoa(qos))
	}
	m := &Meter{run: r, role: role, base: base, tags: tags, test: env.Tags, meta: env.Meta, ctx: env.Ctx, samples: env.Samples,
		logger: env.Logger}
	r.register(m)
	return m
}

// Add counts n of c.
func (m *Meter) Add(c Counter, n int64) { m.counts[c].Add(n) }

// Get is the count of c so far.
func (m *Meter) Get(c Counter) int64 { return m.counts[c].Load() }

// Record adds a duration (ns) to the run's histogram k.
func (m *Meter) Record(k Hist, shard int, ns int64) { m.run.record(k, shard, ns) }

// Push sends the meter's counts to k6 now rather than at the next tick:
// after a connection ramp, so that failed connections are counted even when
// the script aborts the test on them (its VU context then ends, and a later
// push would be dropped: k6 would judge mqtt_connect_failures on nothing).
func (m *Meter) Push() { m.run.flush(m) }

// Close pushes the meter's last counts and forgets it.
func (m *Meter) Close() { m.run.unregister(m) }

// Count implements connection.Recorder.
func (m *Meter) Count(e connection.Event, n int64) {
	switch e {
	case connection.Connected:
		m.Add(Connects, n)
	case connection.ConnectFailed:
		m.Add(ConnectFailures, n)
	case connection.Reconnected:
		m.Add(Reconnects, n)
	case connection.Disconnected:
		m.Add(Disconnects, n)
	case connection.SubscribeFailed:
		m.Add(SubscribeFailures, n)
	case connection.ErrorSeen:
		m.Add(Errors, n)
	case connection.SharedRead:
		m.Add(ReceivesSharedRead, n)
	case connection.ReconnectAttempt:
		m.Add(ReconnectAttempts, n)
	case connection.Down:
		m.run.outages.change(n, time.Now(), false)
	case connection.DownAtClose:
		m.run.outages.change(-n, time.Now(), true)
	case connection.WriteStalled:
		m.Add(WriteStalls, n)
	}
}

// Time implements connection.Recorder.
func (m *Meter) Time(t connection.Timing, shard int, ns int64) {
	switch t {
	case connection.ConnectTime:
		m.Record(ConnectDuration, shard, ns)
	case connection.SubackTime:
		m.Record(SubackDuration, shard, ns)
	case connection.TLSHandshakeTime:
		m.Record(TLSHandshakeDuration, shard, ns)
	case connection.ConnackTime:
		m.Record(ConnackDuration, shard, ns)
	case connection.ReconnectTime:
		m.Record(ReconnectDuration, shard, ns)
	}
}

// Open implements connection.Recorder.
func (m *Meter) Open(delta int64) { m.conns.Add(delta) }

func (m *Meter) setTarget(rate float64) { m.target.Store(math.Float64bits(rate)) }

// setAchieved keeps the lowest achieved/target ratio of the meter's phases.
func (m *Meter) setAchieved(r float64) {
	m.achieved.Store(math.Float64bits(lowestRatio(m.achievedRatio(), max(r, 1e-9))))
}

// lowestRatio is the lower of two achieved ratios, where 0 means none yet.
func lowestRatio(a, b float64) float64 {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

func (m *Meter) targetRate() float64    { return math.Float64frombits(m.target.Load()) }
func (m *Meter) achievedRatio() float64 { return math.Float64frombits(m.achieved.Load()) }
func (m *Meter) live() bool             { return m.ctx.Err() == nil }
