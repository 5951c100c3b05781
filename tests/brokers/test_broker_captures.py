"""The brokers that cannot run here (EMQX, NanoMQ, VerneMQ), through what
they really answered: ../shared/brokers/captures holds each one's Prometheus
exposition right after start and after one p2p run of a known size. Served
on 127.0.0.1 to the project's own telegraf/brokers/<name>.conf, they must
reach InfluxDB, fill every Broker internals panel of that broker, and move
the broker's counters by exactly what k6 counted plus the documented
offsets (mqttbench/brokers/counters.py, from broker.toml)."""

import base64
import json
import os
import re
import secrets
import subprocess
import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

import pytest

from conftest import ROOT, wait_until
from dashboard_answers import bind, broker_panel_queries
from mqttbench import flux_filters as ff
from mqttbench import settings
from mqttbench.brokers import counters as broker_counters
from mqttbench.brokers import facts as broker_facts

CAPTURES = ROOT.parent / "shared" / "brokers" / "captures"
if not CAPTURES.is_dir():
    pytest.skip(
        f"{CAPTURES} is absent (a user's clone has no ../shared): the brokers' recorded answers are not tested",
        allow_module_level=True,
    )

BROKERS = ["emqx", "nanomq", "vernemq"]
# The variable each Telegraf input reads its URL from (telegraf/brokers/<name>.conf).
URL_VARIABLE = {"emqx": "EMQX_METRICS_URL", "nanomq": "NANOMQ_METRICS_URL", "vernemq": "VERNEMQ_METRICS_URL"}
NANOMQ_USER = "admin"  # brokers/nanomq/nanomq.conf http_server.username


class CaptureServer:
    """Serves one recorded exposition (swappable) at the broker's metrics
    path, with basic auth where the broker asks for it."""

    def __init__(self, path, credentials=None):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                if self.path != path:
                    return self._answer(404, b"not found")
                if credentials and self.headers.get("Authorization") != "Basic " + credentials:
                    return self._answer(401, b"unauthorized")
                server.scrapes += 1
                self._answer(200, server.body)

            def _answer(self, code, body):
                self.send_response(code)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.body, self.scrapes = b"", 0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}{path}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def k6_counts(broker):
    """(published, received, connections) of the recorded run, from its k6 summary."""
    text = (CAPTURES / f"{broker}-k6-summary.txt").read_text()
    conns = int(re.search(r"connections\s+(\d+) ok", text).group(1))
    m = re.search(r"messages\s+(\d+) published, (\d+) received", text)
    return int(m.group(1)), int(m.group(2)), conns


@pytest.fixture(scope="module", params=BROKERS)
def scraped(request, stack, tmp_path_factory):
    """The broker's idle, then after-run exposition, each gathered once by
    the project's Telegraf config into the test stack's InfluxDB. Returns
    (broker, start of the range to query)."""
    broker = request.param
    facts = broker_facts.load(broker)
    password = secrets.token_urlsafe(12)
    credentials = None
    if broker == "nanomq":
        credentials = base64.b64encode(f"{NANOMQ_USER}:{password}".encode()).decode()
    server = CaptureServer(urlparse(facts["metrics"]["endpoint"]).path, credentials)
    start = (datetime.now(UTC) - timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    env = dict(
        os.environ,
        BROKER=broker,
        INFLUX_URL=stack.influx,
        INFLUX_TOKEN=stack.token,
        TELEGRAF_BUFFER_DIR=str(tmp_path_factory.mktemp("buffer")),
        NANOMQ_HTTP_PASSWORD=password,
        **{URL_VARIABLE[broker]: server.url},
    )
    config = ["--config", str(ROOT / "telegraf/telegraf.conf"), "--config", str(ROOT / facts["metrics"]["telegraf"])]
    # Telegraf as the stacks run it, every second (its --once panics with
    # the disk buffer of telegraf.conf): two scrapes of each phase at least,
    # so that a counter has a first and a last value and a rate two points.
    server.body = (CAPTURES / f"{broker}-idle.prom").read_bytes()
    telegraf = subprocess.Popen(
        [str(settings.telegraf_bin()), *config],
        env=dict(env, TELEGRAF_INTERVAL="1s", TELEGRAF_FLUSH_INTERVAL="1s"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(lambda: server.scrapes >= 2, timeout=30), f"Telegraf did not scrape {server.url}"
        idle = server.scrapes
        server.body = (CAPTURES / f"{broker}-after.prom").read_bytes()
        assert wait_until(lambda: server.scrapes >= idle + 2, timeout=30), f"Telegraf stopped scraping {server.url}"
    finally:
        server.close()
        telegraf.terminate()  # it flushes what it holds before it exits
        _, err = telegraf.communicate(timeout=30)
    assert telegraf.returncode == 0, err[-2000:]
    return broker, start


def fields(stack, broker, start):
    """Field name -> [(time, value)] per series, of the broker's scraped points."""
    rows = stack.flux(
        f'from(bucket: "mqtt-bench") |> range(start: {start})'
        f" |> filter(fn: (r) => {ff.measurement(ff.PROMETHEUS)} and {ff.tag('source', broker)}"
        f" and {ff.tag('broker', broker)})"
    )
    out = {}
    for r in rows:
        out.setdefault(r["_field"], {}).setdefault(r["table"], []).append((r["_time"], float(r["_value"])))
    return out


def test_every_series_the_broker_facts_name_reaches_influxdb(stack, scraped):
    broker, start = scraped
    got = fields(stack, broker, start)
    named = broker_facts.load(broker)["metrics"]["series"].values()
    assert got, f"telegraf/brokers/{broker}.conf gathered nothing from the real {broker} exposition"
    assert not [s for s in named if s not in got], f"{broker}: broker.toml names series Telegraf did not gather"


def test_every_telegraf_pattern_matches_a_real_series(scraped):
    """A pattern that matches nothing in the real exposition is a typo or a
    renamed series: it would keep nothing, silently."""
    broker, _ = scraped
    conf = (ROOT / f"telegraf/brokers/{broker}.conf").read_text()
    patterns = re.findall(r'"([^"]+)"', re.search(r"fieldinclude = \[(.*?)\]", conf, re.S).group(1))
    real = broker_counters.prometheus_sums((CAPTURES / f"{broker}-after.prom").read_text())
    regexes = [re.compile("^" + re.escape(p).replace(r"\*", ".*") + "$") for p in patterns]
    assert patterns and not [p for p, rx in zip(patterns, regexes, strict=True) if not any(map(rx.match, real))]


def test_every_broker_internals_panel_of_the_broker_has_data(stack, scraped):
    broker, start = scraped
    panels = list(broker_panel_queries(broker))
    assert panels, f"Broker internals has no panel for {broker}"
    empty = [title for title, q in panels if not stack.flux(bind(q, start, "no-run", "p2p", broker))]
    assert not empty, f"{broker}: panels without data: {empty}"


def test_counters_moved_by_what_k6_counted_plus_the_documented_offsets(stack, scraped):
    broker, start = scraped
    got = fields(stack, broker, start)
    names = broker_counters.counters(broker)
    published, received, connections = k6_counts(broker)
    # The recorded p2p runs (QOS=1) have no result file and no probes.
    want = broker_counters.expected(broker, broker_counters.Run(published, received, connections, qos=1))
    moved = {}
    for key in broker_counters.keys(broker):
        series = got[names[key]].values()
        moved[key] = sum(points[-1][1] - points[0][1] for points in series)
    assert moved == want, f"{broker}: counters moved {moved}, k6 and broker.toml say {want}"


def test_a_fanin_with_shared_subscription_probes_moves_vernemqs_counters_as_its_result_says():
    """VerneMQ 2.1.1's CONNACK announces no shared subscriptions, so each
    fanin subscriber group probes over a connection of its own: the real
    broker counted 212 connects and 2,002 publishes for k6's 210 and 2,000.
    The expected counters come from that run's result file, probes included."""
    result = json.loads((CAPTURES / "vernemq-fanin-q1-result.json").read_text())
    before, after = (
        broker_counters.from_prometheus("vernemq", (CAPTURES / f"vernemq-fanin-q1-{when}.prom").read_text())
        for when in ("before", "after")
    )
    moved = {k: after[k] - before[k] for k in after}
    want = broker_counters.expected("vernemq", broker_counters.run_of(result))
    assert want["connects"] > result["counts"]["mqtt_connects"], "the probes' connections are part of what is expected"
    assert moved == want, f"vernemq counted {moved}; its result file says {want}"
