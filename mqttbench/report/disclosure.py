"""A comparison column's full disclosure (compare.md): how its broker ran,
its version, configuration, run, thresholds and where its figures came from."""

from mqttbench.brokers import facts as broker_facts

from . import network


def disclosure(b, manifest, mismatch=None, local=True):
    """Markdown lines: how this broker ran, its version and configuration
    (mismatch: the comparison's TLS versions differ, tls_mismatch). Not
    local (a docs page in the repository, read elsewhere): without this
    machine's paths (report, result file, log), its configuration folded."""
    # A run under a network profile (--impair) is named <broker>-<profile>.
    name = b.get("broker") or b["name"]
    # Started and configured by this stack (not a target, a finished run or a saved baseline).
    managed = b["kind"] not in ("target", "run", "saved")
    facts = broker_facts.load(name) if managed else None
    lines = []
    if b["status"] == "ran":
        lines.append("**Status:** ran.")
    else:
        lines.append(f"**Status:** {b['status']}: {b.get('reason') or b.get('short')}.")
    if b["kind"] == "run":
        lines.append(
            f"**Broker:** `{(b.get('parameters') or {}).get('broker') or 'not recorded'}`, as the run's result "
            "records it: a finished run, whose broker this comparison neither started nor configured."
        )
    elif b["kind"] == "saved":
        lines.append(
            f"**Broker:** a saved baseline, `{b.get('saved_from')}` (written {b.get('saved_at')}): its rounds' "
            "figures as they were saved (--against), not run now."
        )
    elif b["kind"] == "target":
        lines.append(
            f"**Broker:** a target at `{b.get('url')}`, not managed: this comparison neither started, stopped "
            "nor configured it; its limits and configuration are its own, not disclosed here."
        )
    elif b["mode"] == "compose":
        lines.append(
            f"**Broker:** managed by this stack under compose: profile `{name}` up for its turn, its services "
            f"(`{name}`, `telegraf-{name}`) stopped after it; InfluxDB and Grafana stay up."
        )
    else:
        lines.append("**Broker:** managed by this stack, natively (`scripts/stack.sh`).")
    if managed and manifest.get("limits"):
        lines.append(f"**Limits:** {manifest['limits']}.")
    lines.append(f"**Version:** {b.get('version') or 'not recorded'}.")
    if b.get("profile"):
        net = network.describe(b.get("network")) if b.get("network") else None
        lines.append(f"**Network:** {net or 'not impaired (profile none): k6 reached the broker directly.'}")
    if not managed:
        pass
    elif not facts:
        lines.append(f"**Configuration:** no facts file (`brokers/{name}/broker.toml`): not disclosed.")
    elif b["status"] != "ran":
        lines.append(f"**Configuration:** `brokers/{name}/broker.toml` (not shown: the broker did not run).")
    elif local:
        lines += [
            f"**Configuration changes from defaults** (`brokers/{name}/broker.toml`):",
            "",
            broker_facts.markdown(facts),
            "",
        ]
    else:
        summary = f"Configuration changes from defaults (<code>brokers/{name}/broker.toml</code>)"
        lines.append(f"<details><summary>{summary}</summary>\n\n{broker_facts.markdown(facts)}\n\n</details>")
    if manifest.get("search"):
        link = f", [its report]({b['report']})." if b.get("report") else "."
        lines.append(f"**Capacity search:** `{b['search_id']}`{link}")
        cap = b.get("capacity") or {}
        if cap:
            lines.append(f"**Search result:** {cap.get('limit_text') or cap.get('limit') or 'no limit recorded'}.")
    else:
        where = f", [its report]({b['report']}), result file `{b['result']}`." if b.get("report") else " (no result)."
        if b.get("run_id"):
            lines.append(f"**Run:** `{b['run_id']}`" + (where if local else "."))
        f = b.get("figures")
        if f:
            verdict = (
                "passed" if f["passed"] else "FAILED (" + ", ".join(f"`{k}`" for k in f["failed_thresholds"]) + ")"
            )
            lines.append(f"**Thresholds:** {verdict}.")
    tls = (b.get("figures") or {}).get("tls_version")
    if mismatch and tls:
        lines.append(f"**TLS:** negotiated {tls}; {mismatch}.")
    if b.get("host_tag"):
        watched = (
            f"its process (pid {b['pid']}) was watched during its run by a Telegraf of its own with the stack's "
            f"procstat input, tagged broker={b['name']}"
            if b.get("pid")
            else "the target's own process is not watched by it (--target NAME=URL,pid=N watches it)"
        )
        lines.append(
            f"**Host metrics:** this host's Telegraf (its points tagged broker={b['host_tag']}, the native stack's), "
            f"the target being on loopback; {watched}."
        )
    for m in b.get("missing") or []:
        lines.append(f"**Missing:** {m}.")
    if b.get("generator_warning"):
        lines.append(f"**Warning:** {b['generator_warning']}.")
    lines.append(f"Log: `{b['log']}`." if b.get("log") and local else "")
    return "\n\n".join(x for x in lines if x)
