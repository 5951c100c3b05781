"""The Docker engine of the compose tests: one for the whole run, with the
stand-in images built once, and the compose files that run a broker's
profile on them. A pytest plugin of conftest.py."""

import os
import subprocess
from pathlib import Path

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


def stand_in_files(broker, out_dir, ports, image=None):
    """COMPOSE_FILE of the stand-ins for broker's profile: compose.yaml, the
    core's tests/compose/stand-ins.yaml and the broker's own override, written
    into out_dir from its broker.toml (tests/compose/host_network.py) for the
    stack's ports (MQTT_PORT, ...: the test's)."""
    out = Path(out_dir) / f"host-network-{broker}.yaml"
    subprocess.run(
        ["python3", str(ROOT / "tests/compose/host_network.py"), broker, image or f"mqtt-bench-test/{broker}:test",
         str(out)],
        env=dict(os.environ, **ports), text=True, capture_output=True, check=True,
    )  # fmt: skip
    return f"{ROOT}/compose.yaml:{ROOT}/tests/compose/stand-ins.yaml:{out}"


def project_containers(project, stopped=True):
    """The ids of a compose project's containers (with stopped ones: docker ps -a)."""
    argv = [
        "docker",
        "ps",
        "-q",
        *(["-a"] if stopped else []),
        "--filter",
        f"label=com.docker.compose.project={project}",
    ]
    return subprocess.run(argv, text=True, capture_output=True, check=True).stdout.split()


def left_behind(project, down):
    """After a test's `down` of its compose project: the containers still
    there, removed now so that the next compose test starts clean, and named
    in an AssertionError with what `down` said (CI once ran two compose
    tests into a stand-in Mosquitto the impairment test had left holding
    their MQTT_PORT)."""
    ids = project_containers(project)
    if not ids:
        return
    names = subprocess.run(["docker", "inspect", "-f", "{{.Name}} {{.State.Status}}", *ids],
                           capture_output=True, text=True, check=False).stdout  # fmt: skip
    subprocess.run(["docker", "rm", "-f", "-v", *ids], capture_output=True, check=False)
    said = (down.stdout or "") + (down.stderr or "")
    left = ", ".join(
        f"{n.lstrip('/')} ({state})" for n, _, state in (line.partition(" ") for line in names.splitlines())
    )
    raise AssertionError(f"compose down (exit {down.returncode}) left {left} of {project}: {said[-2000:]}")
