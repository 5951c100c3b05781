"""scripts/bench.sh --impair as the tests run it: Toxiproxy on the tests'
own ports, and what a run leaves removed."""

import shutil
import subprocess

from conftest import RESULTS, ROOT, loopback_port

# wan adds 40 ms +/- 5 ms each way (toxiproxy/profiles.toml; Toxiproxy's
# latency toxic draws the jitter evenly on both sides): a median of 80 ms
# plus the broker's share, whose estimate from a few hundred messages may
# fall a fraction of a millisecond short (CI drew 79.871). 1 ms below is
# four standard errors.
WAN_P50_MS = 79

PORTS = {"TOXIPROXY_PORT": str(loopback_port(18474)), "TOXIPROXY_MQTT_PORT": str(loopback_port(12884))}


def bench(stack, *args, **env):
    return subprocess.run(
        [str(ROOT / "scripts/bench.sh"), "--native", *args],
        env={**stack.env, **PORTS, "K6_WEB_DASHBOARD": "false", **env},
        text=True,
        capture_output=True,
        timeout=600,
    )


def cleanup(run_id):
    (RESULTS / f"raw/{run_id}.json").unlink(missing_ok=True)
    shutil.rmtree(RESULTS / f"{run_id}", ignore_errors=True)
