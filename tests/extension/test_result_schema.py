"""The result file has one type (k6/extension/result.Result) and a JSON
Schema generated from it and committed: a single run's file, its instances'
files and their merge all validate against it, and a merged run's report
shows its connection rate."""

import json
import subprocess
import sys
import time

import jsonschema

from conftest import ROOT, loopback_port
from k6_runs import SCENARIOS, launch, merge, run_k6
from loopback_brokers import mosquitto

SCHEMA = json.loads((ROOT / "k6/extension/result/result.schema.json").read_text())
LOAD = {"QOS": "1", "PUBLISHERS": "4", "SUBSCRIBERS": "4", "RATE": "200", "DURATION": "2s", "MAX_INSTANCES": "2"}


def test_the_committed_schema_is_generated_from_the_current_type():
    r = subprocess.run(
        [sys.executable, "-m", "mqttbench.generated.result_schema", "--check"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr


def test_single_instance_and_merged_results_validate_and_the_merge_reports_its_connection_rate(k6_bin, tmp_path):
    port = loopback_port(11967)
    with mosquitto(tmp_path / "m.conf", port, f"listener {port} 127.0.0.1\nallow_anonymous true\n") as url:
        single = f"schema-single-{int(time.time() * 1000)}"
        env = {**LOAD, "MQTT_URL": url, "RESULTS_DIR": str(tmp_path), "RUN_ID": single}
        p, _ = run_k6(k6_bin, SCENARIOS / "p2p.js", env=env, timeout=120)
        assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
        split = f"schema-split-{int(time.time() * 1000)}"
        env = {**LOAD, "MQTT_URL": url, "RUN_ID": split}
        procs = launch(k6_bin, SCENARIOS / "p2p.js", 2, env, tmp_path)
        assert [q.wait(120) for q in procs] == [0, 0]
    m = merge(k6_bin, split, tmp_path)
    assert m.returncode == 0, m.stdout + m.stderr
    files = [tmp_path / f"{single}.json", tmp_path / f"{split}.json", *tmp_path.glob(f"{split}.seg-*-of-2.json")]
    assert len(files) == 4
    for f in files:
        jsonschema.validate(json.loads(f.read_text()), SCHEMA)
    merged = json.loads((tmp_path / f"{split}.json").read_text())
    assert merged["completed"] and merged["connect"]["sub_p2p"]["connected"] == 4, merged["connect"]
    # One delivery shape: the same keys single and merged, each whole.
    one = json.loads(files[0].read_text())["delivery"]["p2p"]
    assert set(one) == set(merged["delivery"]["p2p"]), (one, merged["delivery"])
    for d in (one, merged["delivery"]["p2p"]):
        assert d["clients"] == 4 and d["sent"] == d["unique"] == d["received"] == d["expected"] == 400, d
        assert d["lost"] == 0 and d["granted_qos"] == 1 and d["publishers"] == 4, d
    assert merged["policy"]["rate_reached"] == json.loads(files[0].read_text())["policy"]["rate_reached"]
    rep = subprocess.run(
        [
            sys.executable,
            "-m",
            "mqttbench.report",
            split,
            "--results",
            str(tmp_path),
            "--out",
            str(tmp_path),
            "--no-influx",
        ],
        cwd=ROOT,
        text=True,
        capture_output=True,
    )
    assert rep.returncode == 0, rep.stderr
    conns = json.loads((tmp_path / split / "results.json").read_text())["connections"]
    assert conns["rate"] is not None and conns["rate"] > 0, conns


def test_a_result_that_drifts_from_its_type_is_refused_by_the_reader(tmp_path):
    from mqttbench.report.results import MissingData, Run

    data = {"schema": "mqtt-bench/result/v2", "run_id": "x", "policy": {}, "surprise": 1}
    try:
        Run(tmp_path / "x.json", data)
    except MissingData as e:
        assert "not a valid result file" in str(e)
    else:
        raise AssertionError("a result file outside its schema was read")


def test_a_result_of_another_version_is_named_and_blocks_no_other_run(tmp_path):
    from mqttbench.report.results import SCHEMA, MissingData, find

    old = {"schema": "mqtt-bench/result/v1", "run_id": "old", "policy": {}, "instances": []}
    (tmp_path / "old.json").write_text(json.dumps(old))
    # A file of this version that is not valid is read only when asked for.
    (tmp_path / "bad.json").write_text(json.dumps({"schema": SCHEMA, "run_id": "bad", "policy": {}, "x": 1}))
    # (no policy: a file of before the schema, read as it is)
    good = {"schema": SCHEMA, "run_id": "good", "ended_at": "2026-01-01T00:00:00Z"}
    (tmp_path / "good.json").write_text(json.dumps(good))
    assert find([tmp_path], good["run_id"]).run_id == good["run_id"]
    for run_id, said in (("old", "another version (mqtt-bench/result/v1"), ("bad", "not a valid result file")):
        try:
            find([tmp_path], run_id)
        except MissingData as e:
            assert said in str(e), e
        else:
            raise AssertionError(f"{run_id} was read")
