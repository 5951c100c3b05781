"""compare.sh --docs FILE: the comparison's section of a docs page (date,
machine, load average, the command, the brokers' versions and settings, the
tables), replacing the section of the same scenario and QoS and keeping the
rest of the page; a page it cannot write is refused before anything starts."""

import json
import re
import subprocess
import time

import pytest

from compare_runs import REPORTS, cleanup, compare, table
from conftest import RESULTS, ROOT
from k6_runs import run_k6
from mqttbench.brokers import facts as broker_facts
from mqttbench.compare.columns import Columns
from mqttbench.compare.options import Options
from mqttbench.report.comparison import docs_page

INTRO = "# Brokers compared\n\nWritten by hand: kept.\n"


def marked(key, body):
    """A section as compare.sh --docs marks it."""
    return f"<!-- compare.sh --docs: {key} -->\n## {key}\n\n{body}\n<!-- end of compare.sh --docs: {key} -->\n"


OTHER = marked("fanin, QoS 1", "another comparison's")
STALE = marked("p2p, QoS 1", "STALE FIGURES")


def test_docs_writes_its_section_and_keeps_the_rest_of_the_page(stack, tmp_path):
    page = tmp_path / "brokers compared.md"  # a word the command shows quoted
    page.write_text(f"{INTRO}\n{STALE}\nBetween the sections, by hand.\n\n{OTHER}")
    compare_id = f"cmp-docs-{time.time_ns()}"
    args = ["--native", "--broker", "mosquitto", "--id", compare_id, "-e", "QOS=1", "-e", "DURATION=3s"]
    r = compare(*args, "-e", "SCALE=0.05", "-e", "P99_MS=60000", "--docs", str(page), env=stack.env)
    try:
        assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
        text = page.read_text()
        # The rest of the page as it was; the stale section replaced, once.
        assert text.startswith(INTRO) and OTHER in text and "Between the sections, by hand." in text
        assert "STALE FIGURES" not in text and text.count("<!-- compare.sh --docs: p2p, QoS 1 -->") == 1
        mine = text.split("<!-- compare.sh --docs: p2p, QoS 1 -->\n", 1)[1].split("<!-- end of", 1)[0]
        assert mine.startswith("## p2p, QoS 1\n"), mine[:200]
        for words in ("- date: ", "- machine: ", " cores (", "- load average (1, 5, 15 min) at the start: "):
            assert words in mine, words
        quoted = str(page).replace(" ", "\\ ")
        assert f"- command: `scripts/compare.sh {' '.join(args)} " in mine and f"--docs {quoted}`" in mine, mine[:2000]
        assert "- parameters, the same for every broker: `QOS=1`" in mine and "mosquitto's run recorded them: " in mine
        # The brokers' versions and settings, as their broker.toml disclose them.
        assert re.search(r"\n\*\*Version:\*\* [^\n]*\d+\.\d+", mine), mine
        assert "brokers/mosquitto/broker.toml" in mine and "| setting | default | here | why |" in mine
        # compare.md's tables, the broker its column.
        delivery = {row[0]: row[1:] for row in table("\n" + mine.replace("\n### ", "\n## "), "Delivery")[1:]}
        assert delivery["lost"] == ["0"] and delivery["delivery success %"] == ["100.000"], delivery
        assert table("\n" + mine.replace("\n### ", "\n## "), "Latency (ms)")[0] == ["", "mosquitto"]
    finally:
        cleanup(compare_id)


def test_a_new_page_gets_a_title_and_a_marked_column_its_reason(tmp_path):
    """Without a run: a comparison whose only column was refused (what its
    broker lacks) on a page that did not exist."""
    d = tmp_path / "compare-x"
    d.mkdir()
    refused = "rabbitmq lacks MQTT 5 (brokers/rabbitmq/broker.toml [native.capabilities] mqtt: 3.1.1)"
    b = {"name": "rabbitmq", "kind": "broker", "mode": "native", "status": "not run", "reason": refused}
    b["short"] = "refused: it lacks MQTT 5 (brokers/rabbitmq/broker.toml [native.capabilities])"
    manifest = {"compare_id": "x", "scenario": "fanin", "env": ["QOS=1"], "command": "scripts/compare.sh ..."}
    manifest["load_average"] = {"start": "0.50 0.40 0.30", "end": "1.50 0.60 0.35"}
    (d / "manifest.json").write_text(json.dumps(manifest))
    (d / "results.json").write_text(json.dumps({"brokers": [b]}))
    page = tmp_path / "new.md"
    assert docs_page.main(["write", str(d), "--docs", str(page)]) == 0
    text = page.read_text()
    assert text.startswith("# Brokers compared\n") and "## fanin, QoS 1\n" in text
    assert "at the start: 0.50 0.40 0.30; at the end: 1.50 0.60 0.35" in text
    assert f"> **rabbitmq** did not run: {refused}." in text
    assert f"| rabbitmq — not run: {b['short']} |" in text
    # Once more: the same section replaced, not appended.
    assert docs_page.main(["write", str(d), "--docs", str(page)]) == 0
    assert page.read_text() == text


@pytest.mark.parametrize(
    "docs, words",
    [
        (None, ["--docs needs a Markdown page"]),
        ("no-such-dir/page.md", ["--docs", "does not exist"]),
        ("page.txt", ["--docs", "not a Markdown page", ".md"]),
        ("dir.md", ["--docs", "is not a file"]),
        ("broken.md", ["--docs", "has no end marker", "mend"]),
    ],
)
def test_docs_refuses_a_page_it_cannot_write_before_anything_starts(tmp_path, docs, words):
    (tmp_path / "dir.md").mkdir()
    (tmp_path / "broken.md").write_text("# x\n\n<!-- compare.sh --docs: p2p, QoS 1 -->\n## p2p, QoS 1\n")
    # The target would be reached only after the input is checked; nothing listens there.
    args = ["--target", "a=mqtt://127.0.0.1:1", "--id", "cmp-bad-docs", "--docs"]
    r = compare(*args, *([str(tmp_path / docs)] if docs else []))
    try:
        assert r.returncode == 2, (r.stdout + r.stderr)[-2000:]
        for w in words:
            assert w in r.stderr, r.stderr
        assert "unreachable" not in r.stderr and not (REPORTS / "compare-cmp-bad-docs").exists()
        assert (tmp_path / "broken.md").read_text().count("<!--") == 1  # untouched
    finally:
        cleanup("cmp-bad-docs")


def test_docs_is_no_option_of_the_capacity_search(tmp_path):
    r = compare("--search", "--target", "a=mqtt://127.0.0.1:1", "--docs", str(tmp_path / "p.md"))
    assert r.returncode == 2 and "--docs" in r.stderr and "--search" in r.stderr, r.stderr
    assert not (tmp_path / "p.md").exists()


def test_the_help_names_the_option():
    r = subprocess.run([str(ROOT / "scripts/compare.sh"), "--help"], text=True, capture_output=True)
    assert "--docs FILE" in r.stdout and "set -euo" not in r.stdout, r.stdout


def test_a_capability_the_broker_lacks_is_its_column_s_reason(k6_bin, tmp_path):
    """k6/lib/params.js's refusal of fanin on RabbitMQ 3.10 (natively: MQTT
    3.1.1 only), as the real k6 writes it (<run id>.refused.json), becomes the
    column's short reason (mqttbench/compare/managed.py not_native): what the broker lacks
    and where it says so; read as a value, not out of k6's log."""
    run_id = f"cmp-refused-{time.time_ns()}"
    caps = broker_facts.capabilities_env("rabbitmq", native=True)
    env = {"BROKER": "rabbitmq", "RUN_ID": run_id, "RESULTS_DIR": str(RESULTS / "raw"), **caps}
    p, _ = run_k6(k6_bin, ROOT / "k6/scenarios/fanin.js", env=env)
    assert p.returncode != 0 and (RESULTS / f"raw/{run_id}.refused.json").is_file(), (p.stdout + p.stderr)[-3000:]
    columns = Columns(Options(compare_id="x", mode="target"), tmp_path)
    columns.not_native("rabbitmq", "scripts/bench.sh exit code 107: ...", "the run did not complete", run_id)
    entry = columns.entries[-1]
    assert entry["status"] == "not run", entry
    assert entry["short"] == "refused: it lacks MQTT 5 (brokers/rabbitmq/broker.toml [native.capabilities])", entry
    assert entry["reason"].startswith(
        "rabbitmq lacks MQTT 5 (brokers/rabbitmq/broker.toml [native.capabilities] mqtt: 3.1.1)"
    ), entry
    assert entry["reason"].endswith("choose p2p or fanout: refused before any connection"), entry
