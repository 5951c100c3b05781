"""The host lock of a parallel test run (tests/lanes.py): every test holds
it shared, one that measures latency against a bound alone. A gate keeps
new holders out while an exclusive one waits for those running to end
(flock alone could starve it). Also a command, for a script that a test runs
to hold the host alone for one step only (tests/compose/e2e.sh):
    python3 tests/host_lock.py LOCKS_DIR -- COMMAND [ARGS...]"""

import fcntl
import sys
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def hold(locks, alone):
    """The host, shared or alone, for the run whose locks are in LOCKS."""
    locks = Path(locks)
    locks.mkdir(exist_ok=True)
    with (locks / "gate").open("a") as gate, (locks / "host").open("a") as held:
        fcntl.flock(gate, fcntl.LOCK_EX)
        fcntl.flock(held, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        fcntl.flock(gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)


def main(argv):
    if len(argv) < 3 or argv[1] != "--":
        sys.exit("usage: python3 tests/host_lock.py LOCKS_DIR -- COMMAND [ARGS...]")
    import subprocess

    with hold(argv[0], alone=True):
        return subprocess.run(argv[2:]).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
