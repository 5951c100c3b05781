package mqtt

import (
	"math"
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in HDR histograms (microseconds, 3 significant
// digits, up to one hour): fixed memory whatever the number of messages,
// unlike k6's Trend which keeps every sample.
const (
	histMin    = 1
	histMax    = 3600 * 1000 * 1000
	histDigits = 3
	histShards = 8 // spreads lock contention over reader goroutines
)

func newHDR() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histDigits) }

// shardedHist takes records from many goroutines; collect() moves what was
// recorded since the last call into a window histogram and the run total.
type shardedHist struct {
	shards [histShards]struct {
		sync.Mutex
		h *hdrhistogram.Histogram
		_ [40]byte // keep shards on separate cache lines
	}
	mu     sync.Mutex
	total  *hdrhistogram.Histogram
	window *hdrhistogram.Histogram
}

func newShardedHist() *shardedHist {
	s := &shardedHist{total: newHDR(), window: newHDR()}
	for i := range s.shards {
		s.shards[i].h = newHDR()
	}
	return s
}

func clampMicros(ns int64) int64 {
	us := ns / 1000
	if us < histMin {
		return histMin
	}
	if us > histMax {
		return histMax
	}
	return us
}

// record adds a duration in nanoseconds; shard is any small number that
// differs between concurrent callers (a connection index).
func (s *shardedHist) record(shard int, ns int64) {
	sh := &s.shards[shard%histShards]
	sh.Lock()
	_ = sh.h.RecordValue(clampMicros(ns))
	sh.Unlock()
}

// collect folds the shards into the window (reset first) and the total.
func (s *shardedHist) collect() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.window.Reset()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.Lock()
		if sh.h.TotalCount() > 0 {
			s.window.Merge(sh.h)
			sh.h.Reset()
		}
		sh.Unlock()
	}
	s.total.Merge(s.window)
}

// Stats is a latency summary in milliseconds.
type Stats struct {
	Count int64   `json:"count"`
	Avg   float64 `json:"avg"`
	Min   float64 `json:"min"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
}

func summarize(h *hdrhistogram.Histogram) Stats {
	if h.TotalCount() == 0 {
		return Stats{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Stats{
		Count: h.TotalCount(),
		Avg:   math.Round(h.Mean()) / 1000,
		Min:   ms(h.Min()),
		P50:   ms(h.ValueAtQuantile(50)),
		P75:   ms(h.ValueAtQuantile(75)),
		P90:   ms(h.ValueAtQuantile(90)),
		P95:   ms(h.ValueAtQuantile(95)),
		P99:   ms(h.ValueAtQuantile(99)),
		P999:  ms(h.ValueAtQuantile(99.9)),
		Max:   ms(h.Max()),
	}
}

// snapshot returns the window and total summaries (after collect).
func (s *shardedHist) snapshot() (window, total Stats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return summarize(s.window), summarize(s.total)
}
