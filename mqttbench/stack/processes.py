"""The native stack's processes, each known by its pid file and identity:
start() records them, ours() tells the process start() began from a
recycled pid, stop() signals only that one. $STATE/pids/NAME.pid holds
only the pid (Telegraf's procstat reads the broker's), NAME.id that
process's start time and executable."""

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


def identity(pid):
    """ "<start time> <executable>" of a live process, or None. The start time
    (field 22 of /proc/PID/stat, clock ticks after boot) survives exec and
    tells a recycled pid apart: it alone decides (same_process); the
    executable is for the messages. A binary replaced on disk reads "PATH
    (deleted)"."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        exe = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None
    # After comm (field 2), which may hold spaces and parentheses.
    start = stat.rsplit(")", 1)[1].split()[19]
    return f"{start} {exe.removesuffix(' (deleted)')}"


def same_process(a, b):
    return bool(a and b) and a.split(" ", 1)[0] == b.split(" ", 1)[0]


def _start_time(ident):
    return ident.split(" ", 1)[0]


def _exe(ident):
    return ident.split(" ", 1)[1] if " " in ident else ""


@dataclass
class Owned:
    """What a pid file says: pid is set when it names the very process
    start() began; else why says what is wrong (empty when there is no pid
    file or its process has exited: nothing to signal)."""

    pid: int | None = None
    why: str = ""


class Processes:
    def __init__(self, state):
        self.pids = Path(state) / "pids"
        self.logs = Path(state) / "logs"

    def pid_of(self, name):
        try:
            return int((self.pids / f"{name}.pid").read_text().strip())
        except (OSError, ValueError):
            return None

    def log(self, name):
        return self.logs / f"{name}.log"

    def ours(self, name):
        p = self.pid_of(name)
        have = identity(p) if p is not None else None
        if have is None:
            return Owned()
        try:
            want = (self.pids / f"{name}.id").read_text().strip()
        except OSError:
            want = ""
        where = self.pids / f"{name}.pid"
        if not want:
            return Owned(
                why=f"{name}: pid {p} in {where} has no record of the process it named ({self.pids / name}.id): "
                f"pid {p} ({_exe(have)}) is not signalled (if it is the stack's, from an older stack.sh, "
                f"stop it yourself: kill {p})"
            )
        if not same_process(have, want):
            return Owned(
                why=f"{name}: pid {p} in {where} is now another process ({_exe(have)}, start time "
                f"{_start_time(have)}; recorded: {_exe(want)}, start time {_start_time(want)}): it is not signalled"
            )
        return Owned(pid=p)

    def forget(self, name):
        for suffix in ("pid", "id"):
            (self.pids / f"{name}.{suffix}").unlink(missing_ok=True)

    def start(self, name, command, env=None):
        """Runs a daemon in its own session, its output appended to its log."""
        self.pids.mkdir(parents=True, exist_ok=True)
        self.logs.mkdir(parents=True, exist_ok=True)
        with self.log(name).open("ab") as out:
            # Popen returns once the daemon has exec'd: its identity is its own.
            p = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, env=env,
            )  # fmt: skip
        self.forget(name)
        # Exited already: the readiness wait says so, with the log.
        (self.pids / f"{name}.id").write_text((identity(p.pid) or "") + "\n")
        (self.pids / f"{name}.pid").write_text(f"{p.pid}\n")
        return p.pid

    def stop(self, name, warn):
        """TERM (then KILL after 10 s) to NAME's process, only if it is the one
        start() began; a stale pid file is reported and removed. False when
        nothing was stopped."""
        owned = self.ours(name)
        if owned.pid is None:
            if owned.why:
                warn(f"{owned.why}; removed the stale {self.pids / name}.pid")
            self.forget(name)
            return False
        want = (self.pids / f"{name}.id").read_text().strip()
        try:
            os.kill(owned.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        # Until it has exited: a zombie (state Z) has exited; another identity
        # means the pid was released and reused.
        for _ in range(100):
            try:
                stat = Path(f"/proc/{owned.pid}/stat").read_text()
            except OSError:
                break
            if stat.rsplit(")", 1)[1].split()[0] == "Z":
                break
            have = identity(owned.pid)
            if have and not same_process(have, want):
                break
            time.sleep(0.1)
        if same_process(identity(owned.pid), want):
            try:
                os.kill(owned.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.forget(name)
        return True
