"""A process's CPU over one phase of a run, measured from outside: its CPU
time, the share of it in its own code and in the kernel, and its system
calls by kind (perf attached for the phase). What process.run measures the
publish phase with."""

import os
import re
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path


def proc_user_system(pid):
    """utime and stime in CLK_TCK steps, as the scheduler tick split them."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


def proc_cpu_seconds(pid):
    """utime + stime in seconds: every thread's run time, exact (the kernel
    scales the two to the scheduler's own sum), in CLK_TCK steps."""
    return sum(proc_user_system(pid)) / os.sysconf("SC_CLK_TCK")


class PerfPhase:
    """perf (its command and options) from now until stop(), its output
    parsed by the subclass. stop() returns None without perf or its
    permission (kernel.perf_event_paranoid)."""

    def __init__(self, command, *options):
        self.out = tempfile.NamedTemporaryFile(suffix=".perf", delete=False).name
        try:
            self.proc = subprocess.Popen(["perf", command, *options, "-o", self.out],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        except OSError:  # no perf here
            self.proc = None
            Path(self.out).unlink(missing_ok=True)

    def stop(self):
        if self.proc is None:
            return None
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(60)
        try:
            return self.parse(Path(self.out))
        finally:
            Path(self.out).unlink(missing_ok=True)


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


class SyscallCount(PerfPhase):
    """Every system call of a process while it lasts (every thread's: reads
    are recvmsg, writes write, and epoll waits and the Go runtime's futexes
    count too), by the kernel's raw_syscalls:sys_enter tracepoint in
    counting mode (`perf stat`), which adds no sampling, and by kind
    (SYSCALL_KINDS): {"all": every call, KIND: its calls, "other": the rest}."""

    def __init__(self, pid):
        super().__init__("stat", "-x", ",", "-e", ",".join(syscall_events()), "-p", str(pid))

    def parse(self, out):
        counts = {}
        for line in out.read_text().splitlines():
            fields = line.split(",")
            if len(fields) > 2 and fields[0].isdigit():
                counts[fields[2].removeprefix("syscalls:sys_enter_")] = int(fields[0])
        if "raw_syscalls:sys_enter" not in counts:
            return None
        by_kind = {"all": counts["raw_syscalls:sys_enter"]}
        for kind, names in SYSCALL_KINDS.items():
            if any(n in counts for n in names):
                by_kind[kind] = sum(counts.get(n, 0) for n in names)
        by_kind["other"] = by_kind["all"] - sum(v for k, v in by_kind.items() if k != "all")
        return by_kind


class OwnCodeSamples(PerfPhase):
    """The share of a process's CPU time in its own code: perf's cpu-clock
    samples of each CPU, those that caught the process's threads, each
    where it was, in its code or in the kernel. Every CPU's, not the
    process's own (perf record -p): an event of its own follows each of its
    threads on and off a CPU, which cost k6 two fifths more CPU in a
    fan-out run, all of it in the kernel. The period, about 4,000 a second,
    is one that no pacing interval (1 or 10 ms) nor the 4 ms tick divides:
    the samples drift over every moment of a wake-up."""

    SAMPLE_PERIOD_NS = 250_173

    def __init__(self, pid):
        self.pid = pid
        super().__init__("record", "-q", "-a", "-c", str(self.SAMPLE_PERIOD_NS), "-e", "cpu-clock")

    def parse(self, out):
        r = subprocess.run(["perf", "script", "-i", str(out), "-F", "pid,ip"], capture_output=True, text=True,
                           check=False)  # fmt: skip
        # "  6182  ffffffff815fa4ad": the process, and where it was; the kernel's
        # addresses are the upper half (x86-64, arm64). Not `perf report --pid`,
        # which dropped a tenth of the process's samples here (perf 6.1).
        own = kernel = 0
        for pid, ip in re.findall(r"^\s*(\d+)\s+([0-9a-f]+)\s*$", r.stdout, re.MULTILINE):
            if int(pid) == self.pid:
                if int(ip, 16) >= 1 << 63:
                    kernel += 1
                else:
                    own += 1
        return (own / (own + kernel), own + kernel) if own + kernel else None


@dataclass
class CpuSplit:
    """A phase's CPU seconds, in the process's own code and in the kernel,
    and how they were told apart."""

    cpu: float
    user: float
    system: float
    split_by: str


class CpuPhase:
    """A process's CPU from now until stop(): its CPU seconds from /proc,
    split by OwnCodeSamples. Not by /proc's utime and stime: the kernel
    splits those by its scheduler tick (every 4 ms here), which meets a
    process woken by its own timer (a publisher's 10 ms pacing) at nearly
    the same moment of each wake-up all run long, so that one fan-out run's
    share in its own code read 6% and another 18%, same build
    (tests/bench/test_cpu_split.py). Without perf's samples (no perf, or no
    permission), the ticks' split, said so in split_by."""

    def __init__(self, pid):
        self.pid = pid
        self.cpu0, self.ticks0 = proc_cpu_seconds(pid), proc_user_system(pid)
        self.samples = OwnCodeSamples(pid)

    def stop(self):
        cpu = proc_cpu_seconds(self.pid) - self.cpu0
        sampled = self.samples.stop()
        if sampled:
            share, n = sampled
            how = f"perf cpu-clock samples of every CPU ({n:,} of this process)"
        else:
            user, system = (b - a for a, b in zip(self.ticks0, proc_user_system(self.pid), strict=True))
            share, how = (
                (user / (user + system) if user + system else 0.0),
                "/proc utime and stime (perf gave no samples)",
            )
        return CpuSplit(cpu, cpu * share, cpu * (1 - share), how)
