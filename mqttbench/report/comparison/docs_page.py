"""A comparison's section of a docs page (scripts/compare.sh --docs FILE):
the figures in the repository, written by the command that measured them.

    python -m mqttbench.report.comparison.docs_page check FILE
    python -m mqttbench.report.comparison.docs_page write COMPARE_DIR --docs FILE

A section is one comparison: its scenario and QoS name it, between two
marker lines. write replaces the section of the same scenario and QoS (or
appends it; a new FILE gets a title first) and keeps everything else of the
page, written by hand or by other comparisons. It reads what compare.sh and
report.comparison.write left in COMPARE_DIR (manifest.json, results.json) and each
run's result file: the date, the machine, the load average at the start and
the end of the runs, the exact command, and compare.md's tables and
disclosures, rendered by the same code (tables.py, ..disclosure) without
this machine's paths. check refuses, before anything starts, a FILE that
could not be written or whose markers are broken (exit 2)."""

import argparse
import json
import re
import sys
from pathlib import Path

from mqttbench import ROOT
from mqttbench.generated import between_markers

from ..disclosure import disclosure
from .tables import RUN_TABLES, build_tables, markdown_table, recorded, thresholds_table

BEGIN, END = "<!-- compare.sh --docs: {} -->", "<!-- end of compare.sh --docs: {} -->"
MARKER = re.compile(r"^<!-- (end of )?compare\.sh --docs: (.+) -->$", re.M)


def problem(path):
    """Why FILE cannot take a section (None when it can)."""
    p = Path(path)
    if p.suffix != ".md":
        return f"'{path}' is not a Markdown page: name a .md file, e.g. --docs docs/brokers-compared.md"
    if not p.parent.is_dir():
        return f"the directory of '{path}' does not exist: create it, or name a page in an existing one (e.g. docs/)"
    if p.is_dir() or (p.exists() and not p.is_file()):
        return f"'{path}' is not a file: name a Markdown page, e.g. --docs docs/brokers-compared.md"
    if not p.exists():
        return None
    try:
        text = p.read_text()
        with p.open("a"):
            pass
    except (OSError, UnicodeDecodeError) as e:
        return f"'{path}' cannot be read and written ({e.__class__.__name__}: {e})"
    opened = []
    for m in MARKER.finditer(text):
        if not m.group(1):
            opened.append(m.group(2))
        elif not opened or opened.pop() != m.group(2):
            return f"'{path}': the marker '{m.group(0)}' ends no section: mend the page's markers by hand"
    if opened:
        return f"'{path}': the section '{opened[-1]}' has no end marker: mend the page's markers by hand"
    return None


def place(text, key, block):
    """text with the section named key replaced by block (or block appended)."""
    begin, end = BEGIN.format(key), END.format(key)
    if begin + "\n" in text:
        return between_markers(text, begin, end, block)
    return text.rstrip("\n") + f"\n\n{begin}\n{block}\n{end}\n"


def machine(host):
    """The generator's host as its result file records it (the broker's too: one machine)."""
    kb = re.match(r"(\d+)", str(host.get("mem_total") or ""))
    mem = f", {int(kb.group(1)) / 1048576:.0f} GiB" if kb else ""
    return f"{host.get('cpus')} cores ({host.get('cpu_model')}){mem}, {host.get('os')}, Linux {host.get('kernel')}"


def load_runs(results):
    """Each column that ran: its result file (host, versions, parameters), by name."""
    runs = {}
    for b in results["brokers"]:
        if b["status"] == "ran" and b.get("result"):
            p = Path(b["result"])
            try:
                runs[b["name"]] = json.loads((p if p.is_absolute() else ROOT / p).read_text())
            except (OSError, ValueError):
                pass
    return runs


def section(manifest, results, runs, key):
    """The section's Markdown (between its markers)."""
    brokers = results["brokers"]
    first = next(iter(runs.values()), {})
    load = manifest.get("load_average") or {}
    env = " ".join(f"`{e}`" for e in manifest.get("env") or []) or "the scenario's defaults"
    shared = recorded(first.get("parameters"))
    lines = [
        f"## {key}",
        "",
        f"- date: {manifest.get('started_at') or '?'} to {manifest.get('written_at') or '?'} (UTC)",
        f"- machine: {machine(first['host']) if first.get('host') else 'not recorded (no broker ran)'}",
        f"- load average (1, 5, 15 min) at the start: {load.get('start', '?')}; at the end: {load.get('end', '?')}",
        f"- command: `{manifest.get('command')}`",
        f"- parameters, the same for every broker: {env}"
        + (f"; as {next(iter(runs))}'s run recorded them: {shared}" if shared else ""),
        f"- k6: {(first.get('versions') or {}).get('k6') or 'not recorded'}; comparison `{manifest['compare_id']}`",
        "",
    ]
    not_run = [b for b in brokers if b["status"] != "ran"]
    for b in not_run:
        lines += [f"> **{b['name']}** did not run: {b.get('reason') or b.get('short')}.", ">"]
    if not_run:
        lines[-1] = ""
    for t in [*build_tables(brokers, RUN_TABLES), thresholds_table(brokers)]:
        lines += [f"### {t['title']}", ""]
        if t["note"]:
            lines += [t["note"], ""]
        lines += [markdown_table(t), ""]
    lines += ["### The brokers", ""]
    for b in brokers:
        lines += [f"#### {b['name']}", "", disclosure(b, manifest, results.get("tls_mismatch"), local=False), ""]
    return "\n".join(lines).rstrip("\n")


def title(path):
    return [
        "# Brokers compared",
        "",
        f"Written by `scripts/compare.sh ... --docs {path}`: each",
        "section is one comparison, replaced when its scenario and QoS are compared",
        "again; the rest of the page is kept. Each gives the load average of the",
        "machine the generator ran on (natively, the brokers' too).",
    ]


def key_of(manifest, runs):
    """The section's name: the scenario and its QoS (-e QOS, else as the runs recorded it)."""
    qos = next((e.split("=", 1)[1] for e in manifest.get("env") or [] if e.startswith("QOS=")), None)
    if qos is None:
        qos = next((str(r["parameters"]["qos"]) for r in runs.values() if "qos" in r.get("parameters", {})), None)
    return f"{manifest['scenario']}, QoS {qos}" if qos is not None else f"{manifest['scenario']}, its default QoS"


def write(compare_dir, path):
    d = Path(compare_dir)
    manifest = json.loads((d / "manifest.json").read_text())
    results = json.loads((d / "results.json").read_text())
    runs = load_runs(results)
    key = key_of(manifest, runs)
    p = Path(path).resolve()
    shown = p.relative_to(ROOT) if p.is_relative_to(ROOT) else p.name
    text = p.read_text() if p.exists() else "\n".join(title(shown)) + "\n"
    p.write_text(place(text, key, section(manifest, results, runs, key)))
    print(f"docs: {p} (section '{key}')")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m mqttbench.report.comparison.docs_page", description=__doc__)
    ap.add_argument("action", choices=["check", "write"])
    ap.add_argument("target", help="check: the page; write: the comparison's directory")
    ap.add_argument("--docs", help="write: the page")
    args = ap.parse_args(argv)
    page = args.target if args.action == "check" else args.docs
    why = problem(page)
    if why:
        print(f"error: --docs: {why}", file=sys.stderr)
        return 2
    if args.action == "write":
        write(args.target, page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
