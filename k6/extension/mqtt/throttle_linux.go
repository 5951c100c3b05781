package mqtt

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cpuQuotaPeriods is how often the CPU quota of this process's cgroup held
// it back so far: of the quota's enforcement periods in which it ran
// (cpu.stat nr_periods, cgroup v1 and v2), those in which it was throttled
// (nr_throttled). A generator in a container or a cgroup with a CPU limit
// (k6-operator pods, systemd-run -p CPUQuota) is slow for that reason, not
// the broker's.
func cpuQuotaPeriods() (quotaPeriods, bool) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return quotaPeriods{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controllers:path; v2 is "0::path".
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		var dirs []string
		switch {
		case parts[1] == "":
			dirs = []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}
		case hasController(parts[1], "cpu"):
			dirs = []string{"/sys/fs/cgroup/" + parts[1], "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}
		default:
			continue
		}
		for _, d := range dirs {
			if q, ok := periodsIn(filepath.Join(d, parts[2], "cpu.stat")); ok {
				return q, true
			}
		}
	}
	return quotaPeriods{}, false
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// periodsIn reads the periods of one cpu.stat.
func periodsIn(path string) (quotaPeriods, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return quotaPeriods{}, false
	}
	var q quotaPeriods
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, " ")
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch {
		case err != nil:
		case k == "nr_periods":
			q.periods, found = n, found+1
		case k == "nr_throttled":
			q.throttled, found = n, found+1
		}
	}
	return q, found == 2
}
