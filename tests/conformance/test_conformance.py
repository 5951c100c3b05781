"""The broker conformance suite: what the project says of a broker, tried on
a running one. It proves that the project's config starts the broker with no
start-up error line its README does not explain; that p2p, fanin and fanout
at QoS 0, 1 and 2 deliver exactly, in order wherever the verdict judges
order; that k6's counts equal the broker's own counters, offsets computed
from brokers/<name>/broker.toml; and that every auth claim of its README
holds (no password, the upstream default, a wrong one, the generated one).

Against a running broker (scripts/conformance.sh sets these; GitHub's
compose job runs it on each real image):
  CONFORMANCE_BROKER        a folder of brokers/
  CONFORMANCE_MQTT_URL      mqtt://host:port
  CONFORMANCE_METRICS_URL   its Prometheus endpoint (not for Mosquitto: $SYS); unset
                            where it serves none (--no-metrics): counters not compared
  CONFORMANCE_SECRET_FILE   the stack's generated secret the claims name
  CONFORMANCE_LOG_FILE      the broker's log since its start
  CONFORMANCE_NATIVE        set: it is the native stack's broker ([native.capabilities])
With none set, it starts each broker with a [native] table as the native
stack runs it (Mosquitto, HiveMQ CE, RabbitMQ), and skips the brokers that
have no native build here, saying why. A case needing what a broker lacks
(its broker.toml [capabilities]: MQTT 5, QoS 2) is checked to be refused
before load, then skipped."""

import dataclasses
import json
import os
import re
import secrets
import time
import warnings
from pathlib import Path
from urllib.parse import urlparse

import pytest
import requests

from conftest import ROOT
from k6_runs import BEHAVIOUR_P99_MS, run_k6
from mqtt_wire import Client
from mqttbench.brokers import counters as broker_counters
from mqttbench.brokers import facts as broker_facts
from native_broker import native_broker

LIVE = os.environ.get("CONFORMANCE_BROKER")
SCENARIOS = ROOT / "k6/scenarios"
# Small enough for any broker on a CI runner, large enough to reorder or drop.
WORKLOADS = {
    "p2p": {"PUBLISHERS": "20", "SUBSCRIBERS": "20", "RATE": "400"},
    "fanin": {"SCALE": "0.05"},
    "fanout": {"SCALE": "0.05"},
}


@dataclasses.dataclass
class Target:
    name: str
    mqtt_url: str
    log: Path | None
    metrics_url: str | None = None
    secret: str | None = None
    native: bool = False  # run here as the native stack runs it, not its image

    def capabilities(self):
        """What it can do as scripts/bench.sh reads it (broker_facts.capabilities):
        natively its [native.capabilities] where it has one; {} when all."""
        return broker_facts.capabilities(self.name, self.native)[1]

    @property
    def host_port(self):
        u = urlparse(self.mqtt_url)
        return u.hostname, u.port or 1883

    def metrics_auth(self):
        """Basic auth for a metrics endpoint that asks for it (NanoMQ's: its
        HTTP user and the generated password)."""
        for c in broker_facts.load(self.name)["claims"]:
            if c.get("expect") == 200 and c.get("auth") and urlparse(self.metrics_url).path in c["http"]:
                return c["auth"][0], self.secret
        return None

    def counters(self):
        """The broker's counters now, and how many $SYS messages reading them
        made it send (Mosquitto counts those in `sent`); None where it serves
        no metrics (scripts/conformance.sh --no-metrics)."""
        if broker_facts.load(self.name)["metrics"]["input"] == "inputs.mqtt_consumer":
            # Its $SYS topics, every [metrics] every seconds: the next publication covers the traffic.
            time.sleep((broker_facts.every(self.name) or 0) + 1)
            return broker_counters.from_sys(self.name, *self.host_port)
        if self.metrics_url is None:
            return None, 0

        def read():
            r = requests.get(self.metrics_url, auth=self.metrics_auth(), timeout=10)
            r.raise_for_status()
            return broker_counters.from_prometheus(self.name, r.text)

        # Until two reads a second apart agree: brokers that aggregate their
        # metrics lag the traffic a little.
        now, before, deadline = read(), None, time.time() + 15
        while now != before and time.time() < deadline:
            time.sleep(1)
            before, now = now, read()
        return now, 0


# A native broker other than Mosquitto is a JVM or an Erlang node: out of the
# editing lane (scripts/test.sh --fast).
PARAMS = [
    pytest.param(n, marks=pytest.mark.native_brokers) if n != "mosquitto" and "native" in broker_facts.load(n) else n
    for n in broker_facts.names()
]


@pytest.fixture(scope="module", params=PARAMS)
def target(request, tmp_path_factory):
    name = request.param
    if LIVE:
        if name != LIVE:
            pytest.skip(f"this run tests {LIVE} (CONFORMANCE_BROKER)")
        env = {k: v for k, v in os.environ.items() if k.startswith("CONFORMANCE_") and v}
        secret = Path(env["CONFORMANCE_SECRET_FILE"]).read_text().strip() if "CONFORMANCE_SECRET_FILE" in env else None
        log = Path(env["CONFORMANCE_LOG_FILE"]) if "CONFORMANCE_LOG_FILE" in env else None
        native = bool(env.get("CONFORMANCE_NATIVE"))  # scripts/conformance.sh --native
        yield Target(name, env["CONFORMANCE_MQTT_URL"], log, env.get("CONFORMANCE_METRICS_URL"), secret, native)
    elif "native" in broker_facts.load(name):
        # Every broker the native stack can run ([native] in its broker.toml).
        with native_broker(name, tmp_path_factory.mktemp(f"conformance-{name}")) as (port, log, metrics):
            yield Target(name, f"mqtt://127.0.0.1:{port}", log, metrics, native=True)
    else:
        pytest.skip(
            f"{name} has no native build here: the suite runs against its real image in GitHub's compose job "
            f"(scripts/conformance.sh --broker {name})"
        )


def unexplained_errors(log, startup):
    """The log's error lines (broker.toml [startup] `error`) that no
    `explained` line accounts for, as entries: where a broker writes one
    report over many lines, its `entry` pattern matches the same text on each
    (RabbitMQ: time and process), and consecutive lines alike are one entry,
    explained as one."""
    entries, last = [], None
    for line in log.splitlines():
        if not re.search(startup["error"], line):
            last = None
            continue
        key = re.match(startup["entry"], line) if "entry" in startup else None
        key = key and key.group(0)
        if key and key == last:
            entries[-1].append(line)
        else:
            entries.append([line])
        last = key
    return [e for e in entries if not any(x["line"] in "\n".join(e) for x in startup["explained"])]


def test_starts_with_no_error_line_its_readme_does_not_explain(target):
    if target.log is None:
        pytest.skip("no broker log given (CONFORMANCE_LOG_FILE)")
    startup = broker_facts.load(target.name)["startup"]
    unexplained = unexplained_errors(target.log.read_text(), startup)
    assert not unexplained, (
        f"{target.name} logged error lines brokers/{target.name}/broker.toml [startup] does not explain: {unexplained}"
    )
    readme = (ROOT / f"brokers/{target.name}/README.md").read_text()
    assert all(e["line"] in readme for e in startup["explained"]), "README.md is not rendered from broker.toml"


# Two RabbitMQ 3.10 reports as CI's run logged them (2026-11-26), the first
# explained by its broker.toml, the second not: one entry each.
RABBITMQ_REPORTS = """\
2026-11-26 21:08:25.409821+00:00 [warning] <0.847.0> AMQP 0-9-1 client call timeout was 70000 ms
2026-11-26 21:08:25.414225+00:00 [error] <0.853.0>     supervisor: {<0.853.0>,amqp_channel_sup_sup}
2026-11-26 21:08:25.414225+00:00 [error] <0.853.0>     errorContext: shutdown_error
2026-11-26 21:08:25.414225+00:00 [error] <0.853.0>     reason: shutdown
2026-11-26 21:08:25.414225+00:00 [error] <0.853.0>                {child_type,supervisor}]
2026-11-26 21:08:31.748616+00:00 [error] <0.976.0>     supervisor: {<0.976.0>,rabbit_mqtt_connection_sup}
2026-11-26 21:08:31.748616+00:00 [error] <0.976.0>     reason: reached_max_restart_intensity
"""


def test_a_report_over_many_lines_is_one_entry_explained_as_one():
    startup = broker_facts.load("rabbitmq")["startup"]
    unexplained = unexplained_errors(RABBITMQ_REPORTS, startup)
    assert unexplained == [RABBITMQ_REPORTS.splitlines()[-2:]]


# fanin's subscriber groups are MQTT 5 shared subscriptions ($share/...): a
# broker whose broker.toml [shared_subscriptions] max_qos is lower is run at
# the QoS it grants (ACCEPT_QOS_DOWNGRADE, recorded in the result).
SHARED_SUBSCRIPTIONS = {"fanin"}


def lacking(target, scenario, qos):
    """What of this case the broker cannot do, by its capabilities (`mqtt`
    versions, `qos` levels honoured; absent: all), and the words the run's
    refusal names it with (k6/lib/params.js); None when it can."""
    caps = target.capabilities()
    if scenario in SHARED_SUBSCRIPTIONS and "5" not in caps.get("mqtt", ["3.1.1", "5"]):
        return "MQTT 5 shared subscriptions", f"{target.name} lacks MQTT 5"
    if int(qos) not in caps.get("qos", [0, 1, 2]):
        return f"QoS {qos}", f"{target.name} lacks QoS {qos}"
    return None


@pytest.mark.parametrize("qos", ["0", "1", "2"])
@pytest.mark.parametrize("scenario", sorted(WORKLOADS))
def test_delivers_exactly_and_counts_what_k6_counted(target, k6_bin, tmp_path, scenario, qos):
    run_id = f"conformance-{target.name}-{scenario}-q{qos}-{int(time.time() * 1000)}"
    # Exactness and counts, not latency: a busy CI machine's p99 (a JVM
    # warming up, HiveMQ natively) is no finding about the broker.
    env = dict(WORKLOADS[scenario], MQTT_URL=target.mqtt_url, QOS=qos, DURATION="3s", RUN_ID=run_id)
    env["P99_MS"] = BEHAVIOUR_P99_MS
    # The broker and its listed deviations, as every stack tells a run
    # (BROKER_DEVIATIONS): the run marks a violation among them known.
    env |= {"BROKER": target.name, "RESULTS_DIR": str(tmp_path), **broker_facts.deviations_env(target.name)}
    lacks = lacking(target, scenario, qos)
    if lacks:
        # A capability the broker lacks is refused before any connection,
        # naming the broker and the capability (scripts/bench.sh exports them).
        caps = broker_facts.capabilities_env(target.name, target.native)
        p, _ = run_k6(k6_bin, SCENARIOS / f"{scenario}.js", env=env | caps)
        out = p.stdout + p.stderr
        where = f"brokers/{target.name}/broker.toml [{caps['BROKER_CAPABILITIES']}]"
        assert p.returncode != 0 and lacks[1] in out and where in out, out[-3000:]
        assert not (tmp_path / f"{run_id}.json").exists(), "a result: it connected"
        pytest.skip(f"{target.name} lacks {lacks[0]} ({where}): refused before load")
    # A broker that grants shared subscriptions a lower QoS (HiveMQ CE: 1) is
    # measured at the QoS it grants, still exactly.
    shared_max = broker_facts.load(target.name).get("shared_subscriptions", {}).get("max_qos", 2)
    if scenario in SHARED_SUBSCRIPTIONS and int(qos) > shared_max:
        env["ACCEPT_QOS_DOWNGRADE"] = "true"
    before, read_sent = target.counters()
    p, _ = run_k6(k6_bin, SCENARIOS / f"{scenario}.js", env=env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    result = json.loads((tmp_path / f"{run_id}.json").read_text())
    c = result["counts"]
    assert c["mqtt_publishes"] > 0 and c["mqtt_receives"] > 0, c
    assert (c["mqtt_lost"], c["mqtt_duplicates"]) == (0, 0), c
    # Order as the verdict judges it (non-shared subscriptions, every QoS):
    # the suite restates no rule of its own. A deviation the broker's
    # broker.toml lists (the run marked it known) is reported by name and
    # count, not failed on.
    known = broker_facts.known_deviation(target.name, result)
    if known:
        warnings.warn(
            f"{target.name}: its known deviation '{known['name']}': {result['ordering']['text']}", stacklevel=1
        )
    else:
        assert "text" not in result["ordering"], result["ordering"]
    assert (c["mqtt_publish_failures"], c["mqtt_connect_failures"]) == (0, 0), c

    if before is None:
        pytest.skip(f"delivered exactly; {target.name} serves no metrics here (--no-metrics): counters not compared")
    after, _ = target.counters()
    want = broker_counters.expected(target.name, broker_counters.run_of(result))
    if "sent" in want:
        want["sent"] += read_sent  # the $SYS messages the first read made the broker send
    moved = {k: after[k] - before[k] for k in want}
    assert moved == want, f"{target.name} counted {moved}; k6 counted {c}, so broker.toml says {want}"


def request_body(claim, target, wrong):
    """The claim's credentials and body, with <generated> and <wrong> filled in."""

    def fill(text):
        return text.replace("<generated>", target.secret or "").replace("<wrong>", wrong)

    auth = tuple(fill(x) for x in claim["auth"]) if claim.get("auth") else None
    return auth, fill(claim["body"]) if claim.get("body") else None


def test_every_auth_claim_holds(target):
    wrong = "wrong-" + secrets.token_hex(4)
    failed, untried = [], []
    for claim in broker_facts.load(target.name)["claims"]:
        if claim.get("mqtt"):
            host, port = target.host_port
            # MQTT 5 where the broker speaks it, else 3.1.1 ([capabilities] mqtt),
            # or the claim's own mqtt_version (its CONNACK codes differ: 0x04, 0x86).
            v5 = "5" in target.capabilities().get("mqtt", ["5"]) and claim.get("mqtt_version", "5") == "5"
            version = 5 if v5 else 4
            auth, _ = request_body(claim, target, wrong)
            c = Client(port, f"conformance-claim-{secrets.token_hex(3)}", host=host, accepted=False, version=version,
                       auth=auth)  # fmt: skip
            answer = "accepted" if c.connack[1] == 0 else f"refused (0x{c.connack[1]:02x})"
            c.close()
        else:
            # Not tried, and said so once the others were: no endpoint or secret given.
            if target.metrics_url is None:
                untried.append(f"no metrics endpoint given (CONFORMANCE_METRICS_URL) for: {claim['claim']}")
                continue
            if "<generated>" in json.dumps(claim) and target.secret is None:
                untried.append(f"no generated secret given (CONFORMANCE_SECRET_FILE) for: {claim['claim']}")
                continue
            method, path = claim["http"].split(" ", 1)
            base = urlparse(target.metrics_url)
            auth, body = request_body(claim, target, wrong)
            headers = {"Content-Type": "application/json"} if body else {}
            r = requests.request(method, f"{base.scheme}://{base.netloc}{path}", auth=auth, data=body,
                                 headers=headers, timeout=10)  # fmt: skip
            answer = r.status_code
        if answer != claim["expect"]:
            failed.append(f"{claim['claim']}: {answer}, not {claim['expect']}")
    assert not failed, f"brokers/{target.name}/README.md claims that do not hold: {failed}"
    if untried:
        pytest.skip("; ".join(untried))
