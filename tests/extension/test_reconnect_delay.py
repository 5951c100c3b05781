"""How long a broker restart kept each client away: the real k6 build
against a real Mosquitto stopped for 3 s mid-run, each reconnect timed
from its connection's drop to its CONNACK (`latency_ms.reconnect`), in the
result, the summary and the report."""

import json
import os
import time

from broker_restart import k6_through_a_restart
from compare_runs import report
from conftest import ROOT, loopback_port
from mqttbench.report.comparison import tables as compare_tables
from mqttbench.report.results import Run

P2P = ROOT / "k6/scenarios/p2p.js"
STOPPED_S = 3


def test_a_broker_stopped_for_3s_keeps_each_client_away_at_least_3s(k6_bin, tmp_path):
    port = loopback_port(11975)
    conf = tmp_path / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\n")
    run_id = f"reconnect-delay-{time.time_ns()}"
    env = {
        "MQTT_URL": f"mqtt://127.0.0.1:{port}",
        "RESULTS_DIR": str(tmp_path),
        "RUN_ID": run_id,
        "QOS": "1",
        "PUBLISHERS": "5",
        "SUBSCRIBERS": "5",
        "RATE": "100",
        "DURATION": "15s",
    }
    # Killed: every connection drops at once.
    out, _ = k6_through_a_restart(k6_bin, P2P, env, conf, port, after_s=2, down_s=STOPPED_S)
    res = json.loads((tmp_path / f"{run_id}.json").read_text())
    c, rec = res["counts"], res["latency_ms"]["reconnect"]
    # Every connection dropped and came back, each reconnect timed once
    # (first connections never are), none sooner than the broker was back.
    assert c["mqtt_reconnects"] >= 10 and rec["count"] == c["mqtt_reconnects"], (c, rec)
    assert STOPPED_S * 1000 <= rec["p50"] <= rec["p99"] <= rec["max"] < 15_000, rec
    assert res["histograms"]["mqtt_reconnect_duration"], "no histogram for the merge"
    # The summary's line.
    figures = f"p50 {rec['p50']:.1f}  p99 {rec['p99']:.1f}  max {rec['max']:.1f}"
    line = f"  reconnect ms  {figures}  ({rec['count']} reconnects"
    assert line in out, out
    # The report's outage section, from the result file alone.
    dest = tmp_path / "reports"
    r = report([run_id, "--results", str(tmp_path), "--out", str(dest), "--no-influx"], dict(os.environ))
    assert r.returncode == 0, r.stderr
    t = json.loads((dest / run_id / "results.json").read_text())
    assert t["reconnect"]["p50"] == rec["p50"], t["reconnect"]
    md = (dest / run_id / "report.md").read_text()
    row = f"| {rec['count']} | {rec['p50']:,.1f} | {rec['p99']:,.1f} | {rec['max']:,.1f} |"
    assert row in md, md
    # compare.sh's table: this run's figures, n/a for a run without reconnects.
    calm = json.loads(json.dumps(res))
    calm["latency_ms"]["reconnect"] = {k: 0 for k in rec}
    brokers = [
        {
            "name": name,
            "status": "ran",
            "figures": compare_tables.run_figures(Run(tmp_path / "x.json", data), None, 80)[1],
        }
        for name, data in (("restarted", res), ("calm", calm))
    ]
    [table] = [
        x for x in compare_tables.build_tables(brokers, compare_tables.RUN_TABLES) if x["title"].startswith("Reconn")
    ]
    assert table["rows"] == [[k, f"{rec[k]:,.1f}", "n/a"] for k in ("p50", "p99", "max")], table
