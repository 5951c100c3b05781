"""compare.sh --native over every broker the native stack can run (Mosquitto,
HiveMQ CE, RabbitMQ, real each): the comparison starts the stack, runs each
broker's column in turn, switching its own stack from one broker to the next,
and writes compare.md with a column per broker, none marked; a second
comparison switches the stack the first left up. A stack the user had up is
theirs: it is never switched (test_compare.py)."""

import json
import subprocess
import time

import pytest

from compare_runs import cleanup, table
from conftest import RESULTS, ROOT, Stack
from mqttbench.brokers import facts as broker_facts
from native_stacks import COMPARISON_SLOT, slot_env

NATIVE = [b for b in broker_facts.names() if "native" in broker_facts.load(b)]


@pytest.mark.slow
def test_compare_native_runs_every_native_broker_in_its_own_column(tmp_path):
    assert {"mosquitto", "hivemq", "rabbitmq"} <= set(NATIVE), NATIVE
    # Each broker's own ports (metrics, an Erlang node's), off a user's
    # defaults and the other native stacks' (tests/native_stacks.py).
    own = sorted({var for b in NATIVE for var in broker_facts.load(b)["native"].get("ports", {})})
    s = Stack(tmp_path / "state", slot_env(COMPARISON_SLOT, own))
    compare_id = f"cmp-native-{time.time_ns()}"
    args = ["--native", "--broker", ",".join(NATIVE), "--id", compare_id]
    # p2p at QoS 1, laptop-sized; the p99 bound loose: exactness is asserted, not latency.
    args += ["-e", "QOS=1", "-e", "SCALE=0.05", "-e", "DURATION=3s", "-e", "P99_MS=60000"]
    try:
        r = subprocess.run(
            [str(ROOT / "scripts/compare.sh"), *args], env=s.env, text=True, capture_output=True, timeout=1200
        )
        assert r.returncode == 0, r.stderr[-4000:]
        out = RESULTS / f"compare-{compare_id}"
        md = (out / "compare.md").read_text()
        header = table(md, "Delivery")[0][1:]
        assert header == NATIVE, header  # a column each, none marked
        results = json.loads((out / "results.json").read_text())
        assert [b["status"] for b in results["brokers"]] == ["ran"] * len(NATIVE), results["brokers"]
        delivery = {row[0]: row[1:] for row in table(md, "Delivery")[1:]}
        assert delivery["lost"] == ["0"] * len(NATIVE) and "0" not in delivery["received"], delivery
        # The stack it left up (the last broker's) is still a comparison's: the
        # next one switches it, as a docs page's two commands in a row need.
        again = f"{compare_id}-again"
        r = subprocess.run(
            [str(ROOT / "scripts/compare.sh"), "--native", "--broker", NATIVE[0], "--id", again, *args[5:]],
            env=s.env, text=True, capture_output=True, timeout=600,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr[-4000:]
        results = json.loads((RESULTS / f"compare-{again}" / "results.json").read_text())
        assert [b["status"] for b in results["brokers"]] == ["ran"], results["brokers"]
    finally:
        s.run("down", check=False)
        cleanup(compare_id)
        cleanup(f"{compare_id}-again")
