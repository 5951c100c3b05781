package mqtt

import (
	"math"
	"time"

	"github.com/grafana/sobek"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
)

// setPlan is `setPlan({ duration, connections, status_interval })`: the
// planned length and connections the status line shows progress against
// (without them it shows only what is), and how often it is logged.
func (mi *ModuleInstance) setPlan(arg sobek.Value) {
	o := newOpts("setPlan", exportValue(arg))
	p := load.Plan{
		Duration:    o.duration("duration", 0),
		Connections: int64(o.integer("connections", 0, 0, math.MaxInt32)),
		Interval:    o.duration("status_interval", load.DefaultStatusInterval),
		Instances:   o.integer("instances", 1, 1, math.MaxInt32),
	}
	// The reporter that logs the line wakes once a second.
	if p.Interval < time.Second {
		o.fail("status_interval", "must be at least 1s, got %v", p.Interval)
	}
	if err := o.done(); err != nil {
		abortTest(mi.vu.Runtime(), err)
		return
	}
	mi.root.run.SetPlan(p)
}
