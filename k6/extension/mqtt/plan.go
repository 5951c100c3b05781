package mqtt

import (
	"fmt"
	"math"
	"time"

	"github.com/grafana/sobek"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
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

// openFilesReserve is the file descriptors a k6 process holds beside its
// MQTT connections, one each. Measured here mid-run (p2p, 1 + 1 clients,
// /proc/<pid>/fd): 14, stdio, 3 epolls and 3 eventfds (the Go runtime's and
// the groups' pollers), a pipe, the cgroup's CPU quota files and the REST
// API's listener (a run under a limit of 20,000 opened 19,989 connections
// before EMFILE). An output's connections (InfluxDB, the web dashboard), the
// result file and TLS files read at connect come and go on top: 64 covers
// them with room, and refuses no run by more than a few dozen.
const openFilesReserve = 64

// checkOpenFiles is `checkOpenFiles({ connections, total })`, the
// scenarios' check in setup, before anything connects: this process's
// connections open at once (connections; total: the whole run's, over
// every process) and openFilesReserve must fit the open-files limit it can
// have, RLIMIT_NOFILE's hard one (Go raises the soft limit to it at
// start), or the run is refused rather than left to fail mid-ramp on
// EMFILE. It says why it refuses, "" when they fit.
func checkOpenFiles(plan map[string]any) string {
	_, hard, ok := connection.OpenFilesLimit()
	if !ok {
		return "" // no such limit on this system
	}
	return openFilesFit(int64(result.Number(plan["connections"])), int64(result.Number(plan["total"])), hard)
}

// openFilesFit refuses connections over limit, naming the processes that
// would fit total (k6 splits each flow's clients about evenly over them).
func openFilesFit(connections, total int64, limit uint64) string {
	need := uint64(max(connections, 0)) + openFilesReserve
	if need <= limit {
		return ""
	}
	processes := "no number of k6 processes fits it"
	if limit > openFilesReserve {
		per := limit - openFilesReserve
		n := (uint64(max(total, connections)) + per - 1) / per
		processes = fmt.Sprintf("%d k6 processes fit it (scripts/bench.sh --instances %d, or k6 run "+
			"--execution-segment per process: docs/distributed.md)", n, n)
	}
	return fmt.Sprintf("this k6 process would hold %d connections at once, plus %d files kept for k6's own: "+
		"%d in all, over its open-files limit of %d (RLIMIT_NOFILE, hard). Raise the limit (`ulimit -n %d` "+
		"where k6 starts; above the hard limit as root, or LimitNOFILE= for a service), or split the load: %s. "+
		"Nothing connected", connections, openFilesReserve, need, limit, need, processes)
}
