package load

import (
	"math"
	"runtime"
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
)

// histShards spreads lock contention over concurrent recorders: there are
// never more of them running than GOMAXPROCS. Each HDR histogram is ~190 KB
// of counts, and the Go GC lets garbage grow in proportion to the live heap,
// of which these are most: shards cost RSS twice.
func histShards() int { return min(8, max(1, runtime.GOMAXPROCS(0))) }

func newHDR() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histDigits) }

// shardedHist takes records from many goroutines; collect() moves what was
// recorded since the last call into a window histogram and the run total.
// Its histograms are made on first use: a kind a run never records (PUBACK
// at QoS 0) costs nothing.
type shardedHist struct {
	shards []histShard
	mu     sync.Mutex
	total  *hdrhistogram.Histogram
	window *hdrhistogram.Histogram
	// Their summaries as of the last collect: a second's report reads them
	// several times, and each summary walks the histogram's counts.
	windowStats, totalStats Stats
}

type histShard struct {
	sync.Mutex
	h *hdrhistogram.Histogram
	_ [40]byte // keep shards on separate cache lines
}

func newShardedHist() *shardedHist {
	return &shardedHist{shards: make([]histShard, histShards())}
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
	sh := &s.shards[shard%len(s.shards)]
	sh.Lock()
	if sh.h == nil {
		sh.h = newHDR()
	}
	_ = sh.h.RecordValue(clampMicros(ns))
	sh.Unlock()
}

// collect folds the shards into the window (reset first) and the total.
func (s *shardedHist) collect() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.window != nil {
		s.window.Reset()
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.Lock()
		if sh.h != nil && sh.h.TotalCount() > 0 {
			s.mergeLocked(sh.h)
			sh.h.Reset()
		}
		sh.Unlock()
	}
	s.foldLocked()
}

// collectFrom makes the window the sum of parts' windows, each collected
// just before, and adds it to the total: a histogram recorded as its parts.
func (s *shardedHist) collectFrom(parts []*shardedHist) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.window != nil {
		s.window.Reset()
	}
	for _, part := range parts {
		part.mu.Lock()
		if part.window != nil && part.window.TotalCount() > 0 {
			s.mergeLocked(part.window)
		}
		part.mu.Unlock()
	}
	s.foldLocked()
}

// mergeLocked adds h to the window, made on first use. s.mu is held.
func (s *shardedHist) mergeLocked(h *hdrhistogram.Histogram) {
	if s.window == nil {
		s.window, s.total = newHDR(), newHDR()
	}
	s.window.Merge(h)
}

// foldLocked adds the window to the total and summarises both. s.mu is held.
func (s *shardedHist) foldLocked() {
	if s.window != nil {
		s.total.Merge(s.window)
		s.windowStats = Summarize(s.window)
		if s.windowStats.Count > 0 { // else the total is as it was
			s.totalStats = Summarize(s.total)
		}
	}
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
	P9999 float64 `json:"p9999"`
}

// Summarize is a histogram's summary in milliseconds: what a result file
// shows, and what a merge of instance files recomputes from their histograms.
func Summarize(h *hdrhistogram.Histogram) Stats {
	if h == nil || h.TotalCount() == 0 {
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
		Max:   ms(h.ValueAtQuantile(100)), // Max()'s value, by the quantiles' quick scan (Max walks each count)
		P9999: ms(h.ValueAtQuantile(99.99)),
	}
}

// snapshot returns the window and total summaries (as of the last collect).
func (s *shardedHist) snapshot() (window, total Stats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.windowStats, s.totalStats
}
