"""The project's own suite, in four folders by what a test costs:

    unit/     pure functions and single classes, no grading (milliseconds)
    repo/     the repository's own consistency: handout, snapshots, pins, architecture rules
    grading/  a submission graded end to end, in-process or through the sandbox (seconds)
    system/   the command line's batch and merge, Gradescope, Slurm, Docker (tens of seconds)

Each test gets its folder's marker, and grading/ and system/ also ``e2e``: the fast loop is
``python -m pytest -m "not e2e"``. A slow test in unit/ or repo/ says so with its own ``e2e``
marker. Tests marked ``docker`` build images and run containers for minutes: a plain run reports
them skipped with the way to run them, `-m docker` runs them.

Under xdist (``-n 2 --dist loadgroup``) the tests of a module that share a module-scoped fixture
(one batch, one class) run on one worker, so the fixture is made once; every other test is
handed to whichever worker is free. What a whole run shares (the graded reference) is made once for all
workers by tests/self/shared.py.
"""

import os
from pathlib import Path

import pytest

TIERS = ("system", "grading", "repo", "unit")  # dearest first: the free worker takes the long ones early
E2E = ("system", "grading")
HERE = Path(__file__).resolve().parent
DOCKER_HOW = ("builds images and runs containers for minutes: start an engine with "
              "deploy/docker/start-dockerd.sh, then run `python -m pytest -m docker`")


def pytest_configure(config):
    """Under xdist each core has its own test process already: torch's thread pool on top would
    put two threads on each core (the planted bugs ran 10-20% slower so). One thread, then, here
    and in the graders these processes start; a sandboxed worker keeps its Limits.threads. And
    idle threads sleep, as in a batch's jobs (grader/batch/scheduler.py job_env): set before
    xdist starts its test processes, whose torch reads it at import and whose sandboxes keep it
    (the grading tests ran 11% faster so; no verdict depends on it)."""
    if not os.environ.get("PYTEST_XDIST_WORKER") and getattr(config.option, "numprocesses", None):
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        import torch
        os.environ["OMP_NUM_THREADS"] = "1"
        torch.set_num_threads(1)


def pytest_ignore_collect(collection_path, config):
    """The fast loop (``-m "not e2e"``) deselects every test of grading/ and system/, so it does
    not import them either: their modules and what they import were 2 s of each test process's
    start. Any other expression, or none, collects them as always."""
    if (config.getoption("markexpr") or "").strip() == "not e2e" and collection_path.parent == HERE \
            and collection_path.name in E2E:
        return True
    return None


def tier_of(path: Path) -> str | None:
    """The folder under tests/self/ a test file lives in, if it is one of the tiers."""
    parts = Path(path).resolve().relative_to(HERE).parts
    return parts[0] if len(parts) > 1 and parts[0] in TIERS else None


def shares_a_module_fixture(item) -> bool:
    """Does the test use a module-scoped fixture defined in its own module (made once per worker)?"""
    module = item.nodeid.split("::")[0]
    defs = getattr(item, "_fixtureinfo", None)
    return bool(defs) and any(d.scope == "module" and d.baseid == module
                              for fixturedefs in defs.name2fixturedefs.values() for d in fixturedefs)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups (its hook has no order of its own)
def pytest_collection_modifyitems(config, items):
    for item in items:
        tier = tier_of(item.path)
        if tier:
            item.add_marker(tier)
        if tier in E2E:
            item.add_marker("e2e")
    for item in items:
        if shares_a_module_fixture(item):  # the rest of its module goes wherever a worker is free
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    items.sort(key=lambda item: TIERS.index(tier_of(item.path) or "unit"))  # stable within a tier
    if "docker" in (config.getoption("markexpr") or ""):
        return
    for item in items:
        if item.get_closest_marker("docker"):
            item.add_marker(pytest.mark.skip(reason=DOCKER_HOW))


@pytest.fixture(autouse=True, scope="session")
def kept_templates():
    """The suite grades hundreds of uploads, one at a time, in each test process: each grade
    takes a fresh zygote forked from a warm template this process keeps (grader/grade.py
    ``KEPT``), as a batch job's students do, instead of one that imports torch itself (3 s
    of a 2-core suite's CPU per grade). The cold start keeps its own tests, which start their
    Sandbox themselves: tests/self/grading/test_isolation_modes.py (each mode, cold and
    from a template), test_grade.py's zygote tests, and every grade the suite runs as a command
    in a process of its own (determinism, Gradescope, the batch's jobs)."""
    from grader import grade
    from grader.sandbox.template import Kept
    grade.KEPT = kept = Kept()
    try:
        yield kept
    finally:
        grade.KEPT = None
        kept.close()
