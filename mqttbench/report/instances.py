"""Who generated the load of a merged run: its instances and their hosts."""


def of(run):
    """Who generated the load of a merged run (k6 x mqtt-merge): instances,
    hosts, and the clock-skew risk of latencies measured across hosts."""
    merge = run.data.get("merge")
    if not merge:
        return None
    inst = merge["instances"]
    hosts = {}
    for i in inst:
        hosts[i["hostname"]] = hosts.get(i["hostname"], 0) + 1
    return {
        "count": merge["instances_expected"],
        "segments": [i["segment"] for i in inst],
        "hosts": hosts,
        "start_spread_s": merge["started_at_spread_s"],
        "skew_risk": merge["clock"]["skew_risk"],
        "clock_text": merge["clock"]["text"],
        "missing": merge["missing_instances"],
    }
