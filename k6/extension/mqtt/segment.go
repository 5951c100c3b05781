package mqtt

import (
	"errors"

	"go.k6.io/k6/js/common"
	"go.k6.io/k6/lib"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
)

// segment is `segment()`: this instance's place in a test split over
// several k6 instances (`--execution-segment` and
// `--execution-segment-sequence`, which k6-operator passes to each runner):
// { segment, sequence, index (0-based), count }. One instance: 0:1 of 1.
//
// It reads the execution state, so it works after the init context (in
// setup, the default function and handleSummary): options, thresholds
// among them, are settled before k6 tells a script its segment.
func (mi *ModuleInstance) segment() *result.Segment {
	et := mi.tuple()
	return &result.Segment{Segment: et.Segment.String(), Sequence: et.Sequence.ExecutionSegmentSequence.String(),
		Index: et.SegmentIndex, Count: len(et.Sequence.ExecutionSegmentSequence)}
}

// share is `share(n)`: this instance's part of n things (clients) as
// { base, count }: k6's own striped scaling decides the count, so over the
// whole sequence the counts add up to n exactly, and the instances take
// consecutive ranges in sequence order, base being where this one starts.
func (mi *ModuleInstance) share(n int64) map[string]any {
	if n < 0 {
		common.Throw(mi.vu.Runtime(), errors.New("share: n must be >= 0"))
	}
	et := mi.tuple()
	base := int64(0)
	for j := 0; j < et.SegmentIndex; j++ {
		base += et.Sequence.ScaleInt64(j, n)
	}
	return map[string]any{"base": base, "count": et.ScaleInt64(n)}
}

// tuple is this instance's segment within its (filled) sequence.
func (mi *ModuleInstance) tuple() *lib.ExecutionTuple {
	rt := mi.vu.Runtime()
	state := mi.vu.State()
	if state == nil {
		common.Throw(rt, errors.New("the execution segment is known only after the init context "+
			"(in setup, the default function or handleSummary)"))
	}
	et, err := lib.NewExecutionTuple(state.Options.ExecutionSegment, state.Options.ExecutionSegmentSequence)
	if err != nil {
		common.Throw(rt, err)
	}
	return et
}
