"""The host's processes as the tests see them: a process tree, its listening
sockets (loopback only?), and whether a pid has ended."""

import re
import subprocess
from pathlib import Path

LOOPBACK = {"127.0.0.1", "::1", "[::1]", "[::ffff:127.0.0.1]"}

USER = re.compile(r"pid=(\d+)")


def descendants(pids):
    """The pids and every process below them, from /proc."""
    parent = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        parent[int(stat.parent.name)] = int(fields[1])
    found, frontier = set(pids), set(pids)
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier} - found
        found |= frontier
    return found


def listening(pids):
    """(address, port, process) of every TCP and UDP socket the pids listen on."""
    out = subprocess.run(["ss", "-Htulnp"], text=True, capture_output=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        cols = line.split()
        owners = {int(p) for p in USER.findall(line)}
        if owners & pids:
            addr, port = cols[4].rsplit(":", 1)
            rows.append((addr.split("%")[0], port, cols[-1]))
    return rows


def ended(pid):
    """Exited: gone, or a zombie its parent has yet to reap."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
