"""The capacity search: its judgement and rate choice, and real searches of
the native stack's Mosquitto (one that finds a rate, one whose generator is
throttled and says so)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from capacity.search import Bounds, Search, Trial, judge
from conftest import ROOT

BOUNDS = Bounds(cpu_target=75, p99_ms=50, qos=1)


def trial(rate, **kw):
    base = dict(achieved_rate=rate, broker_cpu_pct=10, latency_p99=5, published=100, received=100)
    return Trial(rate=rate, run_id=f"t-{rate}", **{**base, **kw})


def test_a_trial_within_every_bound_is_good_and_each_bound_is_named_when_crossed():
    assert judge(trial(1000), BOUNDS).good
    cases = {
        "broker_cpu": dict(broker_cpu_pct=80),
        "latency": dict(latency_p99=60),
        "loss": dict(lost=3),
        "connections": dict(connect_failures=2),
        "broker_backpressure": dict(achieved_rate=500, missed_sends=10, missed_window=10, broker_cpu_pct=90),
        "generator": dict(achieved_rate=500, missed_sends=10, generator_cpu_pct=95),
        # The rate reached, but so late that the lateness alone breaks the bound.
        "generator ": dict(send_lag_p99=60, latency_p99=80),
        "error": dict(broker_cpu_pct=None),
    }
    for limit, kw in cases.items():
        t = judge(trial(1000, **kw), BOUNDS)
        assert not t.good and t.limit == limit.strip(), (limit, t.reasons)
    # QoS 0 may lose messages: not a bound there.
    assert judge(trial(1000, lost=3), Bounds(75, 50, 0)).good


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
    s.record(judge(trial(2000, achieved_rate=1200, missed_sends=800, generator_cpu_pct=99), BOUNDS))
    assert s.stop == "generator" and s.next_rate() is None


def capacity(stack, tmp_path, *args):
    out = tmp_path / "out"
    r = subprocess.run(
        [
            str(ROOT / "scripts/capacity.sh"),
            "--broker",
            "mosquitto",
            "--results",
            str(tmp_path / "raw"),
            "--out",
            str(out),
            *args,
        ],
        env=stack.env,
        text=True,
        capture_output=True,
        timeout=900,
    )
    found = list(out.glob("capacity-*/capacity.json"))
    return r, (json.loads(found[0].read_text()) if found else None)


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


@pytest.fixture
def throttled_k6(tmp_path):
    """A wrapper that runs k6 in a cgroup (v1 cpu controller) capped at 2%
    of one core: a generator that cannot keep up, or only late, whatever
    the broker."""
    root = Path("/sys/fs/cgroup/cpu")
    if not os.access(root, os.W_OK):
        pytest.skip("no writable cgroup cpu controller here")
    group = root / f"mqttbench-test-{os.getpid()}"
    wrapper = tmp_path / "throttled"
    wrapper.write_text(
        "#!/bin/sh\nset -e\n"
        f"mkdir -p {group}\necho 100000 > {group}/cpu.cfs_period_us\necho 2000 > {group}/cpu.cfs_quota_us\n"
        f'echo $$ > {group}/tasks\nexec "$@"\n'
    )
    wrapper.chmod(0o755)
    yield str(wrapper)
    subprocess.run(["rmdir", str(group)], check=False)


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
