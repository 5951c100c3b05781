"""scripts/compare.sh --rounds, --baseline, --fail-on, --save-baseline and
--against with real runs: the same Mosquitto as two targets (A/A) is no
change beyond noise and exits 0; the same Mosquitto behind a Toxiproxy
adding 5 ms regressed on p99 and exits 4; a saved baseline compares again,
and is refused for another parameter. Laptop-sized: p2p QoS 1 at SCALE 0.1
for 2 s a round (5 s where p99 must prove a regression)."""

import json
import os
import subprocess
import time

import pytest
import requests

from compare_runs import REPORTS, cleanup, compare, table
from conftest import loopback_port, wait_until
from loopback_brokers import listening
from mqttbench import settings

SMALL = ["-e", "QOS=1", "-e", "SCALE=0.1", "-e", "DURATION=2s", "-e", "P99_MS=60000"]


@pytest.fixture(scope="module")
def mosquitto(tmp_path_factory):
    """One Mosquitto on loopback: (url, pid)."""
    tmp = tmp_path_factory.mktemp("mosq")
    port = loopback_port(11936)
    assert not listening(port), f"port {port} is taken"
    conf = tmp / "m.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
    proc = subprocess.Popen(["mosquitto", "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: listening(port), timeout=10)
        yield f"mqtt://127.0.0.1:{port}", proc.pid
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def slow_proxy(mosquitto):
    """Toxiproxy in front of the Mosquitto, adding 5 ms to what the broker sends: its URL."""
    api_port, listen = loopback_port(18476), loopback_port(11937)
    api = f"http://127.0.0.1:{api_port}"
    assert not listening(api_port) and not listening(listen)
    proc = subprocess.Popen(
        [str(settings.toxiproxy_bin()), "-host", "127.0.0.1", "-port", str(api_port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_until(lambda: listening(api_port), timeout=10)
        upstream = mosquitto[0].removeprefix("mqtt://")
        requests.post(f"{api}/proxies", json={"name": "slow", "listen": f"127.0.0.1:{listen}", "upstream": upstream},
                      timeout=5).raise_for_status()  # fmt: skip
        toxic = {"type": "latency", "stream": "downstream", "attributes": {"latency": 5}}
        requests.post(f"{api}/proxies/slow/toxics", json=toxic, timeout=5).raise_for_status()
        yield f"mqtt://127.0.0.1:{listen}"
    finally:
        proc.terminate()
        proc.wait(10)


def verdicts(md, baseline):
    """{metric label: cell} of the first column judged against baseline."""
    rows = table(md, f"Against {baseline}")
    return {r[0]: r[1] for r in rows[1:]}


@pytest.mark.quiet
@pytest.mark.slow
def test_a_and_a_in_five_alternating_rounds_is_no_change_beyond_noise_and_saves_a_baseline(stack, mosquitto, tmp_path):
    url, pid = mosquitto
    cid = f"rounds-aa-{time.time_ns()}"
    saved = tmp_path / "baseline.json"
    r = compare(
        "--target", f"a={url},pid={pid}", "--target", f"b={url},pid={pid}", "--rounds", "5", "--baseline", "a",
        "--fail-on", "p99=+10%,rate=-5%,broker_cpu_per_msg=+10%", "--save-baseline", str(saved), "--id", cid, *SMALL,
        env=stack.env,
    )  # fmt: skip
    out = REPORTS / f"compare-{cid}"
    try:
        assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
        md = (out / "compare.md").read_text()
        # Each round its own run, alternating a b a b ...
        started = {
            f"{n}-r{k}": json.loads((REPORTS / "raw" / f"{cid}-{n}-r{k}.json").read_text())["started_at"]
            for n in "ab"
            for k in range(1, 6)
        }
        assert sorted(started, key=started.get) == [f"{n}-r{k}" for k in range(1, 6) for n in "ab"]
        # A cell: the median, then the five rounds.
        rounds = {row[0]: row[1:] for row in table(md, "Rounds")}
        assert len(rounds["latency p99 (ms)"][0].split("(")[1].split(",")) == 5
        got = verdicts(md, "a")
        assert set(got) >= {
            "delivered rate (msg/s) (bound -5.0%)",
            "latency p99 (ms) (bound +10.0%)",
            "loss (% of published)",
        }
        assert len(got) == 7
        for label, cell in got.items():
            assert "no change beyond noise (±" in cell, (label, cell, md)
        res = json.loads((out / "results.json").read_text())
        assert res["regressions"] == [] and res["rounds"]["n"] == 5

        doc = json.loads(saved.read_text())
        assert doc["name"] == "a" and doc["scenario"] == "p2p" and len(doc["rounds"]) == 5
        assert doc["parameters"]["qos"] == 1 and doc["generator"]["k6"] and doc["host"]["cpus"]

        # The same broker against the saved rounds: comparable, judged, within the bounds. Sub-millisecond
        # latencies drift between one sitting and the next (no alternation with a saved baseline): the
        # bounds here are on what the broker must keep, its delivered rate and its loss.
        cid2 = f"{cid}-again"
        r = compare("--target", f"a={url},pid={pid}", "--rounds", "3", "--against", str(saved),
                    "--fail-on", "rate=-5%,loss=+0.1pt", "--id", cid2, *SMALL, env=stack.env)  # fmt: skip
        try:
            assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
            md2 = (REPORTS / f"compare-{cid2}" / "compare.md").read_text()
            got = verdicts(md2, "a (saved)")
            assert "no change beyond noise" in got["delivered rate (msg/s) (bound -5.0%)"], md2
            assert len(got) == 7 and all("[" in cell for cell in got.values()), got  # every metric judged
            assert "a saved baseline" in md2 and "not comparable" not in md2
        finally:
            cleanup(cid2)
    finally:
        cleanup(cid)


def test_another_parameter_than_the_saved_baseline_is_refused_before_any_connection(tmp_path, connection_counter):
    saved = tmp_path / "baseline.json"
    saved.write_text(
        json.dumps(
            {
                "kind": "mqtt-bench baseline",
                "name": "a",
                "scenario": "p2p",
                "env": ["QOS=1", "SCALE=0.1", "DURATION=2s", "P99_MS=60000"],
                "rounds": [],
            }
        )  # fmt: skip
    )
    url = f"mqtt://127.0.0.1:{connection_counter.port}"
    r = compare("--target", f"a={url}", "--against", str(saved), *SMALL[:-2], "-e", "DURATION=3s", "-e", "P99_MS=60000")
    assert r.returncode == 2
    assert "the parameter DURATION differs: saved 2s, now 3s" in r.stderr, r.stderr
    r = compare("--target", f"a={url}", "--against", str(saved), "--scenario", "fanin", *SMALL)
    assert r.returncode == 2 and "the scenario differs: saved p2p, now fanin" in r.stderr, r.stderr
    assert connection_counter.accepted == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--rounds", "0"], "--rounds takes a whole number of rounds, at least 1"),
        (["--fail-on", "p99=+10%"], "--fail-on judges each column against a baseline: add --baseline NAME"),
        (["--baseline", "a", "--fail-on", "latency=+10%"], "unknown metric 'latency'"),
        (["--baseline", "a", "--fail-on", "p99=10"], "'p99=10' is not METRIC=±N%"),
        (["--baseline", "c"], "--baseline: 'c' is not a column (columns: a, b)"),
    ],
)
def test_bad_round_options_are_refused_before_any_connection(connection_counter, args, says):
    url = f"mqtt://127.0.0.1:{connection_counter.port}"
    r = compare("--target", f"a={url}", "--target", f"b={url}", *args, env=dict(os.environ))
    assert r.returncode == 2 and says in r.stderr, r.stderr
    assert connection_counter.accepted == []


@pytest.mark.quiet
@pytest.mark.slow
def test_the_same_broker_5_ms_slower_regressed_on_p99_and_exits_4(stack, mosquitto, slow_proxy):
    cid = f"rounds-slow-{time.time_ns()}"
    # Five rounds: one round's spike of a few ms on a side (the other
    # workers' idle stacks) must not widen its interval over the 5 ms.
    # Rounds of 5 s: in a 2 s round (200 messages) p99 is the third
    # slowest message, which one pause of the host of some 20 ms moves. A
    # fresh-clone run of the suite exited 0 here with the slow side's p99
    # at 8 ms: baseline rounds so moved left the 5 ms unproven.
    longer = [a.replace("DURATION=2s", "DURATION=5s") for a in SMALL]
    r = compare("--target", f"a={mosquitto[0]}", "--target", f"slow={slow_proxy}", "--rounds", "5",
                "--baseline", "a", "--fail-on", "p99=+10%", "--id", cid, *longer, env=stack.env)  # fmt: skip
    try:
        out = REPORTS / f"compare-{cid}" / "compare.md"
        drawn = out.read_text() if out.exists() else ""
        rounds = [row for row in table(drawn, "Rounds") if "latency" in row[0]] if "\n## Rounds\n" in drawn else []
        assert r.returncode == 4, (rounds, (r.stdout + r.stderr)[-3000:])
        md = out.read_text()
        p99 = verdicts(md, "a")["latency p99 (ms) (bound +10.0%)"]
        # The change, its interval, the word.
        assert p99.startswith("+") and p99.endswith("] regressed") and "[+" in p99, p99
        assert "slow: p99 regressed by +" in r.stderr and "wholly beyond the bound +10.0%" in r.stderr, r.stderr
        assert "Beyond --fail-on" in md
    finally:
        cleanup(cid)
