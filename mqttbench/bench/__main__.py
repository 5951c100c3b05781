"""scripts/bench.sh, the main job: start the stack, wait until healthy, run
a scenario, write the report. Uses compose when a Docker engine with the
images is there, otherwise the native stack (building what is missing), and
says which. --help: the options.

Exit: 0 the run passed; 1 an error, or its thresholds failed (the report
is written); 2 refused before any connection (k6/lib/refusal.js)."""

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime

from mqttbench import RESULTS, ROOT
from mqttbench.bench.launch import launch, live_view
from mqttbench.bench.options import parse
from mqttbench.generated.result_schema import is_result
from mqttbench.outcome import Stop, end, log
from mqttbench.stack import choose_kind, open_stack
from mqttbench.stack.native_services import raise_open_files


def run_id_of(o):
    """-e RUN_ID=... or RUN_ID in the environment, else the scenarios' own
    form (<scenario>-<broker>-<time>-<random>), so that two runs started in
    the same second never share a result file."""
    given = o.given("RUN_ID") or os.environ.get("RUN_ID")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return given or f"{o.scenario}-{o.broker}-{stamp}-{secrets.token_hex(3)}"


def bench(argv):
    o = parse(argv)
    stack = open_stack(o.mode if o.mode != "auto" else choose_kind([o.broker]), o.broker)
    run_id = run_id_of(o)
    (RESULTS / "raw").mkdir(parents=True, exist_ok=True)
    stack.prepare(o.impair)
    stack.ensure()
    env = stack.run_env(o.tls)
    raise_open_files()  # scenarios with thousands of connections
    live_view(o, run_id)
    impairment = None
    try:
        if o.impair:
            impairment = stack.impairment(o.impair)
            env |= {"MQTT_URL": impairment.url, **impairment.env}
        env |= {"K6_NO_USAGE_REPORT": "true", "RUN_ID": run_id, "BROKER": o.broker}
        log(f"running {o.scenario} (run {run_id})")
        rc, broken = launch(stack, o, env, run_id)
        # The instances' results become one, judged again as one run: the merge's
        # verdict (exit 99: a threshold failed, or an instance is missing) is the run's.
        if o.instances > 1:
            cmd, penv = stack.merge_command(run_id)
            rc = subprocess.run(cmd, env=penv, check=False).returncode
            if rc not in (0, 99):
                raise Stop(f"the merge of run {run_id} failed (exit code {rc}): see its message above")
    finally:
        if impairment:
            impairment.close()
    return outcome(stack, run_id, rc, broken)


def outcome(stack, run_id, rc, broken):
    raw = RESULTS / "raw"
    if is_result(raw / f"{run_id}.json"):
        # A run whose thresholds failed (k6 exit 99) is still reported.
        time.sleep(2)  # Telegraf's last flush
        token = stack.influx().token
        env = {**os.environ, **({"INFLUX_TOKEN": token} if token else {})}
        done = subprocess.run([str(ROOT / "scripts/report.sh"), run_id], env=env, check=False)
        if done.returncode:
            raise Stop(None, done.returncode)
    elif (refused := raw / f"{run_id}.refused.json").exists():
        # Bad input, refused before any connection (k6/lib/refusal.js): exit 2.
        raise Stop(json.loads(refused.read_text())["message"], 2)
    else:
        raise Stop(f"the run wrote no result file (k6 exit code {rc}): see the k6 output above")
    # An instance that aborted or crashed may have written a result all the
    # same: the run does not pass, whatever the merge found.
    if broken:
        raise Stop(f"k6 instance {' '.join(broken)} of run {run_id} ended abnormally, not with a threshold verdict: "
                   f"see its output above (or reports/raw/{run_id}.seg-*.log)")  # fmt: skip
    if rc:
        raise Stop(f"the run's thresholds failed (k6 exit code {rc}); the report says which")
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    # Several brokers (--broker a,b,...) are a comparison: the same scenario on
    # each in turn, one report with a column per broker (scripts/compare.sh).
    for a, b in zip(argv, argv[1:], strict=False):
        if a == "--broker" and "," in b:
            os.execv(ROOT / "scripts/compare.sh", [str(ROOT / "scripts/compare.sh"), *argv])
    # However the run ends (k6 killed, Ctrl-C), the impairment goes: a signal unwinds.
    for sig, code in ((signal.SIGTERM, 143), (signal.SIGHUP, 129)):
        signal.signal(sig, lambda *_, c=code: sys.exit(c))
    try:
        return bench(argv)
    except Stop as e:
        return end(e)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
