"""How a command stops: its message on stderr and, when a caller set
MQTTBENCH_OUTCOME (scripts/compare.sh's columns), appended there, so that no
caller reads it out of a log (the first line is the innermost command's,
the cause). scripts/lib.sh's die does the same for the shell."""

import os
import sys
from pathlib import Path


class Stop(Exception):
    """A command ends here: message (None: already said), exit code, and
    tail: a log whose last lines explain it."""

    def __init__(self, message, code=1, tail=None):
        super().__init__(message)
        self.message, self.code, self.tail = message, code, Path(tail) if tail else None


def bad(message):
    """Bad input, refused before anything starts (exit 2)."""
    return Stop(message, 2)


def end(e):
    """Says why the command stops; returns its exit code."""
    if e.tail and e.tail.exists():
        sys.stderr.write("".join(e.tail.read_text(errors="replace").splitlines(keepends=True)[-20:]))
    if e.message:
        say(e.message)
    return e.code


def say(message):
    print(f"error: {message}", file=sys.stderr)
    if outcome := os.environ.get("MQTTBENCH_OUTCOME"):
        with open(outcome, "a") as f:
            f.write(f"{message}\n")


def log(message):
    print(f"==> {message}", file=sys.stderr, flush=True)


def warn(message):
    print(f"warning: {message}", file=sys.stderr, flush=True)
