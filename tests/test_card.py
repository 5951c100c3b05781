"""The card's commands, as the README's first screen shows them, are the
ones that work: `k6 run fanin.js` from k6/scenarios with our k6 on PATH
(bin/, linked by scripts/setup.sh), its result where scripts/report.sh looks;
the compose commands are run for real by tests/test_compose_e2e.py."""

import json
import os
import re
import subprocess
import time

from conftest import ROOT

CARD = [
    "docker compose --profile mosquitto up -d --wait",
    "docker compose run --rm k6 run fanin.js",
    'export PATH="$PWD/bin:$PATH"',
    "k6 run --out influxdb=http://127.0.0.1:8186/k6 fanin.js",
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


def test_k6_run_fanin_from_the_scenarios_folder(stack):
    # No RESULTS_DIR and no path: the defaults a user gets.
    run_id = f"card-fanin-{time.time_ns()}"
    env = dict(
        os.environ,
        PATH=f"{ROOT / 'bin'}:{os.environ['PATH']}",
        MQTT_URL=stack.mqtt_url,
        K6_NO_USAGE_REPORT="true",
    )
    env.pop("RESULTS_DIR", None)
    result = ROOT / f"reports/raw/{run_id}.json"
    try:
        r = subprocess.run(
            [
                "k6",
                "run",
                "--address",
                "",
                "-e",
                "SCALE=0.01",
                "-e",
                "DURATION=3s",
                "-e",
                f"RUN_ID={run_id}",
                "fanin.js",
            ],
            cwd=ROOT / "k6/scenarios",
            env=env,
            text=True,
            capture_output=True,
            timeout=300,
        )
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
        assert json.loads(result.read_text())["run_id"] == run_id
        assert not (ROOT / "k6/scenarios/reports").exists(), "the result went below the working directory"
    finally:
        result.unlink(missing_ok=True)
