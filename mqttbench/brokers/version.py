"""The version a running broker reports on its version topic (each
broker.toml's version_topic: the broker at a URL may be any of them), not
what a variable or the binary first on PATH names; empty when it says none.
Asked anonymously first, then as each broker.toml's version_username (EMQX
tells $SYS from afar only to its dashboard user).
Usage: python3 -m mqttbench.brokers.version HOST PORT"""

import shutil
import subprocess
import sys

from mqttbench.brokers import facts as broker_facts


def _listed(value):
    return [value] if isinstance(value, str) else list(value or [])


def _subscribe(host, port, topics, username=None):
    user = ["-u", username] if username else []
    args = [a for t in topics for a in ("-t", t)]
    try:
        r = subprocess.run(["mosquitto_sub", "-h", host, "-p", str(port), *user, *args, "-C", "1", "-W", "4"],
                           capture_output=True, text=True, timeout=5, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return ""
    return r.stdout.strip() if r.returncode == 0 else ""


def asked(host, port):
    if not shutil.which("mosquitto_sub"):
        return ""
    facts = [broker_facts.load(n) for n in broker_facts.names()]
    topics = [t for f in facts for t in _listed(f.get("version_topic"))]
    if not topics:
        return ""
    if found := _subscribe(host, port, topics):
        return found
    for f in facts:
        if f.get("version_username") and (found := _subscribe(host, port, _listed(f.get("version_topic")),
                                                              f["version_username"])):  # fmt: skip
            return found
    return ""


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(asked(sys.argv[1], sys.argv[2]))
