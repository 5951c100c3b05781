"""scripts/compare.sh and the report module (python -m mqttbench.report,
with the venv's python) as the tests run them, the
reports they leave removed, and a Markdown table of compare.md read back."""

import os
import shutil
import subprocess

from conftest import RESULTS, ROOT, lib_value

COMPARE = ROOT / "scripts/compare.sh"

REPORTS = RESULTS


def compare(*args, env=None, timeout=900):
    return subprocess.run(
        [str(COMPARE), *args], env=env or dict(os.environ), text=True, capture_output=True, timeout=timeout
    )


def cleanup(compare_id):
    shutil.rmtree(REPORTS / f"compare-{compare_id}", ignore_errors=True)
    for p in (REPORTS / "raw").glob(f"{compare_id}-*"):
        p.unlink()
    for d in REPORTS.glob(f"{compare_id}-*"):
        shutil.rmtree(d, ignore_errors=True)
    for d in REPORTS.glob(f"capacity-{compare_id}-*"):
        shutil.rmtree(d, ignore_errors=True)


def table(md, title):
    """The rows of the Markdown table under the heading `title`, as lists of cells."""
    lines = md.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0].splitlines()
    rows = [line for line in lines if line.startswith("|")]
    return [[c.strip() for c in row.strip("|").split("|")] for row in rows if not set(row) <= set("|-: ")]


def report(args, env):
    py = lib_value('echo "$CACHE/venv/current/bin/python"')
    return subprocess.run([py, "-m", "mqttbench.report", *args], cwd=ROOT, env=env, text=True, capture_output=True)
