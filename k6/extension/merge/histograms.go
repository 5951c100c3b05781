package merge

import (
	"fmt"
	"sort"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
)

// MergeHistograms decodes histograms written by load.EncodeHistogram and
// adds them up. Every instance records with the same bounds and precision
// (load.NewHistogram), so a decoded bucket lands in the same bucket of the
// sum: the result is bucket for bucket what one process recording every
// sample would hold, and load.Summarize gives the same figures. A histogram
// of other bounds would be re-bucketed (inexact) or clipped, so it is refused.
func MergeHistograms(encoded ...string) (*hdrhistogram.Histogram, error) {
	sum := load.NewHistogram()
	for i, enc := range encoded {
		if err := addEncoded(sum, enc); err != nil {
			return nil, fmt.Errorf("histogram %d: %w", i+1, err)
		}
	}
	return sum, nil
}

func addEncoded(sum *hdrhistogram.Histogram, enc string) error {
	h, err := load.DecodeHistogram(enc)
	if err != nil {
		return fmt.Errorf("cannot be decoded (%v): expected load.EncodeHistogram's base64 (HdrHistogram V2, compressed)", err)
	}
	want, got := sum.Export(), h.Export()
	if got.LowestTrackableValue != want.LowestTrackableValue || got.HighestTrackableValue != want.HighestTrackableValue ||
		got.SignificantFigures != want.SignificantFigures {
		return fmt.Errorf("has bounds %d..%d with %d significant digits, not the extension's %d..%d with %d: "+
			"it was written by another version of the extension, whose histograms cannot be merged exactly; "+
			"rerun the instances with one build",
			got.LowestTrackableValue, got.HighestTrackableValue, got.SignificantFigures,
			want.LowestTrackableValue, want.HighestTrackableValue, want.SignificantFigures)
	}
	if dropped := sum.Merge(h); dropped > 0 {
		return fmt.Errorf("%d samples fall outside the extension's bounds: the file is damaged", dropped)
	}
	return nil
}

// mergedHistograms sums every instance's histograms by stem.
func mergedHistograms(ins []*instance) (map[string]*hdrhistogram.Histogram, error) {
	out := map[string]*hdrhistogram.Histogram{}
	for _, in := range ins {
		stems := make([]string, 0, len(in.Histograms))
		for stem := range in.Histograms {
			stems = append(stems, stem)
		}
		sort.Strings(stems)
		for _, stem := range stems {
			if out[stem] == nil {
				out[stem] = load.NewHistogram()
			}
			if err := addEncoded(out[stem], in.Histograms[stem]); err != nil {
				return nil, badInput(fmt.Errorf("%s: histograms.%s %w", in.path, stem, err))
			}
		}
	}
	return out, nil
}

// encodeHistograms is what the merged result carries: the non-empty ones.
func encodeHistograms(hs map[string]*hdrhistogram.Histogram) (map[string]string, error) {
	out := map[string]string{}
	for stem, h := range hs {
		if h.TotalCount() == 0 {
			continue
		}
		enc, err := load.EncodeHistogram(h)
		if err != nil {
			return nil, fmt.Errorf("histograms.%s: %w", stem, err)
		}
		out[stem] = enc
	}
	return out, nil
}

// latencySummaries is latency_ms recomputed from the merged histograms: all
// kinds, zero where there were no samples, as a single process writes them.
func latencySummaries(hs map[string]*hdrhistogram.Histogram) map[string]load.Stats {
	out := map[string]load.Stats{}
	stems := load.HistNames()
	for i, kind := range load.LatencyKeys() {
		out[kind] = load.Summarize(hs[stems[i]])
	}
	return out
}

// statOf is one whole-run figure of a summary, named as the extension's
// <stem>_<stat> gauges are (load.TotalStats).
func statOf(s load.Stats, stat string) (float64, bool) {
	switch stat {
	case "avg":
		return s.Avg, true
	case "p50":
		return s.P50, true
	case "p90":
		return s.P90, true
	case "p95":
		return s.P95, true
	case "p99":
		return s.P99, true
	case "max":
		return s.Max, true
	}
	return 0, false
}
