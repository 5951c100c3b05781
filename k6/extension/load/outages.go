package load

import (
	"sync"
	"time"
)

// Outage is one window in which connections were down: it opens when the
// number of lost connections awaiting their reconnect goes from 0 to more,
// and ends when every one of them is back. One that was still down when
// its owner closed it ends the window without a recovery: End stays zero
// (the run ended during the outage) and Last says when it was given up.
type Outage struct {
	Start   time.Time
	End     time.Time // zero: not recovered
	Last    time.Time // when the window stopped counting (End, or given up)
	MaxDown int64
	gaveUp  bool // a connection was closed while down
}

// Seconds is how long the window lasted: to its end, to when it was given
// up, or to now while it is open.
func (o Outage) Seconds(now time.Time) float64 {
	last := o.Last
	if last.IsZero() {
		last = now
	}
	return last.Sub(o.Start).Seconds()
}

// Map is the outage as the result file has it: start_ms, end_ms (nil when
// the run ended during it), duration_s, max_down.
func (o Outage) Map(now time.Time) map[string]any {
	var end any
	if !o.End.IsZero() {
		end = o.End.UnixMilli()
	}
	return map[string]any{
		"start_ms": o.Start.UnixMilli(), "end_ms": end, "duration_s": o.Seconds(now), "max_down": o.MaxDown,
	}
}

// outages follows the number of connections down, run-wide (every group
// and client), and keeps the windows.
type outages struct {
	mu      sync.Mutex
	down    int64
	windows []Outage
}

// change adds delta to the connections down at now; gaveUp: the ones
// leaving the count were closed while down, not recovered (then their
// window never ends with every connection back).
func (o *outages) change(delta int64, now time.Time, gaveUp bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	before := o.down
	o.down = max(0, o.down+delta)
	switch {
	case before == 0 && o.down > 0:
		o.windows = append(o.windows, Outage{Start: now, MaxDown: o.down})
	case before > 0:
		w := &o.windows[len(o.windows)-1]
		w.MaxDown = max(w.MaxDown, o.down)
		w.gaveUp = w.gaveUp || gaveUp
		if o.down == 0 {
			w.Last = now
			if !w.gaveUp {
				w.End = now
			}
		}
	}
}

// Down is the number of connections down now.
func (o *outages) Down() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.down
}

// list is a copy of the windows so far.
func (o *outages) list() []Outage {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Outage(nil), o.windows...)
}

// Outages are the run's outage windows so far, as the result file has them.
func (r *Run) Outages() []map[string]any {
	now := time.Now()
	out := []map[string]any{}
	for _, w := range r.outages.list() {
		out = append(out, w.Map(now))
	}
	return out
}

// outagesSince counts the windows that were open at or after t: whether
// connections were down during a phase that began at t.
func (r *Run) outagesSince(t time.Time) int {
	n := 0
	for _, w := range r.outages.list() {
		if w.Last.IsZero() || !w.Last.Before(t) {
			n++
		}
	}
	return n
}
