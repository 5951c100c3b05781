"""The broker's version on the card's path: a run that is not told it
(BROKER_VERSION) asks the running broker where its broker.toml says it tells
it (version_topic, as version_username: compose's k6 service hands them to
k6 as BROKER_VERSION_TOPIC and BROKER_VERSION_USERNAME), and the result
records it with where it came from. The broker: the test-only mochi-mqtt
with EMQX's default $SYS ACL (k6/extension/internal/testbroker), telling
5.8.6 as real EMQX 5.8.6 did (../shared/brokers/README.md)."""

import os
import re
import subprocess

import pytest

from conftest import ROOT, loopback_port
from k6_runs import run_p2p
from loopback_brokers import mochi_broker
from mqttbench.brokers import facts as broker_facts

EMQX = broker_facts.load("emqx")


@pytest.fixture(scope="module")
def emqx_like(tmp_path_factory):
    with mochi_broker(tmp_path_factory.mktemp("testbroker"), loopback_port(11957), "-emqx-sys-acl", "5.8.6") as url:
        yield url


def run(k6_bin, tmp_path, url, **env):
    p, result = run_p2p(k6_bin, tmp_path, url, **{"SCALE": "0.01", "DURATION": "2s", **env})
    assert p.returncode == 0 and result, (p.stdout + p.stderr)[-3000:]
    return p, result


def test_a_run_asks_emqx_its_version_as_its_broker_toml_says(k6_bin, tmp_path, emqx_like):
    _, res = run(
        k6_bin, tmp_path, emqx_like, BROKER="emqx",
        BROKER_VERSION_TOPIC=EMQX["version_topic"], BROKER_VERSION_USERNAME=EMQX["version_username"],
    )  # fmt: skip
    v = res["versions"]
    assert v["broker"] == "5.8.6", v
    assert v["broker_source"] == '$SYS/brokers/emqx@172.18.0.2/version (as "dashboard")', v


def test_anonymous_is_refused_by_emqxs_acl_and_the_result_says_why(k6_bin, tmp_path, emqx_like):
    p, res = run(k6_bin, tmp_path, emqx_like, BROKER="emqx", BROKER_VERSION_TOPIC=EMQX["version_topic"])
    v = res["versions"]
    assert v["broker"] is None and "SUBACK 0x80" in v["broker_source"], v
    assert "the broker's version was not told" in p.stderr + p.stdout


def test_a_version_given_wins_and_is_not_asked(k6_bin, tmp_path, emqx_like):
    _, res = run(
        k6_bin, tmp_path, emqx_like, BROKER="emqx", BROKER_VERSION="5.8.6-mine",
        BROKER_VERSION_SOURCE="a build of mine",
        BROKER_VERSION_TOPIC=EMQX["version_topic"],
    )  # fmt: skip
    assert res["versions"]["broker"] == "5.8.6-mine" and res["versions"]["broker_source"] == "a build of mine"


@pytest.mark.parametrize("given", ["env", "flag", "found"])
def test_compose_k6_entrypoint_hands_k6_the_brokers_version_facts(tmp_path, given):
    """scripts/init/k6-broker.sh, as compose's k6 service runs it, for a
    broker named by BROKER, by k6's -e BROKER=, or found up (here: the only
    broker folder, whose name resolves): EMQX's version facts, and NanoMQ's
    known deviations as mqttbench/brokers/facts.py reads them."""
    printer = tmp_path / "k6"
    printer.write_text(
        "#!/bin/sh\n"
        'echo "topic=$BROKER_VERSION_TOPIC username=$BROKER_VERSION_USERNAME deviations=$BROKER_DEVIATIONS"\n'
    )
    printer.chmod(0o755)
    brokers = tmp_path / "brokers"
    (brokers / "localhost").mkdir(parents=True)
    nanomq = (ROOT / "brokers/nanomq/broker.toml").read_text()
    deviations = "".join(re.findall(r"^\[\[deviations\]\]\n(?:[^\[\n].*\n|\n)*", nanomq, re.M))
    (brokers / "localhost/broker.toml").write_text((ROOT / "brokers/emqx/broker.toml").read_text() + "\n" + deviations)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROKER")} | {"BROKERS_DIR": str(brokers)}
    args = [str(printer), "run"]
    if given == "env":
        env["BROKER"] = "localhost"
    elif given == "flag":
        args += ["-e", "BROKER=localhost"]
    p = subprocess.run(["sh", str(ROOT / "scripts/init/k6-broker.sh"), *args], env=env, text=True, capture_output=True)
    assert p.returncode == 0, p.stderr
    listed = broker_facts.deviations_env("nanomq")["BROKER_DEVIATIONS"]
    assert listed == "ordering"
    assert p.stdout.strip() == f"topic={EMQX['version_topic']} username=dashboard deviations={listed}", p.stdout


def test_compares_target_asks_emqx_as_its_broker_toml_says(emqx_like):
    """A --target of compare.sh is any broker: its version is asked on every
    broker.toml's version_topic, anonymously and then as each version_username
    (mqttbench/brokers/version.py), so that EMQX's ACL still tells it."""
    host, port = emqx_like.removeprefix("mqtt://").split(":")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run(["python3", "-P", "-m", "mqttbench.brokers.version", host, port], env=env, text=True,
                       capture_output=True, timeout=30)  # fmt: skip
    assert p.returncode == 0 and p.stdout.strip() == "5.8.6", (p.stdout, p.stderr)
