package mqtt

import (
	"os"
	"runtime"
	"strings"
)

// host describes the generator's machine for the full-disclosure section:
// CPU, memory, kernel, OS and the network sysctls that bound a benchmark.
func host() map[string]any {
	name, _ := os.Hostname()
	out := map[string]any{
		"hostname": name, "cpus": runtime.NumCPU(), "go_os": runtime.GOOS, "go_arch": runtime.GOARCH,
		"cpu_model": firstField("/proc/cpuinfo", "model name"),
		"mem_total": firstField("/proc/meminfo", "MemTotal"),
		"kernel":    readTrim("/proc/sys/kernel/osrelease"),
		"os":        osRelease(),
		// The running kernel, so the clock: containers of one host share it.
		"boot_id": readTrim("/proc/sys/kernel/random/boot_id"),
	}
	sysctls := map[string]string{}
	for _, k := range []string{"net/core/somaxconn", "fs/file-max", "fs/nr_open", "net/ipv4/tcp_rmem",
		"net/ipv4/tcp_wmem", "net/ipv4/ip_local_port_range", "net/ipv4/tcp_max_syn_backlog", "net/core/netdev_max_backlog"} {
		if v := readTrim("/proc/sys/" + k); v != "" {
			sysctls[strings.ReplaceAll(k, "/", ".")] = strings.Join(strings.Fields(v), " ")
		}
	}
	out["sysctls"] = sysctls
	if c := hostClock(); c != nil {
		out["clock"] = c
	}
	return out
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func firstField(path, key string) string {
	for _, line := range strings.Split(readTrim(path), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func osRelease() string {
	for _, line := range strings.Split(readTrim("/etc/os-release"), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return runtime.GOOS
}
