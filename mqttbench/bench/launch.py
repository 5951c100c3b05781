"""A run's k6 processes: one per instance, each started by the stack's
k6_command (mqttbench/k6/command.py builds every k6 command line), and the
live view of the first."""

import os
import re
import subprocess

from mqttbench import RESULTS, ROOT
from mqttbench.outcome import log, warn
from mqttbench.stack.ports import holder


def dashboard_period(duration):
    """A tenth of a k6 duration (10s, 2m, 1h30m), in whole seconds from 1 to
    10 (k6's own period for runs of 100 s and more)."""
    secs = sum(int(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in re.findall(r"(\d+)([hms])", duration))
    return min(10, max(1, secs // 10))


def live_view(o, run_id):
    """k6's own web dashboard (built into k6 v1.8.1: xk6-dashboard v0.8.1)
    on loopback, the live view where there is no Grafana, with the
    extension's metrics on its first tab (k6/scenarios/.dashboard.json),
    and its HTML export beside the report. K6_WEB_DASHBOARD=false turns it
    off, K6_WEB_DASHBOARD_PORT moves it (k6's own variables); with
    --instances, the first instance's. Set in this process's environment,
    which every k6 process (and compose's k6 service) inherits."""
    env = os.environ
    if env.get("K6_WEB_DASHBOARD", "true") != "true":
        return
    port = env.get("K6_WEB_DASHBOARD_PORT", "5665")
    (RESULTS / run_id).mkdir(parents=True, exist_ok=True)
    # The dashboard exports nothing before its first aggregation period (k6's
    # 10 s): a run given a short DURATION gets a tenth of it, at least 1 s.
    if (duration := o.given("DURATION")) is not None and not env.get("K6_WEB_DASHBOARD_PERIOD"):
        env["K6_WEB_DASHBOARD_PERIOD"] = f"{dashboard_period(duration)}s"
    env |= {
        "K6_WEB_DASHBOARD": "true",
        "K6_WEB_DASHBOARD_HOST": "127.0.0.1",
        "K6_WEB_DASHBOARD_PORT": port,
        "K6_WEB_DASHBOARD_EXPORT": str(RESULTS / run_id / "k6-dashboard.html"),
        "XK6_DASHBOARD_CONFIG": str(ROOT / "k6/scenarios/.dashboard.json"),
    }
    if found := holder(int(port)):
        # Still saved: k6 serves nothing (-1) but writes the export.
        env["K6_WEB_DASHBOARD_PORT"] = "-1"
        warn(f"no live view: port {port} (K6_WEB_DASHBOARD_PORT) is held by {found}; or move it: "
             f"K6_WEB_DASHBOARD_PORT={int(port) + 1} scripts/bench.sh ...")  # fmt: skip
    else:
        log(f"live view: http://127.0.0.1:{port} (k6's web dashboard; saved as reports/{run_id}/k6-dashboard.html; "
            "k6 ends, and the report follows, once no page shows it)")  # fmt: skip


def launch(stack, o, env, run_id):
    """Runs k6 once per instance and waits for all. The first instance talks
    to the terminal; the others write logs beside the results. Natively
    against a loopback broker each has its own loopback source address (one
    address has ~28,000 ephemeral ports). Returns the worst exit code and the
    instances that ended otherwise than passed or failed thresholds (0, 99)."""
    procs = []
    for i in range(o.instances):
        extra = []
        if o.instances > 1 and stack.source_addresses and o.given("LOCAL_ADDRESS") is None:
            if o.mqtt_host.startswith("127."):
                extra = ["-e", f"LOCAL_ADDRESS=127.0.0.{i + 2}"]
        cmd, penv = stack.k6_command(o.scenario, env, instance=(i, o.instances), env=o.env, extra=[*o.k6_args, *extra])
        if i == 0:
            procs.append(subprocess.Popen(cmd, env=penv))
            continue
        # One live view (the first instance's): the others would want its port.
        path = RESULTS / "raw" / f"{run_id}.seg-{i + 1}-of-{o.instances}.log"
        with path.open("w") as out:
            penv = {**penv, "K6_WEB_DASHBOARD": "false"}
            procs.append(subprocess.Popen(cmd, env=penv, stdout=out, stderr=subprocess.STDOUT))
    if o.instances > 1:
        log(f"{o.instances} k6 processes (instances 2..{o.instances} log to reports/raw/{run_id}.seg-*.log)")
    rc, broken = 0, []
    for i, p in enumerate(procs):
        code = p.wait()
        if code:
            log(f"instance {i + 1} of {o.instances}: k6 exit code {code}")
        if code not in (0, 99):
            broken.append(f"{i + 1} (exit code {code})")
        rc = max(rc, code)
    return rc, broken
