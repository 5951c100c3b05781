"""The compose stack end to end under a real Docker engine (Debian's
dockerd): tests/compose/e2e.sh on a fresh copy of the project, with the
images built locally from the project's own builds (tests/compose/
build-images.sh) through the test-only tests/compose/stand-ins.yaml. The
script's own checks say what is proven: healthy from a fresh copy, k6 in
its container, host, container, $SYS and k6 metrics in InfluxDB, the report,
data and secrets kept across down and up, nothing running after down.
About 2.5 minutes with warm caches (148 s measured on 2 cores); the first
run on a machine adds a debootstrap of 1 to 3 minutes."""

import os
import subprocess

import pytest

from conftest import ROOT


@pytest.fixture(scope="module")
def docker_engine():
    engine = subprocess.run(["docker", "info"], capture_output=True).returncode == 0
    if not engine and os.geteuid() != 0:
        pytest.skip("no Docker engine answers, and starting dockerd needs root (CI runs as root)")
    r = subprocess.run([str(ROOT / "tests/compose/dockerd.sh"), "start"], text=True, capture_output=True)
    assert r.returncode == 0, r.stderr
    yield
    # Only a dockerd this test started is stopped; a user's engine is left running.
    if "dockerd started" in r.stderr:
        subprocess.run([str(ROOT / "tests/compose/dockerd.sh"), "stop"], check=False)


def test_mosquitto_profile_from_a_fresh_copy_runs_fanin_and_reports(docker_engine):
    r = subprocess.run(
        [str(ROOT / "tests/compose/e2e.sh"), "--broker", "mosquitto", "--stand-ins"],
        text=True,
        capture_output=True,
        timeout=1500,
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]
    assert "compose end to end (mosquitto): passed" in r.stderr
