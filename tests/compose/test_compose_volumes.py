"""Every directory a broker's image declares as a VOLUME (brokers/<name>/
broker.toml, [volumes], read in each image's Dockerfile) is a named volume
in compose.yaml's profile of that broker: `down` keeps it, `down -v` removes
it, and no container creates an anonymous volume that `down` would leave
behind (EMQX's image declared two, compose mounted nothing there: its data
was lost and two volumes leaked at each down and up). The rendered config,
as `docker compose --profile <name> config` gives it."""

import json
import re
import subprocess
import tomllib

import pytest

from conftest import ROOT

BROKERS = sorted(p.parent.name for p in (ROOT / "brokers").glob("*/broker.toml"))

# A declared path given a tmpfs or a bind mount instead, on purpose: path -> why.
# (None today: each broker's declared directories are named volumes.)
NOT_A_VOLUME: dict[str, str] = {}


def facts(name):
    with (ROOT / f"brokers/{name}/broker.toml").open("rb") as f:
        return tomllib.load(f)


def config(profile):
    out = subprocess.run(
        ["bash", "-c", f". {ROOT}/scripts/lib.sh; compose --profile {profile} config --format json"],
        text=True,
        capture_output=True,
        check=True,
    ).stdout
    return json.loads(out)


@pytest.mark.parametrize("name", BROKERS)
def test_every_declared_volume_is_a_named_volume(name):
    declared = facts(name)["volumes"]["declared"]
    assert facts(name)["volumes"]["source"], "cite the Dockerfile the declared volumes were read in"
    cfg = config(name)
    mounts = {m["target"]: m for m in cfg["services"][name].get("volumes", [])}
    for path in declared:
        m = mounts.get(path)
        if path in NOT_A_VOLUME:
            assert m and m["type"] in ("tmpfs", "bind") or path in cfg["services"][name].get("tmpfs", []), path
            continue
        assert m, (
            f"{name}: nothing mounted at {path}, which the image declares a VOLUME: each up leaves an anonymous one"
        )
        assert m["type"] == "volume" and m.get("source") in cfg.get("volumes", {}), (
            f"{name}: {path} is not one of compose.yaml's named volumes: {m}"
        )
    # No anonymous volume of the service's own either.
    anonymous = [m for m in mounts.values() if m["type"] == "volume" and not m.get("source")]
    assert not anonymous, anonymous


def test_the_vernemq_etc_volume_is_named_after_the_image():
    """A kept etc volume would start a new VerneMQ with the old image's
    vm.args and vernemq.conf (compose.yaml): its name carries the tag."""
    tag = re.search(r"^VERNEMQ_IMAGE=\S+:(\S+)$", (ROOT / ".env").read_text(), re.M).group(1)
    etc = [m for m in config("vernemq")["services"]["vernemq"]["volumes"] if m["target"] == "/vernemq/etc"]
    assert etc and etc[0]["source"] == f"vernemq-etc-{tag}", etc


def test_the_mosquitto_stand_in_declares_the_images_volumes():
    """The stand-in of tests/compose/test_compose_stack.py declares what the real
    image does, so that its up and down meet the same anonymous volumes."""
    dockerfile = (ROOT / "tests/compose/images/mosquitto.Dockerfile").read_text()
    declared = json.loads(re.search(r"^VOLUME (\[.*\])$", dockerfile, re.M).group(1))
    assert declared == facts("mosquitto")["volumes"]["declared"]
