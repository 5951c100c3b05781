//go:build !linux

package mqtt

// cpuQuotaPeriods: no cgroups here.
func cpuQuotaPeriods() (quotaPeriods, bool) { return quotaPeriods{}, false }
