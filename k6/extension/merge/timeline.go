package merge

import (
	"math"
	"sort"
	"strings"
)

// TimelineNote is what the merged timeline's latency columns are: rows
// carry quantiles, not the samples, and quantiles do not add up.
const TimelineNote = "timeline rows are the instances' rows of the same second added up (published, received, " +
	"connections, target_rate); latency_avg_ms is weighted by received; latency_p50_ms, latency_p99_ms, " +
	"latency_max_ms and send_lag_p99_ms are the worst instance's of that second, an upper bound: per-second " +
	"quantiles cannot be merged from these rows (whole-run quantiles in latency_ms are exact)"

func num(v any) (float64, bool) {
	f, ok := v.(float64)
	return f, ok
}

// mergeTimeline adds up the instances' per-second rows by second (their
// t rounded to the second: instances tick at their own offsets).
func mergeTimeline(ins []*instance) []map[string]any {
	bySecond := map[int64]map[string]any{}
	weight := map[int64]float64{} // received, for latency_avg_ms
	avgSum := map[int64]float64{}
	for _, in := range ins {
		for _, row := range in.Timeline {
			t, ok := num(row["t"])
			if !ok {
				continue
			}
			sec := int64(math.Round(t/1000)) * 1000
			m := bySecond[sec]
			if m == nil {
				m = map[string]any{"t": float64(sec)}
				bySecond[sec] = m
			}
			recv, _ := num(row["received"])
			for k, v := range row {
				f, isNum := num(v)
				switch {
				case k == "t":
				case k == "latency_avg_ms":
					if isNum {
						avgSum[sec] += f * recv
						weight[sec] += recv
					}
				case strings.HasSuffix(k, "_ms") && isNum:
					if old, ok := num(m[k]); !ok || f > old {
						m[k] = f
					}
				case isNum:
					old, _ := num(m[k])
					m[k] = old + f
				default:
					if _, ok := m[k]; !ok {
						m[k] = v
					}
				}
			}
			if _, ok := row["latency_avg_ms"]; ok {
				m["latency_avg_ms"] = 0.0
			}
		}
	}
	secs := make([]int64, 0, len(bySecond))
	for s := range bySecond {
		secs = append(secs, s)
	}
	sort.Slice(secs, func(i, j int) bool { return secs[i] < secs[j] })
	out := make([]map[string]any, 0, len(secs))
	for _, s := range secs {
		m := bySecond[s]
		if _, ok := m["latency_avg_ms"]; ok && weight[s] > 0 {
			m["latency_avg_ms"] = math.Round(avgSum[s]/weight[s]*1000) / 1000
		}
		out = append(out, m)
	}
	return out
}

// mergeSteps merges the instances' publish steps by index: every instance
// runs the same steps at once. Counts and rates add up; the window is the
// widest; the step's definition (rate, duration, payload) is the first's.
func mergeSteps(ins []*instance) []map[string]any {
	var out []map[string]any
	for _, in := range ins {
		for i, step := range in.Steps {
			if i == len(out) {
				out = append(out, map[string]any{})
			}
			m := out[i]
			for k, v := range step {
				old, seen := m[k]
				f, isNum := num(v)
				o, oldNum := num(old)
				switch {
				case !seen:
					m[k] = v
				case k == "rate" || k == "duration" || k == "payload" || !isNum || !oldNum:
				case k == "start":
					m[k] = math.Min(o, f)
				case k == "end":
					m[k] = math.Max(o, f)
				default:
					m[k] = o + f
				}
			}
		}
	}
	if out == nil {
		out = []map[string]any{}
	}
	return out
}

// mergeOutages lists every instance's outages, each with its instance.
func mergeOutages(ins []*instance) []map[string]any {
	out := []map[string]any{}
	for _, in := range ins {
		for _, o := range in.Outages {
			c := map[string]any{"instance": in.Instance.Index}
			for k, v := range o {
				c[k] = v
			}
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, _ := num(out[i]["start_ms"])
		b, _ := num(out[j]["start_ms"])
		return a < b
	})
	return out
}

// mergeGenerator adds up the instances' CPU seconds; peaks take the max.
func mergeGenerator(ins []*instance) map[string]any {
	out := map[string]any{}
	for _, in := range ins {
		for k, v := range in.Generator {
			f, isNum := num(v)
			o, oldNum := num(out[k])
			switch {
			case out[k] == nil:
				out[k] = v
			case !isNum || !oldNum:
			case strings.HasPrefix(k, "max"):
				out[k] = math.Max(o, f)
			default:
				out[k] = math.Round((o+f)*1000) / 1000 // CPU seconds, without float noise
			}
		}
	}
	return out
}
