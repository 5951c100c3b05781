#!/usr/bin/env python3
"""Opens every provisioned dashboard of a running Grafana in headless
Chromium, as a person would after a run, saves a screenshot of each and
fails if a panel shows an error, a legend or any panel text shows a Flux
group key (`_start`, `_stop`, `url=`), a stat shows `_value`, a panel
is not drawn at all, or drawn more than once (a row repeated for brokers
besides --broker). Panels without data are listed, not failed.

Standard library only: Chromium is driven over its DevTools protocol on a
pipe (--remote-debugging-pipe: NUL-terminated JSON on fds 3 and 4).

Usage: tests/compose/check_dashboards.py --run-id ID [--grafana URL]
         [--broker mosquitto] [--scenario p2p] [--from now-15m]
         [--user admin --password-file FILE] [--out DIR] [--chrome PATH]
Without --password-file Grafana must allow anonymous viewers
(GRAFANA_ANONYMOUS=true under compose).

What it relies on in Grafana 12 (grafana/grafana, stored index):
- packages/grafana-e2e-selectors/src/selectors/components.ts@9483bef2:
  a panel's root carries data-testid "data-testid Panel header <title>",
  its error button "data-testid Panel status error", a legend entry
  "data-testid VizLegend series <name>" (10.3.0), the loading bar the
  aria-label "Panel loading bar"; PanelChrome.tsx puts the first on the
  panel's container div, PanelStatus.tsx the second on its button;
- public/app/core/navigation/kiosk.ts: `kiosk` without a value is the full
  kiosk mode (no navigation around the dashboard);
- transformSaveModelToScene.ts@1585a6e9: the grid is lazy (a panel
  outside the viewport is not queried), so the viewport is as tall as the
  dashboard;
- pkg/api/login.go LoginPost (authn form client: JSON user and password)
  answers with the session cookie."""

import argparse
import base64
import fcntl
import http.cookies
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path

PANEL = "data-testid Panel header "
LEGEND = "data-testid VizLegend series "
ERROR = "data-testid Panel status error"
LOADING = "Panel loading bar"
# Grafana's grid: 30 px a row unit and 8 px between (GRID_CELL_HEIGHT,
# GRID_CELL_VMARGIN), plus room for the variables and time picker.
UNIT_PX, TOP_PX, WIDTH_PX = 38, 160, 1600
GROUP_KEY = ("_start", "_stop", "url=")
# What a panel shows, read in the page: one entry per drawn panel.
READ_PANELS = f"""(() => [...document.querySelectorAll('[data-testid^="{PANEL}"]')].map((el) => ({{
  title: el.getAttribute('data-testid').slice({len(PANEL)}),
  error: el.querySelector('[data-testid="{ERROR}"]') !== null,
  loading: el.querySelector('[aria-label="{LOADING}"]') !== null,
  legend: [...el.querySelectorAll('[data-testid^="{LEGEND}"]')]
    .map((l) => l.getAttribute('data-testid').slice({len(LEGEND)})),
  text: el.innerText,
}})))()"""


def die(msg):
    print(f"check_dashboards: {msg}", file=sys.stderr)
    sys.exit(2)


def above_nine(fd):
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class Chromium:
    """A headless Chromium and one page, over the DevTools pipe."""

    def __init__(self, binary, log):
        self.profile = tempfile.mkdtemp(prefix="check-dashboards-")
        to_chrome, self._chrome_in = os.pipe()
        self._chrome_out, from_chrome = os.pipe()
        # The browser's ends above 9, so that moving them to 3 and 4 moves
        # no other.
        to_chrome, from_chrome = (above_nine(fd) for fd in (to_chrome, from_chrome))
        args = [
            binary,
            "--headless=new",
            "--remote-debugging-pipe",
            # A CI runner's user namespaces may be closed to Chrome's sandbox;
            # this browser opens only the local Grafana.
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--hide-scrollbars",
            f"--user-data-dir={self.profile}",
            "about:blank",
        ]
        # The browser reads commands on fd 3 and answers on fd 4.
        redirect = f'exec "$@" 3<&{to_chrome} 4>&{from_chrome} {to_chrome}<&- {from_chrome}>&-'
        self.proc = subprocess.Popen(
            ["bash", "-c", redirect, "chromium", *args],
            pass_fds=(to_chrome, from_chrome),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
        os.close(to_chrome)
        os.close(from_chrome)
        self.buf, self.last_id, self.session = b"", 0, None
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable")

    def call(self, method, params=None, timeout=60):
        self.last_id += 1
        msg = {"id": self.last_id, "method": method, "params": params or {}}
        if self.session:
            msg["sessionId"] = self.session
        os.write(self._chrome_in, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read(deadline)
            if answer.get("id") == self.last_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]

    def _read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._chrome_out], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self._chrome_out, 1 << 16)
            if not chunk:
                raise RuntimeError(f"Chromium exited ({self.proc.poll()})")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"in the page: {r['exceptionDetails']}")
        return r["result"].get("value")

    def close(self):
        try:
            self.session = None
            self.call("Browser.close", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        os.close(self._chrome_in)
        os.close(self._chrome_out)
        shutil.rmtree(self.profile, ignore_errors=True)


class Grafana:
    def __init__(self, url, user=None, password=None):
        self.url, self.cookie, self.auth = url.rstrip("/"), None, None
        if password is not None:
            # The API takes basic auth; the page the session cookie of a login.
            self.auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
            body = json.dumps({"user": user, "password": password}).encode()
            req = urllib.request.Request(
                f"{self.url}/login", data=body, headers={"Content-Type": "application/json"}, method="POST"
            )
            with urllib.request.urlopen(req, timeout=30) as r:
                jar = http.cookies.SimpleCookie()
                for header in r.headers.get_all("Set-Cookie") or []:
                    jar.load(header)
            if "grafana_session" not in jar:
                die(f"logging in to {self.url} as {user} gave no grafana_session cookie")
            self.cookie = jar["grafana_session"].value

    def api(self, path):
        req = urllib.request.Request(f"{self.url}{path}", headers={"Authorization": self.auth} if self.auth else {})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.load(r)


def find_chrome(given):
    for name in [
        given,
        os.environ.get("CHROME"),
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]:
        if name and shutil.which(name):
            return shutil.which(name)
    die("no Chromium or Chrome found: install the chromium package, or give --chrome PATH")


def dashboard_url(grafana, uid, args):
    query = {
        "orgId": "1",
        "var-run_id": args.run_id,
        "var-broker": args.broker,
        "var-scenario": args.scenario,
        "from": args.from_,
        "to": args.to,
    }
    return f"{grafana.url}/d/{uid}?{urllib.parse.urlencode(query)}&kiosk"


def wait_drawn(browser, expected, timeout):
    """The panels once every expected one is drawn and none has loaded for
    three readings in a row (or what is there at the timeout)."""
    deadline, steady, panels = time.monotonic() + timeout, 0, []
    while time.monotonic() < deadline:
        panels = browser.evaluate(READ_PANELS) or []
        drawn = {p["title"] for p in panels}
        steady = steady + 1 if expected <= drawn and not any(p["loading"] for p in panels) else 0
        if steady >= 3:
            break
        time.sleep(1)
    return panels


def check(panels, expected, stats):
    """(failures, panels without data) of one dashboard."""
    failures, empty = [], []
    drawn = {p["title"] for p in panels}
    failures += [f"panel not drawn: {t}" for t in sorted(expected - drawn)]
    times = Counter(p["title"] for p in panels)
    failures += [
        f"{t}: drawn {n} times (a row repeated for brokers besides the one selected?)"
        for t, n in sorted(times.items())
        if n > 1
    ]
    for p in panels:
        if p["error"]:
            failures.append(f"{p['title']}: shows an error")
        for key in GROUP_KEY:
            if any(key in name for name in p["legend"]) or key in p["text"]:
                failures.append(f"{p['title']}: shows {key!r}: {p['legend'] or p['text']!r}")
        if p["title"] in stats and "_value" in p["text"]:
            failures.append(f"{p['title']}: a stat titled _value: {p['text']!r}")
        if "No data" in p["text"]:
            empty.append(p["title"])
    return failures, empty


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grafana", default=f"http://127.0.0.1:{os.environ.get('GRAFANA_PORT', '3000')}")
    ap.add_argument("--run-id", required=True)
    ap.add_argument("--broker", default="mosquitto")
    ap.add_argument("--scenario", default="p2p")
    ap.add_argument("--from", dest="from_", default="now-15m")
    ap.add_argument("--to", default="now")
    ap.add_argument("--user", default="admin")
    ap.add_argument("--password-file", type=Path)
    ap.add_argument("--out", type=Path, default=Path("dashboard-screenshots"))
    ap.add_argument("--chrome")
    ap.add_argument("--timeout", type=float, default=90, help="seconds for each dashboard to draw")
    args = ap.parse_args()
    if args.password_file is not None and not args.password_file.is_file():
        die(f"--password-file {args.password_file}: no such file (scripts/compose.sh secret grafana_admin_password)")
    chrome = find_chrome(args.chrome)
    password = args.password_file.read_text().strip() if args.password_file else None
    grafana = Grafana(args.grafana, args.user, password)
    boards = grafana.api("/api/search?type=dash-db&tag=mqtt-bench")
    if not boards:
        die(f"{args.grafana} has no dashboard tagged mqtt-bench: is it the stack's Grafana?")
    args.out.mkdir(parents=True, exist_ok=True)
    report, failed = {}, False
    with open(args.out / "chromium.log", "wb") as log:
        browser = Chromium(chrome, log)
        try:
            if grafana.cookie:
                browser.call(
                    "Network.setCookie", {"name": "grafana_session", "value": grafana.cookie, "url": grafana.url}
                )
            for board in sorted(boards, key=lambda b: b["uid"]):
                model = grafana.api(f"/api/dashboards/uid/{board['uid']}")["dashboard"]
                panels = [p for p in model["panels"] if p["type"] != "row"]
                expected = {p["title"] for p in panels}
                stats = {p["title"] for p in panels if p["type"] == "stat"}
                height = TOP_PX + UNIT_PX * max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in model["panels"])
                browser.call(
                    "Emulation.setDeviceMetricsOverride",
                    {"width": WIDTH_PX, "height": height, "deviceScaleFactor": 1, "mobile": False},
                )
                url = dashboard_url(grafana, board["uid"], args)
                browser.call("Page.navigate", {"url": url})
                drawn = wait_drawn(browser, expected, args.timeout)
                shot = browser.call("Page.captureScreenshot", {"format": "png"})
                (args.out / f"{board['uid']}.png").write_bytes(base64.b64decode(shot["data"]))
                failures, empty = check(drawn, expected, stats)
                failed |= bool(failures)
                report[board["uid"]] = {"url": url, "failures": failures, "no_data": empty, "panels": drawn}
                print(f"{board['title']}: {len(drawn)} panels, {len(failures)} failures, no data: {empty or 'none'}")
                for f in failures:
                    print(f"  FAIL {f}")
        finally:
            browser.close()
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"screenshots and report.json in {args.out}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
