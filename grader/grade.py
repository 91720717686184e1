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

from . import gpu as gpu_info
from .paths import ROOT, TEST_DIRS
from .plugin import GraderPlugin
from .report import build_results, render_table, write_atomically
from .isolation import Isolation, IsolationUnavailable
from .sandbox import Limits, Sandbox
from .submission import locate
from tests.seam.layout import PROBLEMS


def run_tests(impl, gpu: str, cuda: bool, time_limit: float, quiet: bool,
              problems: list[str] | None = None, unknown_gpu: str | None = None) -> GraderPlugin:
    """Run the graded tests (of ``problems``, default all) against ``impl``; the plugin holds
    one fact per test. ``unknown_gpu``: this GPU's name if the peak table lacks it."""
    plugin = GraderPlugin(impl, gpu=gpu, cuda=cuda, time_limit=time_limit, unknown_gpu=unknown_gpu)
    paths = [d / f"test_{p}.py" for d in TEST_DIRS for p in problems] if problems else TEST_DIRS
    args = [*(str(p) for p in paths if p.exists()), "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"),
            "-p", "no:cacheprovider", "-q", "--tb=no", "--no-header", "-rN"]
    sink = io.StringIO() if quiet else sys.stderr
    with contextlib.redirect_stdout(sink):
        code = pytest.main(args, plugins=[plugin])
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or plugin.collection_errors:
        raise RuntimeError(f"the test run itself failed (pytest exit {int(code)}): "
                           + "; ".join(plugin.collection_errors))
    return plugin


def grade(submission: Path, out: Path, gpu: str = "auto", time_limit: float = 30.0,
          quiet: bool = False, problems: list[str] | None = None, isolation: str = "auto") -> int:
    start = time.monotonic()
    unknown = sorted(set(problems or ()) - set(PROBLEMS))
    if unknown:
        print(f"error: unknown problem(s) {', '.join(unknown)}; known: {', '.join(PROBLEMS)}",
              file=sys.stderr)
        return 2
    gpu_name = gpu_info.device_name()
    cuda = gpu_name is not None
    if gpu == "require" and not cuda:
        print("error: --gpu require, but CUDA is not available here; no report written", file=sys.stderr)
        return 2
    unknown_gpu = gpu_name if cuda and gpu != "skip" and not gpu_info.has_peak(gpu_name) else None
    if gpu == "require" and unknown_gpu:
        print(f"error: --gpu require, but this GPU, '{gpu_name}', has no peak FLOP/s in "
              f"reference/benchmarking.py (PEAK_FLOPS, DEVICE_NAME_RULES), so its MFU tests cannot "
              f"be graded; add it there, or use --gpu auto to leave them out; no report written",
              file=sys.stderr)
        return 2
    try:
        confinement = Isolation.detect(isolation)
    except IsolationUnavailable as e:
        print(f"error: {e}; no report written", file=sys.stderr)
        return 2
    located = locate(submission, problems or PROBLEMS)
    folder = located.folder or Path(tempfile.mkdtemp(prefix="grader-empty-"))
    uses_cuda = cuda and gpu != "skip"
    limits = Limits(time_per_test=time_limit, memory_bytes=None if uses_cuda else Limits.memory_bytes)
    sandbox = Sandbox(folder, limits, isolation=confinement, hide=(Path(out).resolve().parent,),
                      cuda=uses_cuda)
    sandbox.prewarm()
    try:
        plugin = run_tests(sandbox, gpu, cuda, time_limit, quiet, problems, unknown_gpu)
    except RuntimeError as e:
        print(f"error: {e}; no report written", file=sys.stderr)
        return 2
    finally:
        sandbox.close()
        for path in (located.cleanup, None if located.folder else folder):
            if path:
                shutil.rmtree(path, ignore_errors=True)
    notes = located.notes + [f"sandbox: {sandbox.describe()}"]
    if cuda and gpu != "skip":
        notes.append(f"GPU: {gpu_name}")
    if problems:
        notes.append(f"graded only: {', '.join(problems)}")
    results = build_results(list(plugin.facts.values()), time.monotonic() - start, notes, gpu)
    write_atomically(results, out)
    print(render_table(results))
    print(f"wrote {out}")
    return 0
