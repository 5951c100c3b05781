"""The impaired network path of a run (its result's `network`, written by
scripts/bench.sh --impair through mqttbench/stack/impair.py), in words for the
report: the profile and every toxic Toxiproxy held, with units."""

# Toxiproxy's attributes and their units (toxics/*.go of Toxiproxy 2.5.0).
UNITS = {"latency": "ms", "jitter": "ms", "rate": "KB/s", "delay": "ms", "timeout": "ms"}
DIRECTION = {"upstream": "generator → broker", "downstream": "broker → generator"}


def toxic(t):
    a = t.get("attributes") or {}
    if t.get("type") == "latency":
        what = f"latency {a.get('latency', 0)} ms ± {a.get('jitter', 0)} ms"
    elif t.get("type") == "bandwidth":
        what = f"bandwidth {a.get('rate')} KB/s ({a.get('rate', 0) * 8:,} kbit/s) per connection"
    else:
        what = t.get("type", "?") + "".join(f", {k} {v} {UNITS.get(k, '')}".rstrip() for k, v in a.items())
    share = t.get("toxicity", 1)
    where = DIRECTION.get(t.get("stream"), t.get("stream"))
    return f"{what}, {where}" + ("" if share == 1 else f" ({share:.0%} of connections)")


def describe(net):
    """One paragraph: the profile, where it came from, the proxy and each toxic."""
    if not net:
        return None
    proxy = net.get("proxy") or {}
    parts = [
        f"profile `{net.get('profile')}` (`{net.get('file')}`): {net.get('about') or 'no description'}; "
        f"source: {net.get('source') or 'not given'}.",
        f"Toxiproxy {proxy.get('version', '?')} between the generator and the broker "
        f"({proxy.get('listen', '?')} → {proxy.get('upstream', '?')}); the broker's own metrics were read directly.",
    ]
    toxics = net.get("toxics") or []
    parts.append("Toxics: " + ("; ".join(toxic(t) for t in toxics) if toxics else "none (the proxy hop alone)") + ".")
    for e in net.get("events") or []:
        kinds = {t.get("type") for t in e.get("toxics", [])}
        what = ", ".join(sorted(kinds))
        parts.append(
            f"At {e.get('at_s'):g} s after the proxy was set (just before k6 started): {what} both ways "
            f"for {e.get('for_s'):g} s."
        )
    added = (net.get("added_latency_ms") or {}).get("pub_to_sub")
    if added is not None:
        parts.append(f"Added pub-to-sub delay: {added} ms (up then down).")
    return " ".join(parts)
