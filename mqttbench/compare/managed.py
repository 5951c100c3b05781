"""The columns of the brokers this stack starts: natively one after
another on the native stack (switched from one broker to the next when the
comparison owns it), or under compose (each broker's profile up for its
run, then its services stopped; the core stays up). Mixed into Columns,
whose entry, begin, failed, report and search_outcome these use."""

import json
import subprocess
import sys

from mqttbench import RESULTS, ROOT
from mqttbench.brokers import facts as broker_facts
from mqttbench.brokers import native as broker_native
from mqttbench.generated.result_schema import is_result
from mqttbench.outcome import log, warn
from mqttbench.stack import open_stack
from mqttbench.stack.impair import NO_IMPAIRMENT


def tee(cmd, logf, env=None):
    """Runs cmd, its output both on stderr and appended to logf; its exit code."""
    with open(logf, "a") as f:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        for line in p.stdout:
            sys.stderr.buffer.write(line)
            sys.stderr.flush()
            f.write(line.decode(errors="replace"))
        return p.wait()


class ManagedColumns:
    def native_ready(self, broker, logf, outcome):
        """The native stack can run broker (starting it is bench's or
        capacity's job). When it runs another, the comparison's own stack is
        stopped for this one's; a user's is not this command's to stop, and
        the column is marked: why, in its outcome file, is the stack's own
        check of the broker (no native build), else the broker in the way."""
        running = self.native.running_broker()
        if running is None or running == broker:
            return True
        try:
            broker_native.native(broker)
            has_native = True
        except SystemExit as e:
            has_native, why = False, str(e)
        if self.own_stack and has_native:
            log(f"the native stack this comparison started runs {running}: stopping it for {broker}'s (its data kept)")
            with open(logf, "a") as f:
                if subprocess.run([str(ROOT / "scripts/stack.sh"), "down"], stdout=f, stderr=f).returncode == 0:
                    return True
        if has_native:
            why = f"the native stack runs broker '{running}': scripts/stack.sh down first, then compare again"
        with open(outcome, "a") as f:
            f.write(f"{why}\n")
        return False

    def not_native(self, name, reason, short, run_id=None, broker=None, profile=None):
        """Marks a column that did not run natively: most often no native build;
        or the scenario asked for what the broker lacks, which the run refused,
        naming it, in its refusal file."""
        if "no native build" in reason:
            short = "no native build; use --compose"
            reason += "; scripts/compare.sh --compose runs it in its container"
        refusal = RESULTS / "raw" / f"{run_id}.refused.json"
        if run_id and refusal.exists():
            r = json.loads(refusal.read_text())
            # What it lacks, and where its broker.toml says so ([capabilities], natively [native.capabilities]).
            short = f"refused: it lacks {r.get('lacks')} ({r.get('facts')})"
            reason = f"{r['message']}: refused before any connection"
        self.entry(name, "broker", "native", "not run", short, reason, broker=broker, profile=profile)

    def run_managed(self, broker, profile):
        o = self.o
        name = o.run_name(broker, profile)
        run_id, logf, outcome, env = self.begin(name)
        who = {"broker": broker, "profile": profile} if o.impairs else {}
        what = f"capacity search {run_id}" if o.search else f"run {run_id}"
        log(f"{name} ({self.kind}): {what}; log: {logf}")
        stack = open_stack(self.kind, broker)
        version = ""
        if self.kind == "compose":
            var = broker_facts.load(broker)["image"]
            version = f"{var}={stack.env.get(var, '')}"
        if self.kind == "native" and not self.native_ready(broker, logf, outcome):
            first = outcome.read_text().splitlines()[0] if outcome.read_text().strip() else ""
            return self.not_native(name, first, "did not start natively", **who)
        if self.kind == "compose":
            log(f"{broker}: starting its profile and waiting until healthy (the core stays up)")
            up = stack.compose("--profile", broker, "up", "-d", "--wait", check=False)
            with open(logf, "a") as f:
                f.write(up.stdout + up.stderr)
            if up.returncode:
                # docker compose's own last word on stderr is its reason (it leaves no other).
                last = (up.stderr.strip().splitlines() or [""])[-1]
                self.entry(broker, "broker", "compose", "not run", "did not start under compose",
                           f"docker compose --profile {broker} up -d --wait exit code {up.returncode}: {last}",
                           version)  # fmt: skip
                stack.stop_broker()
                return
        try:
            self.run_column(name, broker, profile, run_id, logf, outcome, env, version, who)
        finally:
            if self.kind == "native" and self.own_stack and self.native_up():
                (self.native.state / "compared").write_text("")
            if self.kind == "compose":
                log(f"{broker}: stopping its services ({broker}, telegraf-{broker}); InfluxDB and Grafana stay up")
                if not stack.stop_broker():
                    warn(f"{broker}: could not stop its services (docker compose stop)")

    def run_column(self, name, broker, profile, run_id, logf, outcome, env, version, who):
        o = self.o
        if o.search:
            args = [f"--{self.kind}", "--broker", broker, "--scenario", o.scenario, "--search-id", run_id,
                    "--cpu-target", o.cpu_target, *o.search_opts, *self.env_args()]  # fmt: skip
            rc = tee([str(ROOT / "scripts/capacity.sh"), *args], logf, env)
            status, short, reason = self.search_outcome(name, rc, outcome)
            return self.entry(name, "broker", self.kind, status, short, reason, version, True, **who)
        impair = ["--impair", profile] if profile and profile not in NO_IMPAIRMENT else []
        # bench: the stack up (natively) or the profile (compose), the run, and its report.
        args = [f"--{self.kind}", "--broker", broker, "--scenario", o.scenario, *impair, "-e", f"RUN_ID={run_id}",
                *self.env_args()]  # fmt: skip
        rc = tee([str(ROOT / "scripts/bench.sh"), *args], logf, env)
        if is_result(RESULTS / "raw" / f"{run_id}.json"):
            if rc:
                log(f"{name}: the run's thresholds failed (exit code {rc}): its column says which")
            return self.entry(name, "broker", self.kind, "ran", version=version, influx=True, **who)
        why = self.failed("scripts/bench.sh", rc, outcome, run_id)
        if self.kind == "native":
            return self.not_native(name, why, "the run did not complete", run_id, **who)
        self.entry(name, "broker", self.kind, "not run", "the run did not complete", why, version, **who)
