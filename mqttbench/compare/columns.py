"""The columns of a comparison: one run (or capacity search) of a broker
this stack starts (run_managed) or of a target already running
(run_target), and each column's outcome as compare.md records it (an entry
of the manifest), built from the runs' files and exit codes: a run's
result, its refusal (<run id>.refused.json), the first message its commands
stopped with (MQTTBENCH_OUTCOME), never a log's text."""

import json
import os
import subprocess
import time

from mqttbench import RESULTS, ROOT
from mqttbench.brokers import facts as broker_facts
from mqttbench.brokers import version as broker_version
from mqttbench.capacity.search import GENERATOR
from mqttbench.compare.managed import ManagedColumns, tee
from mqttbench.compare.targets import Watcher, host_port, unreachable
from mqttbench.generated.result_schema import is_result
from mqttbench.k6.command import run_argv
from mqttbench.outcome import log, warn
from mqttbench.stack import open_stack
from mqttbench.stack.native_services import http_ok, raise_open_files


class Columns(ManagedColumns):
    def __init__(self, o, out):
        self.o, self.out = o, out
        self.entries, self.marked, self.round = [], 0, 1
        self.kind = o.mode
        self.native = open_stack("native")
        # A native stack that was down when the comparison began is the
        # comparison's own (bench.sh starts it): it may switch that stack from
        # one broker to the next. So is one an earlier comparison left up
        # ($STATE/compared), until stack.sh up makes it the user's again. A
        # stack the user had up is theirs, never stopped here.
        compared = self.native.state / "compared"
        self.own_stack = self.kind == "native" and (not self.native_up() or compared.exists())

    def native_up(self):
        return self.native.running_broker() is not None

    def suffix(self):
        return "" if self.o.n_rounds == 1 else f"-r{self.round}"

    def entry(self, name, kind, mode, status, short="", reason="", version="", influx=False, url="",
              host_tag="", pid=None, broker=None, profile=None):  # fmt: skip
        id_key = "search_id" if self.o.search else "run_id"
        e = {"name": name, "kind": kind, "mode": mode, "url": url or None, "status": status, "short": short or None,
             "reason": reason or None, "version": version or None, "influx": influx, "host_tag": host_tag or None,
             "pid": pid, "log": f"logs/{name}{self.suffix()}.log", "round": self.round,
             id_key: f"{self.o.compare_id}-{name}{self.suffix()}"}  # fmt: skip
        if self.o.impairs:
            e |= {"broker": broker, "profile": profile}
        self.entries.append(e)
        if status != "ran":
            self.marked += 1
            warn(f"{name}: {status}: {reason}")

    def begin(self, name):
        """The column's log, and its outcome file: what its commands stop with."""
        logf = self.out / "logs" / f"{name}{self.suffix()}.log"
        outcome = self.out / "logs" / f"{name}{self.suffix()}.outcome"
        logf.write_text("")
        outcome.write_text("")
        env = {**os.environ, "MQTTBENCH_OUTCOME": str(outcome)}
        return f"{self.o.compare_id}-{name}{self.suffix()}", logf, outcome, env

    @staticmethod
    def failed(step, rc, outcome, run_id=None):
        """Why a column's step failed: its run's refusal, else the first message
        its commands stopped with, else its exit code."""
        refusal = RESULTS / "raw" / f"{run_id}.refused.json"
        said = ""
        if run_id and refusal.exists():
            said = json.loads(refusal.read_text())["message"]
        elif outcome.exists() and outcome.read_text().strip():
            said = outcome.read_text().splitlines()[0]
        return f"{step} exit code {rc}: {said or 'no message (see its log)'}"

    def report(self, *args):
        """Each run's own full report (3: a complete report exists and was kept)."""
        with open(self.out / "logs/reports.log", "a") as f:
            rc = subprocess.run([str(ROOT / "scripts/report.sh"), *args], stdout=f, stderr=f).returncode
        if rc not in (0, 3):
            warn(f"scripts/report.sh {' '.join(args)} failed (exit code {rc}): see {self.out / 'logs/reports.log'}")

    def search_outcome(self, name, rc, outcome):
        """Status, short and reason of a capacity search (its capacity.json)."""
        cap = RESULTS / f"capacity-{self.o.compare_id}-{name}{self.suffix()}" / "capacity.json"
        data = json.loads(cap.read_text()) if cap.exists() else {}
        if data.get("recommended") is not None and rc == 0:
            return "ran", "", ""
        if data.get("limit"):
            short = ("generator-limited: no broker capacity found" if data["limit"] == GENERATOR
                     else f"no capacity found ({data['limit']})")  # fmt: skip
            result = "no result", short, data.get("limit_text") or data["limit"]
        else:
            result = "no result", "capacity search failed", self.failed("scripts/capacity.sh", rc, outcome)
        log(f"{name}: {result[1]}")
        return result

    # -- brokers already running
    def run_target(self, t):
        run_id, logf, outcome, env = self.begin(t.name)
        host, port = host_port(t.url)
        if why := unreachable(host, port):
            return self.entry(t.name, "target", "target", "not run", f"unreachable ({host}:{port}: {why})",
                              f"unreachable: a TCP connect to {host}:{port} failed ({why})", url=t.url,
                              pid=t.pid)  # fmt: skip
        version = broker_version.asked(host, port)
        # A target on this host: the native stack's Telegraf measures this host (its points are tagged
        # with the stack's broker, which the target's own report reads them under); not the target's process.
        host_tag = self.native.running_broker() if host.startswith("127.") or host in ("localhost", "::1") else None
        telegraf = http_ok(f"http://127.0.0.1:{self.native.env['TELEGRAF_K6_PORT']}/ping")
        k6_out = self.native.k6_out() if telegraf else None
        if self.o.search:
            log(f"{t.name}: capacity search {run_id} on {t.url}; log: {logf}")
            args = ["--target", f"{t.name}={t.url}", "--scenario", self.o.scenario, "--search-id", run_id,
                    "--cpu-target", self.o.cpu_target, *self.o.search_opts, *self.env_args()]  # fmt: skip
            # The trials' k6 metrics to InfluxDB, when a Telegraf listener answers here.
            rc = tee([str(ROOT / "scripts/capacity.sh"), *args], logf, {**env, "MQTTBENCH_K6_OUT": k6_out or ""})
            status, short, reason = self.search_outcome(t.name, rc, outcome)
            return self.entry(t.name, "target", "target", status, short, reason, version, telegraf, t.url,
                              pid=t.pid)  # fmt: skip
        if not telegraf:
            log(f"{t.name}: no Telegraf listener at 127.0.0.1:{self.native.env['TELEGRAF_K6_PORT']}: run without "
                "InfluxDB (host and broker metrics missing)")  # fmt: skip
        watcher = Watcher(t.name, t.pid, f"{self.o.compare_id}-{t.name}", self.out, logf) if t.pid else None
        log(f"{t.name}: running {self.o.scenario} on {t.url} (run {run_id}); log: {logf}")
        try:
            rc = self.run_k6_on_target(t, run_id, version, k6_out, logf, env)
        finally:
            if watcher:
                watcher.close()
        if not is_result(RESULTS / "raw" / f"{run_id}.json"):
            return self.entry(t.name, "target", "target", "not run", "the run did not complete",
                              self.failed("k6", rc, outcome, run_id), version, url=t.url, pid=t.pid)  # fmt: skip
        if rc:
            log(f"{t.name}: the run's thresholds failed (k6 exit code {rc}): its column says which")
        if telegraf:
            time.sleep(2)  # Telegraf's last flush
            self.report(run_id, *([f"--host-tag={host_tag}"] if host_tag else []))
        else:
            self.report("--no-influx", run_id)
        self.entry(t.name, "target", "target", "ran", version=version, influx=telegraf, url=t.url,
                   host_tag=host_tag or "", pid=t.pid)  # fmt: skip

    def run_k6_on_target(self, t, run_id, version, k6_out, logf, env):
        raise_open_files()
        env = {**env, "K6_NO_USAGE_REPORT": "true", "RUN_ID": run_id, "BROKER": t.name, "BROKER_VERSION": version,
               "MQTT_URL": t.url, "RESULTS_DIR": str(RESULTS / "raw"),
               **broker_facts.deviations_env(t.name)}  # fmt: skip
        cmd = run_argv(ROOT / f"k6/scenarios/{self.o.scenario}.js", out=[k6_out] if k6_out else [],
                       extra=self.env_args())  # fmt: skip
        return tee(cmd, logf, env)

    def env_args(self):
        return [x for kv in self.o.env for x in ("-e", kv)]
