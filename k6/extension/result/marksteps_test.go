package result

import "testing"

func TestMarkSteps(t *testing.T) {
	steps := []map[string]any{
		{"target_rate": 100.0, "achieved_rate": 95.0},
		{"target_rate": 100.0, "achieved_rate": 94.9},
		{"target_rate": 0.0, "achieved_rate": 0.0},
	}
	if err := MarkSteps(steps); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false, true} {
		if steps[i]["reached"] != want {
			t.Errorf("step %d: reached %v, want %v", i, steps[i]["reached"], want)
		}
	}
}
