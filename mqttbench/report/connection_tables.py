"""The connection figures of a report: how many opened and how fast, the
transport and its TLS version, the TLS handshake apart from CONNECT."""

from .results import latency


def connections(run):
    """mqttbs connection metrics: established, success rate, rate, connect time."""
    c = run["counts"]
    attempts = c["mqtt_connects"] + c["mqtt_connect_failures"]
    opened = [v for v in (run.data.get("connect") or {}).values() if isinstance(v, dict) and v.get("seconds")]
    lat = latency(run, "connect")
    return {
        "established": c["mqtt_connects"],
        "failed": c["mqtt_connect_failures"],
        "reconnects": c["mqtt_reconnects"],
        "success_pct": 100.0 * c["mqtt_connects"] / attempts if attempts else None,
        # The groups open one after another: their times add up.
        "rate": sum(v["connected"] for v in opened) / sum(v["seconds"] for v in opened) if opened else None,
        "connect_avg_ms": lat.get("avg"),
        "connect_p99_ms": lat.get("p99"),
        "connect_max_ms": lat.get("max"),
        **transport(run),
    }


# What each URL scheme carries MQTT over.
TRANSPORTS = {
    "mqtt": "TCP",
    "tcp": "TCP",
    "mqtts": "TLS",
    "ssl": "TLS",
    "tls": "TLS",
    "ws": "WebSocket",
    "wss": "WebSocket over TLS",
}


def transport(run):
    """The run's transport (from its URL), its TLS version and cipher suite
    (from the groups' connect results) and the TLS handshake apart from
    CONNECT -> CONNACK."""
    url = run["parameters"].get("url") or ""
    name = TRANSPORTS.get(url.split("://", 1)[0] if "://" in url else "mqtt", "TCP")
    tls = next(
        (v for v in (run.data.get("connect") or {}).values() if isinstance(v, dict) and v.get("tls_version")), None
    )
    short = name
    if tls:
        short = name.replace("TLS", tls["tls_version"])  # TLS 1.3, WebSocket over TLS 1.3
        name = f"{name} ({tls['tls_version']}, {tls['cipher_suite']})"
    hs, ack = latency(run, "tls_handshake"), latency(run, "connack")
    return {
        "transport": name,
        "transport_short": short,
        "tls_version": tls["tls_version"] if tls else None,
        "tls_avg_ms": hs.get("avg"),
        "tls_p99_ms": hs.get("p99"),
        "connack_avg_ms": ack.get("avg"),
        "connack_p99_ms": ack.get("p99"),
    }
