"""The orchestration is one package (mqttbench/): one entry point listing
its commands, and modules that import one way, in the layers its README
draws, with no cycle."""

import ast
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "mqttbench"
# mqttbench/README.md's Layout, top to bottom: a part imports only parts below it.
LAYERS = [
    "__main__",
    "generate",
    "compare",
    "bench",
    "capacity",
    "conformance",
    "generator_bench",
    "report",
    "dashboards",
    "stack",
    "k6",
    "brokers",
    "generated",
    "flux_filters",
    "verdict_policy",
    "outcome",
    "settings",
    "",  # mqttbench/__init__.py: ROOT
]


def module(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports():
    """{module: the package's modules it imports}."""
    mods = {module(p): p for p in PACKAGE.rglob("*.py")}
    found = defaultdict(set)
    for name, path in mods.items():
        here = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if base.startswith("mqttbench"):
                        found[name].add(full if full in mods else base)
            elif isinstance(node, ast.Import):
                found[name] |= {a.name for a in node.names if a.name.startswith("mqttbench")}
    return mods, found


def part(name):
    """The layer a module belongs to: mqttbench.report.tables -> report."""
    return name.split(".")[1] if "." in name else ""


def test_the_entry_point_lists_every_command():
    out = subprocess.run([sys.executable, "-m", "mqttbench", "--help"], capture_output=True, text=True, check=True)
    for command in ("bench", "compare", "capacity", "stack", "report", "conformance", "generate"):
        assert f"    {command}" in out.stdout, out.stdout


def test_every_part_imports_only_the_parts_below_it():
    mods, found = imports()
    assert {part(m) for m in mods} <= set(LAYERS), {part(m) for m in mods} - set(LAYERS)
    up = [
        f"{a} imports {b}"
        for a, bs in found.items()
        for b in bs
        if part(a) != part(b) and LAYERS.index(part(b)) <= LAYERS.index(part(a))
    ]
    assert not up, up


def test_no_module_imports_itself_through_others():
    _, found = imports()
    state = {}

    def visit(m, path):
        if state.get(m) == "done":
            return
        assert state.get(m) != "open", "import cycle: " + " -> ".join([*path, m])
        state[m] = "open"
        for n in found.get(m, ()):
            visit(n, [*path, m])
        state[m] = "done"

    for m in list(found):
        visit(m, [])


# How code once learned an outcome from a log's text: the run's refusal
# (<run id>.refused.json), lib.sh die's MQTTBENCH_OUTCOME and exit codes
# say it now.
LOG_READING = [
    re.compile(r"grep -q\w* ['\"]already running"),
    re.compile(r"grep [^|\n]*lacks \(MQTT"),
    re.compile(r"^\s*why\(\)", re.M),
    re.compile(r"[\"']dockerd started[\"'] in "),
]


def test_no_code_reads_an_outcome_out_of_a_logs_text():
    found = []
    for path in [*ROOT.glob("scripts/**/*.sh"), *ROOT.glob("tests/**/*.py"), *PACKAGE.rglob("*.py")]:
        if path.resolve() == Path(__file__).resolve():
            continue
        text = path.read_text()
        found += [f"{path.relative_to(ROOT)}: {p.pattern}" for p in LOG_READING if p.search(text)]
    assert not found, found


# A k6 command line built anywhere but mqttbench/k6/command.py: a list that
# starts with a k6 binary and "run" (Python), a k6 build's path or the k6
# service followed by `run` (shell). A user's own typed command ("k6",
# "run" as literal strings: the card's path) is what a test runs as given.
K6_COMMAND = {
    ".py": re.compile(r'(?<!")\bk6\w*(?:\(\))?(?:\s+or\s+\w+\(\))?,\s*"run"'),
    ".sh": re.compile(r'^[^#\n]*(?:\$\(k6_bin\)"?|\bk6)\s+run\b', re.M),
}


def test_one_place_builds_a_k6_command_line():
    sources = [
        *ROOT.glob("scripts/**/*.sh"),
        *PACKAGE.rglob("*.py"),
        *ROOT.glob("tests/**/*.py"),
    ]
    found = []
    for path in sources:
        if path == PACKAGE / "k6/command.py" or path.resolve() == Path(__file__).resolve():
            continue
        found += [
            f"{path.relative_to(ROOT)}: {m.group(0)!r}" for m in K6_COMMAND[path.suffix].finditer(path.read_text())
        ]
    assert not found, found


# The tests are organised as the code is: what several share is a helper
# module beside conftest.py (k6_runs, loopback_brokers, ...), never a test
# module that another imports: a test file then moves or changes alone.
IMPORTS_A_TEST = re.compile(r"^\s*(?:from\s+test_\w+\s+import|import\s+test_\w+)", re.M)


def files_importing_a_test(files):
    return [str(f.relative_to(ROOT)) for f in files if IMPORTS_A_TEST.search(f.read_text())]


def test_no_test_module_imports_another():
    assert not files_importing_a_test(sorted((ROOT / "tests").rglob("*.py")))
