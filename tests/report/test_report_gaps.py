"""The report names monitoring gaps (Telegraf stopped during a real run) and
broker outages (the result file's `outages`), in tables and as shaded spans
in the charts."""

import json
import os
import threading
import time

import matplotlib.image as mpimg
import pytest

from compare_runs import report
from conftest import wait_until
from k6_runs import run_scenario_to_influx
from mqttbench.report import charts, gaps


def now_ms():
    return int(time.time() * 1000)


def shaded_pixels(png, kind):
    """Pixels of the span colour of `kind` laid over the white plot background."""
    colour, alpha, _ = charts.SPAN_STYLE[kind]
    rgb = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    want = [1 - alpha * (1 - c) for c in rgb]
    img = mpimg.imread(png)[:, :, :3]
    close = abs(img - want).max(axis=2) < 2.5 / 255
    return int(close.sum())


@pytest.fixture(scope="module")
def gap_run(stack, k6_bin, tmp_path_factory):
    """A 20 s p2p run during which Telegraf is stopped for about 5 s."""
    raw = tmp_path_factory.mktemp("raw")
    run_id = f"report-gap-{int(time.time())}"
    done = {}

    def k6():
        done["p"], _ = run_scenario_to_influx(stack, k6_bin, "p2p", run_id, raw, DURATION="20s")

    t = threading.Thread(target=k6)
    t.start()
    try:
        # Once the run's first metrics are in, Telegraf collects during the step.
        first = f'from(bucket:"mqtt-bench") |> range(start:-2m) |> filter(fn:(r) => r.run_id == "{run_id}")'
        first += " |> limit(n:1)"
        assert wait_until(lambda: stack.flux(first), timeout=60), "the run's metrics never reached InfluxDB"
        time.sleep(3)
        r = stack.run("stop", "telegraf", check=False)
        stopped = now_ms()
        assert r.returncode == 0, r.stderr
        time.sleep(5)
    finally:
        restarting = now_ms()
        r = stack.run("start", "telegraf", check=False)
        t.join(timeout=300)
    assert r.returncode == 0, r.stderr
    assert done["p"].returncode == 0, done["p"].stderr[-3000:]
    time.sleep(4)  # Telegraf's last flush
    out = tmp_path_factory.mktemp("reports")
    r = report([run_id, "--results", str(raw), "--out", str(out)], stack_env(stack))
    assert r.returncode == 0, r.stderr
    return {
        "raw": raw,
        "run_id": run_id,
        "stopped": stopped,
        "restarting": restarting,
        "dir": out / run_id,
        "t": json.loads((out / run_id / "results.json").read_text()),
        "md": (out / run_id / "report.md").read_text(),
        "result": json.loads((raw / f"{run_id}.json").read_text()),
    }


def stack_env(stack):
    return dict(os.environ, INFLUX_URL=stack.influx, INFLUX_TOKEN=stack.token)


def test_telegraf_stop_is_named_as_a_monitoring_gap(gap_run):
    mon = gap_run["t"]["monitoring"]
    assert mon["interval_s"] == pytest.approx(1.0, abs=0.2), "the tests' Telegraf collects every second"
    # The gap covers the time Telegraf was down: from its last point before
    # the stop to its first after the start.
    covering = [g for g in mon["gaps"] if g["start_ms"] <= gap_run["stopped"] and g["end_ms"] >= gap_run["restarting"]]
    assert len(covering) == 1, (mon["gaps"], gap_run["stopped"], gap_run["restarting"])
    g = covering[0]
    assert g["duration_s"] >= (gap_run["restarting"] - gap_run["stopped"]) / 1000
    assert g["duration_s"] < 15, "the gap is the outage, not the whole run"
    md = gap_run["md"]
    assert "| Gap start (UTC) | Gap end (UTC) | Length (s) |" in md
    assert f"| {g['duration_s']:,.1f} |" in md
    # Shaded grey in the charts drawn from InfluxDB (and the timeline's).
    for chart in ("cpu.png", "throughput.png"):
        assert shaded_pixels(gap_run["dir"] / chart, "gap") > 2000, chart
        assert shaded_pixels(gap_run["dir"] / chart, "outage") < 50, f"{chart}: no outage to shade"


def test_broker_outages_are_tabled_and_shaded(stack, gap_run, tmp_path):
    """A copy of the real result file with two outages: one over, one still
    going when the run ended."""
    data = json.loads(json.dumps(gap_run["result"]))  # a copy: the fixture is shared
    steps = data["steps"]
    start, end = steps[0]["start"], steps[-1]["end"]
    data["outages"] = [
        {"start_ms": start + 1000, "end_ms": start + 4000, "duration_s": 3.0, "max_down": 7},
        {"start_ms": end - 2500, "end_ms": None, "duration_s": 2.5, "max_down": 40},
    ]
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / f"{gap_run['run_id']}.json").write_text(json.dumps(data))
    r = report([gap_run["run_id"], "--results", str(raw), "--out", str(tmp_path)], stack_env(stack))
    assert r.returncode == 0, r.stderr
    d = tmp_path / gap_run["run_id"]
    md = (d / "report.md").read_text()
    header = "| Outage start (UTC) | Outage end (UTC) | Length (s) | Most connections down at once |"
    assert header + " Most back in one second |" in md
    # The run's timeline holds its connections open throughout: none came back.
    assert "| 3.0 | 7 | n/a |" in md
    assert "| not over when the run ended | 2.5 | 40 | n/a |" in md
    t = json.loads((d / "results.json").read_text())
    assert [o["max_down"] for o in t["outages"]] == [7, 40] and t["outages"][1]["span_end_ms"] == end
    for chart in ("cpu.png", "throughput.png", "latency.png"):
        assert shaded_pixels(d / chart, "outage") > 2000, chart


def test_result_files_without_outages_say_so(gap_run):
    if "outages" in gap_run["result"]:
        assert "No broker outages during the run." in gap_run["md"] or "Outage start" in gap_run["md"]
    else:
        assert "Broker outages: not recorded" in gap_run["md"]


def test_silence_longer_than_two_intervals_is_a_gap():
    s = 1_000_000
    regular = [s + 1000 * i for i in range(1, 20)]
    assert gaps.interval_ms(regular, 5000) == 1000
    assert gaps.monitoring_gaps(regular, s, s + 20_000, 1000) == []
    # Exactly two intervals is not a gap; more is.
    assert gaps.monitoring_gaps([s, s + 2000, s + 4000], s, s + 4000, 1000) == []
    holed = [t for t in regular if not s + 5000 < t < s + 11_000]
    assert gaps.monitoring_gaps(holed, s, s + 20_000, 1000) == [
        {"start_ms": s + 5000, "end_ms": s + 11_000, "duration_s": 6.0}
    ]
    # Silence at either edge of the run counts; no points at all is missing data, not a gap.
    assert gaps.monitoring_gaps([s + 4000, s + 5000], s, s + 6000, 1000) == [
        {"start_ms": s, "end_ms": s + 4000, "duration_s": 4.0}
    ]
    assert gaps.monitoring_gaps([], s, s + 6000, 1000) == []
    assert gaps.interval_ms([s], 5000) == 5000


def test_chart_lines_stop_at_a_gap():
    """No line is drawn across a monitoring gap: nothing was measured there."""
    import math

    pts = [(1000, 1.0), (2000, 2.0), (9000, 3.0), (10_000, 4.0)]
    out = charts._broken(pts, [(2000, 9000)])
    assert [t for t, _ in out] == [1000, 2000, 5500, 9000, 10_000] and math.isnan(out[2][1])
    assert charts._broken(pts, []) == pts


def test_the_peak_accept_rate_is_the_largest_rise_of_open_connections_in_one_second_of_an_outage():
    timeline = [(1000 * i, n) for i, n in enumerate([100, 100, 0, 0, 30, 90, 100, 100])]
    # The outage from 2 s (all down) to 6 s (all back): +30, +60, +10.
    assert gaps.peak_back(timeline, 2000, 6000) == 60
    # A rise after the outage's second-after is not its.
    assert gaps.peak_back(timeline, 2000, 2000) is None
    assert gaps.peak_back([], 0, 1000) is None
