//go:build unix

package mqtt

import (
	"runtime"
	"syscall"
)

// processUsage is the generator's own cost: CPU seconds (user + system) and
// peak RSS, so that a report can say what the generator took from a shared host.
func processUsage() map[string]any {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return nil
	}
	sec := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	maxRSSKB := int64(ru.Maxrss)
	if runtime.GOOS == "darwin" { // bytes there, KB on Linux and the BSDs
		maxRSSKB /= 1024
	}
	return map[string]any{"cpu_user_s": sec(ru.Utime), "cpu_system_s": sec(ru.Stime), "max_rss_kb": maxRSSKB}
}
