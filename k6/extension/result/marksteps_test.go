package result

import (
	"testing"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

func TestMarkSteps(t *testing.T) {
	p99, slow, bound := 5.0, 500.0, 100.0
	steps := []map[string]any{{}, {}, {}, {}}
	d := &verdict.Doc{
		Steps: []verdict.Step{
			{Start: 0, End: 10_000, TargetRate: 100, AchievedRate: 95},
			{Start: 10_000, End: 20_000, TargetRate: 100, AchievedRate: 94.9},
			{Start: 20_000, End: 30_000, TargetRate: 100, AchievedRate: 100},
			{Start: 40_000, End: 50_000},
		},
		Timeline: []verdict.Second{
			{T: 5_000, Received: 10, LatencyP99Ms: &p99}, {T: 15_000, Received: 10, LatencyP99Ms: &p99},
			{T: 25_000, Received: 10, LatencyP99Ms: &slow},
		},
		Parameters: verdict.Parameters{P99Ms: &bound},
	}
	MarkSteps(steps, d)
	for i, want := range [][2]bool{{true, true}, {false, false}, {true, false}, {true, false}} {
		if steps[i]["reached"] != want[0] || steps[i]["passed"] != want[1] {
			t.Errorf("step %d: reached %v passed %v, want %v", i, steps[i]["reached"], steps[i]["passed"], want)
		}
	}
}
