"""Files this project generates and commits (dashboards, the broker README
tables, the scenarios' parameter table in docs/scenarios.md): one way to
write them, or, with --check, to fail naming the ones that are out of date,
so that a test can tell a stale file from a fresh one."""

import subprocess
import sys

from mqttbench import ROOT

COMMAND = "python3 -m mqttbench generate"


def stale(files):
    """The paths of files (path: generated text) whose text differs."""
    return [path for path, text in files.items() if not path.exists() or path.read_text() != text]


def sync(files, what):
    """files maps each path to its generated text. Writes the changed ones;
    with --check in argv writes nothing and exits naming the stale ones."""
    old = stale(files)
    if "--check" in sys.argv[1:]:
        if old:
            sys.exit(f"stale {what} (run {COMMAND}): {', '.join(map(str, old))}")
        return
    for path in old:
        path.write_text(files[path])


def go_command(package):
    """What a Go command of the extension (k6/extension/<package>) prints:
    the generated files whose one source is Go's (the result schema, the
    verdict policy)."""
    return subprocess.run(
        ["go", "run", f"./{package}"],
        cwd=ROOT / "k6/extension",
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def between_markers(text, begin, end, block):
    """text with what stands between the lines begin and end replaced by
    block: the generated part of a page written by hand around it."""
    head, sep, rest = text.partition(begin + "\n")
    _, sep2, tail = rest.partition(end)
    if not sep or not sep2:
        raise ValueError(f"the markers are missing: {begin!r} ... {end!r}")
    return head + begin + "\n" + block + "\n" + end + tail
