"""Network impairment through Toxiproxy (scripts/bench.sh --impair PROFILE).

  impair.py check PROFILE                 resolve and validate; print the profile as JSON
  impair.py apply PROFILE --api URL --listen HOST:PORT --upstream HOST:PORT
                                          create the proxy and its toxics; print the record
  impair.py events PROFILE --api URL      apply the profile's timed events (timeout, reset)
  impair.py remove --api URL              delete the proxy (and so its toxics)

PROFILE is a name in toxiproxy/profiles.toml, or a TOML file of one's own:
path/to/file.toml (one profile) or path/to/file.toml:NAME. Every problem
is refused (exit 2) before any connection, naming --impair and the fix.
The record (the result file's `network`) is the proxy's toxics as
Toxiproxy reports them once set, with the profile's name, source and
timed events, and the pub-to-sub delay the profile adds."""

import argparse
import json
import shutil
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

from mqttbench import ROOT

PROFILES = ROOT / "toxiproxy/profiles.toml"
PROXY = "mqtt"  # the one proxy of a run: generator -> broker
# What compare.sh --impair takes for "no impairment": that column runs without a proxy.
NO_IMPAIRMENT = ("none",)
DIRECTION = {"up": "upstream", "down": "downstream"}
DIRECTION_KEYS = {"latency_ms", "jitter_ms", "bandwidth_kbit"}
# Packet-level impairment Toxiproxy (a TCP proxy) cannot do: tc netem's.
NETEM_KEYS = {"loss_pct", "reorder_pct", "duplicate_pct", "corrupt_pct"}
PROFILE_KEYS = {"about", "source", "up", "down", "slow_close_ms", "events"}
EVENT_KEYS = {"at", "toxic", "for", "timeout_ms"}
EVENT_TOXICS = ("timeout", "reset_peer")


class Bad(Exception):
    """Bad input: the message names --impair and the fix."""


def seconds(text, where):
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    for u in ("ms", "s", "m", "h"):
        if isinstance(text, str) and text.endswith(u):
            try:
                v = float(text[: -len(u)])
            except ValueError:
                break
            if v >= 0:
                return v * units[u]
    raise Bad(f"{where}={json.dumps(text)} is invalid: expected a duration such as 500ms, 30s or 2m")


def whole(v, where, low=0):
    if not isinstance(v, int) or isinstance(v, bool) or v < low:
        raise Bad(f"{where}={json.dumps(v)} is invalid: expected a whole number >= {low}")
    return v


def names(path):
    return ", ".join(tomllib.loads(path.read_text()).keys())


def resolve(spec):
    """The profile a --impair value names: (name, file, table)."""
    if "/" in spec or spec.endswith(".toml") or ".toml:" in spec:
        file, _, name = spec.partition(".toml:") if ".toml:" in spec else (spec, "", "")
        file = Path(file + ".toml" if name else file)
        if not file.is_file():
            raise Bad(f"--impair {spec}: no such file {file} (a custom profile: a TOML file in the form of {PROFILES})")
    else:
        file, name = PROFILES, spec
    try:
        tables = tomllib.loads(file.read_text())
    except tomllib.TOMLDecodeError as e:
        raise Bad(f"--impair {spec}: {file} is not valid TOML: {e}") from None
    if not name:
        if len(tables) != 1:
            raise Bad(
                f"--impair {spec}: {file} has {len(tables)} profiles ({', '.join(tables)}): name one: {file}:NAME"
            )
        name = next(iter(tables))
    if name not in tables or not isinstance(tables[name], dict):
        where = "the named profiles are" if file == PROFILES else f"{file} has"
        own = " (toxiproxy/profiles.toml), or give a file of your own: --impair path/to/file.toml"
        raise Bad(
            f"--impair {spec}: no profile '{name}': {where} {', '.join(tables)}" + (own if file == PROFILES else "")
        )
    return name, file, tables[name]


def toxics_of(name, p):
    """The profile's standing toxics, in Toxiproxy's form."""
    where = f"--impair {name}:"
    unknown = set(p) - PROFILE_KEYS
    if unknown:
        raise Bad(f"{where} unknown key {', '.join(sorted(unknown))} (known: {', '.join(sorted(PROFILE_KEYS))})")
    out = []
    for d, stream in DIRECTION.items():
        t = p.get(d, {})
        if not isinstance(t, dict) or set(t) - DIRECTION_KEYS - NETEM_KEYS:
            raise Bad(f"{where} {d} takes {', '.join(sorted(DIRECTION_KEYS | NETEM_KEYS))}; got {json.dumps(t)}")
        netem = sorted(set(t) & NETEM_KEYS)
        if netem:
            raise Bad(f"{where} {d}.{netem[0]}: {netem_refusal()}")
        lat, jit = whole(t.get("latency_ms", 0), f"{d}.latency_ms"), whole(t.get("jitter_ms", 0), f"{d}.jitter_ms")
        if jit > lat:
            raise Bad(f"{where} {d}.jitter_ms={jit} is more than {d}.latency_ms={lat}: a delay cannot be negative")
        if lat or jit:
            out.append(toxic(f"latency_{d}", "latency", stream, latency=lat, jitter=jit))
        if "bandwidth_kbit" in t:
            kbit = whole(t["bandwidth_kbit"], f"{d}.bandwidth_kbit", 8)
            if kbit % 8:
                raise Bad(f"{where} {d}.bandwidth_kbit={kbit} is not a multiple of 8 (Toxiproxy's rate is whole KB/s)")
            out.append(toxic(f"bandwidth_{d}", "bandwidth", stream, rate=kbit // 8))
    if p.get("slow_close_ms"):
        out.append(toxic("slow_close", "slow_close", "downstream", delay=whole(p["slow_close_ms"], "slow_close_ms")))
    return out


def netem_refusal():
    """Why a netem setting cannot run here: this kernel lacks the qdisc
    (probed in a network namespace of its own, gone with the probe: the
    host's interfaces are never touched), or, where it has it, this version
    does not apply netem yet."""
    probe = "ip link set lo up && tc qdisc add dev lo root netem delay 1ms"
    r = None
    if shutil.which("unshare") and shutil.which("tc"):
        r = subprocess.run(["unshare", "-n", "sh", "-c", probe], capture_output=True, text=True)
    if r is None or r.returncode != 0:
        why = (r.stderr.strip() or f"exit code {r.returncode}") if r else "unshare or tc is missing"
        return (
            "packet loss, reordering, duplication and corruption need the kernel's tc netem qdisc, and it cannot "
            f"run here ({why}); Toxiproxy, a TCP proxy, cannot drop packets: leave them out of the profile, or "
            "run where the kernel has sch_netem"
        )
    return "this kernel has tc netem, but --impair does not apply netem settings yet: leave them out of the profile"


def events_of(name, p):
    """The profile's timed events: at (s after k6 starts), for (s), the toxic."""
    out = []
    for i, e in enumerate(p.get("events", [])):
        where = f"--impair {name}: events[{i}]"
        if not isinstance(e, dict) or set(e) - EVENT_KEYS or "at" not in e or "toxic" not in e:
            raise Bad(f"{where} takes at, toxic, for and timeout_ms (at and toxic required); got {json.dumps(e)}")
        if e["toxic"] not in EVENT_TOXICS:
            raise Bad(f"{where}.toxic={json.dumps(e['toxic'])} is invalid: expected one of {', '.join(EVENT_TOXICS)}")
        at, length = seconds(e["at"], f"{where}.at"), seconds(e.get("for", "0s"), f"{where}.for")
        ms = whole(e.get("timeout_ms", 0), f"{where}.timeout_ms")
        # Both directions: a cut path carries nothing either way.
        tox = [toxic(f"{e['toxic']}_{i}_{d}", e["toxic"], s, timeout=ms) for d, s in DIRECTION.items()]
        out.append({"at_s": at, "for_s": length, "toxics": tox})
    return out


def toxic(name, kind, stream, **attributes):
    return {"name": name, "type": kind, "stream": stream, "toxicity": 1.0, "attributes": attributes}


def profile(spec):
    name, file, p = resolve(spec)
    try:
        toxics, events = toxics_of(spec, p), events_of(spec, p)
    except Bad as e:
        raise Bad(str(e) if str(e).startswith("--impair") else f"--impair {spec}: {e}") from None
    lat = {d: (p.get(d) or {}).get("latency_ms", 0) for d in DIRECTION}
    return {
        "profile": name,
        "file": str(file.relative_to(ROOT)) if file.resolve().is_relative_to(ROOT) else str(file),
        "about": p.get("about"),
        "source": p.get("source"),
        "toxics": toxics,
        "events": events,
        # A message crosses the path up (publisher) and then down (subscriber).
        "added_latency_ms": {"up": lat["up"], "down": lat["down"], "pub_to_sub": lat["up"] + lat["down"]},
    }


def call(api, method, path, body=None):
    req = urllib.request.Request(
        api.rstrip("/") + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            text = r.read().decode()
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"Toxiproxy {method} {path}: {e.code} {e.read().decode().strip()}") from None
    return json.loads(text) if text.strip().startswith(("{", "[")) else text


def apply(spec, api, listen, upstream):
    rec = profile(spec)
    call(api, "POST", "/proxies", {"name": PROXY, "listen": listen, "upstream": upstream, "enabled": True})
    for t in rec["toxics"]:
        call(api, "POST", f"/proxies/{PROXY}/toxics", t)
    # What Toxiproxy holds now, not what was asked: the record is the truth.
    rec["toxics"] = call(api, "GET", f"/proxies/{PROXY}/toxics")
    rec["proxy"] = {
        "tool": "toxiproxy",
        "version": str(call(api, "GET", "/version")).strip(),
        "listen": listen,
        "upstream": upstream,
    }
    return rec


def events(spec, api):
    t0 = time.monotonic()
    for e in sorted(profile(spec)["events"], key=lambda e: e["at_s"]):
        time.sleep(max(0.0, t0 + e["at_s"] - time.monotonic()))
        for t in e["toxics"]:
            call(api, "POST", f"/proxies/{PROXY}/toxics", t)
        kind = e["toxics"][0]["type"]
        print(f"==> impairment event at {e['at_s']:g} s: {kind} for {e['for_s']:g} s", file=sys.stderr)
        time.sleep(e["for_s"])
        for t in e["toxics"]:
            call(api, "DELETE", f"/proxies/{PROXY}/toxics/{t['name']}")


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="mqttbench/stack/impair.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("command", choices=["check", "apply", "events", "remove"])
    ap.add_argument("profile", nargs="?")
    ap.add_argument("--api", help="Toxiproxy's API, e.g. http://127.0.0.1:8474")
    ap.add_argument("--listen")
    ap.add_argument("--upstream")
    a = ap.parse_args(argv)
    try:
        if a.command == "remove":
            try:
                call(a.api, "DELETE", f"/proxies/{PROXY}")
            except RuntimeError as e:
                if "404" not in str(e):
                    raise
            return 0
        if not a.profile:
            raise Bad("--impair needs a profile: a name in toxiproxy/profiles.toml or a file, path/to/file.toml")
        if a.command == "check":
            print(json.dumps(profile(a.profile)))
        elif a.command == "apply":
            print(json.dumps(apply(a.profile, a.api, a.listen, a.upstream)))
        else:
            events(a.profile, a.api)
    except Bad as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (OSError, RuntimeError) as e:
        print(f"error: Toxiproxy at {a.api}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
