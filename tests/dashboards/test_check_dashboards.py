"""tests/compose/check_dashboards.py, the browser check of GitHub's compose
job, run as a user runs it with a real headless Chromium against a stand-in
for Grafana: Grafana cannot run here, so a small server answers its login,
search and dashboard API and serves a page with the data-testid attributes
Grafana 12 gives a panel, its legend and its error (the selectors are held
against Grafana's source in tests/dashboards/test_grafana_upstream.py). What this
proves is the checker's own part: the DevTools pipe, the login cookie, the
URL, the wait for drawn panels, the screenshots and the verdicts."""

import json
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import ROOT

CHECK = ROOT / "tests/compose/check_dashboards.py"
CHROME = next(
    (shutil.which(c) for c in ("chromium", "chromium-browser", "google-chrome") if shutil.which(c)),
    None,
)
MODEL = {
    "uid": "mqtt-bench-overview",
    "title": "Benchmark overview",
    "panels": [
        {"type": "row", "title": "$broker", "gridPos": {"x": 0, "y": 0, "w": 24, "h": 1}},
        {"type": "timeseries", "title": "TPS in and out (msg/s)", "gridPos": {"x": 0, "y": 1, "w": 12, "h": 8}},
        {"type": "stat", "title": "Lost messages", "gridPos": {"x": 12, "y": 1, "w": 6, "h": 5}},
    ],
}


def page(legend, stat_text, error=False, rows=1):
    """Panels drawn half a second after load, a loading bar gone after two;
    rows > 1: the row drawn that many times (repeated for more brokers)."""
    status = '<button data-testid="data-testid Panel status error"></button>' if error else ""
    panels = (
        f'<div data-testid="data-testid Panel header TPS in and out (msg/s)">{status}<h6>TPS in and out</h6>'
        '<div aria-label="Panel loading bar"></div>'
        f'<ul><li data-testid="data-testid VizLegend series {legend}">{legend}</li></ul></div>'
        f'<div data-testid="data-testid Panel header Lost messages"><h6>Lost messages</h6><p>{stat_text}</p></div>'
    ) * rows
    return (
        "<html><body><div id=root></div><script>"
        f"setTimeout(() => {{ document.getElementById('root').innerHTML = {json.dumps(panels)};"
        " setTimeout(() => document.querySelector('[aria-label=\"Panel loading bar\"]').remove(), 1500); }, 500);"
        "</script></body></html>"
    )


class FakeGrafana:
    def __init__(self, html):
        self.seen = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, body, ctype="application/json", cookie=None):
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                if cookie:
                    self.send_header("Set-Cookie", cookie)
                self.end_headers()
                self.wfile.write(body.encode())

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.seen.append(("login", body))
                self.reply('{"message": "Logged in"}', cookie="grafana_session=s3ss10n; Path=/; HttpOnly")

            def do_GET(self):
                outer.seen.append((self.path, self.headers.get("Cookie"), self.headers.get("Authorization")))
                if self.path.startswith("/api/search"):
                    self.reply(json.dumps([{"uid": MODEL["uid"], "title": MODEL["title"]}]))
                elif self.path.startswith("/api/dashboards/uid/"):
                    self.reply(json.dumps({"dashboard": MODEL}))
                else:
                    self.reply(html, "text/html")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


def run_check(grafana, tmp_path, *extra):
    (tmp_path / "pw").write_text("secret\n")
    return subprocess.run(
        [sys.executable, str(CHECK), "--grafana", grafana.url, "--run-id", "run-1", "--broker", "emqx"]
        + ["--password-file", str(tmp_path / "pw"), "--out", str(tmp_path / "shots"), "--chrome", str(CHROME)]
        + list(extra),
        capture_output=True,
        text=True,
        timeout=120,
    )


needs_chrome = pytest.mark.skipif(CHROME is None, reason="no Chromium or Chrome on this machine")


@needs_chrome
def test_clean_dashboards_pass_with_a_screenshot_each(tmp_path):
    grafana = FakeGrafana(page("published", "0"))
    try:
        p = run_check(grafana, tmp_path)
    finally:
        grafana.close()
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / "shots/mqtt-bench-overview.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = json.loads((tmp_path / "shots/report.json").read_text())
    assert report["mqtt-bench-overview"]["failures"] == []
    # Logged in as admin, the dashboard opened with the run and the broker, kiosk.
    assert ("login", {"user": "admin", "password": "secret"}) in grafana.seen
    page_get = next(s for s in grafana.seen if s[0].startswith("/d/"))
    assert page_get[1] == "grafana_session=s3ss10n"
    assert page_get[0].startswith("/d/mqtt-bench-overview?") and page_get[0].endswith("&kiosk")
    assert "var-run_id=run-1" in page_get[0] and "var-broker=emqx" in page_get[0]


@needs_chrome
@pytest.mark.parametrize(
    "legend,stat,error,rows,why",
    [
        ('_value {_start="2026-11-24 14:55:59", stat="p50"}', "0", False, 1, "shows '_start'"),
        ("published", "_value 0", False, 1, "a stat titled _value"),
        ("published", "0", True, 1, "shows an error"),
        ("published", "0", False, 2, "Lost messages: drawn 2 times"),
    ],
)
def test_a_group_key_a_value_title_an_error_or_another_brokers_row_fails(tmp_path, legend, stat, error, rows, why):
    grafana = FakeGrafana(page(legend, stat, error, rows))
    try:
        p = run_check(grafana, tmp_path, "--timeout", "15")
    finally:
        grafana.close()
    assert p.returncode == 1, p.stdout + p.stderr
    assert why in p.stdout, p.stdout
    assert (tmp_path / "shots/mqtt-bench-overview.png").exists()


def test_a_missing_password_file_is_named_before_any_connection(tmp_path):
    p = subprocess.run(
        [sys.executable, str(CHECK), "--run-id", "r", "--grafana", "http://127.0.0.1:9", "--password-file", "/nope"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert p.returncode == 2 and "--password-file /nope: no such file" in p.stderr, p.stderr
