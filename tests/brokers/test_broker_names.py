"""No broker is named outside brokers/ where a new folder would need an edit:
in the scripts, the package (mqttbench/), the compose tests and GitHub's workflows, no line (comments
aside) branches on a broker's name (a `case` arm, a comparison), lists two
brokers' names or, in the scripts and the compose tests, names a series a
broker.toml names ([metrics.series], [counters]). A broker's name as a
default (`--broker mosquitto`), in a usage example or in a path stays allowed:
each is one broker's, not knowledge of all of them. The k6-operator job
deploys one broker, Mosquitto, as deploy/k6-operator/README.md does: its
$SYS topics there are that procedure's own, so series are not looked for
in .github/."""

import re
import tomllib

import pytest

from conftest import ROOT
from mqttbench.brokers import facts as broker_facts

SCANNED = ("scripts", "mqttbench", "tests/compose", ".github")
SERIES_SCANNED = ("scripts", "mqttbench", "tests/compose")


def files(dirs):
    for d in dirs:
        for path in sorted((ROOT / d).rglob("*")):
            # tests/compose's own tests name the brokers they run, as every test may.
            if path.is_file() and "__pycache__" not in path.parts and not path.name.startswith("test_"):
                try:
                    yield path, path.read_text()
                except UnicodeDecodeError:
                    continue  # a binary file names nothing a script runs


def code_lines(text):
    """Each line with its comment (`#` at its start or after a blank) cut off."""
    for n, line in enumerate(text.splitlines(), 1):
        yield n, re.sub(r"(^|\s)#.*", "", line)


def unquoted(word):
    return word.strip("\"'` ")


def branches(line, names):
    """The broker names a line branches on or lists; empty when none."""
    found = []
    # A shell case arm (`emqx)`, `emqx|nanomq)`) or a Python one (case "emqx":).
    arm = re.match(r"\s*\(?([^\s()]+)\)", line) or re.match(r"\s*case\s+(.+):\s*$", line)
    if arm:
        found += [w for w in map(unquoted, arm[1].split("|")) if w in names]
    # A comparison with a name on either side.
    for word in re.findall(r"(?:==|!=|\s=)\s*([\"']?[\w.-]+[\"']?)", line):
        found += [unquoted(word)] if unquoted(word) in names else []
    for word in re.findall(r"([\"']?[\w.-]+[\"']?)\s*(?:==|!=)", line):
        found += [unquoted(word)] if unquoted(word) in names else []
    # A list of two names or more: bash ( ), YAML, JSON or Python [ ] or ( ).
    for inside in re.findall(r"\[([^\[\]]*)\]|\(([^()]*)\)", line):
        listed = [w for w in map(unquoted, re.split(r"[\s,]+", "".join(inside))) if w in names]
        found += listed if len(listed) >= 2 else []
    return found


def broker_names(root):
    return set(broker_facts.names()) if root == ROOT else {p.parent.name for p in root.glob("brokers/*/broker.toml")}


def series_names(root):
    named = set()
    for path in root.glob("brokers/*/broker.toml"):
        facts = tomllib.loads(path.read_text())
        named |= set(facts["metrics"]["series"].values())
        named |= {v for v in facts.get("counters", {}).values() if isinstance(v, str)}
    return named


def test_no_script_branches_on_or_lists_broker_names():
    names = broker_names(ROOT)
    found = [
        f"{path.relative_to(ROOT)}:{n}: {', '.join(hit)}: {line.strip()}"
        for path, text in files(SCANNED)
        for n, line in code_lines(text)
        if (hit := branches(line, names))
    ]
    assert not found, "broker knowledge outside brokers/ (put it in the broker.toml):\n" + "\n".join(found)


def test_no_script_names_a_brokers_series():
    series = series_names(ROOT)
    found = [
        f"{path.relative_to(ROOT)}:{n}: {s}"
        for path, text in files(SERIES_SCANNED)
        for n, line in code_lines(text)
        for s in series
        if s in line
    ]
    assert not found, "a broker's series outside its broker.toml (read it there):\n" + "\n".join(found)


@pytest.mark.parametrize(
    "line, hit",
    [
        ("  emqx) ports+=(EMQX_DASHBOARD_PORT) ;;", ["emqx"]),
        ('    case "nanomq" | "emqx":', ["nanomq", "emqx"]),
        ('[[ "${{ matrix.broker }}" != vernemq ]] || args+=(--x)', ["vernemq"]),
        ("        broker: [mosquitto, emqx, nanomq]", ["mosquitto", "emqx", "nanomq"]),
        ('if name == "mosquitto":', ["mosquitto"]),
        ("broker=mosquitto stand_ins=false", []),
        ('bad "--broker needs names, e.g. --broker mosquitto,emqx"', []),
        ("pkgs=(mosquitto mosquitto-clients curl)", []),
        ("    --broker) broker=$2 ;;", []),
    ],
)
def test_the_rule_sees_branches_and_lists_not_defaults_or_examples(line, hit):
    assert branches(line, {"mosquitto", "emqx", "nanomq", "vernemq"}) == hit
