"""Each broker's facts file (brokers/<name>/broker.toml) is true to its config
files, compose.yaml, .env, Telegraf and the dashboards, and its README table
is rendered from it."""

import fnmatch
import json
import os
import re
import subprocess
import sys
from urllib.parse import urlparse

import pytest
import yaml

from conftest import ROOT
from mqttbench import flux_filters as ff
from mqttbench.brokers import facts as broker_facts
from mqttbench.brokers import native as broker_native

# Every folder of brokers/ is a broker: none is listed here.
BROKERS = broker_facts.names()


def test_every_broker_has_a_facts_file():
    assert BROKERS and sorted(p.name for p in (ROOT / "brokers").iterdir() if p.is_dir()) == BROKERS


def test_readmes_are_rendered_from_the_facts():
    r = subprocess.run(["python3", "-m", "mqttbench.brokers.facts", "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_unknown_broker_has_no_facts():
    # The name comes from result files: nothing outside brokers/<name>/ is read.
    assert broker_facts.load("../tests") is None and broker_facts.load("no-such-broker") is None


@pytest.mark.parametrize("name", BROKERS)
def test_facts_match_the_config(name):
    facts = broker_facts.load(name)
    compose = (ROOT / "compose.yaml").read_text()
    # The image is pinned in .env and is the one compose runs.
    assert re.search(rf"^{facts['image']}=\S+$", (ROOT / ".env").read_text(), re.M)
    assert f"image: ${{{facts['image']}}}" in compose
    # Each config file exists and compose passes it to the broker.
    texts = [compose]
    for f in facts["config"]:
        path = ROOT / "brokers" / name / f
        assert path.is_file(), path
        assert f"./brokers/{name}/{f}" in compose, f
        texts.append(path.read_text())
    # Each change is made by the lines it names.
    for change in facts["changes"]:
        for line in change["lines"]:
            assert any(line in t for t in texts), f"{change['setting']}: {line!r} is in no config file"


@pytest.mark.parametrize("name", BROKERS)
def test_metrics_source_matches_telegraf_and_the_dashboards(name):
    m = broker_facts.load(name)["metrics"]
    conf = (ROOT / m["telegraf"]).read_text()
    assert f"[[{m['input']}]]" in conf
    assert m["endpoint"].removesuffix("...") in conf + (ROOT / "compose.yaml").read_text()
    if m["input"] == "inputs.prometheus":
        assert m["measurement"] == ff.PROMETHEUS
        key, value = m["tag"].split("=")
        assert f'{key} = "{value}"' in conf
    else:
        assert f'name_override = "{m["measurement"]}"' in conf
    # Telegraf keeps every series the dashboards are said to use, and they do use it.
    kept = re.findall(r'"([^"]*)"', conf)
    boards = json.dumps([json.loads(p.read_text()) for p in (ROOT / "grafana/dashboards").glob("*.json")])
    for s in m["series"].values():
        assert any(fnmatch.fnmatchcase(s, k) for k in kept), f"{s} is not collected by {m['telegraf']}"
        assert s in boards, f"{s} is in no dashboard"


@pytest.mark.parametrize("name", [n for n in BROKERS if "native" in broker_facts.load(n)])
def test_the_native_rewrite_finds_every_line_it_names(name, tmp_path):
    # mqttbench/brokers/native.py refuses a config in which a rewrite pattern
    # matches nothing (a listener left on every interface); none is left.
    env = dict(os.environ, MQTT_PORT="1", MQTTS_PORT="2", MTLS_PORT="3", WS_PORT="4")
    # Its own ports too ([native] ports), away from their defaults.
    env |= {k: str(5 + i) for i, k in enumerate(broker_facts.load(name)["native"].get("ports", {}))}
    broker_native.planned(name, tmp_path, env)  # exits naming a pattern that matched nothing
    conf = (tmp_path / f"{name}.conf").read_text()
    for pattern, _ in broker_facts.load(name)["native"]["rewrite"]:
        assert not re.search(pattern, conf, re.M), pattern


def test_what_a_broker_can_do_is_read_from_one_table_that_the_refusal_names():
    """scripts/bench.sh exports these (broker_facts.py capabilities): natively
    a broker's [native.capabilities] where it has one, else [capabilities];
    none named is all."""

    def cli(*args):
        out = subprocess.check_output([sys.executable, "-m", "mqttbench.brokers.facts", "capabilities", *args])
        return dict(line.split("=", 1) for line in out.decode().splitlines())

    native = {"BROKER_MQTT": "3.1.1", "BROKER_QOS": "0,1", "BROKER_CAPABILITIES": "native.capabilities"}
    assert cli("rabbitmq", "native") == broker_facts.capabilities_env("rabbitmq", native=True) == native
    assert cli("rabbitmq") == {"BROKER_MQTT": "3.1.1,5", "BROKER_QOS": "0,1", "BROKER_CAPABILITIES": "capabilities"}
    assert cli("mosquitto", "native") == {"BROKER_MQTT": "", "BROKER_QOS": "", "BROKER_CAPABILITIES": "capabilities"}
    r = subprocess.run([sys.executable, "-m", "mqttbench.brokers.facts", "capabilities", "nosuch"],
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode != 0 and "brokers/nosuch/broker.toml" in r.stderr


# The ports every broker's profile publishes (compose.yaml's x-broker-ports).
STACK_PORTS = {"MQTT_PORT", "MQTTS_PORT", "MTLS_PORT", "WS_PORT"}


@pytest.mark.parametrize("name", BROKERS)
def test_compose_facts_are_its_profiles(name):
    """[compose] says what the broker's service in compose.yaml publishes
    beyond the stack's ports, where its metrics endpoint is on the host, and
    which files it reads: the compose tests and CI act on these facts alone."""
    facts = broker_facts.load(name)
    table, endpoint = facts.get("compose", {}), urlparse(facts["metrics"]["endpoint"])
    service = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"][name]
    published = dict(p for s in service["ports"] for p in re.findall(r"\$\{(\w+):-(\d+)\}", s))
    ports = {k: str(v) for k, v in table.get("ports", {}).items()}
    assert {k: v for k, v in published.items() if k not in STACK_PORTS} == ports
    url = table.get("metrics_url", "")
    if not table.get("metrics", True):
        assert not url, "no metrics, yet a metrics_url"
    elif facts["metrics"]["input"] == "inputs.prometheus":
        # The endpoint Telegraf reads on compose's network, as the host reaches it.
        (var,) = re.findall(r"\{(\w+)\}", url)
        assert url == f"http://127.0.0.1:{{{var}}}{endpoint.path}", url
        assert any(s.endswith(f"${{{var}:-{ports[var]}}}:{endpoint.port}") for s in service["ports"]), service["ports"]
    if "claims_secret" in table:
        assert table["claims_secret"] in facts["secrets"]
        assert any("<generated>" in json.dumps(c) for c in facts["claims"])
    if "eula_file" in table:
        assert "=" in table["eula"]
        assert f"./brokers/{name}/{table['eula_file']}" in json.dumps(service["env_file"])
        ignored = subprocess.run(["git", "-C", ROOT, "check-ignore", "-q", f"brokers/{name}/{table['eula_file']}"])
        assert ignored.returncode == 0, "a user's acceptance is theirs: the file is git-ignored"


def test_setup_installs_the_debian_package_each_native_broker_says_it_runs():
    """scripts/setup/debian.sh installs every broker.toml's [native] debian;
    a broker whose [native] about names a Debian package lists it there."""
    out = subprocess.check_output([sys.executable, "-m", "mqttbench.brokers.facts", "values", "native.debian"])
    listed = out.decode().split()
    for name in broker_facts.names():
        native = broker_facts.load(name).get("native", {})
        for pkg in re.findall(r"the Debian package `([^`]+)`", native.get("about", "")):
            assert pkg in native.get("debian", []) and pkg in listed, (name, pkg)
    assert "values native.debian" in (ROOT / "scripts/setup/debian.sh").read_text()


def test_every_listed_deviation_is_one_the_run_can_mark_known():
    """A [[deviations]] verdict the extension does not mark (its Deviation*
    constants, k6/extension/verdict/ordering.go) would be listed and never
    named: refused here rather than silently."""
    source = (ROOT / "k6/extension/verdict/ordering.go").read_text()
    marked = set(re.findall(r'^const Deviation\w+ = "(\w+)"', source, re.M))
    assert marked, "no Deviation* constant found"
    listed = {(b, d["verdict"]) for b in broker_facts.names() for d in broker_facts.load(b).get("deviations", [])}
    assert listed and {v for _, v in listed} <= marked, listed
