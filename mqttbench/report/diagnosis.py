"""The report's diagnosis: the one the result file carries (k6/extension/verdict
weighed the broker's drops, outages, refusals, losses, ordering and slow acks
before the generator's pace and CPU; the result's `policy` names its causes),
with the one thing only the report knows beside it: the broker process's CPU
from InfluxDB. The rule is the verdict package's, named in the result's
policy: a broker that peaked at or above broker_cpu_saturated_pct of a core
turns a cause of broker_cpu_explains into CAUSE_BROKER_CPU; every other
verdict stays what the result says."""

from mqttbench.verdict_policy import CAUSE_BROKER_CPU


def build(run, broker_cpu):
    """broker_cpu: the broker process's (t_ms, % of one core) points during
    the run (Resources.broker_cpu), or [] when InfluxDB has none."""
    d = run.data.get("diagnosis")
    if not d:
        return {
            "cause": None,
            "text": "not recorded: the result file predates the diagnosis (k6/extension/verdict)",
            "evidence": {},
        }
    out = {"cause": d["cause"], "text": d["text"], "evidence": dict(d.get("evidence") or {})}
    values = [v for _, v in broker_cpu]
    if not values:
        out["text"] += " Broker process CPU: not in InfluxDB."
        return out
    peak, avg = max(values), sum(values) / len(values)
    out["evidence"].update(broker_cpu_max_pct=round(peak, 1), broker_cpu_avg_pct=round(avg, 1))
    policy = run.policy
    if d["cause"] in policy["broker_cpu_explains"] and peak >= policy["broker_cpu_saturated_pct"]:
        out["cause"] = CAUSE_BROKER_CPU
        out["text"] = (
            f"The broker was CPU-bound: its process peaked at {peak:.0f}% of a core (avg {avg:.0f}%). " + d["text"]
        )
    else:
        out["text"] += f" Broker process CPU: max {peak:.0f}%, avg {avg:.0f}% of a core."
    return out
