"""The version a running broker reports on its version topic (each
broker.toml's version_topic: the broker at a URL may be any of them), not
what a variable or the binary first on PATH names; empty when it says none.
Usage: python3 -m mqttbench.brokers.version HOST PORT"""

import shutil
import subprocess
import sys

from mqttbench.brokers import facts as broker_facts


def asked(host, port):
    topics = []
    for name in broker_facts.names():
        t = broker_facts.load(name).get("version_topic", [])
        topics += [t] if isinstance(t, str) else t
    if not topics or not shutil.which("mosquitto_sub"):
        return ""
    args = [a for t in topics for a in ("-t", t)]
    try:
        r = subprocess.run(["mosquitto_sub", "-h", host, "-p", str(port), *args, "-C", "1", "-W", "4"],
                           capture_output=True, text=True, timeout=5, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return ""
    return r.stdout.strip() if r.returncode == 0 else ""


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(asked(sys.argv[1], sys.argv[2]))
