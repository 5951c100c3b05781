"""Grafana stand-in for the compose end-to-end test.

At start it checks what compose gives Grafana, as Grafana 12 would read it,
and exits non-zero naming the first fault: the admin password file
(GF_SECURITY_ADMIN_PASSWORD__FILE), every ${VAR} and $__file{path} of the
provisioning files, the datasource's token (an InfluxDB query with it must
succeed) and the dashboards the dashboard provider's path holds. Then it
answers /api/health and /api/search?tag=... (basic auth as admin) on :3000.
Standard library only: the image has no PyYAML.
"""

import base64
import json
import os
import re
import sys
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

PROVISIONING = Path(os.environ.get("GF_PATHS_PROVISIONING", "/etc/grafana/provisioning"))


def fail(msg):
    print(f"grafana stand-in: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def expand(text, where):
    """Grafana's provisioning expansion: $__file{path}, $__env{VAR}, ${VAR}, $VAR."""

    def file_value(m):
        p = Path(m.group(1))
        if not p.is_file() or not p.read_text().strip():
            fail(f"{where}: $__file{{{p}}} is missing or empty")
        return p.read_text().strip()

    def env_value(m):
        name = m.group(1) or m.group(2) or m.group(3)
        if not os.environ.get(name):
            fail(f"{where}: ${name} is not set in Grafana's environment")
        return os.environ[name]

    # Grafana expands the parsed YAML's values, so comments are not read.
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    text = re.sub(r"\$__file\{([^}]+)\}", file_value, text)
    return re.sub(r"\$__env\{(\w+)\}|\$\{(\w+)\}|\$([A-Za-z_]\w*)", env_value, text)


def field(text, key):
    m = re.search(rf"^\s*{key}:\s*(\S+)\s*$", text, re.M)
    return m and m.group(1).strip("'\"")


def network_url(url):
    """Where compose's network address of a service is under the test's host
    networking: STAND_IN_PORTS, "host:port=port,...", maps a service's port
    on compose's network to the port it listens on here (the test moves them
    all off the defaults)."""
    u = urlparse(url)
    for pair in filter(None, os.environ.get("STAND_IN_PORTS", "").split(",")):
        where, port = pair.split("=")
        if u.netloc == where:
            return u._replace(netloc=f"{u.hostname}:{port}").geturl()
    return url


def check_datasource():
    path = PROVISIONING / "datasources/influxdb.yaml"
    text = expand(path.read_text(), path)
    url, org, bucket, token = (field(text, k) for k in ("url", "organization", "defaultBucket", "token"))
    url = network_url(url)
    query = json.dumps({"query": f'buckets() |> filter(fn: (r) => r.name == "{bucket}")'}).encode()
    req = urllib.request.Request(
        f"{url}/api/v2/query?org={org}",
        data=query,
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    for _ in range(30):
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                if bucket in r.read().decode():
                    return
                fail(f"{path}: bucket {bucket} not found in org {org}")
        except urllib.error.HTTPError as e:
            fail(f"{path}: InfluxDB refused the datasource's token: HTTP {e.code}")
        except OSError:
            time.sleep(1)
    fail(f"{path}: InfluxDB at {url} does not answer")


def load_dashboards():
    boards = []
    for path in sorted((PROVISIONING / "dashboards").glob("*.yaml")):
        folder = Path(field(expand(path.read_text(), path), "path"))
        if not folder.is_dir():
            fail(f"{path}: the provider's path {folder} is not mounted")
        boards += [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    if not boards:
        fail("no dashboards are provisioned")
    return boards


def main():
    pw_file = os.environ.get("GF_SECURITY_ADMIN_PASSWORD__FILE")
    if not pw_file or not Path(pw_file).is_file() or not Path(pw_file).read_text().strip():
        fail(f"GF_SECURITY_ADMIN_PASSWORD__FILE ({pw_file}) is missing or empty")
    user = os.environ.get("GF_SECURITY_ADMIN_USER", "admin")
    auth = "Basic " + base64.b64encode(f"{user}:{Path(pw_file).read_text().strip()}".encode()).decode()
    check_datasource()
    boards = load_dashboards()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            u = urlparse(self.path)
            if u.path == "/api/health":
                return self.reply(200, {"database": "ok", "version": "stand-in"})
            if u.path == "/api/search":
                if self.headers.get("Authorization") != auth:
                    return self.reply(401, {"message": "Unauthorized"})
                tag = parse_qs(u.query).get("tag", [None])[0]
                hits = [
                    {"uid": b["uid"], "title": b["title"], "tags": b.get("tags", [])}
                    for b in boards
                    if tag is None or tag in b.get("tags", [])
                ]
                return self.reply(200, hits)
            self.reply(404, {"message": "Not found (stand-in)"})

        def reply(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    addr = (os.environ.get("GF_SERVER_HTTP_ADDR") or "127.0.0.1", int(os.environ.get("GF_SERVER_HTTP_PORT", "3000")))
    print(f"grafana stand-in: {len(boards)} dashboards, datasource token accepted; :{addr[1]}", flush=True)
    ThreadingHTTPServer(addr, Handler).serve_forever()


if __name__ == "__main__":
    main()
