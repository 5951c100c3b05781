package result

import (
	"encoding/json"
	"fmt"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

// FlowLatencies gives each flow's delivery its own pub-to-sub latency, from
// the histograms by flow (load.FlowHistName): a single run's, or a merge's
// summed bucket for bucket, so that both give the same figures.
func FlowLatencies(d map[string]FlowDelivery, hists map[string]string) error {
	for name, f := range d {
		enc, ok := hists[load.FlowHistName(name)]
		if !ok {
			continue
		}
		h, err := load.DecodeHistogram(enc)
		if err != nil {
			return fmt.Errorf("histograms.%s: %w", load.FlowHistName(name), err)
		}
		s := load.Summarize(h)
		f.Latency = &s
		d[name] = f
	}
	return nil
}

// judgeFlows is each flow's own verdict (verdict.Flows) on the document as
// a reader of the file would see it.
func (r *Result) judgeFlows() error {
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	r.FlowVerdicts, err = verdict.Flows(raw)
	return err
}

// JudgeFlows completes a document's per-flow figures and verdicts: a
// single run's (Judge) and a merged one's (k6 x mqtt-merge).
func (r *Result) JudgeFlows() error {
	if err := FlowLatencies(r.Delivery, r.Histograms); err != nil {
		return err
	}
	return r.judgeFlows()
}
