"""`grade`: locate the submission, run the public and hidden tests against it in the sandbox,
write results.json (validated, atomically) and print the score table."""

import contextlib
import io
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest
import torch

from .paths import ROOT, TEST_DIRS
from .plugin import GraderPlugin
from .report import build_results, render_table, write_atomically
from .sandbox import Limits, Sandbox
from .submission import locate
from tests.seam.layout import PROBLEMS


def run_tests(impl, gpu: str, cuda: bool, time_limit: float, quiet: bool,
              problems: list[str] | None = None, record: Path | None = None) -> GraderPlugin:
    """Run the graded tests (of ``problems``, default all) against ``impl``; the plugin holds
    one fact per test. ``record``: also write pytest-json-report's raw record there.
    Safe to call many times in one process (batch does): each call is a fresh pytest session."""
    plugin = GraderPlugin(impl, gpu=gpu, cuda=cuda, time_limit=time_limit)
    paths = [d / f"test_{p}.py" for d in TEST_DIRS for p in problems] if problems else TEST_DIRS
    args = [*(str(p) for p in paths if p.exists()), "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"),
            "-p", "no:cacheprovider", "-q", "--tb=no", "--no-header", "-rN"]
    if record is not None:
        args += ["--json-report", f"--json-report-file={record}", "--json-report-omit", "collectors",
                 "keywords", "--json-report-indent=1"]
    sink = io.StringIO() if quiet else sys.stderr
    with contextlib.redirect_stdout(sink):
        code = pytest.main(args, plugins=[plugin])
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or plugin.collection_errors:
        raise RuntimeError(f"the test run itself failed (pytest exit {int(code)}): "
                           + "; ".join(plugin.collection_errors))
    return plugin


def check_options(gpu: str, problems: list[str] | None) -> str | None:
    """The TA's mistakes that mean no report at all: the one-line reason, or None."""
    unknown = sorted(set(problems or ()) - set(PROBLEMS))
    if unknown:
        return f"unknown problem(s) {', '.join(unknown)}; known: {', '.join(PROBLEMS)}"
    if gpu == "require" and not torch.cuda.is_available():
        return "--gpu require, but CUDA is not available here; no report written"
    return None


def grade_one(submission: Path, gpu: str = "auto", time_limit: float = 30.0, quiet: bool = False,
              problems: list[str] | None = None, hide: tuple[Path, ...] = (),
              record: Path | None = None) -> tuple[dict, str]:
    """Grade one upload in a fresh sandbox: (results.json's content, the gradebook status).
    ``hide``: more folders the student's process must not see (the output folder, a class's
    other uploads). The one place a Sandbox is built; raises RuntimeError if pytest itself fails."""
    start = time.monotonic()
    cuda = torch.cuda.is_available()
    located = locate(submission, problems or PROBLEMS)
    folder = located.folder or Path(tempfile.mkdtemp(prefix="grader-empty-"))
    uses_cuda = cuda and gpu != "skip"
    limits = Limits(time_per_test=time_limit, memory_bytes=None if uses_cuda else Limits.memory_bytes)
    try:
        sandbox = Sandbox(folder, limits, hide=tuple(hide))
        try:
            sandbox.prewarm()
            plugin = run_tests(sandbox, gpu, cuda, time_limit, quiet, problems, record)
        finally:
            sandbox.close()
    finally:
        for path in (located.cleanup, None if located.folder else folder):
            if path:
                shutil.rmtree(path, ignore_errors=True)
    notes = located.notes + [f"sandbox: {sandbox.isolation.describe()}"]
    if problems:
        notes.append(f"graded only: {', '.join(problems)}")
    if gpu == "only":
        notes.append("graded only the GPU tests (--gpu only)")
    results = build_results(list(plugin.facts.values()), time.monotonic() - start, notes, gpu)
    return results, located.status


def grade(submission: Path, out: Path, gpu: str = "auto", time_limit: float = 30.0,
          quiet: bool = False, problems: list[str] | None = None) -> int:
    """`python -m grader grade`: 0 when a report was written, 2 (one line, no report) for the
    TA's mistakes: a path that does not exist, a bad option, a failed test run."""
    if not Path(submission).exists():
        print(f"error: {submission}: no such file or folder; no report written", file=sys.stderr)
        return 2
    problem = check_options(gpu, problems)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        results, _ = grade_one(submission, gpu, time_limit, quiet, problems,
                               hide=(Path(out).resolve().parent,))
    except RuntimeError as e:
        print(f"error: {e}; no report written", file=sys.stderr)
        return 2
    write_atomically(results, out)
    print(render_table(results))
    print(f"wrote {out}")
    return 0
