package mqtt

// quotaPeriods counts a cgroup's CPU quota enforcement periods in which its
// tasks ran, and those in which the quota throttled them.
type quotaPeriods struct{ periods, throttled int64 }
