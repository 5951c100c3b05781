"""Every verdict once: k6/extension/verdict owns the bounds, the causes and
the rules, writes them into each result (policy, each step's reached,
passed, diagnosis), and generates mqttbench/verdict_policy.py for Python.
No other source restates them, and the readers apply the result's own
policy, so that a changed bound in a result changes what they say."""

import copy
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, loopback_port
from k6_runs import run
from loopback_brokers import mosquitto
from mqttbench import verdict_policy
from mqttbench.report import diagnosis, tables
from mqttbench.report.results import Run

SOURCES = re.compile(r"\.(go|js|mjs|py|sh|ya?ml|toml)$")
# The verdict package, what is generated from it, and tests (which state
# the values they expect).
EXEMPT = ("k6/extension/verdict/", "tests/", "mqttbench/verdict_policy.py")
# Causes spelled as plain words are result keys or option values too
# ("generator": the generator's CPU, "none": no network profile): they
# count as a restated cause when compared or assigned in Python, or beside
# another cause (a list of them).
WORDS = re.compile(r"^[a-z]+$")


def sources():
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True)
    for f in out.stdout.split():
        if SOURCES.search(f) and not f.startswith(EXEMPT) and not f.endswith("_test.go") and (ROOT / f).is_file():
            yield f, (ROOT / f).read_text()


def restated(path, text):
    """What of the verdict package's bounds and causes text restates."""

    def line(m):
        return text.count("\n", 0, m.start()) + 1

    found = [f"{path}:{line(m)}: 0.95" for m in re.finditer(r"\b0\.95\b", text)]
    hits = []
    for cause in verdict_policy.CAUSES:
        literal = r"""(==|!=|\bin|[^=!<>]=)?\s*["'`]""" + re.escape(cause) + r"""["'`]"""
        hits += [(m, cause) for m in re.finditer(literal, text)]
    for m, cause in hits:
        compared = path.endswith(".py") and m.group(1)
        listed = any(c != cause and abs(o.start() - m.start()) < 120 for o, c in hits)
        if not WORDS.match(cause) or compared or listed:
            found.append(f"{path}:{line(m)}: cause {cause!r}")
    return found


def test_no_source_restates_the_rate_bound_or_a_cause():
    found = [x for path, text in sources() for x in restated(path, text)]
    assert not found, "restated outside k6/extension/verdict (read mqttbench/verdict_policy.py or the result):\n" + (
        "\n".join(found)
    )


def test_the_scan_finds_what_it_is_meant_to():
    # The scan itself can fail: each of these is a restatement it must name.
    assert restated("a.py", "LEGACY_RATE_REACHED = 0.95\n")
    assert restated("a.py", 'SLOW = ("broker_latency", "broker_slow_acks")\n')
    assert restated("a.py", 'GENERATOR = "generator"\n')
    assert restated("a.go", 'return cause == CauseNone || cause == "none" || cause == "no_data"\n')
    assert not restated("a.py", 'g = run.data.get("generator") or {}\n')


def test_the_python_policy_is_the_verdict_packages():
    r = subprocess.run(
        [sys.executable, "-m", "mqttbench.generated.verdict_policy", "--check"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    go = (ROOT / "k6/extension/verdict/policy.go").read_text()
    assert f"const RateReached = {verdict_policy.RATE_REACHED}" in go


@pytest.fixture(scope="module")
def result(k6_bin, tmp_path_factory):
    """A real run's result: one step, reached, passed."""
    tmp = tmp_path_factory.mktemp("once")
    port = loopback_port(11980)
    with mosquitto(tmp / "m.conf", port, f"listener {port} 127.0.0.1\nallow_anonymous true\n") as url:
        p, r = run(k6_bin, tmp, "p2p", url, PUBLISHERS="2", SUBSCRIBERS="2", QOS="1", RATE="40", DURATION="2s")
    assert r is not None and p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    return r


def test_the_result_carries_each_verdict_and_its_policy(result):
    assert result["passed"] is True and result["diagnosis"]["cause"] == verdict_policy.CAUSE_NONE
    assert [(s["reached"], s["passed"]) for s in result["steps"]] == [(True, True)]
    assert result["steps"][0]["latency_p99_ms"] == result["latency_ms"]["pub_to_sub"]["p99"]
    assert result["policy"] == verdict_policy.POLICY


def with_(result, policy=None, diagnosis=None, **step):
    r = copy.deepcopy(result)
    r["policy"].update(policy or {})
    r["diagnosis"].update(diagnosis or {})
    r["steps"][0].update(step)
    return Run(Path("r.json"), r)


def test_the_report_applies_the_results_broker_cpu_bound(result):
    slow = {"cause": verdict_policy.CAUSE_BROKER_LATENCY}
    cpu = [(0, 80.0), (1000, 92.0)]
    assert diagnosis.build(with_(result, diagnosis=slow), cpu)["cause"] == verdict_policy.CAUSE_BROKER_CPU
    tight = with_(result, {"broker_cpu_saturated_pct": 95.0}, slow)
    assert diagnosis.build(tight, cpu)["cause"] == slow["cause"]
    loose = with_(result, {"broker_cpu_saturated_pct": 50.0}, slow)
    assert diagnosis.build(loose, [(0, 60.0)])["cause"] == verdict_policy.CAUSE_BROKER_CPU
    # A cause the result's policy does not let the CPU explain stays.
    other = with_(result, {"broker_cpu_explains": [verdict_policy.CAUSE_UNEXPLAINED]}, slow)
    assert diagnosis.build(other, cpu)["cause"] == slow["cause"]
    # A file written before results carried the rule: this build's.
    legacy = copy.deepcopy(result)
    del legacy["policy"]
    legacy["diagnosis"].update(slow)
    assert diagnosis.build(Run(Path("r.json"), legacy), cpu)["cause"] == verdict_policy.CAUSE_BROKER_CPU


def test_a_steps_passed_is_the_results_not_judged_again(result):
    def passed(run):
        return tables.step_rows(run, tables.Resources(None, run))[0]["passed"]

    assert passed(with_(result))
    # The same step, judged by a stricter policy: the report says what the result does.
    assert not passed(with_(result, {"rate_reached": 1.0}, reached=False, passed=False))
    assert passed(with_(result, achieved_rate=1.0, reached=True, passed=True))
