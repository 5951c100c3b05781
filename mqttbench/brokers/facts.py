#!/usr/bin/env python3
"""Broker facts: brokers/<name>/broker.toml is the one source for what each
broker's README table says and for the report's full disclosure. This script
renders the block between the markers in brokers/<name>/README.md from it;
the tests check that the READMEs are up to date and that the facts match the
config files. Run after editing a broker.toml. `get NAME KEY` prints one
fact (KEY dotted: metrics.telegraf), for the shell scripts.
Usage: python3 -m mqttbench.brokers.facts [--check] | get NAME KEY"""

import json
import re
import sys
import tomllib

from mqttbench import ROOT
from mqttbench.generated import between_markers, sync

BROKERS = ROOT / "brokers"
BEGIN = "<!-- broker facts: rendered from broker.toml by mqttbench/brokers/facts.py; edit that file -->"
END = "<!-- end of broker facts -->"


def default_broker():
    """The broker a command runs when none is named: the README's, and the
    profile of .env's COMPOSE_PROFILES."""
    return "mosquitto"


def names():
    return sorted(p.parent.name for p in BROKERS.glob("*/broker.toml"))


def load(name):
    """The facts of brokers/<name>, or None for a broker without them (the
    name comes from result files: only known folders are read)."""
    if name not in names():
        return None
    with (BROKERS / name / "broker.toml").open("rb") as f:
        return tomllib.load(f)


def every(name):
    """Seconds between the broker's publications of its series, as its
    config sets them ([metrics] every), or None when it does not say."""
    where = load(name)["metrics"].get("every")
    if not where:
        return None
    found = re.search(where[1], (BROKERS / name / where[0]).read_text(), re.M)
    if not found:
        raise ValueError(f"brokers/{name}/{where[0]} has no line {where[1]!r} ([metrics] every)")
    return int(found[1])


def cell(text):
    return text.replace("|", "\\|")


def markdown(facts):
    """The facts as Markdown: image, metrics source, changes from defaults."""
    m = facts["metrics"]
    image = f"Image under compose: `{facts['image']}` in `.env`"
    if facts.get("native"):
        image += f"; natively, {facts['native']['about']}"
    series = ", ".join(f"`{s}`" for s in m["series"].values())
    lines = [
        image + ".",
        "",
        f"Metrics: `{m['input']}` in `{m['telegraf']}` reads `{m['endpoint']}` into the measurement "
        f"`{m['measurement']}` (tag `{m['tag']}`); the dashboards use {series}.",
        "",
        "| setting | default | here | why |",
        "|---|---|---|---|",
    ]
    for c in facts["changes"]:
        lines.append("| " + " | ".join(cell(c[k]) for k in ("setting", "default", "here", "why")) + " |")
    lines += ["", "Auth and security, each tried by the conformance suite (`tests/conformance`):", ""]
    lines += ["| claim | tried | answer |", "|---|---|---|"]
    for c in facts["claims"]:
        tried = c.get("mqtt") or c["http"]
        if c.get("auth"):
            tried += f" as `{c['auth'][0]}` / `{c['auth'][1]}`"
        elif c.get("body"):
            tried += f" `{c['body']}`"
        else:
            tried += " with no credentials"
        lines.append(f"| {cell(c['claim'])} | {cell(tried)} | {c['expect']} |")
    explained = facts["startup"]["explained"]
    head = f"Start-up lines at error level (`{facts['startup']['error']}`) this config prints:"
    lines += ["", head + ("" if explained else " none.")]
    lines += [f"- `{e['line']}`: {e['why']}" for e in explained]
    known = facts.get("deviations", [])
    lines += ["", "Known deviations from the MQTT specification, seen running it" + (":" if known else ": none.")]
    lines += [f"- **{d['name']}** ({d['spec']}): {d['what']}. Seen: {d['evidence']}." for d in known]
    return "\n".join(lines)


def deviations_env(name):
    """BROKER_DEVIATIONS: the verdicts brokers/<name>/broker.toml lists as its
    known deviations ([[deviations]] verdict, comma-separated; empty for a
    broker with none, or a name that is no broker's folder). The run marks
    a violation among them known (the result's verdict section, `known`)."""
    facts = load(name) or {}
    return {"BROKER_DEVIATIONS": ",".join(d["verdict"] for d in facts.get("deviations", []))}


def known_deviation(name, result):
    """The deviation brokers/<name>/broker.toml lists ([[deviations]]) that
    the run marked known (its verdict section's `known`: the run was told
    the broker's deviations, BROKER_DEVIATIONS), or None: the verdict stays
    the run's, this only finds the listing that names it."""
    facts = load(name) or {}
    for d in facts.get("deviations", []):
        if (result.get(d["verdict"]) or {}).get("known"):
            return d
    return None


def render_readme(text, facts):
    """The README text with the block between the markers rendered afresh."""
    return between_markers(text, BEGIN, END, markdown(facts))


def get(name, key):
    """One fact, as the shell reads it: a string as it is, anything else as JSON."""
    value = load(name)
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            sys.exit(f"brokers/{name}/broker.toml: no {key}")
        value = value[part]
    print(value if isinstance(value, str) else json.dumps(value))


def values(key, brokers=None):
    """Every broker's value at the dotted key (or those of brokers), a
    list's one per line (none where it has none): what every broker says, as
    the shell reads it (the native brokers' Debian packages; the version
    topics, since a broker at a URL may be any of them)."""
    for name in brokers or names():
        value = load(name)
        for part in key.split("."):
            value = value.get(part, {}) if isinstance(value, dict) else {}
        if isinstance(value, str):
            value = [value]
        for v in value if isinstance(value, list) else []:
            print(v)


def capabilities(name, native=False):
    """(table, {"mqtt": [...], "qos": [...]}) of what the broker can do:
    natively its [native.capabilities] where it has one (an older Debian
    build than the image), else its [capabilities]; {} names none (all)."""
    facts = load(name) or {}
    own = (facts.get("native") or {}).get("capabilities") if native else None
    return ("native.capabilities", own) if own else ("capabilities", facts.get("capabilities") or {})


def capabilities_env(name, native=False):
    """The scenarios' BROKER_MQTT and BROKER_QOS (comma lists, empty: all)
    and BROKER_CAPABILITIES, the table a refusal names (k6/lib/params.js)."""
    table, caps = capabilities(name, native)
    return {
        "BROKER_MQTT": ",".join(map(str, caps.get("mqtt", []))),
        "BROKER_QOS": ",".join(map(str, caps.get("qos", []))),
        "BROKER_CAPABILITIES": table,
    }


def main():
    if sys.argv[1:2] == ["get"] and len(sys.argv) == 4:
        return get(sys.argv[2], sys.argv[3])
    if sys.argv[1:2] == ["values"] and len(sys.argv) in (3, 4):
        if sys.argv[3:] and sys.argv[3] not in names():
            sys.exit(f"no brokers/{sys.argv[3]}/broker.toml")
        return values(sys.argv[2], sys.argv[3:])
    if sys.argv[1:2] == ["capabilities"] and len(sys.argv) in (3, 4):
        if sys.argv[2] not in names():
            sys.exit(f"no brokers/{sys.argv[2]}/broker.toml")
        for k, v in capabilities_env(sys.argv[2], sys.argv[3:] == ["native"]).items():
            print(f"{k}={v}")
        return None
    sync(readmes(), "broker READMEs")


def readmes():
    """Every broker's README.md with its facts rendered: {path: text}."""
    files = {}
    for name in names():
        path = BROKERS / name / "README.md"
        try:
            files[path] = render_readme(path.read_text(), load(name))
        except ValueError as e:
            sys.exit(f"{path}: {e}")
    return files


if __name__ == "__main__":
    main()
