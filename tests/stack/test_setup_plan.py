"""A first run builds only what it uses: scripts/bench.sh sets up the steps
of the native stack's setup_steps for its broker, not setup.sh's every step (docker
compose, staticcheck, Toxiproxy, HiveMQ CE's jar: 1,233 s in all on a busy
2-core host, where a native Mosquitto bench needs about half)."""

import re

from conftest import ROOT, lib_value
from mqttbench.stack.native import NativeStack


def test_a_native_mosquitto_bench_sets_up_only_what_it_runs():
    assert NativeStack("mosquitto").setup_steps() == ["debian", "python", "telegraf", "k6", "influxd"]


def test_a_broker_with_a_build_of_its_own_and_impairment_add_their_steps():
    assert NativeStack("hivemq").setup_steps()[-1] == "hivemq"
    assert NativeStack("mosquitto").setup_steps("wan")[-1] == "toxiproxy"


def test_bench_sets_up_through_its_plan_alone():
    # Every call of setup.sh in the bench and its stacks takes the plan's steps.
    sources = [
        *(ROOT / "mqttbench/bench").glob("*.py"),
        *(ROOT / "mqttbench/stack").glob("*.py"),
        ROOT / "scripts/bench.sh",
    ]
    calls = [c for p in sources for c in re.findall(r".*scripts/setup\.sh.*", p.read_text())]
    # (The impairment's own call sets up only Toxiproxy, when the plan's is missing.)
    code = [c for c in calls if 'ROOT / "scripts/setup.sh"' in c and '"toxiproxy"' not in c]
    assert code and all("self.setup_steps(impair)" in c for c in code), code


def test_the_plans_debian_step_installs_that_brokers_packages_not_the_tests_tools():
    out = lib_value('python3 "$ROOT/mqttbench/brokers/facts.py" values native.debian mosquitto')
    assert out.split() == ["mosquitto"]
    debian = (ROOT / "scripts/setup/debian.sh").read_text()
    # shellcheck and chromium are the tests' (lint, the live view's browser check).
    guarded = debian[debian.index('if [[ -z "${SETUP_BROKER:-}" ]]') :]
    assert "shellcheck" in guarded and "chromium" in guarded
