"""The transports section of docs/benchmarks.md (python -m mqttbench generator-bench):
the same p2p over TCP, TLS and WebSocket and with a JSON payload template,
the template's rendering cost (Go benchmark) and the WebSocket library's
choice."""

import os
import subprocess
import time
from pathlib import Path

from mqttbench import ROOT

# The JSON device message of the payload-template row (README: PAYLOAD_TEMPLATE).
DEVICE_TEMPLATE = (
    '{"h":"{header}","device":"{client}","seq":{seq},"ts":{ts_ms},'
    '"temp":{rand:18.0-30.0},"state":"{choice:ok|warn|fail}"}'
)


TRANSPORTS_TITLE = "## Transports and payload templates"


def transports(throughput, a, secs):
    """The same p2p over each transport and with the JSON template, one rate
    the broker keeps up with even on a shared machine, back to back."""
    rate = 20000
    return {
        "rate": rate,
        "load_average": round(os.getloadavg()[0], 1),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "rows": [
            throughput(0, rate, secs, 100),
            # The reader TLS and WebSocket connections have: a goroutine each.
            throughput(0, rate, secs, 100, poll="0"),
            throughput(0, rate, secs, 100, url=a.tls_url, transport="TLS"),
            throughput(0, rate, secs, 100, url=a.ws_url, transport="WebSocket"),
            throughput(0, rate, secs, 100, template=DEVICE_TEMPLATE),
        ],
        "render": render_cost(),
    }


def transports_section(t, command):
    """The section of docs/benchmarks.md on transports and payload templates."""
    rows = [
        f"| {r['transport']} | {r['payload']} | {r['reader']} | {r['achieved_rate']:,} | {r['delivered']:,} | "
        f"{r['lost']} | {r['delivered_per_cpu_second'] or 0:,} | {r['latency_p50_ms']} / {r['latency_p99_ms']} |"
        for r in t["rows"]
    ]
    return [
        TRANSPORTS_TITLE,
        "",
        f"p2p QoS 0 at {t['rate']:,} msg/s, 100 publishers and 100 subscribers, over TCP, TLS (the native stack's",
        "generated CA and certificate) and WebSocket, and with the JSON template",
        f"`{DEVICE_TEMPLATE}` at its steady size; measured one after another, {t['date']}, load average",
        f"{t['load_average']} at the start (the machine is shared), with `{command}`. TLS and WebSocket",
        "connections are read by a goroutine each (the poller takes plain TCP): compare them with TCP read so.",
        "A high latency means the broker lagged, and batched reads make the generator look cheaper (above).",
        "",
        "| transport | payload | reader | achieved msg/s | delivered | lost | delivered per CPU-second "
        "| latency p50 / p99 ms |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Rendering a templated message (that JSON, `go test -bench PayloadTemplateRender ./load` in",
        f"k6/extension): **{t['render']['ns_per_message']} ns** and {t['render']['allocs_per_message']} "
        "allocations per message, written into the publisher's reused buffer.",
        "",
        "The WebSocket library (`k6/extension/connection/websocket.go`) was chosen on the publish path: a flush",
        "of 100 QoS 1 PUBLISHes (3,000 bytes) framed, masked and written to a connection that discards,",
        "`go test -bench`, 3 runs each on this machine: github.com/gobwas/ws v1.5.0 142-174 ns and 0",
        "allocations; gorilla/websocket v1.5.3 278-294 ns, 1 allocation; coder/websocket v1.8.15 411-436 ns",
        "(its net.Conn adapter 817-920 ns, 4 allocations): gobwas about 1.8x faster than gorilla, 2.7x than coder.",
        "",
    ]


def splice_transports(page, section):
    """The page with its transports section replaced (or added before Memory)."""
    text = Path(page).read_text()
    block = "\n".join(section)
    if TRANSPORTS_TITLE in text:
        head, rest = text.split(TRANSPORTS_TITLE, 1)
        tail = rest.split("\n## ", 1)
        return head + block + ("\n## " + tail[1] if len(tail) > 1 else "")
    head, rest = text.split("## Memory", 1)
    return head + block + "\n## Memory" + rest


def render_cost():
    """The Go benchmark of rendering one templated message (load/payload_test.go)."""
    out = subprocess.run(
        ["go", "test", "-run", "^$", "-bench", "PayloadTemplateRender$", "-benchtime", "2s", "./load/"],
        cwd=ROOT / "k6/extension",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line = next(x for x in out.splitlines() if x.startswith("BenchmarkPayloadTemplateRender"))
    f = line.split()
    return {"ns_per_message": float(f[2]), "allocs_per_message": int(f[f.index("allocs/op") - 1])}
