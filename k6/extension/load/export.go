package load

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// What a result file carries so that the files of several generator
// instances (k6 execution segments) merge into exactly what one process
// would have recorded: every latency histogram whole, and the delivery
// accounting per stream, since a stream's publisher and receiver may run in
// different instances.

// EncodeHistogram is hdrhistogram-go's own serialization (V2, compressed,
// base64): what HdrHistogram's other implementations read too.
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	return string(b), err
}

// DecodeHistogram reads what EncodeHistogram wrote.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	return hdrhistogram.Decode([]byte(s))
}

// NewHistogram is an empty histogram with the run's bounds and precision,
// which every encoded histogram of a run shares.
func NewHistogram() *hdrhistogram.Histogram { return newHDR() }

// Histograms is every whole-run histogram that has samples, encoded, by
// metric name stem (mqtt_latency ...).
func (r *Run) Histograms() (map[string]string, error) {
	out := map[string]string{}
	names := HistNames()
	r.collect()
	hists := map[string]*shardedHist{}
	for k, hist := range r.hists {
		hists[names[k]] = hist
	}
	for name, hist := range r.flowHists.all() {
		hists[name] = hist
	}
	for name, hist := range hists {
		hist.mu.Lock()
		h := hist.total
		var enc string
		var err error
		if h != nil && h.TotalCount() > 0 {
			enc, err = EncodeHistogram(h)
		}
		hist.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if enc != "" {
			out[name] = enc
		}
	}
	return out, nil
}

// FlowStreams is one flow's delivery accounting as a result file keeps it.
//   - Publishers: [id, sent, rejected] for each publisher this instance ran.
//   - Receivers: [receiver, publisher, unique, duplicates, out of order] for
//     each stream this instance received on. The receiver is the
//     subscriber's index ({i}), or the filter of a shared subscription,
//     whose members may sit in different instances: their rows add up.
//
// A stream's loss is then sent - rejected - unique (never below 0), with
// sent and rejected from whichever instance ran the publisher.
type FlowStreams struct {
	Publishers [][3]int64 `json:"publishers" js:"publishers"`
	Receivers  [][5]any   `json:"receivers" js:"receivers"`
}

// receiver is one accounted receiver of a flow: a subscriber's streams, or
// a shared subscription's.
type receiver struct {
	flow string
	key  string
	set  *streamSet
}

// addReceivers records a subscriber group's stream sets for Streams: a
// shared subscription once for the whole process (its members share one
// set), every other subscriber by its index.
func (r *Run) addReceivers(flow string, idBase int, sets []*streamSet, sharedFilter string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sharedFilter != "" {
		for _, rc := range r.receivers {
			if rc.key == sharedFilter && rc.flow == flow {
				return
			}
		}
		r.receivers = append(r.receivers, receiver{flow: flow, key: sharedFilter, set: sets[0]})
		return
	}
	for i, s := range sets {
		r.receivers = append(r.receivers, receiver{flow: flow, key: strconv.Itoa(idBase + i), set: s})
	}
}

// Streams is the run's delivery accounting by flow (GroupConfig.Flow).
func (r *Run) Streams() map[string]*FlowStreams {
	out := map[string]*FlowStreams{}
	flow := func(name string) *FlowStreams {
		if out[name] == nil {
			out[name] = &FlowStreams{Publishers: [][3]int64{}, Receivers: [][5]any{}}
		}
		return out[name]
	}
	for _, p := range r.publishers.all() {
		f := flow(p.g.cfg.Flow)
		f.Publishers = append(f.Publishers, [3]int64{int64(p.id), int64(p.seq.Load()), p.rejected.Load()})
	}
	r.mu.Lock()
	receivers := append([]receiver(nil), r.receivers...)
	r.mu.Unlock()
	for _, rc := range receivers {
		f := flow(rc.flow)
		rc.set.mu.Lock()
		for pub, s := range rc.set.m {
			f.Receivers = append(f.Receivers, [5]any{rc.key, int64(pub), s.unique, s.dups, s.ooo})
		}
		rc.set.mu.Unlock()
	}
	for _, f := range out {
		sort.Slice(f.Publishers, func(i, j int) bool { return f.Publishers[i][0] < f.Publishers[j][0] })
		sort.Slice(f.Receivers, func(i, j int) bool {
			a, b := f.Receivers[i], f.Receivers[j]
			if a[0] != b[0] {
				return a[0].(string) < b[0].(string)
			}
			return a[1].(int64) < b[1].(int64)
		})
	}
	return out
}
