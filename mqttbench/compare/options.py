"""scripts/compare.sh's command line, every input checked before anything
starts (exit 2, naming the fix)."""

import re
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from mqttbench import RESULTS, ROOT
from mqttbench.brokers import facts as broker_facts
from mqttbench.compare import USAGE
from mqttbench.compare.targets import URL_RE, watched_pid
from mqttbench.outcome import Stop, bad
from mqttbench.report.comparison import docs_page, rounds
from mqttbench.stack import impair

NAME_RE = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}"
SEARCH_OPTIONS = ("--qos", "--p99-ms", "--trial", "--budget", "--start-rate", "--max-rate", "--precision")
ROUNDS_OPTIONS = ("--rounds", "--baseline", "--fail-on", "--save-baseline", "--against")


@dataclass
class Target:
    name: str
    url: str
    watch: str = ""  # pid=P or process=NAME: its process on this host, measured
    pid: int | None = None


@dataclass
class Options:
    brokers: list = field(default_factory=list)
    targets: list = field(default_factory=list)  # Target
    scenario: str = "p2p"
    mode: str = "auto"
    search: bool = False
    compare_id: str = ""
    cpu_target: str = "75"
    search_opts: list = field(default_factory=list)
    env: list = field(default_factory=list)  # NAME=VALUE
    impairs: list = field(default_factory=list)
    labels: dict = field(default_factory=dict)  # profile -> its name in a column's name
    rounds: dict = field(default_factory=lambda: {k: "1" if k == "--rounds" else "" for k in ROUNDS_OPTIONS})
    docs: str = ""
    command: str = ""

    @property
    def n_rounds(self):
        return int(self.rounds["--rounds"] or 1)

    def runs(self):
        """(broker, profile or None) of every managed column, in order."""
        return [(b, p) for b in self.brokers for p in (self.impairs or [None])]

    def run_name(self, broker, profile):
        return broker if profile is None else f"{broker}-{self.labels[profile]}"

    def names(self):
        return [t.name for t in self.targets] + [self.run_name(b, p) for b, p in self.runs()]

    def round_ids(self, name):
        if self.n_rounds == 1:
            return [f"{self.compare_id}-{name}"]
        return [f"{self.compare_id}-{name}-r{k}" for k in range(1, self.n_rounds + 1)]


def _split(value, what):
    if not value:
        raise bad(what)
    return value.split(",")


def parse(argv):
    o = Options()
    # As given, for --docs: a word quoted only where the shell needs it, as bash's printf %q does.
    words = [re.sub(r"([^A-Za-z0-9_./=,:@%+-])", r"\\\1", a) if a else "''" for a in argv]
    o.command = " ".join(["scripts/compare.sh", *words])
    i = 0

    def value(need=None):
        nonlocal i
        v = argv[i + 1] if i + 1 < len(argv) else ""
        if need is not None and not v:
            raise Stop(need)
        i += 2 if i + 1 < len(argv) else 1
        return v

    while i < len(argv):
        a = argv[i]
        name, eq, inline = a.partition("=")
        if a == "--broker" or name == "--broker" and eq:
            o.brokers += _split(inline if eq else value(), "--broker needs names, e.g. --broker mosquitto,emqx")
            i += 1 if eq else 0
        elif a == "--target" or name == "--target" and eq:
            o.targets.append(inline if eq else value())
            i += 1 if eq else 0
        elif a == "--scenario":
            o.scenario = value("--scenario needs a name")
        elif a in ("--search", "--native", "--compose"):
            o.search, o.mode = (True, o.mode) if a == "--search" else (o.search, a[2:])
            i += 1
        elif a == "--id":
            o.compare_id = value("--id needs a value")
        elif a == "--cpu-target":
            o.cpu_target = value("--cpu-target needs a percentage")
        elif a in SEARCH_OPTIONS:
            o.search_opts += [a, value(f"{a} needs a value")]
        elif a in ("-e", "--env"):
            o.env.append(value(f"{a} needs NAME=VALUE"))
        elif name in ("-e", "--env") and eq:
            o.env.append(inline)
            i += 1
        elif a == "--impair":
            o.impairs += _split(value(), "--impair needs profiles, e.g. --impair none,4g (none: no impairment)")
        elif a in ROUNDS_OPTIONS:
            v = value()
            if not v:
                raise bad(f"{a} needs a value (see scripts/compare.sh --help)")
            o.rounds[a] = v
        elif a in ("-h", "--help"):
            print(USAGE)
            raise Stop(None, 0)
        elif a == "--docs":
            o.docs = value()
            if not o.docs:
                raise bad("--docs needs a Markdown page, e.g. --docs docs/brokers-compared.md")
        else:
            raise bad(f"unexpected argument '{a}': options are --broker, --target, --scenario, --search, --native, "
                      "--compose, --id, --cpu-target, --impair, --docs (and the search's, with --search); scenario "
                      "parameters go as -e NAME=VALUE (e.g. -e QOS=1); other k6 options: scripts/bench.sh")  # fmt: skip
    check(o)
    return o


def check(o):
    if not o.brokers and not o.targets:
        raise bad("name the brokers to compare: --broker mosquitto,emqx,... (brokers this stack starts) and/or "
                  "--target NAME=URL (brokers already running), e.g. --target emqx=mqtt://10.0.0.5:1883")  # fmt: skip
    seen = set()
    for b in o.brokers:
        if b not in broker_facts.names():
            raise bad(f"--broker: unknown broker '{b}' (known: {' '.join(broker_facts.names())}); a broker this "
                      f"stack does not start: --target {b}=mqtt://HOST:PORT")  # fmt: skip
        if b in seen:
            raise bad(f"--broker: '{b}' is named twice: each broker runs once")
        seen.add(b)
    targets = []
    for t in o.targets:
        if "=" not in t:
            raise bad(f"--target takes NAME=URL, e.g. --target emqx=mqtt://10.0.0.5:1883; got '{t}'")
        name, url = t.split("=", 1)
        url, _, watch = url.partition(",")
        if not re.fullmatch(NAME_RE, name):
            raise bad(f"--target: the name '{name}' must be letters, digits, '.', '_' or '-' (at most 40; it "
                      "becomes part of the run id), e.g. --target emqx=mqtt://10.0.0.5:1883")  # fmt: skip
        if not re.fullmatch(URL_RE, url):
            raise bad(f"--target {name}: '{url}' is not a broker URL: use mqtt://HOST:PORT (or tcp://, mqtts://, "
                      "ssl://, tls://)")  # fmt: skip
        if name in seen:
            raise bad(f"--target: the name '{name}' is used twice: give each broker its own name")
        seen.add(name)
        targets.append(Target(name, url, watch))
    o.targets = targets
    for t in o.targets:
        if t.watch:
            t.pid = watched_pid(t)
    if not (ROOT / f"k6/scenarios/{o.scenario}.js").is_file():
        known = " ".join(sorted(p.stem for p in (ROOT / "k6/scenarios").glob("*.js")))
        raise bad(f"--scenario: unknown scenario '{o.scenario}' (known: {known})")
    for kv in o.env:
        if not re.match(r"[A-Za-z_][A-Za-z0-9_]*=", kv):
            raise bad(f"-e takes NAME=VALUE, got '{kv}'")
        name = kv.split("=", 1)[0]
        if name in ("RUN_ID", "BROKER", "BROKER_VERSION", "MQTT_URL", "RESULTS_DIR"):
            raise bad(f"-e {name} is set per broker by compare.sh (run id <id>-<name>, the broker's name and URL): "
                      "leave it out; name the comparison with --id")  # fmt: skip
        if o.search and name in ("RATE", "QOS", "DURATION", "P99_MS", "STEPS"):
            raise bad(f"-e {name} is the capacity search's to set: use --start-rate/--max-rate, --qos, --trial or "
                      "--p99-ms with --search")  # fmt: skip
    if not re.fullmatch(r"[0-9]+([.][0-9]+)?", o.cpu_target):
        raise bad(f"--cpu-target takes a percentage, e.g. --cpu-target 75; got '{o.cpu_target}'")
    if not o.search and o.search_opts:
        raise bad(f"{o.search_opts[0]} is an option of the capacity search (--search); for one run per broker, "
                  "scenario parameters go as -e NAME=VALUE (e.g. -e QOS=1 -e P99_MS=50 -e DURATION=2m)")  # fmt: skip
    if o.search and any(t.pid for t in o.targets):
        raise bad("--target NAME=URL,pid=... measures the process during a run; the capacity search judges a target "
                  "on its host's CPU: leave pid=/process= out with --search")  # fmt: skip
    if o.docs:
        if o.search:
            raise bad("--docs writes single runs' tables; a capacity search's are in its compare.md: leave --docs "
                      "out with --search")  # fmt: skip
        o.docs = str(Path(o.docs).absolute().resolve())
        if docs_page.main(["check", o.docs]):
            raise Stop(None, 2)
    check_impairs(o)
    if not o.compare_id:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        o.compare_id = f"{o.scenario}-{stamp}-{secrets.token_hex(3)}"
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", o.compare_id):
        raise bad(f"--id: '{o.compare_id}' must be letters, digits, '.', '_' or '-'")
    if (out := RESULTS / f"compare-{o.compare_id}").exists():
        raise bad(f"--id: {out} exists already: choose another id (or remove it)")
    for n in o.names():
        if not re.fullmatch(NAME_RE, n):
            raise bad(f"--impair: the run name '{n}' must be letters, digits, '.', '_' or '-' (at most 40): give "
                      "the profile a shorter name")  # fmt: skip
    check_rounds(o)
    for n in o.names():
        for rid in o.round_ids(n):
            for f in (RESULTS / "raw" / f"{rid}.json", RESULTS / f"capacity-{rid}"):
                if f.exists():
                    raise bad(f"--id: {f} exists already (an earlier comparison with this id): choose another id")


def check_impairs(o):
    """Network profiles: each managed broker runs once per profile, named <broker>-<profile>."""
    if not o.impairs:
        return
    if o.targets:
        raise bad("--impair runs the brokers this stack starts through a Toxiproxy of its own; a --target is "
                  "reached directly: leave --target out")  # fmt: skip
    if o.search:
        raise bad("--impair with --search: the capacity search is not run through a proxy yet; compare single runs")
    if o.mode == "compose":
        raise bad("compare.sh --impair runs natively so far (one run under compose: scripts/bench.sh --compose "
                  "--impair): use --native")  # fmt: skip
    for p in o.impairs:
        try:
            o.labels[p] = p if p in impair.NO_IMPAIRMENT else impair.profile(p)["profile"]
        except impair.Bad as e:
            raise Stop(str(e), 2) from None
    if len(set(o.labels.values())) != len(o.impairs):
        raise bad(f"--impair: a profile is named twice ({' '.join(o.impairs)}): each runs once")
    o.mode = "native"


def check_rounds(o):
    """The rounds' options, read and checked by report.comparison.rounds (the one reader of
    bounds and baseline files); a relative FILE is the caller's."""
    for k in ("--save-baseline", "--against"):
        if o.rounds[k]:
            o.rounds[k] = str(Path(o.rounds[k]).absolute().resolve())
    args = ["check", *(x for k, v in o.rounds.items() for x in (k, v or "")), "--scenario", o.scenario,
            "--search", str(o.search).lower(), "--columns", ",".join(o.names()),
            *(x for kv in o.env for x in ("--env", kv))]  # fmt: skip
    if rounds.main(args):
        raise Stop(None, 2)
