"""scripts/bench.sh's command line: its own options, and the rest for k6 as
given (-e NAME=VALUE the scenario's parameters; --out, --tag, ... as in k6).
Everything is checked here, before anything starts."""

import re
from dataclasses import dataclass, field

from mqttbench import ROOT
from mqttbench.brokers import facts as broker_facts
from mqttbench.outcome import Stop
from mqttbench.stack import impairment

USAGE = """usage: scripts/bench.sh [--broker mosquitto] [--scenario p2p] [--native|--compose]
                        [--instances N] [--impair PROFILE] [k6 options...]
  k6 options go to `k6 run` as given: -e NAME=VALUE sets scenario parameters
  (-e QOS=0 -e RATE=5000 -e DURATION=2m; README: Parameters), and --out,
  --summary-export, --tag ... work as in k6. Under compose, k6 runs in its
  container: write files under /results (reports/raw on this host).
  --broker a,b,... runs the same scenario on each broker in turn and writes
  one comparison (scripts/compare.sh, which takes the options).
  --instances N splits the load over N k6 processes on this host (k6's
  execution segments, one source address each natively), then merges
  their results (k6 x mqtt-merge) into one, judged as one run.
  --impair PROFILE puts a Toxiproxy between k6 and the broker with the
  profile's toxics (lan, wan, 4g, 3g, satellite: toxiproxy/profiles.toml,
  or a file of your own: path/to/file.toml), recorded in the result.
  BROKER_VERSION=V in the environment: the broker version the result
  records (default: what it tells on its broker.toml's version_topic, or
  its [native] version, natively; under compose, what it tells the run
  (version_topic, as version_username), else its image)."""


@dataclass
class Options:
    broker: str = field(default_factory=broker_facts.default_broker)
    scenario: str = "p2p"
    mode: str = "auto"
    instances: int = 1
    impair: str = ""
    env: list = field(default_factory=list)  # NAME=VALUE, in order
    k6_args: list = field(default_factory=list)

    def given(self, name):
        """The last -e NAME=VALUE's value, or None."""
        found = [kv.split("=", 1)[1] for kv in self.env if kv.startswith(f"{name}=")]
        return found[-1] if found else None

    @property
    def tls(self):
        """A TLS scenario (conn-tls-*, mqttbs's name) measures TLS connections:
        it gets the broker's TLS listener where the others get its plain one."""
        return "-tls-" in self.scenario

    @property
    def mqtt_host(self):
        url = self.given("MQTT_URL")
        return re.sub(r"[:/].*$", "", re.sub(r"^[a-z]+://", "", url)) if url is not None else "127.0.0.1"


def _value(argv, i, what):
    if i + 1 >= len(argv) or not argv[i + 1]:
        raise Stop(f"{argv[i]} needs {what}")
    return argv[i + 1]


def parse(argv):
    o, i = Options(), 0
    own = {"--broker": ("broker", "a name"), "--scenario": ("scenario", "a name"),
           "--instances": ("instances", "a number"),
           "--impair": ("impair", "a profile: lan, wan, 4g, 3g, satellite or path/to/file.toml")}  # fmt: skip
    instances = "1"
    while i < len(argv):
        a = argv[i]
        if a in own:
            attr, what = own[a]
            value = _value(argv, i, what)
            if attr == "instances":
                instances = value
            else:
                setattr(o, attr, value)
            i += 2
        elif a in ("--native", "--compose"):
            o.mode, i = a[2:], i + 1
        elif a in ("-e", "--env"):
            o.env.append(_value(argv, i, "NAME=VALUE"))
            i += 2
        elif a.startswith(("-e=", "--env=")):
            o.env.append(a.split("=", 1)[1])
            i += 1
        elif a in ("-h", "--help"):
            print(USAGE)
            raise Stop(None, 0)
        elif a.startswith("-"):
            # Any other k6 option, with its value: this command takes no
            # positional argument, so a word that follows an option is its value.
            o.k6_args.append(a)
            i += 1
            if i < len(argv) and not argv[i].startswith("-"):
                o.k6_args.append(argv[i])
                i += 1
        else:
            raise Stop(
                f"unexpected argument '{a}': options of this script are --broker, --scenario, --native, --compose, "
                "--instances, --impair; the rest go to k6 (see scripts/bench.sh --help)"
            )
    check(o, instances)
    return o


def check(o, instances):
    if o.broker not in broker_facts.names() or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", o.broker):
        raise Stop(f"unknown broker '{o.broker}' (known: {' '.join(broker_facts.names())}; "
                   "a broker is a folder brokers/NAME with a broker.toml)")  # fmt: skip
    if not (ROOT / f"k6/scenarios/{o.scenario}.js").is_file():
        known = sorted(p.stem for p in (ROOT / "k6/scenarios").glob("*.js"))
        raise Stop(f"unknown scenario '{o.scenario}' (known: {' '.join(known)})")
    for kv in o.env:
        if "=" not in kv:
            raise Stop(f"-e takes NAME=VALUE, got '{kv}'")
    if not re.fullmatch(r"[1-9][0-9]*", instances):
        raise Stop(f"--instances takes a whole number >= 1, got '{instances}'")
    o.instances = int(instances)
    if o.instances > 250:
        raise Stop(f"--instances {o.instances}: at most 250 on one host (one loopback source address each); "
                   "use several hosts (README: Several generators)")  # fmt: skip
    # The scenario's VUs cap the instances (MAX_INSTANCES, default 32).
    if o.instances > 32 and o.given("MAX_INSTANCES") is None:
        o.env.append(f"MAX_INSTANCES={o.instances}")
    # A storm's cut runs in one instance and times the connections it sees:
    # split over instances it would judge part of the storm as all of it.
    if o.scenario.startswith("storm-") and o.instances > 1:
        raise Stop(f"--instances {o.instances}: {o.scenario} times the reconnection of the connections of the "
                   "process that cuts them; run it in one process")  # fmt: skip
    if o.impair:
        if o.tls:
            raise Stop(f"--impair routes the broker's plain listener through Toxiproxy: {o.scenario} measures TLS "
                       "connections; impair a plain scenario (conn-tcp-*, p2p, ...)")  # fmt: skip
        impairment.check(o.impair)
        if o.given("MQTT_URL") is not None:
            raise Stop("--impair routes the stack's broker through Toxiproxy: leave -e MQTT_URL out "
                       "(or impair by hand: README, Network impairment)")  # fmt: skip
    for a in o.k6_args:
        if a.startswith("--execution-segment") and o.instances != 1:
            raise Stop("--instances sets each process's --execution-segment itself: give one or the other")
