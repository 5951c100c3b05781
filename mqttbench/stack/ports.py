"""Who listens on a port, and the one command that frees it, as one phrase:
"the compose project mqtt-bench (container ...): docker compose -p
mqtt-bench down", "python3 (pid 12: ...): kill 12". A process in a
container (host networking) or Docker's proxy of a published port is named
by its compose project; any other by its name, pid and command line.
Usage: python3 -m mqttbench.stack.ports holder PORT (exit 1: nothing listens)"""

import re
import subprocess
import sys
from pathlib import Path


def _run(*argv):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, check=False)
    except OSError:
        return ""
    return r.stdout.strip() if r.returncode == 0 else ""


def _container(comm, pid, port):
    if comm == "docker-proxy":
        return _run("docker", "ps", "-q", "--filter", f"publish={port}").partition("\n")[0]
    try:
        found = re.search(r"[0-9a-f]{64}", Path(f"/proc/{pid}/cgroup").read_text())
    except OSError:
        return ""
    return found[0] if found else ""


def holder(port):
    """The phrase, or None when nothing listens on port."""
    line = _run("ss", "-Htlnp", f"sport = :{port}").partition("\n")[0]
    if not line:
        return None
    m = re.search(r'\(\("([^"]+)",pid=([0-9]+)', line)
    if not m:
        return f"a process this user cannot see (run ss -tlnp 'sport = :{port}' as root)"
    comm, pid = m[1], m[2]
    cid = _container(comm, pid, port)
    what = cid and _run(
        "docker", "inspect", "-f", '{{.Name}} {{index .Config.Labels "com.docker.compose.project"}}', cid
    )
    if what:
        name, _, project = what.removeprefix("/").partition(" ")
        if project:
            where = f"container {name}, {comm} pid {pid}"
            return f"the compose project {project} ({where}): docker compose -p {project} down"
        return f"the container {name} ({comm} pid {pid}): docker stop {name}"
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        cmdline = ""
    return f"{comm} (pid {pid}: {cmdline[:120].rstrip()}): kill {pid}"


def main(argv):
    match argv:
        case ["holder", port] if port.isdigit():
            found = holder(int(port))
            if found is None:
                return 1
            print(found)
            return 0
        case _:
            print(__doc__, file=sys.stderr)
            return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
