"""mqtt-bench's orchestration: the brokers' facts, the stack, k6 runs, the
report, comparisons, capacity searches, the dashboards and the generated
files. `python -m mqttbench --help` lists its commands."""

from pathlib import Path

# The checkout: brokers/, k6/, grafana/ and the docs the package reads and writes.
ROOT = Path(__file__).resolve().parent.parent
