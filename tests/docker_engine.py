"""The Docker engine of the compose tests: one for the whole run, with the
stand-in images built once. A pytest plugin of conftest.py."""

import os
import subprocess

import pytest

from conftest import ROOT


@pytest.fixture(scope="session")
def docker_engine():
    """One Docker engine for every compose test of the run (Debian's
    dockerd, started here when none answers), with the stand-in images
    built once (tests/compose/build-images.sh)."""
    engine = subprocess.run(["docker", "info"], capture_output=True).returncode == 0
    if not engine and os.geteuid() != 0:
        pytest.skip("no Docker engine answers, and starting dockerd needs root (CI runs as root)")
    r = subprocess.run([str(ROOT / "tests/compose/dockerd.sh"), "start"], text=True, capture_output=True)
    assert r.returncode == 0, r.stderr
    built = subprocess.run([str(ROOT / "tests/compose/build-images.sh")], text=True, capture_output=True)
    assert built.returncode == 0, built.stderr[-3000:]
    yield
    # Only a dockerd this run started (none answered before) is stopped; a user's engine is left running.
    if not engine:
        subprocess.run([str(ROOT / "tests/compose/dockerd.sh"), "stop"], check=False)
