"""k6's own progress bar, the first thing a user watches, tracks the run:
elapsed over planned from 0% to 100%, in one process and in each instance
of a segmented test (k6 prints it to stdout once a second when stdout is
not a terminal: `running (0m10.0s), ...` then `p2p [ 16% ] ...`)."""

import os
import re
import subprocess

import pytest

from conftest import ROOT
from loopback_brokers import project_mosquitto
from mqttbench.k6.command import run_argv

P2P = ROOT / "k6/scenarios/p2p.js"


def renders(stdout):
    """(seconds elapsed, percent) of every progress render k6 printed."""
    out, t = [], None
    for line in stdout.splitlines():
        m = re.match(r"running \((\d+)m(\d+\.\d)s\)", line)
        if m:
            t = int(m.group(1)) * 60 + float(m.group(2))
            continue
        m = re.match(r"p2p\s.*\[\s*(\d+)% \]", line)
        if m and t is not None:
            out.append((t, int(m.group(1))))
    return out


def k6(k6_bin, url, tmp_path, *args, script=P2P, **env):
    e = dict(os.environ, K6_NO_USAGE_REPORT="true", MQTT_URL=url, RESULTS_DIR=str(tmp_path), SCALE="0.05", **env)
    return subprocess.Popen(
        run_argv(script, k6=k6_bin, extra=["--no-color", *args]),
        env=e,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def check_tracks_the_plan(stdout, planned_s):
    seen = renders(stdout)
    assert len(seen) >= planned_s // 2, stdout[-2000:]
    assert seen[0][1] <= 100 * (seen[0][0] + 1) / planned_s, f"the first render is ahead of the plan: {seen[:3]}"
    assert [p for _, p in seen] == sorted(p for _, p in seen), f"progress went back: {seen}"
    for t, p in seen:
        if t < planned_s - 1:
            assert p < 100, f"100% at {t} s of {planned_s} s: {seen}"
    assert re.search(r"p2p\s+✓ \[ 100% \]", stdout), "the bar ends at 100%: " + stdout[-1500:]
    return seen


@pytest.mark.slow
def test_a_60_s_p2p_runs_progress_reads_5_to_30_percent_at_10_s(k6_bin, tmp_path):
    with project_mosquitto(tmp_path) as (port, _):
        p = k6(k6_bin, f"mqtt://127.0.0.1:{port}", tmp_path, DURATION="60s", RUN_ID="progress-60s")
        stdout, stderr = p.communicate(timeout=240)
    assert p.returncode == 0, stderr[-3000:]
    # 10 clients at 50/s (0.2 s) and 60 s of load: 61 s planned.
    assert "32 looping VUs for 1m1s" in stdout, stdout[:3000]
    seen = check_tracks_the_plan(stdout, 61)
    at10 = min(seen, key=lambda s: abs(s[0] - 10))
    assert abs(at10[0] - 10) < 1.5 and 5 <= at10[1] <= 30, f"at 10 s: {at10}; all: {seen}"


def test_each_instance_of_a_segmented_run_tracks_the_plan(k6_bin, tmp_path):
    seq = "0,1/2,1"
    with project_mosquitto(tmp_path) as (port, _):
        procs = [
            k6(
                k6_bin,
                f"mqtt://127.0.0.1:{port}",
                tmp_path,
                "--execution-segment",
                seg,
                "--execution-segment-sequence",
                seq,
                DURATION="8s",
                RUN_ID="progress-segmented",
                # The progress line is under test, not the latency: each
                # instance delivers some 120 messages, so p99 is the second
                # slowest, and one stall of a busy CI host crossed the
                # default 100 ms (a fresh-clone CI run, 2026-11-29: p99 103 ms, exit 99).
                P99_MS="1000",
            )
            for seg in ("0:1/2", "1/2:1")
        ]
        outs = [p.communicate(timeout=240) for p in procs]
    for p, (stdout, stderr) in zip(procs, outs, strict=True):
        assert p.returncode == 0, stderr[-3000:]
        # Each instance has half of the 32 VUs (k6 shows them), one of which runs its share.
        assert "16 looping VUs for 9s" in stdout, stdout[:3000]
        check_tracks_the_plan(stdout, 9)


def test_an_archive_run_with_another_plan_is_refused_before_any_connection(k6_bin, tmp_path, connection_counter):
    """k6 archive fixes the options (the scenario's duration, the bar's
    100%); load-shaping parameters given to k6 run instead would make
    another plan: refused, naming the fix, before any connection."""
    archive = tmp_path / "p2p.tar"
    subprocess.run(
        [k6_bin, "archive", "--quiet", "-O", str(archive), str(P2P)],
        check=True,
        timeout=120,
        env=dict(os.environ, K6_NO_USAGE_REPORT="true"),
    )
    url = f"mqtt://127.0.0.1:{connection_counter.port}"
    p = k6(k6_bin, url, tmp_path, script=archive, DURATION="3s")
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode != 0
    assert "this run plans 4 s, but its options (made by k6 archive" in stderr and "schedule 61 s" in stderr, stderr
    assert "to k6 archive with -e, not to k6 run" in stderr
    assert connection_counter.accepted == []
