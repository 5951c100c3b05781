"""The report's diagnosis: the result file's, with the broker's CPU weighed
when InfluxDB has it."""

from pathlib import Path

from mqttbench.report import diagnosis
from mqttbench.report.results import Run


def run_with(cause, text):
    return Run(Path("r.json"), {"diagnosis": {"cause": cause, "text": text, "evidence": {"lost": 0}}})


def test_a_slow_broker_at_a_full_core_is_named_cpu_bound():
    d = diagnosis.build(run_with("broker_latency", "Latency p99 300 ms."), [(0, 60.0), (1000, 99.5)])
    assert d["cause"] == "broker_cpu"
    assert d["text"].startswith("The broker was CPU-bound: its process peaked at 100% of a core (avg 80%).")
    assert d["evidence"]["broker_cpu_max_pct"] == 99.5


def test_an_outage_stays_an_outage_whatever_the_broker_cpu():
    d = diagnosis.build(run_with("broker_outage", "The broker dropped connections."), [(0, 100.0)])
    assert d["cause"] == "broker_outage" and d["text"].endswith("Broker process CPU: max 100%, avg 100% of a core.")


def test_broker_cpu_missing_from_influxdb_is_named():
    d = diagnosis.build(run_with("none", "Every threshold passed."), [])
    assert d["cause"] == "none" and d["text"].endswith("Broker process CPU: not in InfluxDB.")


def test_a_result_file_without_a_diagnosis_says_so():
    d = diagnosis.build(Run(Path("r.json"), {}), [])
    assert d["cause"] is None and "predates the diagnosis" in d["text"]
