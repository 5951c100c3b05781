"""The capacity search: its judgement and rate choice, and real searches of
the native stack's Mosquitto (one that finds a rate, one whose generator is
throttled and says so)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, loopback_port
from delay_proxy import DelayProxy
from loopback_brokers import mosquitto
from mqttbench.capacity.search import Bounds, Search, Trial, judge

BOUNDS = Bounds(cpu_target=75)


def trial(rate, **kw):
    base = dict(achieved_rate=rate, passed=True, cause="none", broker_cpu_pct=10, latency_p99=5, published=100)
    return Trial(rate=rate, run_id=f"t-{rate}", **{**base, **kw, "received": 100})


def test_a_trial_is_judged_by_its_own_verdict_then_the_broker_cpu():
    assert judge(trial(1000), BOUNDS).good
    # A failed trial is limited by the cause its diagnosis named, with its
    # text: the search restates no threshold nor any rule of blame.
    text = "The broker held back acknowledgements: ..."
    t = judge(trial(1000, passed=False, cause="broker_slow_acks", diagnosis=text), BOUNDS)
    assert not t.good and t.limit == "broker_slow_acks" and t.reasons == [text], t
    # Its cause comes first; the CPU is named beside it.
    t = judge(trial(1000, passed=False, cause="broker_latency", diagnosis="slow", broker_cpu_pct=90), BOUNDS)
    assert t.limit == "broker_latency" and len(t.reasons) == 2, t
    assert judge(trial(1000, broker_cpu_pct=80), BOUNDS).limit == "broker_cpu"
    assert judge(trial(1000, broker_cpu_pct=None), BOUNDS).limit == "error"
    # --no-cpu: the CPU is no bound, measured or not.
    assert judge(trial(1000, broker_cpu_pct=None), Bounds(None)).good


def test_a_trial_whose_cpu_was_not_measured_ends_the_search_whatever_else_it_failed():
    s = Search(start=1000, max_rate=1e6)
    s.record(judge(trial(1000, broker_cpu_pct=None, passed=False, cause="broker_latency", diagnosis="x"), BOUNDS))
    assert s.stop == "error" and s.next_rate() is None


def test_the_search_doubles_then_bisects_to_the_precision():
    s = Search(start=1000, max_rate=1e6, precision=5)
    capacity = 5300
    rates = []
    while (r := s.next_rate()) is not None:
        rates.append(r)
        s.record(judge(trial(r, broker_cpu_pct=75 * r / capacity), BOUNDS))
    assert rates[:4] == [1000, 2000, 4000, 8000]
    assert s.stop == "precision" and s.good <= capacity < s.bad and s.bad - s.good <= 0.05 * s.bad


def test_a_generator_limited_trial_ends_the_search():
    s = Search(start=1000, max_rate=1e6)
    s.record(judge(trial(1000), BOUNDS))
    s.record(judge(trial(2000, achieved_rate=1200, passed=False, cause="generator", diagnosis="late sends"), BOUNDS))
    assert s.stop == "generator" and s.next_rate() is None


def capacity(stack, tmp_path, *args, env=None):
    out = tmp_path / "out"
    who = [] if any(a == "--target" for a in args) else ["--broker", "mosquitto"]
    r = subprocess.run(
        [
            str(ROOT / "scripts/capacity.sh"),
            *who,
            "--results",
            str(tmp_path / "raw"),
            "--out",
            str(out),
            *args,
        ],
        env=env or stack.env,
        text=True,
        capture_output=True,
        timeout=900,
    )
    found = list(out.glob("capacity-*/capacity.json"))
    return r, (json.loads(found[0].read_text()) if found else None)


@pytest.mark.slow
def test_a_search_of_mosquitto_finds_a_rate_inside_the_bounds_and_the_next_step_outside(stack, tmp_path):
    # A low CPU target, so that a few short trials on this machine find it.
    r, c = capacity(
        stack,
        tmp_path,
        "--trial",
        "5s",
        "--budget",
        "150s",
        "--start-rate",
        "500",
        "--cpu-target",
        "4",
        "--p99-ms",
        "1000",
        "--precision",
        "25",
        "-e",
        "SCALE=0.5",
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    rec = c["recommended"]
    assert rec and rec["broker_cpu_pct"] <= 4 and rec["latency_p99"] < 1000, c
    assert "host's" in c["cpu_basis"] and rec["host_cpu_pct"] is not None
    trials = c["trials"]
    assert all(Path(tmp_path / "raw" / f"{t['run_id']}.json").exists() for t in trials)
    assert all(t["run_id"].startswith(c["search_id"] + "-t") for t in trials)
    above = [t for t in trials if t["rate"] > rec["rate"]]
    assert above, "the search never tried a rate above the one it recommends"
    nxt = min(above, key=lambda t: t["rate"])
    assert not nxt["good"] and (nxt["broker_cpu_pct"] > 4 or nxt["latency_p99"] >= 1000), nxt
    report = (tmp_path / "out" / f"capacity-{c['search_id']}" / "capacity.md").read_text()
    assert f"**Recommended load: {rec['rate']:,.0f} msg/s**" in report
    # Every trial's samples carry the search, beside their own run id and
    # broker: the dashboards select a whole search by it.
    rows = stack.flux(
        'from(bucket: "mqtt-bench") |> range(start: -1h) |> filter(fn: (r) => r._measurement == "mqtt_publishes"'
        f' and r.search == "{c["search_id"]}")'
        ' |> keep(columns: ["run_id", "broker", "scenario"]) |> distinct(column: "run_id")'
    )
    assert {r["_value"] for r in rows} == {t["run_id"] for t in trials}, rows


@pytest.mark.slow
def test_a_search_whose_generator_is_throttled_names_the_generator_and_no_capacity(stack, tmp_path, throttled_k6):
    r, c = capacity(
        stack,
        tmp_path,
        "--trial",
        "5s",
        "--budget",
        "120s",
        "--start-rate",
        "50000",
        "--k6-prefix",
        throttled_k6,
        "-e",
        "SCALE=0.2",
    )
    assert r.returncode == 3, (r.stdout + r.stderr)[-3000:]
    assert c["limit"] == "generator" and c["recommended"] is None, c
    assert "load generator" in c["limit_text"] and "no broker capacity" in c["limit_text"]
    t = c["trials"][-1]
    assert t["limit"] == "generator", t


def no_influx_env():
    """A shell with no InfluxDB to measure the broker's CPU."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFLUX")}
    return dict(env, INFLUX_URL=f"http://127.0.0.1:{loopback_port(18999)}", K6_NO_USAGE_REPORT="true")


def test_a_search_that_cannot_measure_the_broker_cpu_stops_before_any_trial(tmp_path):
    r, c = capacity(None, tmp_path, "--target", "x=mqtt://127.0.0.1:1", env=no_influx_env())
    assert r.returncode == 2 and c is None, (r.stdout + r.stderr)[-3000:]
    assert "cannot be measured" in r.stderr and "--no-cpu" in r.stderr and "trial" not in r.stderr, r.stderr
    assert not (tmp_path / "raw").exists() or not list((tmp_path / "raw").iterdir())


@pytest.mark.slow
def test_a_broker_with_slow_acks_is_limited_by_its_latency_never_the_generator(tmp_path, k6_bin):
    # Mosquitto's answers held 1.5 s: delivery p99 measured here about 2.0 s
    # at 200 msg/s and 2.5 s at 400 (Mosquitto's inflight limits queue what
    # waits for the subscribers' acks), while the generator sends every
    # rate on time. A bound of 2.3 s falls between.
    port = loopback_port(11963)
    with mosquitto(tmp_path / "m.conf", port, f"listener {port} 127.0.0.1\nallow_anonymous true\n"):
        with DelayProxy(port, 1.5, listen_port=loopback_port(11964), to_client_only=True) as proxy:
            r, c = capacity(
                None,
                tmp_path,
                "--target",
                f"slow=mqtt://127.0.0.1:{proxy.listen_port}",
                "--no-cpu",
                *("--trial", "5s", "--start-rate", "100", "--p99-ms", "2300", "--precision", "30"),
                *("-e", "PUBLISHERS=10", "-e", "SUBSCRIBERS=10"),
                env=no_influx_env(),
            )
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert c["recommended"] and c["limit"] == "broker_latency", c
    assert "The broker was slow to deliver" in c["limit_text"] and "not judged" in c["cpu_bound"], c
    assert all(t["limit"] in (None, "broker_latency") for t in c["trials"]), c["trials"]
