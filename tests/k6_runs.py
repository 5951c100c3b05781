"""k6 runs as the tests make them: a scenario at a reduced size (REDUCED), a
run split over several processes and merged, a verdict run against a
broker, a k6 throttled to a sliver of a core. A pytest plugin of conftest.py."""

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, TEST_PORTS
from mqttbench.k6.command import run_argv

SCENARIOS = ROOT / "k6/scenarios"

# name -> extra environment for a short, small run on this machine.
REDUCED = {
    "conn-tcp-10K-100": {"SCALE": "0.05", "CONNECT_RATE": "500"},
    "conn-tcp-1M-5K": {"SCALE": "0.0005", "CONNECT_RATE": "500"},
    # Over the stack's TLS listener (scenario_env), with its generated CA.
    "conn-tls-10K-100": {"SCALE": "0.05", "CONNECT_RATE": "500"},
    "conn-tls-1M-5K": {"SCALE": "0.0005", "CONNECT_RATE": "500"},
    "conn": {"SCALE": "0.2", "CONNECT_RATE": "500"},
    "p2p-1K-1K-1K-1K": {"SCALE": "0.05"},
    "p2p-50K-50K-50K-50K": {"SCALE": "0.002", "CONNECT_RATE": "500"},
    "p2p": {"SCALE": "0.2"},
    "fanout-1-1K-1-1K": {"SCALE": "0.1"},
    "fanout-5-1000-5-250K": {"SCALE": "0.05"},
    "fanout": {"SCALE": "0.05"},
    "sharedsub-1K-5-1K-1K": {"SCALE": "0.05"},
    "sharedsub-50K-500-50K-50K": {"SCALE": "0.002", "CONNECT_RATE": "500"},
    "fanin": {"SCALE": "0.05"},
    "symmetric": {"SCALE": "0.05"},
    "qos-1K-1K-128B": {"SCALE": "0.05"},
    "payload-1K-1K-20K": {"SCALE": "0.01", "PAYLOADS": "128,1024,8192"},
    "bridge-500-500": {"SCALE": "0.02"},
    # No proxy to cut here: the load alone (tests/scenarios/test_storm.py cuts).
    "storm-1K-1K-1K-10s": {"SCALE": "0.05", "TOXIPROXY_URL": "none"},
    # Each part's own checks: tests/scenarios/test_composite.py.
    "composite": {"SCALE": "0.1"},
    "composite-10K-1K-1K-1K": {"SCALE": "0.02", "CONNECT_RATE": "500"},
    "composite-1M-50K-1K-50K": {"SCALE": "0.0005", "CONNECT_RATE": "1000"},
}


def scenario_env(stack, tmp_path, name, **extra):
    tls = {}
    if name.startswith("conn-tls-"):
        tls = {"MQTT_URL": f"mqtts://127.0.0.1:{TEST_PORTS['MQTTS_PORT']}", "MQTTBENCH_STATE": str(stack.state)}
    return {
        "MQTT_URL": stack.mqtt_url,
        **tls,
        "DURATION": "3s",
        "P99_MS": BEHAVIOUR_P99_MS,
        "RESULTS_DIR": str(tmp_path),
        "RUN_ID": f"test-{name}-{int(time.time() * 1000)}",
        **REDUCED[name],
        **extra,
    }


def run_scenario(k6_bin, stack, tmp_path, name, **extra):
    env = scenario_env(stack, tmp_path, name, **extra)
    p, _ = run_k6(k6_bin, SCENARIOS / f"{name}.js", env=env, timeout=240)
    files = list(Path(tmp_path).glob(f"{env['RUN_ID']}.json"))
    return p, (json.loads(files[0].read_text()) if files else None)


def launch(k6_bin, script, n, env, results):
    """n k6 processes, instance i with segment i/n of the sequence and its
    own loopback source address, as scripts/bench.sh --instances does;
    P99_MS BEHAVIOUR_P99_MS unless env says otherwise."""
    procs = []
    for i in range(n):
        e = dict(os.environ, K6_NO_USAGE_REPORT="true", RESULTS_DIR=str(results), LOCAL_ADDRESS=f"127.0.0.{i + 2}")
        e |= {"P99_MS": BEHAVIOUR_P99_MS, **env}
        args = run_argv(script, k6=k6_bin, quiet=True, instance=(i, n))
        log = open(results / f"instance-{i + 1}.log", "w")
        procs.append(subprocess.Popen(args, env=e, stdout=log, stderr=subprocess.STDOUT, text=True))
    return procs


def finish(procs, timeout=240):
    return [p.wait(timeout) for p in procs]


def merge(k6_bin, run_id, results):
    return subprocess.run(
        [k6_bin, "x", "mqtt-merge", run_id, "--dir", str(results)],
        text=True,
        capture_output=True,
        timeout=120,
        env=dict(os.environ, K6_NO_USAGE_REPORT="true"),
    )


def logs(results):
    return "\n".join(p.read_text()[-1500:] for p in sorted(results.glob("instance-*.log")))


def run(k6_bin, tmp_path, scenario, url, **env):
    """A scenario run; returns (process, result file or None)."""
    run_id = f"verdict-{scenario}-{int(time.time() * 1000)}"
    full = {"MQTT_URL": url, "DURATION": "3s", "RESULTS_DIR": str(tmp_path), "RUN_ID": run_id, **env}
    p, _ = run_k6(k6_bin, SCENARIOS / f"{scenario}.js", env=full, timeout=180)
    f = Path(tmp_path) / f"{run_id}.json"
    return p, (json.loads(f.read_text()) if f.exists() else None)


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


def run_k6(k6_bin, script, env=None, out=None, summary=None, timeout=300):
    """Runs a k6 script; returns (CompletedProcess, summary dict or None)."""
    args = run_argv(script, k6=k6_bin, quiet=True, out=[out] if out else [], summary_export=summary)
    e = dict(os.environ, K6_NO_USAGE_REPORT="true", **(env or {}))
    p = subprocess.run(args, env=e, text=True, capture_output=True, timeout=timeout)
    data = json.loads(Path(summary).read_text()) if summary and Path(summary).exists() else None
    return p, data


# Tests that assert behaviour (counts, reports, exit causes), not latency,
# which a busy 2-core machine pushes past the scenarios' default 100 ms:
# latency figures belong to the benchmarks (docs/benchmarks.md).
BEHAVIOUR_P99_MS = "60000"


def run_scenario_to_influx(stack, k6_bin, scenario, run_id, results_dir, **env):
    """A scenario against the native stack, its metrics sent to InfluxDB
    through Telegraf, its result file written to results_dir; p2p at SCALE
    0.2 and P99_MS BEHAVIOUR_P99_MS unless env says otherwise. Returns
    run_k6's (process, None)."""
    return run_k6(
        k6_bin,
        ROOT / f"k6/scenarios/{scenario}.js",
        out=stack.k6_out,
        env={
            "MQTT_URL": stack.mqtt_url,
            "RUN_ID": run_id,
            "SCALE": "0.2",
            "P99_MS": BEHAVIOUR_P99_MS,
            "RESULTS_DIR": str(results_dir),
            **env,
        },
    )


def run_p2p(k6_bin, results_dir, url, **env):
    """p2p.js against url at SCALE 0.1 for 3 s (300 messages), P99_MS
    BEHAVIOUR_P99_MS unless env says otherwise; returns (process, the run's
    result document, or None when it wrote none)."""
    run_id = f"p2p-{int(time.time() * 1000)}"
    p, _ = run_k6(
        k6_bin,
        ROOT / "k6/scenarios/p2p.js",
        env={
            "MQTT_URL": url,
            "SCALE": "0.1",
            "DURATION": "3s",
            "P99_MS": BEHAVIOUR_P99_MS,
            "RESULTS_DIR": str(results_dir),
            "RUN_ID": run_id,
            **env,
        },
        timeout=180,
    )
    f = Path(results_dir) / f"{run_id}.json"
    return p, (json.loads(f.read_text()) if f.exists() else None)
