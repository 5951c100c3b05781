#!/usr/bin/env bash
# Runs the mqttbs basic set at full scale (full client counts and rates)
# against the native stack's broker, and records achieved rate, latency and
# success rate of each use case in one results file.
# Usage: scripts/bench-basic-set.sh [DURATION]   (default 30m, the spec's hold time)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

duration="${1:-30m}"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out_dir="$ROOT/reports/basic-set-$stamp"
mkdir -p "$out_dir"
# 10,000 connections need file descriptors in this generator process.
ulimit -n "$(ulimit -Hn)"
(($(ulimit -n) >= 11000)) || die "open-files limit $(ulimit -n) is below the 11000 that conn-tcp-10K-100 needs"

"$ROOT/scripts/setup.sh" k6 python
"$ROOT/scripts/stack.sh" status >/dev/null 2>&1 || "$ROOT/scripts/stack.sh" up
k6="$(k6_bin)"
args=(run --quiet --address "" --out "influxdb=http://127.0.0.1:$TELEGRAF_K6_PORT/k6")
for sc in conn-tcp-10K-100 fanout-1-1K-1-1K p2p-1K-1K-1K-1K sharedsub-1K-5-1K-1K; do
  log "$sc (hold $duration)"
  # A failed threshold (exit 99) is a result too: record it and go on.
  K6_NO_USAGE_REPORT=true RUN_ID="$sc-$stamp" DURATION="$duration" RESULTS_DIR="$out_dir" \
    MQTT_URL="mqtt://127.0.0.1:$MQTT_PORT" "$k6" "${args[@]}" "$ROOT/k6/scenarios/$sc.js" || true
done
# The same success and latency figures as the report (scripts/report/tables.py).
PYTHONPATH="$ROOT/scripts" "$CACHE/venv/current/bin/python" - "$out_dir" <<'PY'
import json, sys
from pathlib import Path
from report import tables
from report.results import SCHEMA, Run
out = Path(sys.argv[1])
rows = []
for f in sorted(out.glob("*.json")):
    data = json.loads(f.read_text())
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        continue
    r = Run(f, data)
    conn, ok, lat = tables.connections(r), tables.success(r), tables.latency(r)
    rows.append({
        "scenario": r["scenario"], "passed": r["passed"], "duration": r["parameters"]["duration"],
        "connections": conn["established"], "connection_success_pct": conn["success_pct"],
        "target_rate": sum(s["target_rate"] for s in r["steps"]) or None,
        "achieved_rate": sum(s["achieved_rate"] for s in r["steps"]) or None,
        "published": ok["published"], "received": ok["received"], "lost": ok["lost"],
        "delivery_success_pct": ok["delivery_success_pct"],
        "latency_avg_ms": lat.get("avg"), "latency_p90_ms": lat.get("p90"), "latency_p99_ms": lat.get("p99"),
    })
(out / "basic-set.json").write_text(json.dumps(rows, indent=1))
for x in rows:
    print(f"{x['scenario']:24} {'PASS' if x['passed'] else 'FAIL'}  conns {x['connections']} ({x['connection_success_pct']}%)"
          f"  rate {x['achieved_rate']}/{x['target_rate']}  delivered {x['delivery_success_pct']}%"
          f"  latency avg {x['latency_avg_ms']} p90 {x['latency_p90_ms']} p99 {x['latency_p99_ms']} ms")
print(f"results: {out}/basic-set.json")
PY
