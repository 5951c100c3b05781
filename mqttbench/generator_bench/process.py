"""One run of the bench script (k6/bench/extension.js) by a k6 build, its k6
process measured from outside (/proc): CPU split into its own and the
kernel's, RSS at each mark the script logs, and a CPU profile of the
publish phase on request. What extension.py's sections measure with."""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from mqttbench import ROOT
from mqttbench.k6.command import binary, run_argv
from mqttbench.stack.native_services import raise_open_files

K6_OVERRIDE = os.environ.get("MQTTBENCH_K6")


def use_build(path):
    """The build measured from now on (k6_bin): path (--k6), else
    MQTTBENCH_K6's, else the project's (None)."""
    global K6_OVERRIDE
    K6_OVERRIDE = path or K6_OVERRIDE
    return K6_OVERRIDE


def k6_bin():
    if K6_OVERRIDE:
        return K6_OVERRIDE
    return binary()


def k6_version(k6=None):
    """The measured build, as `k6 version` names it (k6 and extension versions)."""
    out = subprocess.run([k6 or k6_bin(), "version"], capture_output=True, text=True, check=True).stdout
    return " ".join(out.split())


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_cpu_split(pid):
    """(utime, stime) in seconds of a process: its own code, and the kernel's
    work on its behalf (the TCP stack's for every packet it writes or reads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / os.sysconf("SC_CLK_TCK"), int(fields[12]) / os.sysconf("SC_CLK_TCK")


# System calls counted by kind: the kernel's entry tracepoints of each
# (syscalls:sys_enter_NAME), where this kernel has them; "other" is the rest
# of raw_syscalls:sys_enter (the Go runtime's madvise, sched_yield, ...).
SYSCALL_KINDS = {
    "write": ("write", "writev", "sendmsg", "sendto"),
    "read": ("read", "readv", "recvmsg", "recvfrom"),
    "io_uring": ("io_uring_enter",),  # a batch of reads or writes, many sockets in one call
    "epoll": ("epoll_wait", "epoll_pwait", "epoll_pwait2"),
    "futex": ("futex",),
    "sleep": ("nanosleep", "clock_nanosleep"),
}
TRACEPOINTS = [Path("/sys/kernel/tracing/events/syscalls"), Path("/sys/kernel/debug/tracing/events/syscalls")]


def syscall_events():
    """The perf events to count: every system call, and each kind's calls
    this kernel has a tracepoint for."""
    found = next((d for d in TRACEPOINTS if d.is_dir()), None)
    names = [n for kind in SYSCALL_KINDS.values() for n in kind if found and (found / f"sys_enter_{n}").is_dir()]
    return ["raw_syscalls:sys_enter", *(f"syscalls:sys_enter_{n}" for n in names)]


class SyscallCount:
    """Every system call of a process while it lasts (every thread's: reads
    are recvmsg, writes write, and epoll waits and the Go runtime's futexes
    count too), by the kernel's raw_syscalls:sys_enter tracepoint in
    counting mode (`perf stat`), which adds no sampling, and by kind
    (SYSCALL_KINDS). None without perf or its permission
    (kernel.perf_event_paranoid)."""

    def __init__(self, pid):
        self.out = tempfile.NamedTemporaryFile(suffix=".perf", delete=False).name
        events = ",".join(syscall_events())
        try:
            self.proc = subprocess.Popen(
                ["perf", "stat", "-x", ",", "-e", events, "-p", str(pid), "-o", self.out],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        except OSError:  # no perf here
            self.proc = None
            Path(self.out).unlink(missing_ok=True)

    def stop(self):
        """{"all": every call, KIND: its calls for each kind counted, "other": the rest}, or None."""
        if self.proc is None:
            return None
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(10)
        try:
            counts = {}
            for line in Path(self.out).read_text().splitlines():
                fields = line.split(",")
                if len(fields) > 2 and fields[0].isdigit():
                    counts[fields[2].removeprefix("syscalls:sys_enter_")] = int(fields[0])
        finally:
            Path(self.out).unlink(missing_ok=True)
        if "raw_syscalls:sys_enter" not in counts:
            return None
        by_kind = {"all": counts["raw_syscalls:sys_enter"]}
        for kind, names in SYSCALL_KINDS.items():
            if any(n in counts for n in names):
                by_kind[kind] = sum(counts.get(n, 0) for n in names)
        by_kind["other"] = by_kind["all"] - sum(v for k, v in by_kind.items() if k != "all")
        return by_kind


def proc_rss_kb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def fetch_profile(port, seconds, out):
    """A CPU profile of k6 over the next `seconds` (k6's --profiling-enabled endpoint)."""
    url = f"http://127.0.0.1:{port}/debug/pprof/profile?seconds={seconds}"
    with urllib.request.urlopen(url, timeout=seconds + 30) as r:  # noqa: S310 (loopback, our own k6)
        Path(out).write_bytes(r.read())


def run(env, k6=None, profile=None):
    """Runs the bench script (k6: that build); profile: a file to write a CPU
    profile of the publish phase to. Returns (marks dict, RESULT json, wall)."""
    raise_open_files()  # 10K connections
    port = free_port() if profile else None
    address = f"127.0.0.1:{port}" if profile else ""
    args = run_argv(
        ROOT / "k6/bench/extension.js", k6=k6 or k6_bin(), quiet=True, address=address, profiling=bool(profile),
        no_summary=True,
    )  # fmt: skip
    e = dict(os.environ, K6_NO_USAGE_REPORT="true", **env)
    t0 = time.time()
    p = subprocess.Popen(args, env=e, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    marks, result, profiler, syscalls = {}, None, None, None
    for line in p.stderr:
        if "MARK " in line:
            name = line.split("MARK ", 1)[1].split('"')[0].strip()
            user, system = proc_cpu_split(p.pid)
            marks[name] = {"t": time.time(), "cpu": user + system, "sys": system, "rss_kb": proc_rss_kb(p.pid)}
            if name == "publish-start":
                syscalls = SyscallCount(p.pid)
                if profile:
                    # The publishing phase, less a second at either end.
                    seconds = max(1, int(env["SECONDS"]) - 2)
                    profiler = threading.Thread(target=fetch_profile, args=(port, seconds, profile))
                    time.sleep(1)
                    profiler.start()
            elif name == "publish-end" and syscalls:
                marks[name]["syscalls"] = syscalls.stop()
        elif "RESULT " in line:
            raw = line.split("RESULT ", 1)[1].rsplit('" source=', 1)[0]
            result = json.loads(raw.encode().decode("unicode_escape"))
        elif "level=error" in line or "level=warning" in line:
            sys.stderr.write(line)
    p.wait()
    if profiler:
        profiler.join()
    if p.returncode != 0:
        raise SystemExit(f"k6 failed with exit code {p.returncode}")
    return marks, result, time.time() - t0
