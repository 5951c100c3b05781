"""A comparison whose columns negotiated different TLS versions says so: the
native stack's Mosquitto offers TLS 1.3, a second real Mosquitto with the
same certificates only TLS 1.2 (as VerneMQ and NanoMQ do with their
defaults). compare.md marks it above the tables, in the Connections table
and in each column's disclosure; two runs over the same version are not
marked."""

import getpass
import json
import subprocess

from conftest import ROOT, TEST_PORTS, loopback_port
from k6_runs import run_p2p
from loopback_brokers import mosquitto


def compare(stack, results, out, *run_ids):
    r = subprocess.run(
        [str(ROOT / "scripts/report.sh"), "--no-influx", "--results", str(results), "--out", str(out), *run_ids],
        env=stack.env,
        text=True,
        capture_output=True,
    )
    assert r.returncode == 0, r.stderr
    md = next(out.rglob("compare.md"))
    return md.read_text(), json.loads((md.parent / "results.json").read_text())


# OpenSSL's own configuration caps the second Mosquitto at TLS 1.2: its
# `tls_version` sets only the lowest version it accepts.
TLS_1_2_ONLY = """openssl_conf = default_conf
[default_conf]
ssl_conf = ssl_sect
[ssl_sect]
system_default = system_default_sect
[system_default_sect]
MaxProtocol = TLSv1.2
"""


def test_a_comparison_of_tls_1_3_and_tls_1_2_is_marked_not_like_for_like(stack, k6_bin, tmp_path, monkeypatch):
    tls = stack.state / "tls"
    port = loopback_port(13890)
    # As scripts/stack.sh: Mosquitto stays the user who started it, who can
    # read the stack's certificates.
    conf = (
        f"listener {port} 127.0.0.1\nallow_anonymous true\n"
        f"certfile {tls / 'server.pem'}\nkeyfile {tls / 'server.key'}\nuser {getpass.getuser()}\n"
    )
    (tmp_path / "openssl.cnf").write_text(TLS_1_2_ONLY)
    monkeypatch.setenv("OPENSSL_CONF", str(tmp_path / "openssl.cnf"))
    env = {"MQTTBENCH_STATE": str(stack.state), "QOS": "1"}
    with mosquitto(tmp_path / "tls12.conf", port, conf) as _:
        monkeypatch.delenv("OPENSSL_CONF")  # the broker's alone
        p12, r12 = run_p2p(k6_bin, tmp_path, f"mqtts://127.0.0.1:{port}", **env)
    assert p12.returncode == 0, p12.stderr[-3000:]
    assert r12["connect"]["pub_p2p"]["tls_version"] == "TLS 1.2", r12["connect"]
    p13, r13 = run_p2p(k6_bin, tmp_path, f"mqtts://127.0.0.1:{TEST_PORTS['MQTTS_PORT']}", **env)
    assert p13.returncode == 0, p13.stderr[-3000:]
    assert r13["connect"]["pub_p2p"]["tls_version"] == "TLS 1.3", r13["connect"]

    md, results = compare(stack, tmp_path, tmp_path / "mixed", r12["run_id"], r13["run_id"])
    assert "> **TLS:** not like for like: the columns negotiated different TLS versions" in md, md
    assert "TLS 1.2" in results["tls_mismatch"] and "TLS 1.3" in results["tls_mismatch"], results
    row = next(line for line in md.splitlines() if line.startswith("| TLS version negotiated |"))
    assert "TLS 1.2" in row and "TLS 1.3" in row, row
    assert md.count("**TLS:** negotiated TLS 1.") == 2, md

    # The same version in every column: nothing to mark.
    p, again = run_p2p(k6_bin, tmp_path, f"mqtts://127.0.0.1:{TEST_PORTS['MQTTS_PORT']}", **env)
    assert p.returncode == 0, p.stderr[-3000:]
    md, results = compare(stack, tmp_path, tmp_path / "alike", r13["run_id"], again["run_id"])
    assert results["tls_mismatch"] is None and "not like for like" not in md, md
