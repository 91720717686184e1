"""What one test run computes once and every xdist worker reads (a graded reference, a score),
and the command line run in the test's own process (``cli``, ``grade_cli``).

``once(tmp_path_factory, name, compute)`` returns ``compute()``'s JSON value, computed by the
first worker to ask (under a file lock, so the other waits instead of computing it too) and
kept in the run's shared temporary folder. The folder is the run's own: a later run computes
again, so nothing stale is read. Values are JSON, not pickles: what a worker wrote is data.
"""

import contextlib
import fcntl
import io
import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Callable

import pytest


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder all workers of this run share: pytest-N/ (a worker's own basetemp is
    pytest-N/popen-gwK/, made by xdist; without xdist the basetemp is pytest-N/ itself)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once(tmp_path_factory: pytest.TempPathFactory, name: str, compute: Callable[[], object]):
    if not re.fullmatch(r"[\w.-]+", name):
        raise ValueError(f"a shared value's name is a file name, not {name!r}")
    folder = run_folder(tmp_path_factory) / "shared"
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.json"
    with open(folder / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if compute() raises
        if path.exists():
            return json.loads(path.read_text())
        value = compute()
        part = path.with_suffix(".part")
        part.write_text(json.dumps(value))
        os.replace(part, path)  # a reader sees the whole value or none (and then waits for the lock)
        return value


def clean_env() -> dict:
    """No shard index from the environment (these tests may run inside a Slurm job)."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("SLURM_ARRAY") and k != "JOB_COMPLETION_INDEX"}


def cli(*args, check: int | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """`python -m grader ARGS` as the TA types it, run in this process (cli.main: the same
    parser, exit status and streams; batch's grader processes are real subprocesses either way),
    which spares each call a Python start, a torch import and torch's lazy ones (3-4 s). The
    entry point itself is tests/self/unit/test_cli_output.py's."""
    from grader.cli import main
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update({**clean_env(), **(env or {})})
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in args])
            except SystemExit as e:   # argparse: --version, --help, a usage error
                code = e.code if isinstance(e.code, int) else 1
    finally:
        os.environ.clear()
        os.environ.update(saved)
    proc = subprocess.CompletedProcess(["python", "-m", "grader", *map(str, args)], code, out.getvalue(),
                                       err.getvalue())
    if check is not None:
        assert proc.returncode == check, f"exit {proc.returncode}\n{proc.stderr[-3000:]}"
    return proc


def grade_cli(submission: Path, out: Path, *extra: str) -> tuple[dict, str]:
    """`python -m grader grade SUBMISSION --out OUT --gpu skip EXTRA...` (``cli``): (results.json's
    content, validated; what it printed). Exit 0 or the test fails."""
    from grader.report import validate
    proc = cli("grade", submission, "--out", out, "--gpu", "skip", *extra, check=0)
    results = json.loads(Path(out).read_text())
    validate(results)
    return results, proc.stdout


def graded_reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str]:
    """The reference graded by the command line (every problem, no GPU), once per test run."""
    from grader.paths import REFERENCE

    def grade() -> dict:
        results, table = grade_cli(REFERENCE, run_folder(tmp_path_factory) / "shared" / "reference-results.json")
        return {"results": results, "table": table}
    value = once(tmp_path_factory, "graded-reference", grade)
    return value["results"], value["table"]


def available_modes(process: bool = False) -> list:
    """The sandbox's isolation modes as pytest params, each skipped with its reason where this
    machine cannot offer it ("process" only with ``process``: it has no walls, for trusted code
    (docs/trust.md); a test of what does not rest on walls runs it too)."""
    from grader.sandbox.isolation import MODES, Isolation, IsolationUnavailable
    params = []
    for mode in MODES:
        if mode == "process" and not process:
            continue
        try:
            Isolation.detect(mode)
            params.append(pytest.param(mode, id=mode))
        except IsolationUnavailable as e:
            params.append(pytest.param(mode, id=mode, marks=pytest.mark.skip(reason=f"not here: {e}")))
    return params


# Every isolation mode for the routes around the watch and the record, or the default one alone:
# those routes rest on no wall (the record, the watch and the syscall filter are the same in
# every mode), and each mode costs a minute of a 2-core suite. `GRADER_ALL_MODES=1` runs them in
# every mode this machine offers (docs/maintaining.md: before a release, and after a change to
# seam/audit.py, seam/honest.py or grader/sandbox/).
ALL_MODES = "GRADER_ALL_MODES"


def route_modes() -> list:
    """``available_modes(process=True)`` with every mode but the one ``auto`` takes here skipped,
    saying how to run them, unless `GRADER_ALL_MODES=1`."""
    params = available_modes(process=True)
    if os.environ.get(ALL_MODES) == "1":
        return params
    from grader.sandbox.isolation import Isolation, IsolationUnavailable
    try:
        default = Isolation.detect("auto").mode
    except IsolationUnavailable:
        return params
    return [p if p.id == default or p.marks else
            pytest.param(*p.values, id=p.id, marks=pytest.mark.skip(
                reason=f"not run: the routes rest on no wall; {ALL_MODES}=1 runs them in every mode"))
            for p in params]


def unnamespaced_modes() -> list:
    """landlock, uid and process, detected (``Isolation`` params; None, skipped with the reason,
    where this machine cannot offer one): the modes whose scratch is a folder on disk."""
    from grader.sandbox.isolation import Isolation, IsolationUnavailable
    out = []
    for mode in ("landlock", "uid", "process"):
        try:
            out.append(pytest.param(Isolation.detect(mode), id=mode))
        except IsolationUnavailable as e:
            out.append(pytest.param(None, id=mode, marks=pytest.mark.skip(reason=f"not here: {e}")))
    return out


def wait_until(predicate, seconds: float) -> bool:
    """Poll ``predicate`` every 0.2 s for up to ``seconds``; its last answer."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()
