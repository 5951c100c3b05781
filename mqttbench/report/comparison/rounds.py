"""A comparison in rounds (scripts/compare.sh --rounds N, mqttbench/compare/):
each column's rounds made one column (the median of every figure, every
round's value beside it), the verdicts against the baseline column or a
saved baseline (--against), the --fail-on bounds, and --save-baseline.
The statistics are report/comparison/regress.py's.

    python -m mqttbench.report.comparison.rounds check --rounds N --baseline NAME --fail-on B
        --save-baseline FILE --against FILE --scenario S --search false
        --columns a,b [--env NAME=VALUE ...]

checks compare.sh's options before anything starts (exit 2, naming the
option and the fix)."""

import argparse
import sys
from pathlib import Path

from . import regress
from .baseline import HOST_KEYS, Refused, comparable, env_differences, read_baseline
from .tables import fmt


def connect_rate(data):
    """Connections established per second of the connect phase, over every
    client group of a result file; None without one."""
    groups = [g for g in (data.get("connect") or {}).values() if g.get("seconds")]
    if not groups:
        return None
    return sum(g.get("connected") or 0 for g in groups) / max(g["seconds"] for g in groups)


# --- Before anything starts -----------------------------------------------


def check(a):
    try:
        rounds = int(a.rounds)
    except ValueError:
        rounds = 0
    if rounds < 1 or str(rounds) != a.rounds.strip():
        raise Refused(f"--rounds takes a whole number of rounds, at least 1 (e.g. --rounds 5); got '{a.rounds}'")
    columns = [c for c in a.columns.split(",") if c]
    if a.search == "true" and (rounds > 1 or a.baseline or a.fail_on or a.against or a.save_baseline):
        raise Refused(
            "--rounds, --baseline, --fail-on, --save-baseline and --against compare single runs: leave out --search"
        )
    if a.fail_on and not (a.baseline or a.against):
        raise Refused(
            f"--fail-on judges each column against a baseline: add --baseline NAME (one of the columns: "
            f"{', '.join(columns)}) or --against FILE (a saved baseline)"
        )
    if a.baseline and a.against:
        raise Refused("--against FILE is the baseline column: leave out --baseline")
    if a.baseline:
        if a.baseline not in columns:
            raise Refused(f"--baseline: '{a.baseline}' is not a column (columns: {', '.join(columns)})")
        if len(columns) < 2:
            raise Refused(f"--baseline {a.baseline} compares the other columns with it: name at least one more")
    regress.parse_bounds(a.fail_on) if a.fail_on else None
    if a.save_baseline:
        if len(columns) > 1 and not a.baseline:
            raise Refused(
                f"--save-baseline saves one column's rounds: name it with --baseline (columns: {', '.join(columns)})"
            )
        parent = Path(a.save_baseline).parent
        if not parent.is_dir():
            raise Refused(f"--save-baseline: the folder {parent} does not exist: create it or save elsewhere")
    if a.against:
        saved = read_baseline(a.against)
        diff = env_differences(saved, a.scenario, a.env)
        if diff:
            raise Refused(
                f"--against {a.against}: not comparable, "
                + "; ".join(diff)
                + f" (it was saved with --scenario {saved['scenario']} "
                + " ".join(f"-e {kv}" for kv in saved.get("env") or [])
                + "): run with the same, or save a new baseline"
            )


# --- Rounds into columns --------------------------------------------------


def _numeric(v):
    return isinstance(v, int | float) and not isinstance(v, bool)


def merge_rounds(entries):
    """One column from its rounds' entries (report.comparison.write' broker dicts):
    each numeric figure the median of the rounds that ran, round_values every
    round's value, rounds what each round was."""
    first = entries[0]
    ran = [e for e in entries if e["status"] == "ran" and e.get("figures")]
    col = dict(ran[0] if ran else first)
    col["rounds"] = [{k: e.get(k) for k in ("round", "run_id", "status", "short", "reason", "report")} for e in entries]
    col["round_figures"] = [e["figures"] for e in ran]
    if ran:
        keys = [k for k in ran[0]["figures"]]
        figures, values = {}, {}
        for k in keys:
            vs = [e["figures"].get(k) for e in ran]
            nums = [v for v in vs if _numeric(v)]
            if nums and len(nums) == len(vs):
                figures[k] = regress.median(nums)
                values[k] = vs
            else:
                figures[k] = vs[0]
        figures["passed"] = all(e["figures"].get("passed") for e in ran)
        figures["failed_thresholds"] = sorted({t for e in ran for t in e["figures"].get("failed_thresholds") or []})
        col["figures"], col["round_values"] = figures, values
        col["missing"] = sorted({m for e in ran for m in e.get("missing") or []})
    not_ran = [e for e in entries if e["status"] != "ran"]
    if not_ran and ran:
        col["missing"] = [
            *col.get("missing", []),
            *(f"round {e.get('round')}: {e['status']}: {e.get('reason') or e.get('short')}" for e in not_ran),
        ]
    return col


def columns(entries):
    """The manifest's entries (one per round) grouped by column name, in order."""
    by_name = {}
    for e in entries:
        by_name.setdefault(e["name"], []).append(e)
    return [merge_rounds(es) for es in by_name.values()]


def saved_column(saved, path):
    """A saved baseline as a column (--against)."""
    entries = [
        {"name": f"{saved['name']} (saved)", "kind": "saved", "mode": "saved", "status": "ran", "round": r.get("round"),
         "run_id": r["run_id"], "figures": r["figures"], "version": saved["broker"].get("version"),
         "parameters": saved.get("parameters"), "host": saved.get("host"), "versions": saved.get("generator"),
         "saved_from": str(path), "saved_at": saved.get("written_at")}
        for r in saved["rounds"]
    ]  # fmt: skip
    return merge_rounds(entries)


# --- Verdicts ---------------------------------------------------------------


def metric_rounds(col):
    """{metric: [value per round]} of a column."""
    per = [regress.values(f) for f in col.get("round_figures") or []]
    return {m: [v[m] for v in per] for m in regress.METRICS}


def rounds_cell(values, d):
    if not values:
        return "n/a"
    nums = [v for v in values if v is not None]
    med = fmt(regress.median(nums), d) if nums else "n/a"
    return med if len(values) == 1 else f"{med} ({', '.join(fmt(v, d) for v in values)})"


def comparability(base, cols):
    """Warnings when host or generator differ from the baseline's (the first ran round's of each)."""
    out = []
    bh = {k: (base.get("host") or {}).get(k) for k in HOST_KEYS}
    bg = {k: (base.get("versions") or {}).get(k) for k in ("k6", "extension")}
    for c in cols:
        h = {k: (c.get("host") or {}).get(k) for k in HOST_KEYS}
        g = {k: (c.get("versions") or {}).get(k) for k in ("k6", "extension")}
        hd = [f"{k} {bh[k]} -> {h[k]}" for k in HOST_KEYS if bh[k] != h[k]]
        gd = [f"{k} {bg[k]} -> {g[k]}" for k in bg if bg[k] != g[k]]
        if hd:
            out.append(f"{c['name']} ran on another host than {base['name']} ({'; '.join(hd)})")
        if gd:
            out.append(f"{c['name']} ran another generator version than {base['name']} ({'; '.join(gd)})")
    return out


def parameter_differences(base, cols):
    a = comparable(base.get("parameters"))
    out = []
    for c in cols:
        b = comparable(c.get("parameters"))
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                out.append(f"{c['name']}: the parameter {k} differs: {base['name']} {a.get(k)}, {c['name']} {b.get(k)}")
    return out


def judge(cols, manifest, header):
    """The rounds' tables and the verdicts against the baseline: (tables,
    breaches, refusals, warnings). header: tables.header."""
    opts = manifest.get("rounds") or {}
    tables = []
    ran = [c for c in cols if c["status"] == "ran"]
    n = opts.get("n") or 1
    if n > 1 or opts.get("baseline") or opts.get("against"):
        per = {c["name"]: metric_rounds(c) for c in ran}
        tables.append(
            {
                "title": "Rounds",
                "note": f"Each column ran {n} round{'s' if n > 1 else ''}, alternating (A B A B ...): the median, "
                "then every round's value in the order they ran. Broker CPU per message: the broker process's "
                "CPU-µs per delivered message; loss: lost of published, %.",
                "header": [header(c, cols) for c in cols],
                "rows": [
                    [m.label, *[rounds_cell(per[c["name"]][m.name], m.decimals) if c["name"] in per else c["status"]
                                for c in cols]]
                    for m in regress.METRICS.values()
                ],
            }
        )  # fmt: skip
    base_name = opts.get("baseline") or opts.get("saved_name")
    base = next((c for c in ran if c["name"] == base_name), None)
    if base is None:
        if base_name:
            tables.append(
                {"title": f"Against {base_name}", "note": f"No verdict: the baseline {base_name} did not run.",
                 "header": [], "rows": []}
            )  # fmt: skip
        return tables, [], [], []
    others = [c for c in ran if c is not base]
    refusals = parameter_differences(base, others)
    warnings = comparability(base, others)
    if refusals:
        tables.append(
            {"title": f"Against {base_name}", "note": "No verdict, not comparable: " + "; ".join(refusals) + ".",
             "header": [], "rows": []}
        )  # fmt: skip
        return tables, [], refusals, warnings
    bounds = regress.parse_bounds(opts.get("fail_on")) if opts.get("fail_on") else {}
    base_values = metric_rounds(base)
    rows, breaches = [], []
    for m in regress.METRICS.values():
        row = [m.label + (f" (bound {regress.pct(bounds[m.name], m.kind)})" if m.name in bounds else "")]
        for c in others:
            cand = metric_rounds(c)
            v = regress.verdict(m, base_values[m.name], cand[m.name], least_diff=regress.least(m, base_values, cand))
            row.append(v.text() if v else "n/a (no figure)")
            b = breach(v, bounds.get(m.name))
            if b:
                breaches.append(f"{c['name']}: {b}")
        rows.append(row)
    note = (
        f"Each column's change against {base_name}: the change of the medians, its {regress.LEVEL_PCT}% bootstrap "
        f"interval (rounds resampled {regress.RESAMPLES} times, seeded) and the verdict: regressed or improved only "
        "when the whole interval lies beyond the metric's noise floor (docs/comparison.md)."
    )
    if warnings:
        note += " **Warning:** " + "; ".join(warnings) + "."
    if breaches:
        note += " **Beyond --fail-on:** " + "; ".join(breaches) + "."
    tables.append({"title": f"Against {base_name}", "note": note, "header": [header(c, cols) for c in others],
                   "rows": rows})  # fmt: skip
    return tables, breaches, refusals, warnings


def breach(v, bound):
    return None if bound is None else regress.breach(v, bound)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m mqttbench.report.comparison.rounds", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    for opt in ("--rounds", "--baseline", "--fail-on", "--save-baseline", "--against", "--scenario", "--columns"):
        c.add_argument(opt, default="")
    c.add_argument("--search", default="false")
    c.add_argument("--env", action="append", default=[])
    a = ap.parse_args(argv)
    try:
        check(a)
    except (Refused, regress.BadBound) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
