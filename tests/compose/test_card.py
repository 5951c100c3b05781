"""The card's commands, as the README's first screen shows them, are the
ones that work: `k6 run fanin.js` from k6/scenarios with our k6 on PATH
(bin/, linked by scripts/setup.sh), its result where scripts/report.sh looks;
the compose commands are run for real by tests/compose/test_compose_e2e.py."""

import json
import os
import re
import shutil
import subprocess
import time
import urllib.request

from conftest import ROOT, loopback_port, wait_until

CARD = [
    "docker compose --profile mosquitto up -d --wait",
    "docker compose run --rm k6 run fanin.js",
    'export PATH="$PWD/bin:$PATH"',
    "cd k6/scenarios && K6_WEB_DASHBOARD=true K6_WEB_DASHBOARD_HOST=127.0.0.1 \\\n"
    "  k6 run --out influxdb=http://127.0.0.1:8186/k6 fanin.js",
]


def first_screen():
    text = (ROOT / "README.md").read_text()
    return "\n".join(text.splitlines()[:45])


def test_readme_first_screen_shows_the_card_commands():
    screen = first_screen()
    for command in CARD:
        assert command in screen, command


def test_compose_end_to_end_runs_the_card_commands():
    # What the end-to-end test types is the card, with the broker as a parameter.
    script = (ROOT / "tests/compose/e2e.sh").read_text()
    assert re.search(r'dc --profile "\$broker" up -d --wait', script)
    # Its -e options (the run id, the load's size, the p99 bound) may take lines of their own.
    assert re.search(r"dc run --rm (.*\\\n\s+)+k6 run fanin\.js", script)
    assert re.search(r"^dc\(\) \{ docker compose \"\$@\"; \}$", script, re.M)


def card_dashboard_env():
    """The variables the card's native line sets before `k6 run`."""
    line = re.search(r"^cd k6/scenarios && (.+?) \\\n\s+k6 run ", first_screen(), re.M)
    assert line, "the card's native k6 run line"
    return dict(kv.split("=", 1) for kv in line.group(1).split())


def dashboard_config(url):
    """The config event xk6-dashboard sends a new page first (its /events stream), or None."""
    try:
        with urllib.request.urlopen(url + "events", timeout=5) as r:
            lines = []
            for raw in r:
                line = raw.decode().rstrip("\n")
                if not line and any(x.startswith("event: config") for x in lines):
                    return "\n".join(lines)
                lines = lines if line else []
                if line:
                    lines.append(line)
    except OSError:
        return None
    return None


def test_k6_run_fanin_from_the_scenarios_folder_opens_the_live_view(stack, tmp_path):
    # No RESULTS_DIR, no MQTTBENCH_RESULTS and no path: the defaults a user
    # gets, and the card's own variables (the dashboard's port moved off the
    # user's). In a copy of k6/, so that the project's reports/raw the result
    # goes to is the copy's, not the checkout's.
    tree = tmp_path / "clone"
    for part in ("k6/scenarios", "k6/lib"):
        shutil.copytree(ROOT / part, tree / part)
    (tree / "reports/raw").mkdir(parents=True)
    run_id = f"card-fanin-{time.time_ns()}"
    port = loopback_port(11985)
    env = dict(
        os.environ,
        **card_dashboard_env(),
        PATH=f"{ROOT / 'bin'}:{os.environ['PATH']}",
        MQTT_URL=stack.mqtt_url,
        K6_NO_USAGE_REPORT="true",
        K6_WEB_DASHBOARD_PORT=str(port),
    )
    env.pop("RESULTS_DIR", None)
    env.pop("MQTTBENCH_RESULTS", None)
    result = tree / f"reports/raw/{run_id}.json"
    args = ["k6", "run", "--address", "", "-e", "SCALE=0.01", "-e", "DURATION=10s", "-e", f"RUN_ID={run_id}"]
    k6 = subprocess.Popen(
        [*args, "fanin.js"],
        cwd=tree / "k6/scenarios",
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        # The dashboard answers on 127.0.0.1 with the project's tab (read
        # from k6/scenarios/.dashboard.json, the working directory's).
        config = None

        def served():
            nonlocal config
            config = dashboard_config(f"http://127.0.0.1:{port}/")
            return config or k6.poll() is not None

        assert wait_until(served, timeout=60)
        assert config and "MQTT message rate" in config, (config or "")[:2000]
        out, _ = k6.communicate(timeout=300)
        assert k6.returncode == 0, out[-3000:]
        assert json.loads(result.read_text())["run_id"] == run_id
        assert not (tree / "k6/scenarios/reports").exists(), "the result went below the working directory"
    finally:
        if k6.poll() is None:
            k6.kill()
            k6.wait()
        result.unlink(missing_ok=True)
