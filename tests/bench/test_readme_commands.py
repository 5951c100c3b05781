"""The README's two commands are what CI runs, in the README's order: the
GitHub native job runs scripts/bench.sh, then scripts/test.sh beside the
stack it left up, and checks that stack is untouched (tests/user_stack.sh);
.ci/run runs the test command."""

import re

import yaml

from conftest import ROOT


def readme_commands():
    block = re.search(r"## The two commands\n\n```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert block, "README: The two commands"
    return [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_readme_has_a_benchmark_command_then_a_test_command():
    assert readme_commands() == ["scripts/bench.sh", "scripts/test.sh"]


def test_the_native_job_runs_the_two_commands_in_order_around_the_users_stack():
    steps = yaml.safe_load((ROOT / ".github/workflows/test.yml").read_text())["jobs"]["native"]["steps"]
    runs = [s["run"].strip() for s in steps if "run" in s]
    bench, test = readme_commands()
    assert bench in runs and test in runs, runs
    i, j = runs.index(bench), runs.index(test)
    snapshot = [k for k, r in enumerate(runs) if r.startswith("tests/user_stack.sh snapshot")]
    check = [k for k, r in enumerate(runs) if r.startswith("tests/user_stack.sh check")]
    assert snapshot and check, runs
    assert i < snapshot[0] < j < check[0], runs


def test_ci_runs_the_test_command():
    assert (ROOT / ".ci/run").read_text().strip().endswith("exec " + readme_commands()[1])
