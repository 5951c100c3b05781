"""A table per part of a scenario of several flows (a composite's background,
point-to-point, fan-out and fan-in parts), mqttbs-style: each part's clients,
actual rates, delivery and its own pub-to-sub latency percentiles, with the
extension's verdict of it (the result's flow_verdicts). Nothing here judges:
a part without a verdict (an instance's share alone) says so."""

PERCENTILES = ("avg", "p50", "p75", "p90", "p95", "p99")


def of(run):
    """The parts of a run, in its flows' order; none for a single flow, whose
    figures are the run's own tables."""
    flows = run.data.get("flows") or []
    if len(flows) < 2:
        return []
    delivery = run.data.get("delivery") or {}
    verdicts = run.data.get("flow_verdicts") or {}
    steps = run.data.get("steps") or []
    secs = sum((s["end"] - s["start"]) / 1000 for s in steps)

    def rate(x):
        return x / secs if secs and x is not None else None

    out = []
    for f in flows:
        d = delivery.get(f["name"]) or {}
        lat = d.get("latency") or {}
        out.append(
            {
                "name": f["name"],
                "background": not f.get("publishers"),
                "publishers": f.get("publishers", 0),
                "subscribers": f.get("subscribers", 0),
                "connected": d.get("connected"),
                "disconnects": d.get("disconnects"),
                "sent": d.get("sent"),
                "expected": d.get("expected"),
                "unique": d.get("unique"),
                "lost": d.get("lost"),
                "duplicates": d.get("duplicates"),
                "pub_rate": rate(d.get("sent")),
                "sub_rate": rate(d.get("unique")),
                "latency": {k: lat.get(k) for k in PERCENTILES} if lat.get("count") else None,
                "verdict": verdicts.get(f["name"]),
            }
        )
    return out
