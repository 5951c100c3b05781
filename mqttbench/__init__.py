"""mqtt-bench's orchestration: the brokers' facts, the stack, k6 runs, the
report, comparisons, capacity searches, the dashboards and the generated
files. `python -m mqttbench --help` lists its commands."""

import os
from pathlib import Path

# The checkout: brokers/, k6/, grafana/ and the docs the package reads and writes.
ROOT = Path(__file__).resolve().parent.parent
# Where runs are written (raw/ the result files, <run_id>/ a run's folder,
# compare-*/, capacity-*/): MQTTBENCH_RESULTS, else the checkout's reports/.
# scripts/lib.sh and k6/lib/params.js read the same variable.
RESULTS = Path(os.environ.get("MQTTBENCH_RESULTS") or ROOT / "reports").resolve()
