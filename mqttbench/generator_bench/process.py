"""One run of the bench script (k6/bench/extension.js) by a k6 build, its k6
process measured from outside: time and RSS at each mark the script logs,
and over the publish phase its CPU, split into its own code and the
kernel's, and its system calls (cpu.py), and a CPU profile on request. What
extension.py's sections measure with."""

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from mqttbench import ROOT
from mqttbench.k6.command import binary, run_argv
from mqttbench.stack.native_services import raise_open_files

from .cpu import CpuPhase, SyscallCount

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
    marks, result, profiler, phase, syscalls = {}, None, None, None, None
    for line in p.stderr:
        if "MARK " in line:
            name = line.split("MARK ", 1)[1].split('"')[0].strip()
            marks[name] = {"t": time.time(), "rss_kb": proc_rss_kb(p.pid)}
            if name == "publish-start":
                phase, syscalls = CpuPhase(p.pid), SyscallCount(p.pid)
                if profile:
                    # The publishing phase, less a second at either end.
                    seconds = max(1, int(env["SECONDS"]) - 2)
                    profiler = threading.Thread(target=fetch_profile, args=(port, seconds, profile))
                    time.sleep(1)
                    profiler.start()
            elif name == "publish-end" and syscalls:
                marks[name]["split"], marks[name]["syscalls"] = phase.stop(), syscalls.stop()
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
